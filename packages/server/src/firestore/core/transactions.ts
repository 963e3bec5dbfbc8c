import { randomBytes } from 'node:crypto';
import { firestoreErrors } from './errors.js';

/**
 * Server transactions. Two concurrency modes, chosen by who begins one:
 * - pessimistic (the administrator: admin SDKs, whose transactions are serializable by locks, as
 *   on Google's servers): a read-write transaction holds a shared lock on every document it read;
 *   a write to a locked document waits until the lock is released. Conflicts are settled by age
 *   (wound-wait): an older transaction that needs a document wounds the younger holder, which
 *   fails with ABORTED (the SDKs retry), so two transactions can never wait on each other forever.
 * - optimistic (callers judged by security rules): reads are recorded, never locked, and the
 *   commit fails ABORTED if any of them changed since (checked atomically with the writes, as the
 *   client SDKs' own transactions are). Such a transaction holds nobody's writes, and its commit
 *   waits for locks like any write and wounds no one: a caller the rules let read a document must
 *   not be able to keep its owner, or the administrator, from writing it.
 */
export type TransactionConcurrency = 'pessimistic' | 'optimistic';

export interface ServerTransaction {
  id: string;
  dbKey: string;
  readOnly: boolean;
  concurrency: TransactionConcurrency;
  /** A read-only transaction's snapshot: every read sees the data as of this time (µs). */
  readTime?: number;
  /** Begin order; smaller is older. */
  age: number;
  startedAt: number;
  lastUsedAt: number;
  /** Path → updateTime seen (0: missing). */
  reads: Map<string, number>;
  wounded: boolean;
}

export interface TransactionTimeouts {
  lockWaitMs: number;
  idleMs: number;
  maxLifetimeMs: number;
}

/**
 * An idle transaction expires before a write waiting on its locks gives up, so a client that
 * began one and went away delays writes to what it read by at most `idleMs` and never makes them
 * fail (with 60 s idle and a 15 s wait, every such write ended ABORTED). Firestore's own 60 s idle
 * limit is an upper bound; the admin SDKs use a transaction within milliseconds of each call.
 */
export const defaultTransactionTimeouts: TransactionTimeouts = { lockWaitMs: 15_000, idleMs: 10_000, maxLifetimeMs: 270_000 };

export const contention = () => firestoreErrors.aborted('Too much contention on these documents. Please try again.');

/**
 * A transaction commits only if every document it read is still at the version it read, and
 * (pessimistic) it was not wounded meanwhile: an older writer can wound it after its own lock wait
 * ended, while its commit waits for the store; wounding drops its locks and its recorded reads, so
 * without this check both commits went through on reads of the same version (a lost update: two
 * concurrent +1 transactions on one document left it +1).
 */
export function checkReadsUnchanged(transaction: ServerTransaction, current: Map<string, { updateTime: number }>): void {
  if (transaction.wounded) throw contention();
  for (const [path, seen] of transaction.reads) {
    if ((current.get(path)?.updateTime ?? 0) !== seen) throw contention();
  }
}

/** How often a write waiting for a lock looks again for expired holders. */
const sweepWhileWaitingMs = 1_000;

export class TransactionManager {
  /** In order of last use (`use` moves a transaction to the end), so the idle ones come first. */
  private readonly live = new Map<string, ServerTransaction>();
  private readonly locks = new Map<string, Set<ServerTransaction>>();
  private readonly waiters = new Map<string, Array<() => void>>();
  private nextAge = 0;

  /**
   * `instanceTag`: this process's mark, when other instances serve the same database. Its ids
   * start with it, so an id another instance issued (its transaction's locks and reads are there)
   * is told apart from one never issued: the first is ABORTED, which the SDKs answer by retrying
   * the whole transaction (on whichever instance the request lands).
   */
  constructor(
    private readonly timeouts: TransactionTimeouts = defaultTransactionTimeouts,
    private readonly instanceTag?: Buffer,
  ) {}

  begin(dbKey: string, readOnly: boolean, retrying?: ServerTransaction, readTime?: number, concurrency: TransactionConcurrency = 'pessimistic'): ServerTransaction {
    this.sweep();
    const now = Date.now();
    // A retry keeps its age, so it cannot be starved by younger transactions.
    const age = retrying?.age ?? this.nextAge++;
    const id = (this.instanceTag ? Buffer.concat([this.instanceTag, randomBytes(16)]) : randomBytes(16)).toString('base64');
    const transaction: ServerTransaction = { id, dbKey, readOnly, concurrency, age, startedAt: now, lastUsedAt: now, reads: new Map(), wounded: false };
    if (readOnly && readTime !== undefined) transaction.readTime = readTime;
    this.live.set(this.keyOf(dbKey, transaction.id), transaction);
    return transaction;
  }

