import pg from 'pg';
import type { ChangeFeed, FeedEvent } from '../change-feed.js';
import type { PgPool } from './pg-connection.js';
import { changeChannel, changesFromLog, parseNotifyPayload } from './pg-change-log.js';

/**
 * Follows fs_changes for this process: every commit of every instance, per database in sequence
 * order, exactly once. Sequences have no gaps and become visible in order (a commit takes its
 * sequence under its database's fs_meta row lock, released only once the commit is visible), so
 * "delivered up to n" is the whole state of a database. This process's own commits arrive at
 * once from the store (`local`); others' are read from the table when a NOTIFY says there is
 * more, on reconnecting, and on a slow poll that covers a notification missed in a reconnect.
 */

interface Followed {
  delivered: number;
  /** Local commits that arrived ahead of an earlier one not read yet. */
  ahead: Map<number, FeedEvent>;
  reading: boolean;
  readAgain: boolean;
  /** caughtUp calls waiting for a sequence to be delivered. */
  waiting: Array<{ seq: number; done: (caught: boolean) => void }>;
}

export interface PgChangeFeedOptions {
  pollMs?: number;
  reconnectMs?: number;
}

const readPage = 500;
/** How long caughtUp waits for the log to be read before it answers false. */
const catchUpMs = 5_000;

export class PgChangeFeed implements ChangeFeed {
  private readonly listeners = new Set<(event: FeedEvent) => void>();
  private readonly followed = new Map<string, Followed>();
  private listenClient: pg.Client | undefined;
  private closed = false;
  private poll: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: PgPool,
    private readonly options: PgChangeFeedOptions = {},
  ) {}

  /** Listens, then takes every database's current sequence as the start: earlier commits are not told. */
  async start(): Promise<void> {
    await this.connectListener();
    for (const { db, seq } of await this.sequences()) this.followed.set(db, newFollowed(seq));
    this.poll = setInterval(() => void this.pollAll(), this.options.pollMs ?? 2_000);
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
    // Another instance's earlier commit is not told yet: it goes first.
    state.ahead.set(seq, event);
    void this.read(db, state);
  }

  async caughtUp(db: string): Promise<boolean> {
    let seq: number;
    try {
      const { rows } = await this.pool.query<{ seq: string }>('SELECT seq FROM fs_meta WHERE db = $1', [db]);
      seq = rows.length ? Number(rows[0]!.seq) : 0;
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
    clearTimeout(this.reconnect);
    const client = this.listenClient;
    this.listenClient = undefined;
    await client?.end().catch(() => undefined);
    for (const state of this.followed.values()) for (const waiter of state.waiting.splice(0)) waiter.done(false);
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
          const { rows } = await this.pool.query<{ seq: string; commit_time: string; changes: string | null }>(
            'SELECT seq, commit_time, changes FROM fs_changes WHERE db = $1 AND seq > $2 ORDER BY seq LIMIT $3',
            [db, state.delivered, readPage],
          );
          for (const row of rows) {
            const seq = Number(row.seq);
            if (seq <= state.delivered) continue;
            if (seq > state.delivered + 1) {
              // Pruned before this process read it (it was away longer than the log is kept).
              state.delivered = seq - 1;
              this.emit({ kind: 'reset', db });
            }
            const event: FeedEvent = row.changes === null ? { kind: 'reset', db } : { kind: 'commit', db, commitTime: Number(row.commit_time), changes: changesFromLog(row.changes) };
            this.deliver(db, state, seq, event);
          }
          if (rows.length < readPage) break;
        }
      } while (state.readAgain && !this.closed);
    } catch {
      // The database is unreachable for now: the poll tries again.
    } finally {
      state.reading = false;
    }
  }

  private async sequences(): Promise<Array<{ db: string; seq: number }>> {
    const { rows } = await this.pool.query<{ db: string; seq: string }>('SELECT db, seq FROM fs_meta');
    return rows.map((row) => ({ db: row.db, seq: Number(row.seq) }));
  }

  private async pollAll(): Promise<void> {
    if (this.closed) return;
    try {
      for (const { db, seq } of await this.sequences()) {
        const state = this.stateOf(db);
        if (seq > state.delivered) void this.read(db, state);
      }
    } catch {
      // Unreachable for now; the next poll tries again.
    }
  }

  private async connectListener(): Promise<void> {
    const client = new pg.Client(this.pool.options);
    const lost = () => {
      if (this.listenClient !== client) return;
      this.listenClient = undefined;
      client.end().catch(() => undefined);
      this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      const note = parseNotifyPayload(message.payload);
      if (!note) return;
      const state = this.stateOf(note.db);
      if (note.seq > state.delivered) void this.read(note.db, state);
    });
    await client.connect();
    await client.query(`LISTEN ${changeChannel}`);
    this.listenClient = client;
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.reconnect = setTimeout(() => {
      this.connectListener()
        // Whatever was notified while away is read now.
        .then(() => this.pollAll())
        .catch(() => this.scheduleReconnect());
    }, this.options.reconnectMs ?? 500);
    this.reconnect.unref();
  }
}

function newFollowed(delivered: number): Followed {
  return { delivered, ahead: new Map(), reading: false, readAgain: false, waiting: [] };
}
