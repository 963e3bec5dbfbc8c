/**
 * The Node versions agree: every package the lock file installs supports the oldest Node the README
 * and package.json promise (`engines.node`, >= 20.19), so `npm install` on it warns of none
 * (EBADENGINE). cookie 2 asks for Node 22: @fastify/cookie is pinned to 11.1.0 and fastify's
 * light-my-request overridden to 6.6.0, both on cookie 1.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createRequire } from 'node:module';
import { repoRoot } from '../helpers/hearth.js';

// npm's own range semantics (semver is in the tree through npm's dependencies' dependencies; no types).
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean; minVersion(range: string): { version: string } | null };

const root = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean }> };

test('the README promises the Node version package.json requires', () => {
  const oldest = semver.minVersion(root.engines.node)!.version;
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  assert.match(readme, new RegExp(`Node\\.js ${oldest.replace(/\.0$/, '').replaceAll('.', '\\.')} or newer`));
});

test('every locked package runs on the oldest Node promised', () => {
  const oldest = semver.minVersion(root.engines.node)!.version;
  const refusing = Object.entries(lock.packages)
    .filter(([path, entry]) => path && entry.engines && !Array.isArray(entry.engines) && entry.engines.node && !semver.satisfies(oldest, entry.engines.node))
    .map(([path, entry]) => `${path}@${entry.version} needs node ${(entry.engines as { node: string }).node}`);
  assert.deepEqual(refusing, [], `npm install on Node ${oldest} would warn (EBADENGINE)`);
});
