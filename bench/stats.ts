/** One measured rate with its latency spread. Latencies in milliseconds. */
export interface Rate {
  perSecond: number;
  ops: number;
  seconds: number;
  p50: number;
  p99: number;
  /**
   * CPU time of this whole process (every thread: the libuv pool's crypto too) per operation, in ms:
   * steadier than the rate on a machine that other work keeps busy.
   */
  cpuMsPerOp?: number;
  /** CPU time of the load client's process per operation, in ms, when it ran apart (bench/load-client.ts). */
  clientCpuMsPerOp?: number | undefined;
}

/** CPU ms of this process since `since` (from process.cpuUsage()). */
export function cpuMsSince(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
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
  const cpu = process.cpuUsage();
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
  const cpuMsPerOp = cpuMsSince(cpu) / Math.max(1, latencies.length);
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / elapsed, ops: latencies.length, seconds: elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), cpuMsPerOp };
}

/** Warm-up (not counted) then the measured run. */
export async function measureConcurrent(concurrency: number, warmupSeconds: number, seconds: number, op: () => Promise<unknown>): Promise<Rate> {
  if (warmupSeconds > 0) await runConcurrent(concurrency, warmupSeconds, op);
  return runConcurrent(concurrency, seconds, op);
}

/** Median and p99 of a sample, and its size. */
export interface Spread {
  median: number;
  p99: number;
  n: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = values.slice().sort((x, y) => x - y);
  return { median: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), n: sorted.length };
}

/** A plain-text table: columns padded to their widest cell, text columns left-aligned, numbers right. */
export function renderTable(head: string[], body: string[][], leftAligned: (column: number) => boolean = (column) => column === 0): string {
  const widths = head.map((cell, i) => Math.max(cell.length, ...body.map((line) => (line[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => (leftAligned(i) ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** Milliseconds with two, one or no decimals as they grow. */
export const ms = (value: number): string => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
export const seconds = (value: number): string => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
/** 10000 → 10k, 1000000 → 1M; other numbers as they are. */
export const count = (value: number): string =>
  value >= 1_000_000 && value % 1_000_000 === 0 ? `${value / 1_000_000}M` : value >= 1000 && value % 1000 === 0 ? `${value / 1000}k` : String(value);
export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** The run with the median rate (the lower middle one of an even count). */
export function medianRate(runs: readonly Rate[]): Rate {
  const sorted = [...runs].sort((a, b) => a.perSecond - b.perSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!median) throw new Error('no runs');
  return median;
}
