import type { DocumentChange, DocumentLoad, DocumentLoadReport, DocumentRow, DocumentScan, DocumentStore, IndexEntry, IndexHit, IndexPosition, IndexScan, VectorEntry, VectorRow } from '../document-store.js';
import type { FeedEvent } from '../change-feed.js';
import type { TriggerEventSelector } from '../trigger-events.js';
import { idFromStored } from '../sqlite/sqlite-document-rows.js';
import { applyPgMigrations, inPgTransaction, type PgPool } from './pg-connection.js';
import type { PgQueryable } from './pg-document-scan.js';
import { PgChangeFeed } from './pg-change-feed.js';
import { changeChannel, notifyPayload } from './pg-change-log.js';
import { lockMeta, PgCommitGroups, readRows, type Decide } from './pg-commit-group.js';
import { PgDocumentHistory } from './pg-document-history.js';
import { documentSchemaSteps } from './pg-document-schema.js';
import { pgCollectionIds } from './pg-collection-ids.js';
import { parentRange } from '../parent-range.js';
import { bytes, idBytes, indexValueKey, maxIndexValueBytes, pgDocumentScanOrder, pgDocumentScanWhere, pgRowColumns, rowFromPg, type PgRowShape } from './pg-document-scan.js';
import { documentChangeStatements, runStatements } from './pg-document-writes.js';
import { loadPgDocuments } from './pg-document-load.js';

/**
 * Documents on PostgreSQL, shared by every instance using the database. A commit runs in one
 * READ COMMITTED transaction: it takes an advisory lock per named document (in a fixed order, so
 * two commits never wait on each other in a cycle; a document that does not exist yet is locked
 * the same way), reads them, then locks its database's fs_meta row, which gives the commit time
 * (strictly after the last) and the change sequence. Taking that row last keeps the part of a
 * commit that is serialized per database short; holding it until COMMIT makes sequences visible
 * in order. The commit's changes go to fs_changes with a NOTIFY, for the other instances' feeds.
 * Commits of one database that arrive while one is in flight on this instance share the next
 * transaction (group commit, pg-commit-group.ts): one fs_meta lock and one fsync for all of them.
 */
export class PgDocumentStore implements DocumentStore {
  private readonly history: PgDocumentHistory;
  private readonly knownDatabases = new Set<string>();
  private readonly groups: PgCommitGroups;

  constructor(
    private readonly pool: PgPool,
    private readonly feed?: PgChangeFeed,
    /** Where reads go: the pool, or in a snapshot view the connection holding the snapshot. */
    private readonly reader: PgQueryable = pool,
  ) {
    this.history = new PgDocumentHistory(pool, reader);
    this.groups = new PgCommitGroups(pool, this.history, feed);
  }

