import type { DocumentRow } from './document-store.js';

/**
 * The commits of every instance sharing one document store, for listeners. A single process's
 * store needs none (DocumentDatabase tells its own commits); a store shared by several processes
 * (PostgreSQL) supplies one, and then DocumentDatabase tells listeners only what the feed says.
 */

export interface StoredChange {
  path: string;
  /** The document before and after the commit; undefined: absent. */
  before: DocumentRow | undefined;
  after: DocumentRow | undefined;
}

export type FeedEvent =
  | { kind: 'commit'; db: string; commitTime: number; changes: StoredChange[] }
  /** The database was cleared, or the feed lost its place in it: listeners must start over. */
  | { kind: 'reset'; db: string };

export interface ChangeFeed {
  /** Per database in commit order, each commit exactly once, whichever instance made it. */
  subscribe(listener: (event: FeedEvent) => void): () => void;
  /**
   * Resolves true once every commit of `db` visible in the store when called has been told to the
   * subscribers; false when that could not be made sure of in time (the store unreachable).
   */
  caughtUp(db: string): Promise<boolean>;
}
