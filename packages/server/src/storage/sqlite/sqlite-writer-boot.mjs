// The document writer thread's entry: the server runs its TypeScript through tsx, whose loader a
// worker thread only has when the process was started with `--import tsx`; registering it here
// covers the other ways of starting (bin/hearth.js registers it by API). Registering twice is harmless.
import { register } from 'tsx/esm/api';

register();
await import('./sqlite-writer-thread.ts');
