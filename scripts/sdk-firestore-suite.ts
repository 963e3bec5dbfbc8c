/**
 * Runs the official firebase-js-sdk's own Firestore integration tests (packages/firestore/test/
 * integration/api, the selection of its "minified" run), unchanged, on Node (gRPC) and in headless
 * Chromium (WebChannel, IndexedDB persistence) against
 * `hearth start --dev` and against Google's Firestore emulator (the oracle, from gcloud), as the
 * SDK's own emulator runner points them (FIRESTORE_TARGET_BACKEND=emulator), and prints pass/fail
 * counts for both and the tests whose outcome differs.
 *
 *   npx tsx scripts/sdk-firestore-suite.ts --sdk /path/to/firebase-js-sdk [--ref HEAD]
 *       [--tools /work/tools] [--targets hearth,emulator] [--suites node,browser] [--grep FILE_PART] [--verbose]
 *
 * --tools: a folder outside this repository whose node_modules hold mocha 11, chai 4 and
 * chai-as-promised 7 (`npm install mocha@11 chai@4 chai-as-promised@7` there). Not part of
 * `npm test`: it needs both folders and takes several minutes a target.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBrowserSuite } from './sdk-suite/browser-suite.js';
import { copyFirestoreTests } from './sdk-suite/firestore-checkout.js';
import { runNodeSuite } from './sdk-suite/node-suite.js';
import { suiteArgs } from './sdk-suite/suite-args.js';
import { countsOf, formatCounts, type SuiteRun } from './sdk-suite/results.js';
import { repoRoot, startFirestoreEmulator, startHearthDev, type Target } from './sdk-suite/targets.js';

const values = suiteArgs('sdk-firestore-suite.ts', 'test-emulator');

const scratch = mkdtempSync(join(tmpdir(), 'sdk-firestore-suite-'));
const checkout = copyFirestoreTests(values.sdk, values.ref, scratch);
const nodePaths = [join(repoRoot, 'node_modules'), join(values.tools, 'node_modules')];
const grep = values.grep;
const files = grep ? checkout.testFiles.filter((file) => file.includes(grep)) : checkout.testFiles;
const projectId = values.project;
process.stdout.write(`SDK tests from ${checkout.describe}: ${files.length} files\n`);

const starters: Record<string, () => Promise<Target>> = {
  hearth: () => startHearthDev(projectId),
  emulator: () => startFirestoreEmulator(),
};
const suites: Record<string, (target: Target, env: Record<string, string>, scratchDir: string) => Promise<SuiteRun>> = {
  node: (target, env, scratchDir) =>
    runNodeSuite({ files, checkoutRoot: checkout.root, scratch: scratchDir, nodePaths, hostPort: target.hostPort, projectId, timeoutMs: 40 * 60_000, env, onLine: progress }),
  // The SDK's karma runs hand the settings `targetBackend` through the karma client config.
  browser: (target, env) =>
    runBrowserSuite({
      files,
      nodePaths,
      toolsModules: join(values.tools, 'node_modules'),
      hostPort: target.hostPort,
      projectId,
      timeoutMs: 40 * 60_000,
      chromiumPath: '/usr/bin/chromium',
      env: { ...env, INCLUDE_FIRESTORE_PERSISTENCE: 'true' },
      karmaConfig: { targetBackend: 'emulator' },
      onLine: progress,
    }),
};

function progress(line: string): void {
  if (values.verbose) process.stdout.write(`    ${line}\n`);
}

const summary: string[] = [];
try {
  for (const suiteName of values.suites) {
    const runs = new Map<string, SuiteRun>();
    for (const targetName of values.targets) {
      const start = starters[targetName];
      const suite = suites[suiteName];
      if (!start || !suite) throw new Error(`unknown target ${targetName} or suite ${suiteName}`);
      process.stdout.write(`== ${suiteName} suite against ${targetName} ==\n`);
      const target = await start();
      try {
        const port = target.hostPort.split(':')[1]!;
        const env = { FIRESTORE_TARGET_BACKEND: 'emulator', FIRESTORE_EMULATOR_PORT: port, FIRESTORE_EMULATOR_PROJECT_ID: projectId };
        const run = await suite(target, env, join(scratch, `${suiteName}-${targetName}`));
        runs.set(targetName, run);
        if (run.aborted) process.stdout.write(`  aborted: ${run.aborted}\n`);
        for (const hook of run.hookFailures) process.stdout.write(`  HOOK ${hook.title}\n       ${hook.error}\n`);
        process.stdout.write(`  ${formatCounts(countsOf(run))}\n`);
        summary.push(`${suiteName.padEnd(8)} ${targetName.padEnd(9)} ${formatCounts(countsOf(run))}${run.aborted ? ' (aborted)' : ''}`);
      } finally {
        await target.stop();
      }
    }
    compare(runs);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.stdout.write(`\n${summary.join('\n')}\n`);

/** The tests whose outcome differs between the two targets, and those failing on both. */
function compare(runs: Map<string, SuiteRun>): void {
  const [first, second] = [...runs.entries()];
  if (!first) return;
  const outcomeIn = (run: SuiteRun | undefined, title: string) => run?.tests.find((test) => test.title === title);
  for (const test of first[1].tests) {
    const other = outcomeIn(second?.[1], test.title);
    if (test.outcome === 'failed' && other?.outcome !== 'failed') process.stdout.write(`  FAIL on ${first[0]} only: ${test.title}\n       ${test.error}\n`);
    if (second && other?.outcome === 'failed' && test.outcome !== 'failed') process.stdout.write(`  FAIL on ${second[0]} only: ${test.title}\n       ${other.error}\n`);
    if (second && test.outcome === 'failed' && other?.outcome === 'failed') process.stdout.write(`  fails on both: ${test.title}\n       ${first[0]}: ${test.error}\n       ${second[0]}: ${other.error}\n`);
  }
}
