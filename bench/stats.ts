/** One measured rate with its latency spread. Latencies in milliseconds. */
export interface Rate {
  perSecond: number;
  ops: number;
  seconds: number;
  p50: number;
  p99: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[index] ?? 0;
}

/**
 * Runs `op` from `concurrency` loops at once until `seconds` have passed, as autocannon keeps
 * `connections` requests in flight; operations still running at the deadline are finished and counted.
 */
export async function runConcurrent(concurrency: number, seconds: number, op: () => Promise<unknown>): Promise<Rate> {
  const latencies: number[] = [];
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const loop = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const began = performance.now();
      await op();
      latencies.push(performance.now() - began);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / elapsed, ops: latencies.length, seconds: elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

/** Warm-up (not counted) then the measured run. */
export async function measureConcurrent(concurrency: number, warmupSeconds: number, seconds: number, op: () => Promise<unknown>): Promise<Rate> {
  if (warmupSeconds > 0) await runConcurrent(concurrency, warmupSeconds, op);
  return runConcurrent(concurrency, seconds, op);
}
