import { createHash } from 'node:crypto';
import { projectOf } from '../tenants/realm.js';
import type { Mutation, Store, ThrottleRecord } from '../../storage/store.js';
import { throttleRowReaderOf, type ThrottleRowReader } from '../../storage/throttle-reader.js';
import { throttleWriterOf, type ThrottleWriter } from './throttle-writer.js';

/**
 * Failure counting for sign-ins and mail sends. Decisions are made in memory, synchronously (a
 * check and its count cannot be split by a concurrent request); with a store, every change is
 * also written through, so the counts survive a restart or a crash, and are read back on open.
 */
export interface ThrottleLimits {
  maxFailures: number;
  windowMs: number;
}

/**
 * No limit at all: nothing is counted or kept (--dev's default for the per-address and per-number
 * limits, as Google's Auth emulator has none; cli/dev-defaults.ts).
 */
export const noLimit: ThrottleLimits = { maxFailures: Number.POSITIVE_INFINITY, windowMs: 0 };

function isUnlimited(maxFailures: number): boolean {
  return maxFailures === Number.POSITIVE_INFINITY;
}

/** Keys in memory and in the store: a hash, so no address or email is kept by the throttle. */
function hashKey(scope: string, key: string): string {
  return createHash('sha256').update(scope).update('\u0000').update(key).digest('base64url');
}

/** Bounded memory under an address-spraying attack: the keys idle the longest are dropped. */
const maxTrackedKeys = 100_000;
const sweepEvery = 1000;

/** Write-through persistence shared by the throttles: one row per key, in commit order. */
class ThrottleRows<State> {
  private writes: Promise<void> = Promise.resolve();
  private writeCount = 0;
  readonly states = new Map<string, State>();
  private readonly reader: ThrottleRowReader | undefined;
  private readonly writer: ThrottleWriter | undefined;
  /** Keys with a write of ours still on its way: memory is newer than the store for them. */
  private readonly unwritten = new Map<string, number>();

  constructor(
    readonly scope: string,
    private readonly store: Store | undefined,
  ) {
    this.reader = throttleRowReaderOf(store);
    this.writer = store ? throttleWriterOf(store) : undefined;
  }

  /**
   * A store other instances count in too: their rows for these keys are merged into memory
   * (`merge(mine, theirs)`) before a decision. A failed read leaves memory to decide alone.
   */
  async refresh(keyHashes: string[], now: number, parse: (text: string) => State | undefined, merge: (mine: State | undefined, theirs: State) => State): Promise<void> {
    if (!this.reader) return;
    const records = await this.reader.getThrottleRecords(this.scope, keyHashes, now).catch(() => []);
    for (const record of records) {
      if (this.unwritten.has(record.keyHash)) continue;
      const theirs = parse(record.state);
      if (theirs === undefined) continue;
      this.states.set(record.keyHash, merge(this.states.get(record.keyHash), theirs));
    }
  }

  async load(now: number, parse: (text: string) => State | undefined): Promise<void> {
    if (!this.store) return;
    for (const record of await this.store.listThrottleRecords(this.scope, now, maxTrackedKeys)) {
      const state = parse(record.state);
      if (state !== undefined) this.states.set(record.keyHash, state);
    }
  }

  key(key: string): string {
    return hashKey(this.scope, key);
  }

  get(keyHash: string): State | undefined {
    return this.states.get(keyHash);
  }

  set(keyHash: string, state: State, expiresAt: number): void {
    this.states.delete(keyHash);
    this.states.set(keyHash, state);
    while (this.states.size > maxTrackedKeys) {
      const oldest = this.states.keys().next().value;
      if (oldest === undefined) break;
      this.states.delete(oldest);
    }
    const record: ThrottleRecord = { scope: this.scope, keyHash, state: JSON.stringify(state), expiresAt };
    this.write({ kind: 'putThrottleRecord', record }, keyHash);
  }

  delete(keyHash: string): void {
    if (!this.states.delete(keyHash)) return;
    this.write({ kind: 'deleteThrottleRecord', scope: this.scope, keyHash }, keyHash);
  }

  /** Resolves once every change so far is on disk. */
  flushed(): Promise<void> {
    return this.writes;
  }

  private write(mutation: Extract<Mutation, { kind: 'putThrottleRecord' | 'deleteThrottleRecord' }>, keyHash: string): void {
    if (!this.writer) return;
    const writer = this.writer;
    this.unwritten.set(keyHash, (this.unwritten.get(keyHash) ?? 0) + 1);
    const written = () => {
      const left = (this.unwritten.get(keyHash) ?? 1) - 1;
      if (left > 0) this.unwritten.set(keyHash, left);
      else this.unwritten.delete(keyHash);
    };
    // Decayed rows are swept now and then, so sprayed keys do not pile up on disk either.
    if (++this.writeCount % sweepEvery === 0) void writer.write({ kind: 'deleteExpiredThrottleRecords', expiredBefore: Date.now() }).catch(() => undefined);
    // A failed write (store closing) must not refuse the request: memory still decides. The
    // writer commits batches in order, so the newest write done means every earlier one is.
    this.writes = writer
      .write(mutation)
      .catch(() => undefined)
      .finally(written);
  }
}

