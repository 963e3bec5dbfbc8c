/**
 * 4. Big commits beside small reads: one client reads a small document in a loop, alone and then
 * while other clients commit batches of 500 documents of ~12 KB (a ~6 MB request). A big commit
 * whose work runs as one long block makes every read behind it wait; the longest stall of the
 * event loop (perf_hooks' delay histogram) says how long such a block was.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { envCount } from '../env.js';
import { percentile } from '../stats.js';
import { commitBody, int } from './data.js';
import { documentsPath, headers, post, type Json, type Target } from './targets.js';

export const bigCommitSettings = {
  docs: envCount('HEARTH_BENCH_FIRESTORE_BIG_DOCS', 500),
  docBytes: envCount('HEARTH_BENCH_FIRESTORE_BIG_DOC_BYTES', 12_000),
  commits: envCount('HEARTH_BENCH_FIRESTORE_BIG_COMMITS', 12),
  writers: envCount('HEARTH_BENCH_FIRESTORE_BIG_WRITERS', 2),
  reads: envCount('HEARTH_BENCH_FIRESTORE_BIG_READS', 400),
};

export interface ReadLatency {
  n: number;
  p50: number;
  p99: number;
  max: number;
  /** The longest the event loop was held at once while they ran (ms). */
  longestBlock: number;
}

export interface BigCommitResult {
  requestBytes: number;
  alone: ReadLatency;
  during: ReadLatency;
  bigCommitMs: { p50: number; max: number };
}

function bigFields(i: number, bytes: number): Json {
  const text = `document ${i} `.padEnd(bytes, 'lorem ipsum dolor sit amet ');
  return { n: int(i), group: int(i % 50), tag: { stringValue: `tag-${i % 7}` }, nested: { mapValue: { fields: { a: int(i), b: { booleanValue: i % 2 === 0 } } } }, text: { stringValue: text } };
}

/** Times `reads` small reads, one at a time, until `until` says stop (or `reads` are done). */
async function readLoop(target: Target, name: string, reads: number, until: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  const url = `${target.origin}${documentsPath(target)}/${name}`;
  while (latencies.length < reads && !until()) {
    const began = performance.now();
    const response = await fetch(url, { headers });
    await response.text();
    if (!response.ok) throw new Error(`${target.name} GET ${name} answered ${response.status}`);
    latencies.push(performance.now() - began);
  }
  return latencies;
}

function summarize(latencies: number[], longestBlock: number): ReadLatency {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1] ?? 0, longestBlock };
}

async function withLoopMonitor<T>(run: () => Promise<T>): Promise<{ value: T; longestBlock: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  try {
    const value = await run();
    return { value, longestBlock: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}

export async function measureBigCommits(target: Target): Promise<BigCommitResult> {
  const { docs, docBytes, commits, writers, reads } = bigCommitSettings;
  await post(target, ':commit', commitBody(target, 'small', [{ id: 'one', fields: { n: int(1) } }]));
  // Every request body is built and encoded before the clock starts: building or encoding 6 MB
  // of JSON here would block this process's event loop too and be blamed on the server.
  const bodies = Array.from({ length: commits }, (_, c) =>
    Buffer.from(commitBody(target, 'big', Array.from({ length: docs }, (_, k) => ({ id: `c${c}-${k}`, fields: bigFields(c * docs + k, docBytes) })))),
  );
  const commitUrl = `${target.origin}${documentsPath(target)}:commit`;
  await readLoop(target, 'small/one', 50, () => false);
  const alone = await withLoopMonitor(() => readLoop(target, 'small/one', reads, () => false));
  let next = 0;
  let running = writers;
  const commitMs: number[] = [];
  const writer = async () => {
    try {
      for (let c = next++; c < bodies.length; c = next++) {
        const began = performance.now();
        const response = await fetch(commitUrl, { method: 'POST', headers, body: bodies[c]! });
        const text = await response.text();
        if (!response.ok) throw new Error(`${target.name} big :commit answered ${response.status}: ${text.slice(0, 300)}`);
        commitMs.push(performance.now() - began);
      }
    } finally {
      running--;
    }
  };
  const during = await withLoopMonitor(async () => {
    const writing = Array.from({ length: writers }, writer);
    const latencies = await readLoop(target, 'small/one', Number.MAX_SAFE_INTEGER, () => running === 0);
    await Promise.all(writing);
    return latencies;
  });
  commitMs.sort((a, b) => a - b);
  return {
    requestBytes: bodies[0]?.length ?? 0,
    alone: summarize(alone.value, alone.longestBlock),
    during: summarize(during.value, during.longestBlock),
    bigCommitMs: { p50: percentile(commitMs, 0.5), max: commitMs[commitMs.length - 1] ?? 0 },
  };
}
