#!/usr/bin/env node
// `hearth` on the PATH (npm link / npx): runs the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
