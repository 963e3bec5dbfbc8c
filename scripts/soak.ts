/**
 * npm run soak                      kill -9 cycles (100) under concurrent writers, with a verifier
 * npm run soak -- --short           the same, 5 cycles (what CI runs: tests/reliability/soak.test.ts)
 * npm run soak -- --cycles N        N cycles
 * npm run soak -- --mixed --minutes 60   one process under mixed load, RSS sampled; memory must be flat
 * npm run soak -- --rules-invariant [--scale N] [--seed N]
 *                                   the rules invariant (tests/rules/rules-invariant*.test.ts) on N times its
 *                                   corpus (5 by default): every version a caller receives is one it may read
 *
 * Environment: HEARTH_SOAK_SHORT=1 is --short. Exits 1 when an acknowledged write was lost, a batch
 * was half applied, a request got a 5xx, or memory kept growing.
 */
import { spawn } from 'node:child_process';
import { runKillCycles } from '../tests/helpers/soak-cycles.js';
import { runMixedLoad } from '../tests/helpers/soak-mixed.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const value = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  const parsed = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} needs a positive number`);
  return parsed;
};
const log = (line: string) => process.stdout.write(`${line}\n`);

/** Growth allowed between the warm-up's memory and the end's before the run counts as a leak. */
const allowedGrowth = 1.15;

/** The rules invariant's test files at a larger corpus (INVARIANT_SCALE); HEARTH_TEST_BACKEND chooses the backend. */
function runRulesInvariant(): Promise<number> {
  const scale = value('scale', 5);
  const seed = args.includes('--seed') ? String(value('seed', 1)) : undefined;
  log(`rules invariant soak: ${scale} times the corpus${seed ? `, seed ${seed}` : ''}`);
  const files = ['tests/rules/rules-invariant.test.ts', 'tests/rules/rules-invariant-reads.test.ts'];
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=7200000', ...files], {
    stdio: 'inherit',
    env: { ...process.env, INVARIANT_SCALE: String(scale), ...(seed ? { INVARIANT_SEED: seed } : {}) },
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

async function main(): Promise<number> {
  if (flag('rules-invariant')) return runRulesInvariant();
  if (flag('mixed')) {
    const minutes = value('minutes', 60);
    log(`mixed-load soak: ${minutes} minutes`);
    const report = await runMixedLoad({ minutes, workers: value('workers', 4), sampleEveryMs: value('sample-seconds', 10) * 1000, log });
    log(
      `\nrequests ${report.requests} (${Math.round(report.requests / (minutes * 60))}/s), 4xx/5xx ${report.errors}, 5xx ${report.serverErrors}\n` +
        `RSS after warm-up ${report.earlyMb.toFixed(1)} MB, at the end ${report.lateMb.toFixed(1)} MB, max ${report.maxMb.toFixed(1)} MB, ` +
        `slope ${report.slopeMbPerHour.toFixed(1)} MB/hour over ${report.samples.length} samples\n` +
        `lowest RSS per quarter (after garbage collection): ${report.quarterFloorsMb.map((mb) => mb.toFixed(1)).join(', ')} MB`,
    );
    // Judged on the floors (the sawtooth of garbage collection makes single samples noisy): the last
    // quarter's floor may not rise more than 15% over the second's (the first is warm-up).
    const [, warm, , last] = report.quarterFloorsMb;
    const flat = last! <= warm! * allowedGrowth;
    log(flat ? 'memory: flat' : 'memory: GROWING');
    return flat && report.serverErrors === 0 ? 0 : 1;
  }
  const short = flag('short') || process.env.HEARTH_SOAK_SHORT === '1';
  const cycles = value('cycles', short ? 5 : 100);
  log(`kill -9 soak: ${cycles} cycles`);
  const report = await runKillCycles({ cycles, writersPerKind: value('writers', 2), maxRunMs: value('run-ms', 1500), log });
  log(
    `\n${report.cycles} cycles; acknowledged ${report.acknowledged.batches} batches (${report.attemptedBatches} attempted), ` +
      `${report.acknowledged.accounts} accounts, ${report.acknowledged.mails} mails (${report.mailsDelivered} delivered, at least once)\n` +
      `restart to healthy: median ${report.restartMs.median} ms, p95 ${report.restartMs.p95} ms, max ${report.restartMs.max} ms\n` +
      `lost ${report.lost.length}, half-applied batches ${report.halfApplied.length}`,
  );
  for (const line of [...report.lost, ...report.halfApplied].slice(0, 20)) log(`  ${line}`);
  return report.lost.length === 0 && report.halfApplied.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
