/**
 * Counts failures per key (an account, a client address) in a sliding window and says when a key
 * has failed too often. Kept in memory: it guards one process against guessing, not history.
 */
export interface ThrottleLimits {
  maxFailures: number;
  windowMs: number;
}

export class FailureThrottle {
  private readonly failures = new Map<string, number[]>();
  private readonly maxTrackedKeys = 100_000;

  constructor(private readonly limits: ThrottleLimits) {}

  isBlocked(key: string, now = Date.now()): boolean {
    return this.recent(key, now).length >= this.limits.maxFailures;
  }

  recordFailure(key: string, now = Date.now()): void {
    const times = this.recent(key, now);
    times.push(now);
    this.failures.delete(key);
    this.failures.set(key, times);
    // Bounded memory under an address-spraying attack: drop the keys idle the longest.
    while (this.failures.size > this.maxTrackedKeys) {
      const oldest = this.failures.keys().next().value;
      if (oldest === undefined) break;
      this.failures.delete(oldest);
    }
  }

  clear(key: string): void {
    this.failures.delete(key);
  }

  /** Takes back the newest recorded attempt (one that turned out to succeed). */
  forgetOne(key: string): void {
    const times = this.failures.get(key);
    if (!times) return;
    times.pop();
    if (times.length === 0) this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    const times = (this.failures.get(key) ?? []).filter((t) => now - t < this.limits.windowMs);
    if (times.length === 0) this.failures.delete(key);
    else this.failures.set(key, times);
    return times;
  }
}
