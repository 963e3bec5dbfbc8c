import { setTimeout as sleep } from 'node:timers/promises';
import { StorageUnavailable } from '../document-store.js';
import { lockWaitMs } from './sqlite-write-lock.js';
import { WriteBatch } from './sqlite-write-batch.js';
import type { SqliteWriter } from './sqlite-writer.js';

/** One commit waiting for its group: `run` decides it and adds its statements to the group's batch. */
interface PendingCommit {
  kind: 'commit';
  run: (batch: WriteBatch) => { changedRows: number };
  settle: (error: unknown) => void;
}

/** Work on the main connection that must not overlap a group (rare: index rebuilds, clears, pruning). */
interface PendingExclusive {
  kind: 'exclusive';
  run: () => void;
  settle: (error: unknown) => void;
}

type Pending = PendingCommit | PendingExclusive;

/** The outcome of a commit that its decision accepted (any other outcome is its error). */
const ok = Symbol('ok');

/**
 * Group commit on the writer thread. The commits that arrive while the event loop is busy (and while
 * the previous group is being written) are decided together on the main thread, whose connection
 * sees every earlier group, and written in one transaction, so one WAL fsync: by the writer thread,
 * or here when the group is small (`inline`).
 * One group at a time: the next is decided only after this one's COMMIT returned, so its reads
 * (preconditions, transforms, transactions' read checks) see everything acknowledged; meanwhile the
 * main thread serves other requests and collects the next group. No commit is settled before its
 * group's COMMIT has returned (synchronous=FULL: on disk); if the group fails, none of its commits
 * is acknowledged. Commits of one group may read what earlier ones of the same group wrote: the
 * store keeps those rows in an overlay until the group is written (`onGroup`).
 *
 * The main connection still writes other tables of the file (accounts, tokens, the outbox...).
 * SQLite has one write lock per file, and the main connection's busy timeout would block the event
 * loop while the writer thread holds it; so main-thread writes first wait for `idle()`, and a group
 * is never sent while one of them runs (they are synchronous, so they finish before any group starts).
 */
export class CommitGroups {
  private readonly pending: Pending[] = [];
  private scheduled = false;
  private inFlight: Promise<void> | undefined;
  private closing = false;
  private closed = false;
  /** Commits in the last group: more than one says commits are arriving concurrently. */
  private lastGroupSize = 1;

  constructor(
    private readonly writer: SqliteWriter,
    private readonly onGroup: {
      /** Before the first commit of a group is decided. */
      start: () => void;
      /** After the last: adds the group's own statements (last commit times). */
      finish: (batch: WriteBatch) => void;
      /** After the group was written (true) or refused. */
      end: (written: boolean) => void;
    },
    /**
     * Groups up to `maxBytes` are written by `write` on this thread: SQLite's work for them is
     * shorter than the two thread hand-offs (measured: the writer thread halved the rate of 1-write
     * commits), so only bigger groups, whose writing would hold the event loop, go to the thread.
     */
    private readonly inline: { maxBytes: number; write: (batch: WriteBatch) => void },
    private readonly maxRowsPerGroup = 500,
    /**
     * Where other processes write the file too (--workers): each group holds SQLite's write lock
     * from before its first decision to its COMMIT, so what it decides on is what it writes over,
     * and it is written here whatever its size.
     */
    private readonly lock?: { begin: () => boolean; end: (commit: boolean) => void },
  ) {}
  /** Since when the next group has waited for another process's write lock (--workers). */
  private lockWaitSince: number | undefined;
  private lockRetry: NodeJS.Timeout | undefined;

