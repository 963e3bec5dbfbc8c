/**
 * The SDK's Node integration suite: its test files bundled, run by mocha in a child process with
 * the SDK's own Node mocha settings (config/mocharc.node.js: 5 s per test, 5 retries), pointed at
 * a target as its scripts point it at an emulator (the Auth suite: FIREBASE_AUTH_EMULATOR_HOST, GCLOUD_PROJECT;
 * the Firestore suite: FIRESTORE_TARGET_BACKEND, FIRESTORE_EMULATOR_PORT, FIRESTORE_EMULATOR_PROJECT_ID).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { bundleForNode } from './bundle.js';
import { collectorSource, type SuiteRun } from './results.js';

export interface NodeSuiteOptions {
  files: string[];
  /** The scratch copy's root, the bundles' base. */
  checkoutRoot: string;
  scratch: string;
  nodePaths: string[];
  /** 127.0.0.1:PORT */
  hostPort: string;
  projectId: string;
  /** Ends the run (the child is killed) after this long. */
  timeoutMs: number;
  /** Each test's title as it ends, for progress. */
  onLine?: (line: string) => void;
  /** How the suite finds its target (default: the Auth suite's FIREBASE_AUTH_EMULATOR_HOST and GCLOUD_PROJECT). */
  env?: Record<string, string>;
}

const mochaSettings = { timeout: 5000, retries: 5 };

export async function runNodeSuite(options: NodeSuiteOptions): Promise<SuiteRun> {
  const outdir = join(options.scratch, 'node-bundle');
  mkdirSync(outdir, { recursive: true });
  const bundles = await bundleForNode({ entryPoints: options.files, outdir, outbase: options.checkoutRoot, nodePaths: options.nodePaths });
  const resultFile = join(options.scratch, 'node-results.json');
  const driver = join(options.scratch, 'node-driver.cjs');
  writeFileSync(
    driver,
    `${collectorSource}
const Mocha = require('mocha');
const { writeFileSync } = require('node:fs');
const mocha = new Mocha(${JSON.stringify(mochaSettings)});
for (const file of ${JSON.stringify(bundles.sort())}) mocha.addFile(file);
mocha.loadFilesAsync().then(() => {
  const runner = mocha.run();
  runner.on('test end', (test) => process.stdout.write('[' + (test.state || 'pending') + '] ' + test.fullTitle() + '\\n'));
  collectResults(runner, mocha.suite, (results) => {
    writeFileSync(${JSON.stringify(resultFile)}, JSON.stringify(results));
    process.exit(0);
  });
});
`,
  );
  const child = spawn(process.execPath, [driver], {
    cwd: options.scratch,
    env: {
      ...process.env,
      NODE_PATH: options.nodePaths.join(delimiter),
      ...(options.env ?? { FIREBASE_AUTH_EMULATOR_HOST: options.hostPort, GCLOUD_PROJECT: options.projectId }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const onData = (chunk: Buffer) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-4000);
    for (const line of text.split('\n')) if (line.startsWith('[')) options.onLine?.(line);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  try {
    return JSON.parse(readFileSync(resultFile, 'utf8')) as SuiteRun;
  } catch {
    return { total: 0, tests: [], hookFailures: [], aborted: `mocha exited (${code}) without results:\n${tail}` };
  }
}