/** Sliding window: blocked once `maxFailures` failures fall within the last `windowMs`. */
export class FailureThrottle {
  private readonly rows: ThrottleRows<number[]>;

  constructor(
    readonly limits: ThrottleLimits,
    persistence?: { store: Store; scope: string },
  ) {
    this.rows = new ThrottleRows(persistence?.scope ?? 'memory', persistence?.store);
  }

  /** A throttle whose counts live in the store under `scope`, loaded now. */
  static async open(store: Store, scope: string, limits: ThrottleLimits, now = Date.now()): Promise<FailureThrottle> {
    const throttle = new FailureThrottle(limits, { store, scope });
    await throttle.rows.load(now, parseTimes);
    return throttle;
  }

  isBlocked(key: string, now = Date.now()): boolean {
    if (isUnlimited(this.limits.maxFailures)) return false;
    return this.recent(this.rows.key(key), now).length >= this.limits.maxFailures;
  }

  /** Takes in what other instances sharing the store counted for `keys` (nothing to do on SQLite). */
  async refresh(keys: string[], now = Date.now()): Promise<void> {
    await this.rows.refresh(
      keys.map((key) => this.rows.key(key)),
      now,
      parseTimes,
      (mine, theirs) => [...new Set([...(mine ?? []), ...theirs])].sort((x, y) => x - y).slice(-this.limits.maxFailures),
    );
  }

  recordFailure(key: string, now = Date.now()): void {
    if (isUnlimited(this.limits.maxFailures)) return;
    const keyHash = this.rows.key(key);
    // Only the newest maxFailures times can decide a block.
    const times = [...this.recent(keyHash, now), now].slice(-this.limits.maxFailures);
    this.rows.set(keyHash, times, now + this.limits.windowMs);
  }

  clear(key: string): void {
    this.rows.delete(this.rows.key(key));
  }

  /** Takes back the newest recorded attempt (one that turned out to succeed). */
  forgetOne(key: string, now = Date.now()): void {
    const keyHash = this.rows.key(key);
    const times = this.recent(keyHash, now).slice(0, -1);
    if (times.length === 0) this.rows.delete(keyHash);
    else this.rows.set(keyHash, times, times[times.length - 1]! + this.limits.windowMs);
  }

  flushed(): Promise<void> {
    return this.rows.flushed();
  }

  private recent(keyHash: string, now: number): number[] {
    const times = this.rows.get(keyHash) ?? [];
    const recent = times.filter((t) => now - t < this.limits.windowMs);
    if (recent.length === 0 && times.length > 0) this.rows.delete(keyHash);
    return recent;
  }
}

function parseTimes(text: string): number[] | undefined {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) && value.every((t) => typeof t === 'number') ? value : undefined;
}

export interface BackoffLimits {
  /** Failures allowed before the waits begin. */
  freeFailures: number;
  /** The wait after the first failure beyond the free ones; each further failure doubles it. */
  firstWaitMs: number;
  maxWaitMs: number;
  /** Failures are forgotten after this long without one. */
  forgetAfterMs: number;
}

interface BackoffState {
  failures: number;
  lastAt: number;
}

/** Free failures, then doubling waits between attempts; forgotten after a quiet period or a success. */
export class BackoffThrottle {
  private readonly rows: ThrottleRows<BackoffState>;

  constructor(
    readonly limits: BackoffLimits,
    persistence?: { store: Store; scope: string },
  ) {
    this.rows = new ThrottleRows(persistence?.scope ?? 'memory', persistence?.store);
  }

  static async open(store: Store, scope: string, limits: BackoffLimits, now = Date.now()): Promise<BackoffThrottle> {
    const throttle = new BackoffThrottle(limits, { store, scope });
    await throttle.rows.load(now, parseBackoff);
    return throttle;
  }

  /** Takes in what other instances sharing the store counted for `keys` (nothing to do on SQLite). */
  async refresh(keys: string[], now = Date.now()): Promise<void> {
    await this.rows.refresh(
      keys.map((key) => this.rows.key(key)),
      now,
      parseBackoff,
      (mine, theirs) => (!mine || theirs.failures > mine.failures || (theirs.failures === mine.failures && theirs.lastAt > mine.lastAt) ? theirs : mine),
    );
  }

  /** When the next attempt is allowed (0: now). */
  blockedUntil(key: string, now = Date.now()): number {
    if (isUnlimited(this.limits.freeFailures)) return 0;
    const state = this.current(this.rows.key(key), now);
    if (!state || state.failures < this.limits.freeFailures) return 0;
    const until = state.lastAt + this.waitAfter(state.failures);
    return until > now ? until : 0;
  }

  recordFailure(key: string, now = Date.now()): void {
    if (isUnlimited(this.limits.freeFailures)) return;
    const keyHash = this.rows.key(key);
    const failures = (this.current(keyHash, now)?.failures ?? 0) + 1;
    this.rows.set(keyHash, { failures, lastAt: now }, now + Math.max(this.limits.forgetAfterMs, this.waitAfter(failures)));
  }

