import { documentKey, keyedLookup } from './pg-keyed.js';
import type { DocumentRow, DocumentScan } from '../document-store.js';
import type { PgPool } from './pg-connection.js';
import type { PgStatement } from './pg-document-writes.js';
import { bytes, pathKey, type PgQueryable, pgDocumentScanOrder, pgDocumentScanWhere, pgRowColumns, rowFromPg, type PgRowShape } from './pg-document-scan.js';

/**
 * Superseded versions on PostgreSQL, as sqlite-document-history.ts keeps them: a commit keeps the
 * version it replaced with the time it stopped being current; a document as of T is its current
 * row if written by T, else the kept version current at T.
 */
export class PgDocumentHistory {
  constructor(
    private readonly pool: PgPool,
    private readonly reader: PgQueryable = pool,
  ) {}

  /** For a commit's transaction: keeping the versions `rows` had until `until` (µs). */
  keepStatement(db: string, rows: readonly DocumentRow[], until: number): PgStatement[] {
    if (rows.length === 0) return [];
    const keys = rows.map((row) => pathKey(row.path));
    return [{ sql: 
      `INSERT INTO fs_versions (db, ${pgRowColumns}, until_time)
       SELECT $1, kept.*, $9::bigint FROM unnest($2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[], $6::bigint[], $7::bigint[], $8::text[]) AS kept
       ON CONFLICT (db, parent, doc_id, update_time) DO UPDATE SET until_time = EXCLUDED.until_time, fields = EXCLUDED.fields, create_time = EXCLUDED.create_time`,
      params: [
        db,
        keys.map((key) => key.parent),
        keys.map((key) => key.docId),
        rows.map((row) => bytes(row.collectionId)),
        rows.map((row) => row.nameKey),
        rows.map((row) => row.createTime),
        rows.map((row) => row.updateTime),
        rows.map((row) => row.fields),
        until,
      ] }];
  }

  async rowsAt(db: string, paths: readonly string[], readTime: number): Promise<Map<string, DocumentRow>> {
    const unique = [...new Set(paths)];
    const rows = new Map<string, DocumentRow>();
    if (unique.length === 0) return rows;
    const keys = unique.map(pathKey);
    // A document's kept versions cover disjoint spans of time: at most one is current at $4.
    const { rows: found } = await this.reader.query<PgRowShape>(
      `${keyedLookup('fs_documents', documentKey, pgRowColumns, 'update_time <= $4')}
       UNION ALL
       ${keyedLookup('fs_versions', documentKey, pgRowColumns, 'update_time <= $4 AND until_time > $4')}`,
      [db, keys.map((key) => key.parent), keys.map((key) => key.docId), readTime],
    );
    for (const shape of found) {
      const row = rowFromPg(shape);
      rows.set(row.path, row);
    }
    return rows;
  }

  /** The documents of a scope as of `readTime`, ascending in the scan's order (see SqliteDocumentHistory.scanAt). */
  async scanAt(db: string, scan: DocumentScan, readTime: number): Promise<DocumentRow[]> {
    const params: unknown[] = [];
    const current = pgDocumentScanWhere(db, scan, params);
    params.push(readTime);
    const time = `$${params.length}`;
    const kept = pgDocumentScanWhere(db, scan, params);
    params.push(scan.limit);
    const order = pgDocumentScanOrder(scan);
    const { rows } = await this.reader.query<PgRowShape>(
      `(SELECT ${pgRowColumns} FROM fs_documents WHERE ${current} AND update_time <= ${time} ORDER BY ${order} LIMIT $${params.length})
       UNION ALL
       (SELECT ${pgRowColumns} FROM fs_versions WHERE ${kept} AND update_time <= ${time} AND until_time > ${time} ORDER BY ${order} LIMIT $${params.length})
       ORDER BY ${order} LIMIT $${params.length}`,
      params,
    );
    return rows.map(rowFromPg);
  }

  /** The versions of a scope current at `readTime`, unordered, at most `scan.limit` (DocumentStore.versionsAt). */
  async versionsAt(db: string, scan: DocumentScan, readTime: number): Promise<DocumentRow[]> {
    const params: unknown[] = [];
    const scope = pgDocumentScanWhere(db, scan, params);
    params.push(readTime, scan.limit);
    const { rows } = await this.reader.query<PgRowShape>(
      `SELECT ${pgRowColumns} FROM fs_versions WHERE ${scope} AND update_time <= $${params.length - 1} AND until_time > $${params.length - 1} LIMIT $${params.length}`,
      params,
    );
    return rows.map(rowFromPg);
  }

  async collectionPathsAt(db: string, lower: Buffer, upper: Buffer, readTime: number): Promise<string[]> {
    const { rows } = await this.reader.query<{ parent: Buffer }>(
      `SELECT parent FROM fs_documents WHERE db = $1 AND parent >= $2 AND parent < $3 AND update_time <= $4
       UNION SELECT parent FROM fs_versions WHERE db = $1 AND parent >= $2 AND parent < $3 AND update_time <= $4 AND until_time > $4`,
      [db, lower, upper, readTime],
    );
    return rows.map((row) => row.parent.toString('utf8'));
  }

  async historyStart(db: string): Promise<number> {
    const { rows } = await this.reader.query<{ history_start: string }>('SELECT history_start FROM fs_meta WHERE db = $1', [db]);
    return Number(rows[0]?.history_start ?? 0);
  }

  /** Versions, and change-log entries, that ended before `before` (µs): at most `limit` of each. */
  async prune(before: number, limit: number): Promise<number> {
    const versions = await this.pool.query(
      'DELETE FROM fs_versions WHERE ctid = ANY (ARRAY(SELECT ctid FROM fs_versions WHERE until_time < $1 LIMIT $2))',
      [before, limit],
    );
    const changes = await this.pool.query(
      'DELETE FROM fs_changes WHERE ctid = ANY (ARRAY(SELECT ctid FROM fs_changes WHERE commit_time < $1 LIMIT $2))',
      [before, limit],
    );
    return Math.max(versions.rowCount ?? 0, changes.rowCount ?? 0);
  }
}
