/**
 * The official SDK's own Auth integration tests, copied out of a firebase-js-sdk checkout (a work
 * tree, or a bare git directory such as the one `fetch` leaves) into a scratch folder. Nothing of
 * theirs is kept in this repository: the runner reads their files where they are, every time.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The folders the suites need: the flows and their helpers. */
const wantedFolders = ['packages/auth/test/integration/flows', 'packages/auth/test/helpers/integration'];

export interface SdkCheckout {
  /** The scratch copy's root (same layout as the SDK repository). */
  root: string;
  /** What was read: a commit or a path, for the report. */
  describe: string;
}

/** Copies the wanted files of `source` (at `ref` when it is a git directory) under `scratch`. */
export function copySdkTests(source: string, ref: string, scratch: string): SdkCheckout {
  const isWorkTree = existsSync(join(source, 'packages/auth/package.json'));
  const files = isWorkTree ? listWorkTree(source) : listGit(source, ref);
  if (files.length === 0) throw new Error(`no Auth integration tests under ${source} (${ref})`);
  for (const file of files) {
    const target = join(scratch, file);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, isWorkTree ? readFileSync(join(source, file)) : git(source, ['show', `${ref}:${file}`]));
  }
  // settings.ts requires the SDK's generated project config, which only matters against production.
  mkdirSync(join(scratch, 'config'), { recursive: true });
  writeFileSync(join(scratch, 'config/project.json'), JSON.stringify({ projectId: 'not-used', apiKey: 'not-used', authDomain: 'not-used' }));
  const describe = isWorkTree ? source : `${ref} = ${git(source, ['rev-parse', ref]).toString().trim()}`;
  return { root: scratch, describe };
}

function listGit(gitDir: string, ref: string): string[] {
  return git(gitDir, ['ls-tree', '-r', '--name-only', ref, ...wantedFolders])
    .toString()
    .split('\n')
    .filter((line) => line.endsWith('.ts'));
}

function listWorkTree(root: string): string[] {
  const listed = execFileSync('find', wantedFolders, { cwd: root }).toString();
  return listed.split('\n').filter((line) => line.endsWith('.ts'));
}

function git(gitDir: string, args: string[]): Buffer {
  return execFileSync('git', ['--git-dir', existsSync(join(gitDir, '.git')) ? join(gitDir, '.git') : gitDir, ...args], { maxBuffer: 64 * 1024 * 1024 });
}

/** Node's selection, as the SDK's own scripts/run_node_tests.ts makes it with --integration --local. */
export function nodeSuiteFiles(checkout: SdkCheckout): string[] {
  const flows = join(checkout.root, 'packages/auth/test/integration/flows');
  const names = execFileSync('ls', [flows]).toString().split('\n');
  return names
    .filter((name) => /^(email|anonymous|firebaseserverapp)\.test\.ts$/.test(name) || name.endsWith('.local.test.ts'))
    .map((name) => join(flows, name));
}

/** The browser's selection, as the SDK's karma.conf.js makes it with --integration --local: every flow. */
export function browserSuiteFiles(checkout: SdkCheckout): string[] {
  const flows = join(checkout.root, 'packages/auth/test/integration/flows');
  const names = execFileSync('ls', [flows]).toString().split('\n');
  return names.filter((name) => name.endsWith('.test.ts')).map((name) => join(flows, name));
}
