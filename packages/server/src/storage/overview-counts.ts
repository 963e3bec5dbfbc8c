/**
 * Counts for the console's overview, each one indexed query (users and documents, not scanned in
 * code). The documents are counted once per database and then kept by the change feed
 * (console/document-counter.ts); users are counted on every load (the primary key and the
 * users_created index: some ms at 100k accounts, and every instance sees every other's accounts).
 */
export interface OverviewCounts {
  /** Accounts of a realm, and how many were created at or after `createdSince` (ms). */
  users(projectId: string, createdSince: number): Promise<{ total: number; createdSince: number }>;
  /** Documents of a database (its store key, DocumentDatabase.dbKey), with its last commit time in the same snapshot. */
  documents(dbKey: string): Promise<CountedDocuments>;
  /**
   * The database's last commit time as stored (one row), where no change feed tells the commits of
   * other processes: on SQLite `hearth import firestore` may load a database while the server runs.
   * PostgreSQL has none: its imports are told through the feed (a reset).
   */
  lastCommitTime?(dbKey: string): Promise<number>;
}

/** A database's documents counted in one store snapshot, and the last commit time that snapshot holds. */
export interface CountedDocuments {
  total: number;
  /** The database's last commit time (µs) in the same snapshot: later commits are not in `total`. */
  asOf: number;
}