  /** A view whose reads all see one snapshot (a REPEATABLE READ, READ ONLY transaction on one connection). */
  async inSnapshot<T>(work: (view: DocumentStore) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      return await work(new PgDocumentStore(this.pool, undefined, client));
    } finally {
      await client.query('COMMIT').catch(() => undefined);
      client.release();
    }
  }

  async getDocuments(db: string, paths: readonly string[]): Promise<Map<string, DocumentRow>> {
    return readRows(this.reader, db, paths);
  }

  async transact<T>(
    db: string,
    paths: readonly string[],
    decide: Decide<T>,
  ): Promise<{ result: T; commitTime: number }> {
    await this.ensureDatabase(db);
    return this.groups.submit(db, paths, decide);
  }

  raiseTriggerEvents(selector: TriggerEventSelector | undefined): void {
    this.groups.triggerEvents = selector;
  }

  async scanIndex(db: string, scan: IndexScan): Promise<IndexHit[]> {
    const params: unknown[] = [db, bytes(scan.parent), bytes(scan.field), scan.kind];
    const conditions = ['db = $1', 'parent = $2', 'field = $3', 'kind = $4'];
    addBound(conditions, params, scan.lower, '>');
    addBound(conditions, params, scan.upper, '<');
    params.push(scan.limit);
    const direction = scan.descending ? 'DESC' : 'ASC';
    const { rows } = await this.reader.query<{ value: Buffer; doc_id: Buffer }>(
      `SELECT value, doc_id FROM fs_index WHERE ${conditions.join(' AND ')} ORDER BY value ${direction}, doc_id ${direction} LIMIT $${params.length}`,
      params,
    );
    return rows.map((row) => ({ value: row.value, docId: idFromStored(row.doc_id.toString('utf8')) }));
  }

  async scanDocuments(db: string, scan: DocumentScan): Promise<DocumentRow[]> {
    const params: unknown[] = [];
    const where = pgDocumentScanWhere(db, scan, params);
    params.push(scan.limit);
    const { rows } = await this.reader.query<PgRowShape>(
      `SELECT ${pgRowColumns} FROM fs_documents WHERE ${where} ORDER BY ${pgDocumentScanOrder(scan)} ${scan.descending ? 'DESC' : 'ASC'} LIMIT $${params.length}`,
      params,
    );
    return rows.map(rowFromPg);
  }

  async collectionPaths(db: string, prefix: string, readTime?: number): Promise<string[]> {
    const range = parentRange(prefix);
    const [lower, upper] = [bytes(range.lower), bytes(range.upper)];
    if (readTime !== undefined) return this.history.collectionPathsAt(db, lower, upper, readTime);
    const { rows } = await this.reader.query<{ parent: Buffer }>('SELECT DISTINCT parent FROM fs_documents WHERE db = $1 AND parent >= $2 AND parent < $3', [db, lower, upper]);
    return rows.map((row) => row.parent.toString('utf8'));
  }

  async collectionIds(db: string, prefix: string): Promise<string[]> {
    return pgCollectionIds(this.reader, db, prefix);
  }

  async lastCommitTime(db: string): Promise<number> {
    const { rows } = await this.reader.query<{ last_commit_time: string }>('SELECT last_commit_time FROM fs_meta WHERE db = $1', [db]);
    return Number(rows[0]?.last_commit_time ?? 0);
  }

  async settledCommitTime(db: string): Promise<number> {
    // FOR SHARE waits for the commit holding fs_meta (FOR UPDATE, through its COMMIT), then lets go at once.
    const { rows } = await this.pool.query<{ last_commit_time: string }>('SELECT last_commit_time FROM fs_meta WHERE db = $1 FOR SHARE', [db]);
    return Number(rows[0]?.last_commit_time ?? 0);
  }

  async indexSet(db: string): Promise<string | undefined> {
    const { rows } = await this.reader.query<{ index_set: string | null }>('SELECT index_set FROM fs_meta WHERE db = $1', [db]);
    return rows[0]?.index_set ?? undefined;
  }

  async rebuildComposite(db: string, indexSet: string, entriesOf: (row: DocumentRow) => IndexEntry[], vectorsOf: (row: DocumentRow) => VectorEntry[]): Promise<void> {
    await this.ensureDatabase(db);
    await inPgTransaction(this.pool, async (client) => {
      // Instances starting together: the first rebuilds, the others find it done.
      const { rows } = await client.query<{ index_set: string | null }>('SELECT index_set FROM fs_meta WHERE db = $1 FOR UPDATE', [db]);
      if (rows[0]?.index_set === indexSet) return;
      await client.query('DELETE FROM fs_index WHERE db = $1 AND kind = 2', [db]);
      await client.query('DELETE FROM fs_vectors WHERE db = $1', [db]);
      await client.query('UPDATE fs_vector_sets SET generation = generation + 1 WHERE db = $1', [db]);
      let after: { parent: Buffer; docId: Buffer } | undefined;
      for (;;) {
        const page = await client.query<PgRowShape>(
          `SELECT ${pgRowColumns} FROM fs_documents WHERE db = $1 ${after ? 'AND (parent, doc_id) > ($2, $3)' : ''} ORDER BY parent, doc_id LIMIT 500`,
          after ? [db, after.parent, after.docId] : [db],
        );
        if (page.rows.length === 0) break;
        const changes: DocumentChange[] = page.rows.map(rowFromPg).map((row) => {
          const vectors = vectorsOf(row);
          return { path: row.path, parent: row.parent, id: row.id, row: undefined, removeEntries: [], addEntries: entriesOf(row), vectors: { fields: vectors.map((entry) => entry.field), entries: vectors } };
        });
        await runStatements(client, documentChangeStatements(db, changes, { entriesOnly: true }));
        const last = page.rows[page.rows.length - 1]!;
        after = { parent: last.parent, docId: last.doc_id };
      }
      await client.query('UPDATE fs_meta SET index_set = $2 WHERE db = $1', [db, indexSet]);
    });
  }

  async vectorGeneration(db: string, parent: string, field: string): Promise<number> {
    const { rows } = await this.reader.query<{ generation: string }>('SELECT generation FROM fs_vector_sets WHERE db = $1 AND parent = $2 AND field = $3', [db, bytes(parent), bytes(field)]);
    return Number(rows[0]?.generation ?? 0);
  }

  async scanVectors(db: string, parent: string, field: string): Promise<VectorRow[]> {
    const { rows } = await this.reader.query<{ doc_id: Buffer; vector: Buffer }>('SELECT doc_id, vector FROM fs_vectors WHERE db = $1 AND parent = $2 AND field = $3 ORDER BY doc_id', [db, bytes(parent), bytes(field)]);
    return rows.map((row) => ({ docId: idFromStored(row.doc_id.toString('utf8')), vector: row.vector }));
  }

  async clear(db: string): Promise<void> {
    await this.ensureDatabase(db);
    const seq = await inPgTransaction(this.pool, async (client) => {
      const meta = await lockMeta(client, db);
      for (const table of ['fs_documents', 'fs_index', 'fs_versions', 'fs_vectors']) await client.query(`DELETE FROM ${table} WHERE db = $1`, [db]);
      await client.query('UPDATE fs_vector_sets SET generation = generation + 1 WHERE db = $1', [db]);
      const at = Math.max(Math.floor(Date.now() * 1000), meta.lastCommitTime);
      const next = meta.seq + 1;
      // A clear is a change of its own (no changes: start over), so other instances' listeners hear of it in order.
      await client.query(
        `WITH meta AS (UPDATE fs_meta SET history_start = $2, last_commit_time = $2, seq = $3 WHERE db = $1),
              logged AS (INSERT INTO fs_changes (db, seq, commit_time, changes) VALUES ($1, $3, $2, NULL))
         SELECT pg_notify('${changeChannel}', $4)`,
        [db, at, next, notifyPayload(db, next)],
      );
      return next;
    });
    const event: FeedEvent = { kind: 'reset', db };
    this.feed?.local(db, seq, event);
  }

  async loadDocuments(db: string, load: DocumentLoad): Promise<DocumentLoadReport> {
    const { seq, ...report } = await loadPgDocuments(this.pool, db, load);
    this.knownDatabases.add(db);
    this.feed?.local(db, seq, { kind: 'reset', db });
    return report;
  }

  async getDocumentsAt(db: string, paths: readonly string[], readTime: number): Promise<Map<string, DocumentRow>> {
    return this.history.rowsAt(db, paths, readTime);
  }

  async scanDocumentsAt(db: string, scan: DocumentScan, readTime: number): Promise<DocumentRow[]> {
    return this.history.scanAt(db, scan, readTime);
  }

  async versionsAt(db: string, scan: DocumentScan, readTime: number): Promise<DocumentRow[]> {
    return this.history.versionsAt(db, scan, readTime);
  }

  async historyStart(db: string): Promise<number> {
    return this.history.historyStart(db);
  }

  async pruneVersions(before: number, limit: number): Promise<number> {
    return this.history.prune(before, limit);
  }

  /** Every database has its fs_meta row before its first commit: the row every commit locks. */
  private async ensureDatabase(db: string): Promise<void> {
    if (this.knownDatabases.has(db)) return;
    await this.pool.query('INSERT INTO fs_meta (db) VALUES ($1) ON CONFLICT (db) DO NOTHING', [db]);
    this.knownDatabases.add(db);
  }
}

/** Applies the schema, starts following the change log, and hands back the store with its feed. */
export async function openPgDocumentStore(pool: PgPool): Promise<{ store: PgDocumentStore; feed: PgChangeFeed }> {
  await applyPgMigrations(pool, 'documents', documentSchemaSteps);
  const feed = new PgChangeFeed(pool);
  await feed.start();
  return { store: new PgDocumentStore(pool, feed), feed };
}

function addBound(conditions: string[], params: unknown[], bound: IndexPosition | undefined, direction: '>' | '<'): void {
  if (!bound) return;
  if (bound.value.length > maxIndexValueBytes) {
    // Entries keep only a prefix: every entry with the bound's prefix may lie within the bound.
    params.push(indexValueKey(bound.value));
    conditions.push(`value ${direction}= $${params.length}`);
    return;
  }
  const op = bound.inclusive ? `${direction}=` : direction;
  if (bound.docId === undefined) {
    params.push(bound.value);
    conditions.push(`value ${op} $${params.length}`);
  } else {
    params.push(bound.value, idBytes(bound.docId));
    conditions.push(`(value, doc_id) ${op} ($${params.length - 1}, $${params.length})`);
  }
}