  /** Queues `run` for the next group; settles after the group's COMMIT (or with `run`'s own error). */
  submit<T extends { changedRows: number }>(run: (batch: WriteBatch) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let value: T | undefined;
      this.enqueue({
        kind: 'commit',
        run: (batch) => (value = run(batch)),
        settle: (error) => (error === ok ? resolve(value!) : reject(error)),
      });
    });
  }

  /** Runs `run` on the main thread in its turn, when no group is being written. */
  exclusive<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let value: T | undefined;
      this.enqueue({ kind: 'exclusive', run: () => (value = run()), settle: (error) => (error === ok ? resolve(value!) : reject(error)) });
    });
  }

  /** Resolves when no group is being written: then a synchronous write on the main connection cannot wait for the lock. */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  /** Settles what is queued and in flight, then stops the writer thread. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.inFlight || this.pending.length > 0) {
      if (!this.inFlight) this.flush();
      // Another process holds the file's write lock: the group is tried again shortly.
      if (!this.inFlight && this.pending.length > 0) await sleep(1);
      await this.inFlight;
    }
    clearTimeout(this.lockRetry);
    this.closed = true;
    await this.writer.close();
  }

  private enqueue(item: Pending): void {
    if (this.closed) {
      item.settle(new StorageUnavailable('The document store is closed.'));
      return;
    }
    this.pending.push(item);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight || this.closing) return;
    this.scheduled = true;
    const flush = () => {
      this.scheduled = false;
      this.flush();
    };
    // While commits arrive concurrently, one more turn of the event loop lets the requests already
    // on their way join this group (PostgreSQL's commit_delay with commit_siblings, in loop turns).
    // A lone writer is not kept waiting.
    setImmediate(this.lastGroupSize > 1 ? () => setImmediate(flush) : flush);
  }

  private flush(): void {
    if (this.inFlight) return;
    this.runExclusives();
    if (this.lock && !this.lockForGroup(this.lock)) return;
    const group: PendingCommit[] = [];
    const outcomes: unknown[] = [];
    const batch = new WriteBatch();
    let rows = 0;
    this.onGroup.start();
    while (this.pending[0]?.kind === 'commit' && rows < this.maxRowsPerGroup) {
      const item = this.pending.shift() as PendingCommit;
      group.push(item);
      try {
        rows += item.run(batch).changedRows;
        outcomes.push(ok);
      } catch (error) {
        // Its decision refused the commit: nothing of it is in the batch (the store decides before
        // it adds a statement). Settled with the group, as before, never ahead of earlier commits.
        outcomes.push(error);
      }
    }
    if (group.length === 0) {
      this.lock?.end(false);
      this.onGroup.end(false);
      return;
    }
    try {
      // Under the lock, finishing writes the group's change log (sqlite-change-log.ts): it may fail.
      this.onGroup.finish(batch);
      // Holding the lock, the group is written here whatever its size.
      if (this.lock || batch.size === 0 || batch.bytes <= this.inline.maxBytes) {
        if (batch.size > 0) this.inline.write(batch);
        this.lock?.end(true);
      } else {
        this.inFlight = this.writer.write(batch).then(
          () => this.settleGroup(group, outcomes, undefined),
          (error: unknown) => this.settleGroup(group, outcomes, error),
        );
        return;
      }
    } catch (error) {
      this.lock?.end(false);
      this.settleGroup(group, outcomes, error);
      return;
    }
    this.settleGroup(group, outcomes, undefined);
  }

  private settleGroup(group: PendingCommit[], outcomes: unknown[], failure: unknown): void {
    this.inFlight = undefined;
    this.onGroup.end(failure === undefined);
    this.lastGroupSize = group.length;
    // A failed group acknowledges none of its commits: their rows were rolled back together.
    group.forEach((item, i) => item.settle(failure === undefined ? outcomes[i] : failure));
    // The next group waits for the next turn: main-thread writers waiting in idle() (microtasks)
    // go first, so a stream of commits cannot starve them.
    if (this.pending.length > 0) {
      if (this.closing) return;
      this.schedule();
    }
  }

  /**
   * Takes the write lock for the next group without waiting for it: while another process holds
   * it, the group is tried again on a timer (the event loop goes on); after lockWaitMs, or when
   * SQLite refuses otherwise, the commits waiting fail (nothing of them written, so they may be
   * retried) and false.
   */
  private lockForGroup(lock: { begin: () => boolean }): boolean {
    if (this.pending[0]?.kind !== 'commit') return false;
    let failure: unknown;
    try {
      if (lock.begin()) {
        this.lockWaitSince = undefined;
        return true;
      }
      const since = (this.lockWaitSince ??= Date.now());
      if (Date.now() - since < lockWaitMs) {
        this.lockRetry ??= setTimeout(() => this.retryLock(), 1);
        return false;
      }
      failure = new StorageUnavailable('Another process held the database file too long; nothing of the commit was stored.');
    } catch (error) {
      failure = error;
    }
    this.lockWaitSince = undefined;
    while (this.pending[0]?.kind === 'commit') this.pending.shift()!.settle(failure);
    if (this.pending.length > 0 && !this.closing) this.schedule();
    return false;
  }

  private retryLock(): void {
    this.lockRetry = undefined;
    this.flush();
  }

  private runExclusives(): void {
    while (this.pending[0]?.kind === 'exclusive') {
      const item = this.pending.shift() as PendingExclusive;
      try {
        item.run();
        item.settle(ok);
      } catch (error) {
        item.settle(error);
      }
    }
  }
}
