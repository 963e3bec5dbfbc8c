/**
 * `npm test`: every test file of tests/ on SQLite, and those that start a Hearth server again on
 * PostgreSQL, as one queue of (file, backend) jobs run several at a time; each job is its own
 * `node --test` process with its own servers, free ports and data folders, so jobs share nothing.
 * The longest jobs (by the last run's times, tests/test-times.json on a fresh clone) start first.
 *
 *   npm test                          the whole suite (the web app built first; everything type-checked beside the tests)
 *   npm test -- tests/auth            only the files under the given paths (both backends)
 *   HEARTH_TEST_JOBS=N                jobs at once (default: 2 per core)
 *   HEARTH_TEST_BACKENDS=sqlite       one backend only (sqlite, postgres or both; default both)
 *   HEARTH_TEST_BUILD=0               run the TypeScript through tsx rather than the build (scripts/test-build.ts)
 *
 * Ends with one plain "N passed, N failed" line (CI reads it) after the ten slowest jobs.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { builtFile, testBuildDir, testBuildVariable } from '../tests/helpers/hearth-command.js';
import { dropRunDatabases, runDatabasesVariable } from '../tests/helpers/pg-database.js';
import { machineCpuTicks, ticksPerSecond } from '../tests/helpers/proc-usage.js';
import { buildForTests } from './test-build.js';

type Backend = 'sqlite' | 'postgres';
interface Job {
  file: string;
  backend: Backend;
}
interface JobResult extends Job {
  passed: number;
  failed: number;
  seconds: number;
  /** CPU seconds of the job's process and the children it waited for (servers, Chromium), where GNU time is installed. */
  cpuSeconds?: number;
  exitCode: number | null;
  output: string;
}

const root = resolve(import.meta.dirname, '..');
const testsDir = join(root, 'tests');
const tmpDir = join(root, '.tmp');
const committedTimes = join(testsDir, 'test-times.json');
const lastTimes = join(tmpDir, 'test-times.json');
/** A job that runs longer than this is killed and counted as a failure (a hang must not eat CI). */
const jobTimeoutMs = 20 * 60_000;
/** GNU time, to tell each job's CPU seconds (what the suite's length on a small machine is made of). */
const gnuTime = '/usr/bin/time';

/**
 * Files that stay on SQLite: the SQLite file itself is what they test, or they make their own
 * PostgreSQL databases (and so run on it in the SQLite pass already).
 */
const sqliteOnly = new Set([
  'storage/sqlite-stored-ids.test.ts',
  'http/admin-credential.test.ts',
  'storage/pg-change-feed.test.ts',
  'storage/pg-group-commit.test.ts',
  'cli/pg-migrate.test.ts',
  'scale-out/pg-multi-instance.test.ts',
  'scale-out/instances.test.ts',
  'scale-out/sessions.test.ts',
  'scale-out/sqlite-workers.test.ts',
  'storage/pg-keyed-lookups.test.ts',
]);

function testFiles(under: string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        if (entry !== 'helpers' && entry !== 'node_modules') walk(path);
      } else if (entry.endsWith('.test.ts')) found.push(relative(testsDir, path));
    }
  };
  walk(testsDir);
  if (under.length === 0) return found;
  const prefixes = under.map((path) => relative(testsDir, resolve(root, path)));
  return found.filter((file) => prefixes.some((prefix) => prefix === '' || file === prefix || file.startsWith(`${prefix}/`)));
}

/** Only a file that starts a server can change with the backend; browser files stay on SQLite. */
function runsOnPostgres(file: string): boolean {
  if (sqliteOnly.has(file) || file.startsWith('web/')) return false;
  const source = readFileSync(join(testsDir, file), 'utf8');
  if (source.includes('helpers/browser')) return false;
  return /startHearth|spawnHearth/.test(source);
}

function loadTimes(): Record<string, number> {
  for (const path of [lastTimes, committedTimes]) {
    if (existsSync(path)) {
      try {
        return JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>;
      } catch {
        // a torn file: try the next
      }
    }
  }
  return {};
}

const postgresJobs = (jobs: Job[]) => jobs.some((job) => job.backend === 'postgres');

const jobKey = (job: Job) => `${job.backend}:${job.file}`;

async function postgresListening(): Promise<boolean> {
  return new Promise((resolveListening) => {
    const socket = createConnection({ host: '127.0.0.1', port: 5432 });
    socket.once('connect', () => {
      socket.destroy();
      resolveListening(true);
    });
    socket.once('error', () => resolveListening(false));
  });
}

