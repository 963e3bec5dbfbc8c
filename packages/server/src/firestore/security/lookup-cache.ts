import type { CommitEvent, DocumentDatabase } from '../core/database.js';
import type { Doc } from '../core/documents.js';
import type { DatabaseId } from '../core/paths.js';

/** Enough for the documents rules look up again and again (memberships, roles), small in memory. */
const maxEntries = 10_000;

/**
 * The documents rules read with get()/exists(), kept until a commit changes them. Every commit
 * goes through the database's change feed, which drops what it changed; a read that raced a
 * commit is not kept (each database counts its commits), so a cached document is always the
 * stored one. Rules that look up the same membership or role document on every request then cost
 * no read at all.
 */
export class LookupCache {
  private readonly entries = new Map<string, Doc | null>();
  private readonly commits = new Map<string, number>();

  constructor(private readonly database: DocumentDatabase) {
    database.onCommit((event) => this.forget(event));
    database.onClear((dbKey) => this.forgetDatabase(dbKey));
  }

  async get(db: DatabaseId, path: string): Promise<Doc | undefined> {
    const dbKey = this.database.dbKey(db);
    const key = `${dbKey}\u0000${path}`;
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached ?? undefined;
    const generation = this.commits.get(dbKey) ?? 0;
    const doc = (await this.database.getDocuments(db, [path])).get(path);
    if ((this.commits.get(dbKey) ?? 0) === generation) {
      if (this.entries.size >= maxEntries) this.entries.clear();
      this.entries.set(key, doc ?? null);
    }
    return doc;
  }

  private forgetDatabase(dbKey: string): void {
    this.commits.set(dbKey, (this.commits.get(dbKey) ?? 0) + 1);
    for (const key of this.entries.keys()) if (key.startsWith(`${dbKey}\u0000`)) this.entries.delete(key);
  }

  private forget(event: CommitEvent): void {
    this.commits.set(event.dbKey, (this.commits.get(event.dbKey) ?? 0) + 1);
    for (const change of event.changes) this.entries.delete(`${event.dbKey}\u0000${change.path}`);
  }
}
