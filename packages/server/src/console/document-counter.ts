import type { CommitEvent } from '../firestore/core/database.js';
import type { CountedDocuments } from '../storage/overview-counts.js';

/** What the counter follows: DocumentDatabase's change feed and its clear signal. */
export interface CommitFeed {
  onCommit(listener: (event: CommitEvent) => void): () => void;
  /** A clear, an import (on PostgreSQL) or a feed that lost its place: the count starts over. */
  onClear(listener: (dbKey: string) => void): () => void;
}

/** One followed database. */
export interface Tracked {
  /** Known once the first count is in; until then the commits told are kept to be applied after. */
  total: number | undefined;
  /** Commits told while counting: their time and what they did to the number of documents. */
  pending: Array<{ commitTime: number; delta: number }>;
  /** The latest commit the number holds (the count's snapshot or a commit told since). */
  seen: number;
  counting: Promise<void> | undefined;
}

/** Databases followed at once; past it, the one asked about least recently is dropped (counted again if asked). */
export const maxFollowedDatabases = 200;

/**
 * The console overview's document count, kept without a COUNT per request and without a counter
 * row every commit would update (concurrent commits on PostgreSQL would queue on it): counted once
 * in the background, then moved by each commit the change feed tells (created +1, deleted -1). The
 * feed tells every commit once and in order on every instance, so each instance keeps its own.
 *
 * Exact because the count and the database's last commit time come from one snapshot: a commit
 * told during or after the count is applied only if it is later than that snapshot. A clear, an
 * import or a feed gap (all told through onClear) drops the number and counts again.
 */
export class DocumentCounter {
  /** In order of the last request for each (the least recent first). */
  private readonly tracked = new Map<string, Tracked>();
  private readonly unsubscribe: Array<() => void>;

  constructor(
    feed: CommitFeed,
    private readonly count: (dbKey: string) => Promise<CountedDocuments>,
    private readonly onError: (error: unknown) => void = () => undefined,
    /** Where the feed cannot tell other processes' writes (SQLite): the stored last commit time, checked per request. */
    private readonly storedLastCommit?: (dbKey: string) => Promise<number>,
  ) {
    this.unsubscribe = [feed.onCommit((event) => this.apply(event)), feed.onClear((dbKey) => this.forget(dbKey))];
  }

  /**
   * The number of documents, or undefined while the first count runs (started here if need be);
   * waits for that count at most `waitMs`, so a request never waits long on a large database.
   */
  async documents(dbKey: string, waitMs: number): Promise<number | undefined> {
    let tracked = this.start(dbKey);
    // A commit stored but never told (another process's import): count again. A commit of this
    // process stored but not told yet looks the same for a moment; counting again is exact all the same.
    if (this.storedLastCommit && tracked.total !== undefined && (await this.storedLastCommit(dbKey)) > tracked.seen) {
      this.forget(dbKey);
      tracked = this.start(dbKey);
    }
    if (tracked.total === undefined && tracked.counting) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([tracked.counting, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return this.tracked.get(dbKey)?.total;
  }

  /** Starts following a database (counting it in the background) if it is not followed yet. */
  start(dbKey: string): Tracked {
    const known = this.tracked.get(dbKey);
    if (known) {
      this.tracked.delete(dbKey);
      this.tracked.set(dbKey, known);
      return known;
    }
    const tracked: Tracked = { total: undefined, pending: [], seen: 0, counting: undefined };
    this.tracked.set(dbKey, tracked);
    // Operators may open the overview of any number of projects: what is followed stays bounded.
    for (const oldest of this.tracked.keys()) {
      if (this.tracked.size <= maxFollowedDatabases) break;
      this.tracked.delete(oldest);
    }
    tracked.counting = this.count(dbKey).then(
      ({ total, asOf }) => {
        // Dropped meanwhile (a clear): this count may predate it; the next request counts again.
        if (this.tracked.get(dbKey) !== tracked) return;
        tracked.total = total + tracked.pending.reduce((sum, { commitTime, delta }) => (commitTime > asOf ? sum + delta : sum), 0);
        tracked.seen = Math.max(asOf, tracked.seen);
        tracked.pending = [];
        tracked.counting = undefined;
      },
      (error: unknown) => {
        if (this.tracked.get(dbKey) === tracked) this.tracked.delete(dbKey);
        this.onError(error);
      },
    );
    return tracked;
  }

  close(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
  }

  private apply(event: CommitEvent): void {
    const tracked = this.tracked.get(event.dbKey);
    if (!tracked) return;
    tracked.seen = Math.max(tracked.seen, event.commitTime);
    let delta = 0;
    for (const change of event.changes) {
      if (!change.before && change.after) delta++;
      else if (change.before && !change.after) delta--;
    }
    if (delta === 0) return;
    if (tracked.total !== undefined) tracked.total += delta;
    else tracked.pending.push({ commitTime: event.commitTime, delta });
  }

  /** A followed database is counted again at once, so the overview after a clear or import is right. */
  private forget(dbKey: string): void {
    if (this.tracked.delete(dbKey)) this.start(dbKey);
  }
}