/** Whether the jobs run the esbuild build of the suite (scripts/test-build.ts) rather than tsx. */
const useBuild = process.env[testBuildVariable] !== '0';

function runJob(job: Job): Promise<JobResult> {
  const started = Date.now();
  const tapDir = join(tmpDir, 'tap', job.backend);
  const tapFile = join(tapDir, `${job.file.replaceAll('/', '__')}.tap`);
  mkdirSync(tapDir, { recursive: true });
  const testFile = join('tests', job.file);
  const loader = useBuild ? ['--enable-source-maps'] : ['--import', 'tsx'];
  const args = [...loader, '--test', '--test-concurrency=1', '--test-timeout=300000', '--test-reporter=spec', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${tapFile}`, useBuild ? builtFile(testFile) : testFile];
  const env = { ...process.env, HEARTH_TEST_BACKEND: job.backend, FORCE_COLOR: '0', [testBuildVariable]: useBuild ? '1' : '0' };
  const cpuFile = `${tapFile}.cpu`;
  const [command, commandArgs] = existsSync(gnuTime) ? [gnuTime, ['-f', '%U %S', '-o', cpuFile, process.execPath, ...args]] : [process.execPath, args];
  return new Promise((resolveJob) => {
    const child = spawn(command, commandArgs, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      output += `\n[run-tests] killed after ${jobTimeoutMs / 60_000} minutes\n`;
      killGroup();
    }, jobTimeoutMs);
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      // Servers a test spawned and left behind go with the job's process group.
      killGroup();
      const tap = existsSync(tapFile) ? readFileSync(tapFile, 'utf8') : '';
      let failed = lastCount(tap, 'fail');
      const passed = lastCount(tap, 'pass');
      if (exitCode !== 0 && failed === 0) failed = 1; // crashed, killed or failed outside a test
      const cpu = existsSync(cpuFile) ? readFileSync(cpuFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number) : [];
      const cpuSeconds = cpu.length === 2 && cpu.every(Number.isFinite) ? cpu[0]! + cpu[1]! : undefined;
      resolveJob({ ...job, passed, failed, seconds: (Date.now() - started) / 1000, ...(cpuSeconds !== undefined ? { cpuSeconds } : {}), exitCode, output });
    });
  });
}

function lastCount(tap: string, what: string): number {
  const matches = [...tap.matchAll(new RegExp(`^# ${what} (\\d+)$`, 'gm'))];
  return matches.length ? Number(matches[matches.length - 1]![1]) : 0;
}

/** A step run beside the jobs: its output is shown when it fails. */
function background(name: string, command: string, args: string[]): Promise<boolean> {
  const started = Date.now();
  return new Promise((resolveStep) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      console.log(`== ${name}: ${code === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
      if (code !== 0) console.log(indent(output));
      resolveStep(code === 0);
    });
  });
}

function step(name: string, command: string, args: string[]): boolean {
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  console.log(`== ${name}: ${result.status === 0 ? 'ok' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return result.status === 0;
}

async function main(): Promise<number> {
  const paths = process.argv.slice(2);
  const wanted = (process.env.HEARTH_TEST_BACKENDS ?? 'both').split(',');
  const backends = new Set<Backend>(wanted.includes('both') ? ['sqlite', 'postgres'] : (wanted as Backend[]));
  const started = Date.now();
  mkdirSync(tmpDir, { recursive: true });
  if (!step('web app build', 'npm', ['run', 'build', '--silent'])) return 1;
  // The type-check runs beside the tests (it is one more CPU-bound job, not a stage before them); a
  // failure fails the run.
  const typeCheck = background('type-check', 'npm', ['run', 'typecheck', '--silent']);

  const files = testFiles(paths);
  if (useBuild) {
    const buildStarted = Date.now();
    rmSync(testBuildDir, { recursive: true, force: true });
    try {
      await buildForTests(files.map((file) => join('tests', file)));
    } catch (error) {
      console.log(`== test build: FAILED\n${indent(String((error as Error).message ?? error))}`);
      return 1;
    }
    console.log(`== test build (esbuild, scripts/test-build.ts): ok in ${((Date.now() - buildStarted) / 1000).toFixed(0)} s`);
  }
  const jobs: Job[] = [];
  if (backends.has('sqlite')) for (const file of files) jobs.push({ file, backend: 'sqlite' });
  let postgresMissing = false;
  if (backends.has('postgres')) {
    if (await postgresListening()) {
      for (const file of files) if (runsOnPostgres(file)) jobs.push({ file, backend: 'postgres' });
    } else {
      postgresMissing = true;
      console.log('PostgreSQL is not listening on 127.0.0.1:5432: its pass is counted as one failure');
    }
  }
  // The PostgreSQL jobs' databases stay until every job is done (pg-database.ts says why).
  const runTag = postgresJobs(jobs) ? `r${process.pid.toString(36)}${Date.now().toString(36)}` : undefined;
  if (runTag) process.env[runDatabasesVariable] = runTag;
  const times = loadTimes();
  // Longest first, so the last jobs to finish are short ones; unknown files count as long.
  jobs.sort((a, b) => (times[jobKey(b)] ?? 120) - (times[jobKey(a)] ?? 120));
  const parallel = Number(process.env.HEARTH_TEST_JOBS) || Math.max(2, availableParallelism() * 2);
  console.log(`== ${jobs.length} jobs (${files.length} files; ${jobs.filter((job) => job.backend === 'postgres').length} again on PostgreSQL), ${parallel} at a time`);

  const results: JobResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      const result = await runJob(job);
      results.push(result);
      const mark = result.failed > 0 ? '✖' : '✔';
      console.log(`${mark} ${job.file} [${job.backend}] ${result.passed} passed, ${result.failed} failed, ${result.seconds.toFixed(1)} s (${results.length}/${jobs.length})`);
      if (result.failed > 0) console.log(indent(result.output));
    }
  };
  const machineBefore = machineCpuTicks();
  await Promise.all(Array.from({ length: parallel }, worker));
  const machineAfter = machineCpuTicks();
  const typesOk = await typeCheck;
  if (runTag) {
    const dropStarted = Date.now();
    const dropped = await dropRunDatabases(runTag).catch((error: unknown) => {
      console.log(`== test databases: not all dropped (${(error as Error).message})`);
      return 0;
    });
    console.log(`== ${dropped} test database(s) dropped in ${((Date.now() - dropStarted) / 1000).toFixed(0)} s`);
  }

  const newTimes: Record<string, number> = { ...times };
  for (const result of results) newTimes[jobKey(result)] = Math.round(result.seconds);
  writeFileSync(lastTimes, `${JSON.stringify(newTimes, null, 1)}\n`);

  const measured = results.filter((result) => result.cpuSeconds !== undefined);
  if (measured.length) {
    writeFileSync(join(tmpDir, 'test-cpu.json'), `${JSON.stringify(Object.fromEntries(measured.map((result) => [jobKey(result), Math.round(result.cpuSeconds!)])), null, 1)}\n`);
    const total = measured.reduce((sum, result) => sum + result.cpuSeconds!, 0);
    console.log(`\n== CPU: ${(total / 60).toFixed(1)} min in all; the ten costliest jobs`);
    if (machineBefore && machineAfter) {
      // What the jobs' own count misses: PostgreSQL's backends, detached emulators, anything else running.
      const busy = (machineAfter.busy - machineBefore.busy) / ticksPerSecond() / 60;
      const all = (machineAfter.all - machineBefore.all) / ticksPerSecond() / 60;
      console.log(`   (the whole machine while the jobs ran: ${busy.toFixed(1)} of ${all.toFixed(1)} CPU-min busy)`);
    }
    for (const result of [...measured].sort((a, b) => b.cpuSeconds! - a.cpuSeconds!).slice(0, 10)) {
      console.log(`${result.cpuSeconds!.toFixed(1).padStart(7)} s  ${result.file} [${result.backend}]`);
    }
  }
  console.log('\n== the ten slowest jobs');
  for (const result of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10)) {
    console.log(`${result.seconds.toFixed(1).padStart(7)} s  ${result.file} [${result.backend}]`);
  }
  const failedJobs = results.filter((result) => result.failed > 0);
  if (failedJobs.length) {
    console.log('\n== failed');
    for (const result of failedJobs) console.log(`${result.file} [${result.backend}]: ${result.failed} failed${result.exitCode === null ? ' (killed)' : ''}`);
  }
  const passed = results.reduce((sum, result) => sum + result.passed, 0);
  const failed = results.reduce((sum, result) => sum + result.failed, 0) + (postgresMissing ? 1 : 0) + (typesOk ? 0 : 1);
  console.log(`\n== wall time ${((Date.now() - started) / 60_000).toFixed(1)} min`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

process.exitCode = await main();
