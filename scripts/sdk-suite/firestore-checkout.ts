/**
 * The official SDK's own Firestore integration tests (packages/firestore/test/integration/api),
 * copied out of a firebase-js-sdk checkout into a scratch folder and pointed at the published
 * `@firebase/firestore` this repository uses, as the SDK's own "minified" run
 * (integration/firestore) points them: its firebase_export module is replaced by one that takes
 * everything from the package. Nothing of theirs is kept in this repository.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SdkCheckout } from './checkout.js';

const testBase = 'packages/firestore/test';
/** What the SDK's minified run copies: the API tests and the helpers they import. */
const helperFiles = [
  'integration/util/composite_index_test_helper.ts',
  'integration/util/events_accumulator.ts',
  'integration/util/helpers.ts',
  'integration/util/settings.ts',
  'integration/util/testing_hooks_util.ts',
  'util/equality_matcher.ts',
  'util/promise.ts',
  'util/mocha_extensions.ts',
].map((file) => `${testBase}/${file}`);
/**
 * Left out as the SDK's minified run leaves them out (they need its sources), and the pipeline
 * tests, which run only against an Enterprise-edition database.
 */
const skippedTests = /\/(pipeline[^/]*|query_to_pipeline|snapshot_listener_source)\.test\.ts$/;

/** Our stand-in for the tests' firebase_export: the published package, one app per test. */
// Each test file is bundled with its own copy of this module: the app counter lives on globalThis so
// that names stay unique across files, as with the SDK's one shared module.
const exportShim = `import { initializeApp } from '@firebase/app';
import { initializeFirestore } from '@firebase/firestore';
export function newTestApp(projectId, appName) {
  globalThis.__sdkSuiteApps = (globalThis.__sdkSuiteApps ?? 0) + 1;
  return initializeApp({ apiKey: 'fake-api-key', projectId }, appName ?? 'test-app-' + globalThis.__sdkSuiteApps);
}
export function newTestFirestore(app, settings, dbName) {
  return initializeFirestore(app, settings || {}, dbName);
}
export * from '@firebase/firestore';
`;

export function copyFirestoreTests(source: string, ref: string, scratch: string): SdkCheckout & { testFiles: string[] } {
  const isWorkTree = existsSync(join(source, 'packages/firestore/package.json'));
  const read = (file: string) => (isWorkTree ? readFileSync(join(source, file)) : git(source, ['show', `${ref}:${file}`])).toString();
  const apiTests = list(source, isWorkTree, ref, `${testBase}/integration/api`).filter((file) => file.endsWith('.test.ts') && !skippedTests.test(file));
  if (apiTests.length === 0) throw new Error(`no Firestore integration tests under ${source} (${ref})`);
  const shim = join(scratch, 'firebase_export.js');
  writeFileSync(shim, exportShim);
  for (const file of [...apiTests, ...helperFiles]) {
    const target = join(scratch, file);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, read(file).replace(/from '(?:\.\.?\/)+(?:util\/)?firebase_export'/g, `from ${JSON.stringify(shim)}`));
  }
  // settings.ts requires the SDK's generated project config, which only matters against production.
  mkdirSync(join(scratch, 'config'), { recursive: true });
  writeFileSync(join(scratch, 'config/project.json'), JSON.stringify({ projectId: 'not-used', apiKey: 'not-used' }));
  const describe = isWorkTree ? source : `${ref} = ${git(source, ['rev-parse', ref]).toString().trim()}`;
  return { root: scratch, describe, testFiles: apiTests.map((file) => join(scratch, file)) };
}

function list(source: string, isWorkTree: boolean, ref: string, folder: string): string[] {
  const listed = isWorkTree ? execFileSync('find', [folder], { cwd: source }) : git(source, ['ls-tree', '-r', '--name-only', ref, folder]);
  return listed.toString().split('\n').filter(Boolean);
}

function git(gitDir: string, args: string[]): Buffer {
  return execFileSync('git', ['--git-dir', existsSync(join(gitDir, '.git')) ? join(gitDir, '.git') : gitDir, ...args], { maxBuffer: 64 * 1024 * 1024 });
}
