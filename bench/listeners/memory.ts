/**
 * How many listening clients one server process holds: K clients with one listener each, K growing
 * in steps, the server's memory read after each step (and a few commits that every listener must
 * see); then, with K fixed, a few rounds of commits to see whether memory stays flat; then all closed.
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { progress } from '../env.js';
import type { Target } from '../firestore/targets.js';
import { spread, type Spread } from '../stats.js';
import type { ClientProcess } from './driver.js';
import { checkRun, timedCommits } from './latency.js';
import { settings } from './settings.js';

export interface MemorySample {
  clients: number;
  rss: number;
  /** In-process servers only: V8 heap in use after a full collection, and open TCP connections. */
  heap?: number;
  sockets?: number;
  /** The client process's resident memory (context: what the clients themselves cost). */
  clientRss?: number;
}

export interface MemoryStep extends MemorySample {
  each: Spread;
  last: Spread;
  serverCpuMs: number | undefined;
  clientCpuMs: number;
  openMs: number;
}

export interface MemoryResult {
  base?: MemorySample;
  steps: MemoryStep[];
  /** With the largest K held and idle: one sample every 10 s. */
  idle: (MemorySample & { seconds: number })[];
  /** With the largest K held: one sample after each round of commits. */
  rounds: MemorySample[];
  released?: MemorySample;
  /** Why the steps stopped before the last, when they did. */
  stopped?: string;
}

let collect: (() => void) | undefined;

/** A full collection of this process's heap (twice: weak references and finalizers free more). */
function collectGarbage(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
  collect();
}

function sample(target: Target, inProcess: boolean, clients: number, clientRss?: number): MemorySample {
  const base = { clients, ...(clientRss === undefined ? {} : { clientRss }) };
  if (!inProcess) return { ...base, rss: target.usage()?.rssBytes ?? NaN };
  collectGarbage();
  const memory = process.memoryUsage();
  const sockets = process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length;
  return { ...base, rss: memory.rss, heap: memory.heapUsed, sockets };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The soft limit on open files (`ulimit -n`) of this process, which holds the server's end of every connection; Linux only. */
function openFileLimit(): number | undefined {
  try {
    const match = /Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Fills `result` as it goes. `inProcess`: the server runs in this process, so its heap can be read. */
export async function measureMemory(target: Target, clients: ClientProcess, inProcess: boolean, result: MemoryResult): Promise<void> {
  // Warm-up: the first listeners load and compile code that later ones only use.
  const warmup = Math.min(20, settings.clientSteps[0] ?? 20);
  await clients.call('open', { listeners: warmup, clients: warmup });
  await clients.call('commits', { commits: settings.warmup });
  await clients.call('close', {});
  await pause(1000);
  result.base = sample(target, inProcess, 0);
  // A process cannot raise its own limit: say how, rather than fail half-way with EMFILE.
  const limit = openFileLimit();
  const largest = Math.max(...settings.clientSteps);
  if (inProcess && limit !== undefined && limit < largest + 1000) {
    result.stopped = `ulimit -n is ${limit}: ${largest} clients need about ${largest + 1000} open files here; run \`ulimit -n ${largest + 5000}\` (as root, or within the hard limit) first`;
    progress(`${target.name}: ${result.stopped}`);
    return;
  }
  let open = 0;
  let clientRss: number | undefined;
  for (const step of settings.clientSteps) {
    if (step <= open) continue;
    progress(`${target.name}: ${step} clients with one listener each`);
    let openMs: number;
    try {
      const opened = await clients.call('open', { listeners: step - open, clients: step - open });
      openMs = opened.openMs;
      clientRss = opened.clientRss;
    } catch (error) {
      result.stopped = `opening ${step} clients failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
      progress(`${target.name}: ${result.stopped}`);
      break;
    }
    open = step;
    const { run, serverCpuMs } = await timedCommits(target, clients, settings.stepCommits);
    checkRun(target, `${step} clients`, run);
    await pause(200);
    const clientCpuMs = run.clientCpuMs / settings.stepCommits;
    result.steps.push({ ...sample(target, inProcess, open, clientRss), each: spread(run.latencies), last: spread(run.last), serverCpuMs, clientCpuMs, openMs });
  }
  if (result.stopped === undefined && open > 0 && settings.holdSeconds > 0) {
    progress(`${target.name}: ${open} clients held idle for ${settings.holdSeconds} s`);
    const began = performance.now();
    result.idle.push({ ...sample(target, inProcess, open, clientRss), seconds: 0 });
    while (performance.now() - began < settings.holdSeconds * 1000) {
      await pause(Math.min(10_000, settings.holdSeconds * 1000 - (performance.now() - began)));
      result.idle.push({ ...sample(target, inProcess, open, clientRss), seconds: Math.round((performance.now() - began) / 1000) });
    }
  }
  if (result.stopped === undefined && open > 0) {
    for (let round = 1; round <= settings.rounds; round++) {
      progress(`${target.name}: ${open} clients held, round ${round} of ${settings.rounds} (${settings.roundCommits} commits, then 1 s idle)`);
      const { run } = await timedCommits(target, clients, settings.roundCommits);
      checkRun(target, `${open} clients, round ${round}`, run);
      await pause(1000);
      result.rounds.push(sample(target, inProcess, open, clientRss));
    }
  }
  await clients.call('close', {});
  await pause(3000);
  result.released = sample(target, inProcess, 0);
}