  /** A transaction named in a request; unknown or expired ones are refused. */
  use(dbKey: string, id: unknown): ServerTransaction {
    this.sweep();
    const transaction = typeof id === 'string' ? this.live.get(this.keyOf(dbKey, id)) : undefined;
    if (!transaction) {
      if (this.issuedElsewhere(id)) throw firestoreErrors.aborted('The transaction began on another instance of this server; retry it.');
      throw firestoreErrors.invalidArgument('Transaction is invalid or expired.');
    }
    // Every later call of a wounded transaction answers ABORTED, which the SDKs retry, until it
    // is swept as idle: a client with several calls in flight (two reads at once) must not get
    // "invalid" for the second, which no SDK retries.
    if (transaction.wounded) throw contention();
    const now = Date.now();
    if (this.expired(transaction, now)) {
      this.end(transaction);
      throw firestoreErrors.invalidArgument('Transaction is invalid or expired.');
    }
    transaction.lastUsedAt = now;
    this.live.delete(this.keyOf(dbKey, transaction.id));
    this.live.set(this.keyOf(dbKey, transaction.id), transaction);
    return transaction;
  }

  /** For a retry: the transaction being retried, if still known (its age carries over). */
  find(dbKey: string, id: unknown): ServerTransaction | undefined {
    return typeof id === 'string' ? this.live.get(this.keyOf(dbKey, id)) : undefined;
  }

  /** A read-write transaction's read: kept for the commit's check, and locked when pessimistic. */
  recordRead(transaction: ServerTransaction, path: string, updateTime: number | undefined): void {
    if (transaction.readOnly) return;
    transaction.reads.set(path, updateTime ?? 0);
    if (transaction.concurrency !== 'pessimistic') return;
    let holders = this.locks.get(this.lockKey(transaction.dbKey, path));
    if (!holders) {
      holders = new Set();
      this.locks.set(this.lockKey(transaction.dbKey, path), holders);
    }
    holders.add(transaction);
  }

  /** Waits until no other transaction holds a lock on these documents (a pessimistic writer wounds younger ones). */
  async acquireForWrite(dbKey: string, paths: readonly string[], writer?: ServerTransaction): Promise<void> {
    const deadline = Date.now() + this.timeouts.lockWaitMs;
    for (const path of new Set(paths)) {
      for (;;) {
        if (writer?.wounded) throw contention();
        const key = this.lockKey(dbKey, path);
        const holdersBesidesWriter = () => [...(this.locks.get(key) ?? [])].filter((holder) => holder !== writer);
        if (holdersBesidesWriter().length === 0) break;
        // An abandoned transaction's locks end with it, even when nobody else begins one; so do
        // those of a transaction past its lifetime, still in use or not.
        this.sweep();
        for (const holder of holdersBesidesWriter()) if (this.expired(holder, Date.now())) this.end(holder);
        const others = holdersBesidesWriter();
        if (others.length === 0) break;
        if (writer?.concurrency === 'pessimistic') for (const holder of others) if (holder.age > writer.age) this.wound(holder);
        if ([...(this.locks.get(key) ?? [])].every((holder) => holder === writer)) break;
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw firestoreErrors.aborted('Transaction lock timeout.');
        // Woken by a release, or after a while to sweep again.
        await this.released(key, Math.min(remaining, sweepWhileWaitingMs));
      }
    }
  }

  end(transaction: ServerTransaction): void {
    this.live.delete(this.keyOf(transaction.dbKey, transaction.id));
    if (transaction.concurrency !== 'pessimistic') return;
    for (const path of transaction.reads.keys()) {
      const key = this.lockKey(transaction.dbKey, path);
      const holders = this.locks.get(key);
      if (!holders) continue;
      holders.delete(transaction);
      if (holders.size === 0) this.locks.delete(key);
      for (const wake of this.waiters.get(key)?.splice(0) ?? []) wake();
    }
  }

  private issuedElsewhere(id: unknown): boolean {
    if (!this.instanceTag || typeof id !== 'string') return false;
    const raw = Buffer.from(id, 'base64');
    return raw.length === this.instanceTag.length + 16 && !raw.subarray(0, this.instanceTag.length).equals(this.instanceTag);
  }

  private wound(transaction: ServerTransaction): void {
    transaction.wounded = true;
    this.end(transaction);
    // Keep it findable so its next call answers ABORTED rather than "invalid" (as if just used,
    // keeping `live` in order of use).
    transaction.lastUsedAt = Date.now();
    this.live.set(this.keyOf(transaction.dbKey, transaction.id), transaction);
    transaction.reads = new Map();
  }

  private released(key: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      const list = this.waiters.get(key) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.waiters.set(key, list);
    });
  }

  /**
   * Ends the idle transactions: the first ones of `live`, so a sweep costs what it ends, not every
   * live transaction (a client beginning thousands made every request pay for all of them).
   * A transaction past its lifetime but still in use ends at its next use, or as a lock holder.
   */
  private sweep(): void {
    const now = Date.now();
    for (const transaction of this.live.values()) {
      if (now - transaction.lastUsedAt <= this.timeouts.idleMs) break;
      this.end(transaction);
    }
  }

  private expired(transaction: ServerTransaction, now: number): boolean {
    return now - transaction.lastUsedAt > this.timeouts.idleMs || now - transaction.startedAt > this.timeouts.maxLifetimeMs;
  }

  private keyOf(dbKey: string, id: string): string {
    return `${dbKey}\u0000${id}`;
  }

  private lockKey(dbKey: string, path: string): string {
    return `${dbKey}\u0000${path}`;
  }
}
