/**
 * Runs the official firebase-js-sdk's own Auth integration tests, unchanged, against
 * `hearth start --dev` and against Google's Auth emulator (the oracle), and prints pass/fail
 * counts for both: the Node suite (scripts/run_node_tests.ts --integration --local) and the
 * browser suite (karma --integration --local) in headless Chromium.
 *
 *   npx tsx scripts/sdk-auth-suite.ts --sdk /path/to/firebase-js-sdk [--ref HEAD]
 *       [--tools /work/tools] [--targets hearth,emulator] [--suites node,browser] [--verbose]
 *
 * --sdk is a checkout of github.com/firebase/firebase-js-sdk (a work tree or a bare git
 * directory). --tools is a folder outside this repository whose node_modules hold firebase-tools,
 * mocha 11, chai 4, chai-as-promised 7, sinon, sinon-chai 3 and totp-generator 0.0.14 (the SDK's
 * own test dependencies): `npm install firebase-tools mocha@11 chai@4 chai-as-promised@7 sinon
 * sinon-chai@3 totp-generator@0.0.14` there. Not part of `npm test`: it needs both folders.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBrowserSuite } from './sdk-suite/browser-suite.js';
import { browserSuiteFiles, copySdkTests, nodeSuiteFiles } from './sdk-suite/checkout.js';
import { runNodeSuite } from './sdk-suite/node-suite.js';
import { suiteArgs } from './sdk-suite/suite-args.js';
import { countsOf, formatCounts, type SuiteRun } from './sdk-suite/results.js';
import { repoRoot, startAuthEmulator, startHearthDev, type Target } from './sdk-suite/targets.js';

const values = suiteArgs('sdk-auth-suite.ts', 'demo-sdk-suite');

const scratch = mkdtempSync(join(tmpdir(), 'sdk-auth-suite-'));
const checkout = copySdkTests(values.sdk, values.ref, scratch);
const toolsModules = join(values.tools, 'node_modules');
const nodePaths = [join(repoRoot, 'node_modules'), toolsModules];
const grep = values.grep;
const filter = (files: string[]) => (grep ? files.filter((file) => file.includes(grep)) : files);
const projectId = values.project;
process.stdout.write(`SDK tests from ${checkout.describe}\n`);

const starters: Record<string, () => Promise<Target>> = {
  hearth: () => startHearthDev(projectId),
  emulator: () => startAuthEmulator(projectId, join(toolsModules, '.bin/firebase')),
};
const suites: Record<string, (target: Target) => Promise<SuiteRun>> = {
  node: (target) =>
    runNodeSuite({ files: filter(nodeSuiteFiles(checkout)), checkoutRoot: checkout.root, scratch, nodePaths, hostPort: target.hostPort, projectId, timeoutMs: 20 * 60_000, onLine: progress }),
  browser: (target) =>
    runBrowserSuite({ files: filter(browserSuiteFiles(checkout)), nodePaths, toolsModules, hostPort: target.hostPort, projectId, timeoutMs: 30 * 60_000, chromiumPath: '/usr/bin/chromium', onLine: progress }),
};

function progress(line: string): void {
  if (values.verbose) process.stdout.write(`    ${line}\n`);
}

const summary: string[] = [];
try {
  for (const suiteName of values.suites) {
    for (const targetName of values.targets) {
      const start = starters[targetName];
      const suite = suites[suiteName];
      if (!start || !suite) throw new Error(`unknown target ${targetName} or suite ${suiteName}`);
      process.stdout.write(`== ${suiteName} suite against ${targetName} ==\n`);
      const target = await start();
      let run: SuiteRun;
      try {
        run = await suite(target);
      } finally {
        await target.stop();
      }
      report(run);
      summary.push(`${suiteName.padEnd(8)} ${targetName.padEnd(9)} ${formatCounts(countsOf(run))}${run.aborted ? ' (aborted)' : ''}`);
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.stdout.write(`\n${summary.join('\n')}\n`);

function report(run: SuiteRun): void {
  if (run.aborted) process.stdout.write(`  aborted: ${run.aborted}\n`);
  for (const test of run.tests.filter((t) => t.outcome === 'failed')) process.stdout.write(`  FAIL ${test.title}\n       ${test.error}\n`);
  for (const hook of run.hookFailures) process.stdout.write(`  HOOK ${hook.title}\n       ${hook.error}\n`);
  process.stdout.write(`  ${formatCounts(countsOf(run))}\n`);
}
