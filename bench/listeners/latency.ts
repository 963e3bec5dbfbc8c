/** Commit-to-snapshot latency: the baseline commit alone, then N listeners on one query. */
import { progress } from '../env.js';
import type { Target } from '../firestore/targets.js';
import { spread, type Spread } from '../stats.js';
import type { ClientProcess } from './driver.js';
import { profile, type ProfileSummary } from './profile.js';
import type { CommitRun } from './protocol.js';
import { settings, shapes, type Shape } from './settings.js';

export interface LatencyRow extends Shape {
  /** Every listener's latency (from the acknowledgement, and from sending), the first and the last listener's per commit, the commit's own answer. */
  each: Spread;
  fromSend: Spread;
  first: Spread;
  last: Spread;
  commit: Spread;
  /** CPU time per commit of the server and of the client process. */
  serverCpuMs: number | undefined;
  clientCpuMs: number;
  openMs: number;
}

export interface LatencyResult {
  /** REST :commit round trip with nobody listening. */
  baseline?: Spread;
  rows: LatencyRow[];
  profile?: ProfileSummary;
}

/** Throws unless every listener saw every commit exactly once. */
export function checkRun(target: Target, what: string, run: CommitRun): void {
  if (run.received !== run.expected || run.latencies.length !== run.expected) {
    throw new Error(`${target.name}, ${what}: ${run.received} snapshots brought a commit, ${run.expected} expected`);
  }
}

/** Commits through the client process while reading the server's CPU time. */
export async function timedCommits(target: Target, clients: ClientProcess, commits: number): Promise<{ run: CommitRun; serverCpuMs: number | undefined }> {
  const before = target.usage()?.cpuMs;
  const run = await clients.call('commits', { commits });
  const after = target.usage()?.cpuMs;
  return { run, serverCpuMs: before === undefined || after === undefined ? undefined : (after - before) / commits };
}

/** Fills `result` as it goes, so a failure part-way still leaves what was measured. */
export async function measureLatency(target: Target, clients: ClientProcess, result: LatencyResult, profileFile: string | undefined): Promise<void> {
  progress(`${target.name}: baseline, ${settings.commits} REST commits with nobody listening`);
  await clients.call('commits', { commits: settings.warmup });
  result.baseline = spread((await clients.call('commits', { commits: settings.commits })).commit);
  await clients.call('close', {});
  const largest = Math.max(...shapes.map((shape) => shape.listeners));
  for (const shape of shapes) {
    const what = `${shape.listeners} listener${shape.listeners > 1 ? 's' : ''} on ${shape.clients} client${shape.clients > 1 ? 's' : ''}`;
    progress(`${target.name}: ${what}, ${settings.commits} commits`);
    try {
      const opened = await clients.call('open', shape);
      await clients.call('commits', { commits: settings.warmup });
      const measure = () => timedCommits(target, clients, settings.commits);
      let timed: Awaited<ReturnType<typeof measure>>;
      if (profileFile && shape.listeners === largest) {
        const profiled = await profile(profileFile, measure);
        timed = profiled.result;
        result.profile = profiled.summary;
      } else {
        timed = await measure();
      }
      checkRun(target, what, timed.run);
      const { run, serverCpuMs } = timed;
      result.rows.push({
        ...shape,
        each: spread(run.latencies),
        fromSend: spread(run.fromSend),
        first: spread(run.first),
        last: spread(run.last),
        commit: spread(run.commit),
        serverCpuMs,
        clientCpuMs: run.clientCpuMs / settings.commits,
        openMs: opened.openMs,
      });
    } finally {
      await clients.call('close', {});
    }
  }
}
