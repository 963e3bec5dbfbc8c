import type Database from 'better-sqlite3';
import type { DocumentScan } from '../document-store.js';
import { documentScanOrder, documentScanWhere } from './sqlite-document-scan.js';

/**
 * The superseded versions of documents, for reads at a past time (`readTime`). A commit that
 * replaces or deletes a document keeps the version it had, with the time it stopped being
 * current (`until_time`); the current rows stay where they are, so reads of the present and
 * inserts pay nothing. A document as of T is its current row if that was written at or before T,
 * else the kept version with update_time <= T < until_time, else nothing. Versions are pruned once
 * they ended before the retention window. `history_start` (fs_meta) is the earliest time for which
 * the versions are complete: the migration that made this table set it to each database's last
 * commit, and clearing a database moves it to the clear. Commits keep versions through their write
 * batch (the `keepVersion` statement of sqlite-write-batch.ts), on the writer thread.
 */

export interface VersionShape {
  parent: string;
  doc_id: string;
  collection_id: string;
  name_key: Buffer;
  create_time: number;
  update_time: number;
  fields: string;
}

const columns = 'parent, doc_id, collection_id, name_key, create_time, update_time, fields';

export class SqliteDocumentHistory {
  private readonly statements;
  private readonly scans = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    this.statements = {
      current: db.prepare<[string, string, string, number], VersionShape>(
        `SELECT ${columns} FROM fs_documents WHERE db = ? AND parent = ? AND doc_id = ? AND update_time <= ?`,
      ),
      kept: db.prepare<[string, string, string, number, number], VersionShape>(
        `SELECT ${columns} FROM fs_versions WHERE db = ? AND parent = ? AND doc_id = ? AND update_time <= ? AND until_time > ? ORDER BY update_time DESC LIMIT 1`,
      ),
      collectionPathsAt: db.prepare<[string, string, string, number, string, string, string, number, number], { parent: string }>(
        `SELECT parent FROM fs_documents WHERE db = ? AND parent >= ? AND parent < ? AND update_time <= ?
         UNION SELECT parent FROM fs_versions WHERE db = ? AND parent >= ? AND parent < ? AND update_time <= ? AND until_time > ?`,
      ),
      historyStart: db.prepare<[string], { history_start: number }>('SELECT history_start FROM fs_meta WHERE db = ?'),
      setHistoryStart: db.prepare(
        'INSERT INTO fs_meta (db, last_commit_time, history_start) VALUES (?, 0, ?) ON CONFLICT (db) DO UPDATE SET history_start = excluded.history_start',
      ),
      prune: db.prepare('DELETE FROM fs_versions WHERE rowid IN (SELECT rowid FROM fs_versions WHERE until_time < ? LIMIT ?)'),
      clear: db.prepare('DELETE FROM fs_versions WHERE db = ?'),
    };
  }

  /** One document as of `readTime`; `storedId` is its id as the doc_id column holds it. */
  rowAt(db: string, parent: string, storedId: string, readTime: number): VersionShape | undefined {
    return this.statements.current.get(db, parent, storedId, readTime) ?? this.statements.kept.get(db, parent, storedId, readTime, readTime);
  }

  /**
   * The documents of a scope as of `readTime`, in the scan's order (ids within one collection,
   * name keys otherwise), ascending: current rows written by then and versions current then. A
   * document is in at most one of the two (a version current at T ended after T, so the row that
   * replaced it was written after T).
   */
  scanAt(db: string, scan: DocumentScan, readTime: number, storedId: (id: string) => string): VersionShape[] {
    const scope = documentScanWhere(db, scan, storedId);
    const where = `${scope.where} AND update_time <= ?`;
    const params = [...scope.params, readTime];
    const order = documentScanOrder(scan);
    const sql = `SELECT ${columns} FROM fs_documents WHERE ${where} UNION ALL SELECT ${columns} FROM fs_versions WHERE ${where} AND until_time > ? ORDER BY ${order} LIMIT ?`;
    let statement = this.scans.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.scans.set(sql, statement);
    }
    return statement.all(...params, ...params, readTime, scan.limit) as VersionShape[];
  }

  /** The versions of a scope current at `readTime`, unordered, at most `scan.limit` (DocumentStore.versionsAt). */
  versionsAt(db: string, scan: DocumentScan, readTime: number, storedId: (id: string) => string): VersionShape[] {
    const scope = documentScanWhere(db, scan, storedId);
    const sql = `SELECT ${columns} FROM fs_versions WHERE ${scope.where} AND update_time <= ? AND until_time > ? LIMIT ?`;
    let statement = this.scans.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.scans.set(sql, statement);
    }
    return statement.all(...scope.params, readTime, readTime, scan.limit) as VersionShape[];
  }

  /** Collection paths in [lower, upper) holding a document at `readTime`. */
  collectionPathsAt(db: string, lower: string, upper: string, readTime: number): string[] {
    return this.statements.collectionPathsAt.all(db, lower, upper, readTime, db, lower, upper, readTime, readTime).map((row) => row.parent);
  }

  historyStart(db: string): number {
    return this.statements.historyStart.get(db)?.history_start ?? 0;
  }

  /** Versions that ended before `before` (µs), at most `limit` of them; how many went. */
  prune(before: number, limit: number): number {
    return this.statements.prune.run(before, limit).changes;
  }

  /** Inside the clear's transaction: no version of the database is kept, and none before `at` can be read. */
  clear(db: string, at: number): void {
    this.statements.clear.run(db);
    this.statements.setHistoryStart.run(db, at);
  }
}

