import type { ChangeFeed, FeedEvent } from './change-feed.js';
import { changesFromLog } from './change-log.js';

/**
 * A change feed that follows a store's fs_changes log (PostgreSQL, or the SQLite file of
 * --workers): every commit of every process, per database in sequence order, exactly once.
 * Sequences have no gaps and become visible in order (a commit takes its sequence under its
 * database's write lock, released only once the commit is visible), so "delivered up to n" is the
 * whole state of a database. This process's own commits arrive at once from the store (`local`);
 * others' are read from the log when the store's wake-up says there is more (`heard`), and on a
 * slow poll that covers a wake-up missed.
 */

export interface ChangeLogRow {
  seq: number;
  commitTime: number;
  /** null: the database was cleared (or loaded); listeners start over. */
  changes: string | null;
}

/** Where the log is read: each call may fail while the store is unreachable. */
export interface ChangeLogSource {
  /** Every database's latest sequence. */
  sequences(): Promise<Array<{ db: string; seq: number }>>;
  sequenceOf(db: string): Promise<number>;
  /** The entries after `seq`, in order, at most `limit`. */
  readAfter(db: string, seq: number, limit: number): Promise<ChangeLogRow[]>;
}

interface Followed {
  delivered: number;
  /** Local commits that arrived ahead of an earlier one not read yet. */
  ahead: Map<number, FeedEvent>;
  reading: boolean;
  readAgain: boolean;
  /** caughtUp calls waiting for a sequence to be delivered. */
  waiting: Array<{ seq: number; done: (caught: boolean) => void }>;
}

const readPage = 500;
/** How long caughtUp waits for the log to be read before it answers false. */
const catchUpMs = 5_000;

export class LogChangeFeed implements ChangeFeed {
  private readonly listeners = new Set<(event: FeedEvent) => void>();
  private readonly followed = new Map<string, Followed>();
  private poll: NodeJS.Timeout | undefined;
  protected closed = false;

  constructor(
    private readonly source: ChangeLogSource,
    private readonly pollMs = 2_000,
  ) {}

  /** Takes every database's current sequence as the start: earlier commits are not told. */
  async start(): Promise<void> {
    for (const { db, seq } of await this.source.sequences()) this.followed.set(db, newFollowed(seq));
    this.poll = setInterval(() => void this.pollAll(), this.pollMs);
    this.poll.unref();
  }

  subscribe(listener: (event: FeedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** From the store, right after a commit of this process is durable and visible. */
  local(db: string, seq: number, event: FeedEvent): void {
    const state = this.stateOf(db);
    if (seq <= state.delivered) return;
    if (seq === state.delivered + 1) {
      this.deliver(db, state, seq, event);
      return;
    }
    // Another process's earlier commit is not told yet: it goes first.
    state.ahead.set(seq, event);
    void this.read(db, state);
  }

  /** Another process says `db`'s log has reached `seq`. */
  heard(db: string, seq: number): void {
    const state = this.stateOf(db);
    if (seq > state.delivered) void this.read(db, state);
  }

  async caughtUp(db: string): Promise<boolean> {
    let seq: number;
    try {
      seq = await this.source.sequenceOf(db);
    } catch {
      return false;
    }
    const state = this.stateOf(db);
    if (seq <= state.delivered) return true;
    if (this.closed) return false;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        state.waiting = state.waiting.filter((waiter) => waiter.done !== done);
        resolve(false);
      }, catchUpMs);
      const done = (caught: boolean) => {
        clearTimeout(timer);
        resolve(caught);
      };
      state.waiting.push({ seq, done });
      void this.read(db, state);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.poll);
    for (const state of this.followed.values()) for (const waiter of state.waiting.splice(0)) waiter.done(false);
  }

  /** Reads every database whose log is ahead of what was delivered (a poll, a reconnect). */
  protected async pollAll(): Promise<void> {
    if (this.closed) return;
    try {
      for (const { db, seq } of await this.source.sequences()) this.heard(db, seq);
    } catch {
      // Unreachable for now; the next poll tries again.
    }
  }

  private stateOf(db: string): Followed {
    let state = this.followed.get(db);
    if (!state) {
      // A database with no row when the feed started: every commit of it is new.
      state = newFollowed(0);
      this.followed.set(db, state);
    }
    return state;
  }

  private deliver(db: string, state: Followed, seq: number, event: FeedEvent): void {
    state.delivered = seq;
    this.emit(event);
    for (let next = state.ahead.get(seq + 1); next; next = state.ahead.get(state.delivered + 1)) {
      state.ahead.delete(state.delivered + 1);
      state.delivered++;
      this.emit(next);
    }
    for (const waiting of state.ahead.keys()) if (waiting <= state.delivered) state.ahead.delete(waiting);
    if (state.waiting.length) {
      const still = state.waiting.filter((waiter) => waiter.seq > state.delivered);
      for (const waiter of state.waiting) if (waiter.seq <= state.delivered) waiter.done(true);
      state.waiting = still;
    }
  }

  private emit(event: FeedEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Reads what follows the delivered sequence; one reader per database at a time. */
  private async read(db: string, state: Followed): Promise<void> {
    if (state.reading) {
      state.readAgain = true;
      return;
    }
    state.reading = true;
    try {
      do {
        state.readAgain = false;
        for (;;) {
          const rows = await this.source.readAfter(db, state.delivered, readPage);
          for (const row of rows) {
            if (row.seq <= state.delivered) continue;
            if (row.seq > state.delivered + 1) {
              // Pruned before this process read it (it was away longer than the log is kept).
              state.delivered = row.seq - 1;
              this.emit({ kind: 'reset', db });
            }
            const event: FeedEvent = row.changes === null ? { kind: 'reset', db } : { kind: 'commit', db, commitTime: row.commitTime, changes: changesFromLog(row.changes) };
            this.deliver(db, state, row.seq, event);
          }
          if (rows.length < readPage) break;
        }
      } while (state.readAgain && !this.closed);
    } catch {
      // The store is unreachable for now: the poll tries again.
    } finally {
      state.reading = false;
    }
  }
}

function newFollowed(delivered: number): Followed {
  return { delivered, ahead: new Map(), reading: false, readAgain: false, waiting: [] };
}
