/**
 * `npm run bench -- listeners`: Firestore listeners (Listen over raw gRPC from several processes of clients).
 *
 * 1. Time from a commit to a listener's snapshot, median and p99 over every listener and commit, and
 *    the time until the last listener has it, with 1, 100 and 1,000 listeners on one query; beside
 *    the baseline measured in the same run, a REST commit's round trip with nobody listening.
 *    (latency.ts)
 * 2. How many concurrent listening clients one Hearth process holds, and whether its memory stays
 *    flat: 1,000, 5,000, 10,000 clients with one listener each, the server's heap (after a full
 *    collection) and RSS read after each step, then a minute idle with the number fixed (RSS read
 *    every 10 s), then a few rounds of commits. (memory.ts)
 * 3. With `workers` among the targets: the same latencies against `hearth start --workers 2` on
 *    SQLite, its clients' connections (listeners and writer alike) spread over both workers.
 * 4. The same latencies against Google's Firestore emulator on this machine, when installed (and its
 *    memory steps on request: its memory is its JVM's resident size, which a collection does not
 *    give back).
 *
 * The clients run in processes of their own (clients.ts, driver.ts), so that what this process
 * measures is the server's, and the clients' CPU is spread; Hearth runs in this process, as in the
 * other benches.
 *
 * Settings: HEARTH_BENCH_LISTENERS (1,100,1000 listeners on one query), HEARTH_BENCH_LISTENERS_PER_CLIENT
 * (50: listeners share clients, this many each), HEARTH_BENCH_LISTENERS_PROCESSES (3 processes of
 * listening clients, plus one writer), HEARTH_BENCH_LISTENERS_COMMITS (50 measured per count),
 * HEARTH_BENCH_LISTENERS_WARMUP (5 commits), HEARTH_BENCH_LISTENERS_CLIENTS (1000,5000,10000
 * clients in the memory steps), HEARTH_BENCH_LISTENERS_HOLD_S (60 s idle at the largest), HEARTH_BENCH_LISTENERS_STEP_COMMITS (10 per step),
 * HEARTH_BENCH_LISTENERS_ROUNDS (5) of HEARTH_BENCH_LISTENERS_ROUND_COMMITS (20) with the largest
 * number held, HEARTH_BENCH_LISTENERS_TARGETS (hearth,workers,emulator), HEARTH_BENCH_LISTENERS_MEMORY_TARGETS
 * (hearth: which of them also run the memory steps; the emulator's take minutes, as its commits slow
 * to seconds with thousands of listeners), HEARTH_BENCH_LISTENERS_PROFILE (a file:
 * write a CPU profile of Hearth over the largest count's commits there, and print where the time went).
 * JVM_FLAGS reaches the emulator's JVM.
 */
import { resolve } from 'node:path';
import { progress } from '../env.js';
import { startEmulatorTarget, startHearthTarget, startHearthWorkersTarget, type Target } from '../firestore/targets.js';
import { startClientProcess, type ClientProcess } from './driver.js';
import { measureLatency } from './latency.js';
import { measureMemory } from './memory.js';
import { header, report, type TargetRun } from './report.js';
import { settings } from './settings.js';

async function runTarget(target: Target, inProcess: boolean, run: TargetRun): Promise<void> {
  let clients: ClientProcess | undefined;
  try {
    clients = await startClientProcess(target, settings.processes);
    if (settings.memoryTargets.includes(inProcess ? 'hearth' : 'emulator')) await measureMemory(target, clients, inProcess, run.memory);
    const profileFile = inProcess && settings.profile !== '' ? resolve(settings.profile) : undefined;
    await measureLatency(target, clients, run.latency, profileFile);
  } finally {
    await clients?.close();
  }
}

const emptyRun = (name: string): TargetRun => ({ name, latency: { rows: [] }, memory: { steps: [], idle: [], rounds: [] } });

export async function runListenersBench(): Promise<void> {
  console.log(header());
  const started = performance.now();
  const runs: TargetRun[] = [];
  let projectId = 'demo-hearth';
  try {
    if (settings.targets.includes('hearth')) {
      const hearth = await startHearthTarget();
      projectId = hearth.projectId;
      const run = emptyRun(hearth.name);
      runs.push(run);
      try {
        progress(`Hearth at ${hearth.origin}`);
        await runTarget(hearth, true, run);
      } finally {
        await hearth.close();
      }
    }
    if (settings.targets.includes('workers')) {
      // Latency only: its memory is several processes'.
      const workers = await startHearthWorkersTarget(2);
      const run = emptyRun(workers.name);
      runs.push(run);
      try {
        progress(`${workers.name} at ${workers.origin}`);
        const clients = await startClientProcess(workers, settings.processes);
        try {
          await measureLatency(workers, clients, run.latency, undefined);
        } finally {
          await clients.close();
        }
      } finally {
        await workers.close();
      }
    }
    if (settings.targets.includes('emulator')) {
      progress('starting the Firestore emulator (gcloud emulators firestore start)');
      const emulator = await startEmulatorTarget(projectId);
      const run = emptyRun('emulator');
      runs.push(run);
      if (typeof emulator === 'string') {
        run.note = `skipped: ${emulator}`;
        progress(`emulator ${run.note}`);
      } else {
        try {
          progress(`emulator at ${emulator.origin}; ${emulator.footprint()}`);
          await runTarget(emulator, false, run);
        } catch (error) {
          run.note = `failed: ${error instanceof Error ? error.message : String(error)}`;
          progress(`emulator ${run.note}`);
        } finally {
          await emulator.close();
        }
      }
    }
  } finally {
    report(runs);
    progress(`listeners bench done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}
