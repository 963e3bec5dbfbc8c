/** Counts for the console's overview, each one indexed query (users and documents, not scanned in code). */
export interface OverviewCounts {
  /** Accounts of a realm, and how many were created at or after `createdSince` (ms). */
  users(projectId: string, createdSince: number): Promise<{ total: number; createdSince: number }>;
  /** Documents of a database (its store key, DocumentDatabase.dbKey). */
  documents(dbKey: string): Promise<number>;
}