  clear(key: string): void {
    this.rows.delete(this.rows.key(key));
  }

  flushed(): Promise<void> {
    return this.rows.flushed();
  }

  private waitAfter(failures: number): number {
    const beyond = failures - this.limits.freeFailures;
    if (beyond < 0) return 0;
    return Math.min(this.limits.maxWaitMs, this.limits.firstWaitMs * 2 ** Math.min(beyond, 30));
  }

  private current(keyHash: string, now: number): BackoffState | undefined {
    const state = this.rows.get(keyHash);
    if (state && now - state.lastAt >= Math.max(this.limits.forgetAfterMs, this.waitAfter(state.failures))) {
      this.rows.delete(keyHash);
      return undefined;
    }
    return state;
  }
}

function parseBackoff(text: string): BackoffState | undefined {
  const value = JSON.parse(text) as Partial<BackoffState>;
  return typeof value.failures === 'number' && typeof value.lastAt === 'number' ? { failures: value.failures, lastAt: value.lastAt } : undefined;
}

export interface SignInLimits {
  /** One address against one account: free failures, then doubling waits (`--max-failed-signins`). */
  perAccountAndAddress: BackoffLimits;
  /** One account from every address together: a higher ceiling (a distributed guess). */
  perAccount: ThrottleLimits;
  /** One address against every account together (credential stuffing). */
  perAddress: ThrottleLimits;
}

/**
 * The limits from `--max-failed-signins N`: N free failures per account and address, then waits
 * of 1, 2, 4 ... up to 15 minutes; 10 N per account from all addresses, and 10 N per address over
 * all accounts, within 15 minutes.
 */
export function signInLimits(maxFailedSignIns: number, windowMs = 15 * 60_000): SignInLimits {
  return {
    perAccountAndAddress: { freeFailures: maxFailedSignIns, firstWaitMs: 60_000, maxWaitMs: windowMs, forgetAfterMs: 24 * 3600_000 },
    perAccount: { maxFailures: maxFailedSignIns * 10, windowMs },
    perAddress: { maxFailures: maxFailedSignIns * 10, windowMs },
  };
}

/**
 * Failed password sign-ins. Wrong passwords from one address slow down only that address's attempts
 * on that account, so knowing someone's email no longer locks them out: their own sign-in from
 * another address goes through until the account-wide ceiling (ten times higher) is reached.
 */
export class SignInThrottle {
  private constructor(
    private readonly pair: BackoffThrottle,
    private readonly account: FailureThrottle,
    private readonly address: FailureThrottle,
  ) {}

  static inMemory(limits: SignInLimits): SignInThrottle {
    return new SignInThrottle(new BackoffThrottle(limits.perAccountAndAddress), new FailureThrottle(limits.perAccount), new FailureThrottle(limits.perAddress));
  }

  /** Counts kept in the store (scopes `signin-*`), read back now: they survive restarts. */
  static async open(store: Store, limits: SignInLimits, now = Date.now()): Promise<SignInThrottle> {
    return new SignInThrottle(
      await BackoffThrottle.open(store, 'signin-account-address', limits.perAccountAndAddress, now),
      await FailureThrottle.open(store, 'signin-account', limits.perAccount, now),
      await FailureThrottle.open(store, 'signin-address', limits.perAddress, now),
    );
  }

  /**
   * Whether an attempt may go on; if so it is counted as a failure right away (before the slow
   * password check), so concurrent guesses cannot all slip under a limit. `succeeded` takes it back.
   */
  admit(projectId: string, email: string, clientIp: string, now = Date.now()): boolean {
    const keys = signInKeys(projectId, email, clientIp);
    if (this.pair.blockedUntil(keys.pair, now) || this.account.isBlocked(keys.account, now) || this.address.isBlocked(keys.address, now)) return false;
    this.pair.recordFailure(keys.pair, now);
    this.account.recordFailure(keys.account, now);
    this.address.recordFailure(keys.address, now);
    return true;
  }

  /** Before `admit` when several instances share the store: what the others counted for these keys. */
  async refresh(projectId: string, email: string, clientIp: string, now = Date.now()): Promise<void> {
    const keys = signInKeys(projectId, email, clientIp);
    await Promise.all([this.pair.refresh([keys.pair], now), this.account.refresh([keys.account], now), this.address.refresh([keys.address], now)]);
  }

  succeeded(projectId: string, email: string, clientIp: string, now = Date.now()): void {
    const keys = signInKeys(projectId, email, clientIp);
    this.pair.clear(keys.pair);
    this.account.forgetOne(keys.account, now);
    this.address.forgetOne(keys.address, now);
  }

  async flushed(): Promise<void> {
    await Promise.all([this.pair.flushed(), this.account.flushed(), this.address.flushed()]);
  }
}

/** `realm`: an account is one realm's; an address is counted across the project's realms (its tenants cannot multiply a guesser's ceiling). */
function signInKeys(realm: string, email: string, clientIp: string): { pair: string; account: string; address: string } {
  return { pair: `${realm}\u0000${email}\u0000${clientIp}`, account: `${realm}\u0000${email}`, address: `${projectOf(realm)}\u0000${clientIp}` };
}
