import { listenTargetCount, takeLatencies, tallies, webChannelSessionCount } from '../http/metrics.js';

/** One point of the console's charts: rates over the interval that ended at `at`. */
export interface MetricsSample {
  at: number;
  requestsPerSec: number;
  errorsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  signInsPerMin: number;
  failedSignInsPerMin: number;
  commitsPerSec: number;
  listeners: number;
  webChannelSessions: number;
  rssMb: number;
}

const hourMs = 3600_000;

/**
 * Samples the metrics every `intervalMs` into a ring holding the last hour, for
 * `GET /hearth/v1/console/metrics`: differences of the running totals (http/metrics.ts), exact
 * percentiles of the interval's latencies. The timer does not keep the process alive.
 */
export class MetricsSampler {
  private readonly ring: MetricsSample[] = [];
  private readonly capacity: number;
  private previous = { ...tallies };
  private previousAt: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly intervalMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.capacity = Math.max(1, Math.ceil(hourMs / intervalMs));
    this.previousAt = clock();
    takeLatencies();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  /** Samples taken after `since` (ms), oldest first. */
  since(since: number): MetricsSample[] {
    return this.ring.filter((sample) => sample.at > since);
  }

  sample(): MetricsSample {
    const at = this.clock();
    const seconds = Math.max(0.001, (at - this.previousAt) / 1000);
    const now = { ...tallies };
    const delta = (name: keyof typeof tallies) => now[name] - this.previous[name];
    const sorted = takeLatencies().sort((a, b) => a - b);
    const sample: MetricsSample = {
      at,
      requestsPerSec: round(delta('requests') / seconds),
      errorsPerSec: round(delta('errors') / seconds),
      p50Ms: round(percentile(sorted, 0.5)),
      p99Ms: round(percentile(sorted, 0.99)),
      signInsPerMin: round((delta('signIns') / seconds) * 60),
      failedSignInsPerMin: round((delta('failedSignIns') / seconds) * 60),
      commitsPerSec: round(delta('commits') / seconds),
      listeners: listenTargetCount(),
      webChannelSessions: webChannelSessionCount(),
      rssMb: round(process.memoryUsage.rss() / (1024 * 1024)),
    };
    this.previous = now;
    this.previousAt = at;
    this.ring.push(sample);
    if (this.ring.length > this.capacity) this.ring.shift();
    return sample;
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/** Nearest-rank percentile of sorted values; 0 when there are none. */
function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
