import type Database from 'better-sqlite3';
import type { DocumentChange, DocumentLoad, DocumentLoadReport, DocumentRow, DocumentScan, DocumentStore } from '../document-store.js';
import type { IndexEntry, IndexHit, IndexPosition, IndexScan, VectorEntry, VectorRow } from '../document-store.js';
import { numericIdValue } from '../name-keys.js';
import type { TriggerEventSelector } from '../trigger-events.js';
import { indexValueKey, maxIndexValueBytes } from '../index-value-prefix.js';
import { CommitGroups } from './sqlite-commit-group.js';
import { BatchRunner, type WriteBatch } from './sqlite-write-batch.js';
import { addVectorWrites, SqliteVectorRows } from './sqlite-vector-rows.js';
import { SqliteWriter } from './sqlite-writer.js';
import { loadSqliteDocuments } from './sqlite-document-load.js';
import { SqliteDocumentHistory, type VersionShape } from './sqlite-document-history.js';
import { documentScanOrder, documentScanWhere } from './sqlite-document-scan.js';
import { SqliteCollectionIds } from './sqlite-collection-ids.js';
import { parentRange } from '../parent-range.js';

/** A row as SELECTed: the columns of fs_documents and fs_versions alike. */
type RowShape = VersionShape;

/**
 * Groups up to this size are written on the main thread, bigger ones by the writer thread. SQLite
 * writes about 8 ms per MiB here on a quiet machine (a 6.4 MiB commit took ~50 ms), so 512 KiB keeps
 * such a block near the 8 ms slices big commits are encoded in, plus the fsync, as before.
 */
export const defaultInlineWriteBytes = 512 * 1024;

const rowColumns = 'parent, doc_id, collection_id, name_key, create_time, update_time, fields';

/**
 * Documents and their index entries in the same SQLite file as the identity data (WAL,
 * synchronous=FULL). Index entries live in one WITHOUT ROWID table whose primary key is the scan
 * order, so a range of values is a range of the B-tree. Reads use the main connection; commits are
 * decided on the main thread and written there when small, by a writer thread with its own
 * connection otherwise (sqlite-commit-group.ts, sqlite-writer.ts).
 */
export class SqliteDocumentStore implements DocumentStore {
  private readonly statements;
  private readonly scans = new Map<string, Database.Statement>();
  /** The last commit time given out per database (decided, maybe not yet written): the next is later. */
  private readonly lastCommit = new Map<string, number>();
  /** The last commit time written per database: what reads can see. */
  private readonly lastWritten = new Map<string, number>();
  /** The first commit time per database of the group being written. */
  private readonly pendingFirst = new Map<string, number>();
  private readonly history: SqliteDocumentHistory;
  private readonly vectors: SqliteVectorRows;
  private readonly childIds: SqliteCollectionIds;
  private readonly writer: SqliteWriter;
  private readonly groups: CommitGroups;
  /** Databases written by the group being made. */
  private readonly committedIn = new Set<string>();
  /**
   * What the group being decided has written so far (`db NUL path` to its row, or null: deleted):
   * a later commit of the same group reads it, as it would have in one transaction.
   */
  private readonly overlay = new Map<string, DocumentRow | null>();
  private inlineRunner: BatchRunner | undefined;
  private triggerEvents: TriggerEventSelector | undefined;

  constructor(
    private readonly db: Database.Database,
    options: { file: string; writerLatch?: Int32Array; inlineWriteBytes?: number },
  ) {
    this.history = new SqliteDocumentHistory(db);
    this.vectors = new SqliteVectorRows(db);
    this.childIds = new SqliteCollectionIds(db);
    this.writer = new SqliteWriter(options.file, options.writerLatch);
    this.groups = new CommitGroups(this.writer, {
      start: () => this.overlay.clear(),
      finish: (batch) => this.recordLastCommits(batch),
      end: (written) => {
        if (written) for (const db of this.pendingFirst.keys()) this.lastWritten.set(db, this.lastCommitTimeSync(db));
        this.pendingFirst.clear();
        this.overlay.clear();
      },
    }, { maxBytes: options.inlineWriteBytes ?? defaultInlineWriteBytes, write: (batch) => this.writeHere(batch) });
    this.statements = {
      getByPath: db.prepare<[string, string, string], RowShape>(`SELECT ${rowColumns} FROM fs_documents WHERE db = ? AND parent = ? AND doc_id = ?`),
      insertEntry: db.prepare('INSERT OR IGNORE INTO fs_index (db, parent, field, kind, value, doc_id) VALUES (?, ?, ?, ?, ?, ?)'),
      getMeta: db.prepare<[string], { last_commit_time: number; index_set: string | null }>('SELECT last_commit_time, index_set FROM fs_meta WHERE db = ?'),
      setIndexSet: db.prepare(
        'INSERT INTO fs_meta (db, last_commit_time, index_set) VALUES (?, 0, ?) ON CONFLICT (db) DO UPDATE SET index_set = excluded.index_set',
      ),
      collectionPaths: db.prepare<[string, string, string], { parent: string }>(
        'SELECT DISTINCT parent FROM fs_documents WHERE db = ? AND parent >= ? AND parent < ?',
      ),
      rowsAfter: db.prepare<[string, number], RowShape & { rowid: number }>(
        `SELECT rowid, ${rowColumns} FROM fs_documents WHERE db = ? AND rowid > ? ORDER BY rowid LIMIT 500`,
      ),
      deleteComposite: db.prepare('DELETE FROM fs_index WHERE db = ? AND kind = 2'),
      clearDocuments: db.prepare('DELETE FROM fs_documents WHERE db = ?'),
      clearIndex: db.prepare('DELETE FROM fs_index WHERE db = ?'),
    };
  }

  /**
   * For every other write on the main connection (identity rows, rules, the audit log): waits until
   * no group is being written, so that the synchronous write never waits for SQLite's lock.
   */
  async mainWriteTurn(): Promise<void> {
    await this.groups.idle();
  }

  /** Writes what is queued, then stops the writer thread. */
  close(): Promise<void> {
    return this.groups.close();
  }

  async getDocuments(db: string, paths: readonly string[]): Promise<Map<string, DocumentRow>> {
    return this.readRows(db, paths);
  }

  async transact<T>(
    db: string,
    paths: readonly string[],
    decide: (current: Map<string, DocumentRow>, commitTime: number) => { changes: DocumentChange[]; result: T },
  ): Promise<{ result: T; commitTime: number }> {
    const { result, commitTime } = await this.groups.submit((batch) => {
      const current = this.readRows(db, paths, true);
      const commitTime = Math.max(Math.floor(Date.now() * 1000), this.lastCommitTimeSync(db) + 1);
      const { changes, result } = decide(current, commitTime);
      for (const change of changes) {
        // The version this commit replaces or deletes is kept, for reads at a past time.
        const before = current.get(change.path);
        if (before && before.updateTime !== change.row?.updateTime) {
          const shape = toShape(before);
          batch.add('keepVersion', db, shape.parent, shape.doc_id, shape.collection_id, shape.name_key, shape.create_time, shape.update_time, shape.fields, commitTime);
        }
        this.apply(batch, db, change);
        if (this.triggerEvents) {
          // In the commit's own transaction: its events are stored exactly when it is.
          for (const event of this.triggerEvents(db, { path: change.path, before, after: change.row }, commitTime)) {
            batch.add('insertTriggerEvent', event.id, event.target, db, change.path, commitTime, event.payload, Date.now());
          }
        }
        this.overlay.set(`${db}\u0000${change.path}`, change.row ?? null);
      }
      // Ahead of the group's COMMIT: the next commit of the group must come later. Should the group
      // fail, the clock stays ahead of what is stored, which costs nothing.
      this.lastCommit.set(db, commitTime);
      this.committedIn.add(db);
      if (!this.pendingFirst.has(db)) this.pendingFirst.set(db, commitTime);
      return { result, commitTime, changedRows: changes.length };
    });
    return { result, commitTime };
  }

  raiseTriggerEvents(selector: TriggerEventSelector | undefined): void {
    this.triggerEvents = selector;
  }

  /** A small group, on this connection (CommitGroups sends it here only while the writer thread is idle). */
  private writeHere(batch: WriteBatch): void {
    const runner = (this.inlineRunner ??= new BatchRunner(this.db));
    this.db.transaction(() => runner.run(batch.entries())).immediate();
  }

  /** Once per group, last in its transaction: the last commit time of each database it wrote. */
  private recordLastCommits(batch: WriteBatch): void {
    for (const db of this.committedIn) batch.add('setLastCommit', db, this.lastCommitTimeSync(db));
    this.committedIn.clear();
  }

  private apply(batch: WriteBatch, db: string, change: DocumentChange): void {
    for (const entry of change.removeEntries) batch.add('deleteEntry', ...entryKey(db, change.parent, change.id, entry));
    if (change.row) {
      const row = change.row;
      batch.add('upsert', db, row.parent, storedId(row.id), row.collectionId, row.nameKey, row.createTime, row.updateTime, row.fields);
    } else {
      batch.add('delete', db, change.parent, storedId(change.id));
    }
    for (const entry of change.addEntries) batch.add('insertEntry', ...entryKey(db, change.parent, change.id, entry));
    addVectorWrites(batch, db, change, storedId(change.id));
  }

  async scanIndex(db: string, scan: IndexScan): Promise<IndexHit[]> {
    const conditions = ['db = ?', 'parent = ?', 'field = ?', 'kind = ?'];
    const params: unknown[] = [db, scan.parent, scan.field, scan.kind];
    addBound(conditions, params, scan.lower, '>');
    addBound(conditions, params, scan.upper, '<');
    const direction = scan.descending ? 'DESC' : 'ASC';
    const sql = `SELECT value, doc_id FROM fs_index WHERE ${conditions.join(' AND ')} ORDER BY value ${direction}, doc_id ${direction} LIMIT ?`;
    params.push(scan.limit);
    const rows = this.prepared(sql).all(...params) as Array<{ value: Buffer; doc_id: string }>;
    return rows.map((row) => ({ value: row.value, docId: idFromStored(row.doc_id) }));
  }

  async scanDocuments(db: string, scan: DocumentScan): Promise<DocumentRow[]> {
    const { where, params } = documentScanWhere(db, scan, storedId);
    const sql = `SELECT ${rowColumns} FROM fs_documents WHERE ${where} ORDER BY ${documentScanOrder(scan)} ${scan.descending ? 'DESC' : 'ASC'} LIMIT ?`;
    params.push(scan.limit);
    return (this.prepared(sql).all(...params) as RowShape[]).map(toRow);
  }

  async collectionPaths(db: string, prefix: string, readTime?: number): Promise<string[]> {
    const { lower, upper } = parentRange(prefix);
    if (readTime !== undefined) return this.history.collectionPathsAt(db, lower, upper, readTime);
    return this.statements.collectionPaths.all(db, lower, upper).map((row) => row.parent);
  }

  async collectionIds(db: string, prefix: string): Promise<string[]> {
    return this.childIds.under(db, prefix);
  }

  async lastCommitTime(db: string): Promise<number> {
    this.lastCommitTimeSync(db); // loads both from the file the first time
    return this.lastWritten.get(db)!;
  }

  pendingCommitTime(db: string): number | undefined {
    return this.pendingFirst.get(db);
  }

  async indexSet(db: string): Promise<string | undefined> {
    return this.statements.getMeta.get(db)?.index_set ?? undefined;
  }

  // Rebuilds, clears and pruning stay on the main connection (a rebuild computes entries in JS, and
  // all three are rare), in their turn between groups.
  async rebuildComposite(db: string, indexSet: string, entriesOf: (row: DocumentRow) => IndexEntry[], vectorsOf: (row: DocumentRow) => VectorEntry[]): Promise<void> {
    await this.groups.exclusive(() => this.db.transaction(() => {
      this.statements.deleteComposite.run(db);
      this.vectors.clear(db);
      // Pages rather than one iterator: the connection cannot write while a statement iterates.
      for (let after = 0; ; ) {
        const page = this.statements.rowsAfter.all(db, after);
        for (const shape of page) {
          const row = toRow(shape);
          for (const entry of entriesOf(row)) this.statements.insertEntry.run(...entryKey(db, row.parent, row.id, entry));
          for (const entry of vectorsOf(row)) this.vectors.insert(db, row.parent, entry.field, shape.doc_id, entry.vector);
        }
        if (page.length === 0) break;
        after = page[page.length - 1]!.rowid;
      }
      this.statements.setIndexSet.run(db, indexSet);
    }).immediate());
  }

  async vectorGeneration(db: string, parent: string, field: string): Promise<number> {
    return this.vectors.generation(db, parent, field);
  }

  async scanVectors(db: string, parent: string, field: string): Promise<VectorRow[]> {
    return this.vectors.scan(db, parent, field).map(([docId, vector]) => ({ docId: idFromStored(docId), vector }));
  }

  async clear(db: string): Promise<void> {
    await this.groups.exclusive(() => this.db.transaction(() => {
      this.statements.clearDocuments.run(db);
      this.statements.clearIndex.run(db);
      this.vectors.clear(db);
      this.history.clear(db, Math.max(Math.floor(Date.now() * 1000), this.lastCommitTimeSync(db)));
    }).immediate());
  }

  async loadDocuments(db: string, load: DocumentLoad): Promise<DocumentLoadReport> {
    return this.groups.exclusive(() => {
      const report = loadSqliteDocuments(this.db, db, load, Math.max(Math.floor(Date.now() * 1000), this.lastCommitTimeSync(db) + 1));
      this.lastCommit.set(db, report.commitTime);
      this.lastWritten.set(db, report.commitTime);
      return report;
    });
  }

  async getDocumentsAt(db: string, paths: readonly string[], readTime: number): Promise<Map<string, DocumentRow>> {
    const rows = new Map<string, DocumentRow>();
    for (const path of paths) {
      if (rows.has(path)) continue;
      const slash = path.lastIndexOf('/');
      const shape = this.history.rowAt(db, path.slice(0, Math.max(slash, 0)), storedId(path.slice(slash + 1)), readTime);
      if (shape) rows.set(path, toRow(shape));
    }
    return rows;
  }

  async scanDocumentsAt(db: string, scan: DocumentScan, readTime: number): Promise<DocumentRow[]> {
    return this.history.scanAt(db, scan, readTime, storedId).map(toRow);
  }

  async versionsAt(db: string, scan: DocumentScan, readTime: number): Promise<DocumentRow[]> {
    return this.history.versionsAt(db, scan, readTime, storedId).map(toRow);
  }

  async historyStart(db: string): Promise<number> {
    return this.history.historyStart(db);
  }

  async pruneVersions(before: number, limit: number): Promise<number> {
    return this.groups.exclusive(() => this.history.prune(before, limit));
  }

  private lastCommitTimeSync(db: string): number {
    let last = this.lastCommit.get(db);
    if (last === undefined) {
      last = this.statements.getMeta.get(db)?.last_commit_time ?? 0;
      this.lastCommit.set(db, last);
      this.lastWritten.set(db, last);
    }
    return last;
  }

  /** With `inGroup`, what earlier commits of the group being decided wrote counts as stored. */
  private readRows(db: string, paths: readonly string[], inGroup = false): Map<string, DocumentRow> {
    const rows = new Map<string, DocumentRow>();
    for (const path of paths) {
      if (rows.has(path)) continue;
      const written = inGroup ? this.overlay.get(`${db}\u0000${path}`) : undefined;
      if (written !== undefined) {
        if (written) rows.set(path, written);
        continue;
      }
      const slash = path.lastIndexOf('/');
      const shape = this.statements.getByPath.get(db, path.slice(0, Math.max(slash, 0)), storedId(path.slice(slash + 1)));
      if (shape) rows.set(path, toRow(shape));
    }
    return rows;
  }

  private prepared(sql: string): Database.Statement {
    let statement = this.scans.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.scans.set(sql, statement);
    }
    return statement;
  }
}

/**
 * Document ids as stored in the doc_id columns, whose byte order (SQLite's BINARY collation) must
 * be Firestore's id order: numeric ids (`__id7__`) first, by number, then strings by UTF-8 bytes.
 * A numeric id becomes 00 01 + its int64 in offset binary (16 hex digits); a string starting with
 * NUL is kept behind 00 02; every other string is itself (its first byte is above 00). One-to-one,
 * so any text (a group entry's whole path) round-trips.
 */
export function storedId(id: string): string {
  if (id.charCodeAt(0) === 0) return `\u0000\u0002${id}`;
  const number = numericIdValue(id);
  return number === undefined ? id : `\u0000\u0001${BigInt.asUintN(64, number ^ (1n << 63n)).toString(16).padStart(16, '0')}`;
}

export function idFromStored(stored: string): string {
  if (stored.charCodeAt(0) !== 0) return stored;
  if (stored.charCodeAt(1) === 2) return stored.slice(2);
  return `__id${BigInt.asIntN(64, BigInt(`0x${stored.slice(2)}`) ^ (1n << 63n))}__`;
}

/** An entry's key columns: under its document's collection and id unless it says where it is filed. */
function entryKey(db: string, parent: string, id: string, entry: IndexEntry): [string, string, string, number, Buffer, string] {
  return [db, entry.parent ?? parent, entry.field, entry.kind, indexValueKey(entry.value), storedId(entry.docId ?? id)];
}

function addBound(conditions: string[], params: unknown[], bound: IndexPosition | undefined, direction: '>' | '<'): void {
  if (!bound) return;
  if (bound.value.length > maxIndexValueBytes) {
    // Entries keep only a prefix (index-value-prefix.ts): every entry with the bound's prefix may lie within the bound.
    conditions.push(`value ${direction}= ?`);
    params.push(indexValueKey(bound.value));
    return;
  }
  const op = bound.inclusive ? `${direction}=` : direction;
  if (bound.docId === undefined) {
    conditions.push(`value ${op} ?`);
    params.push(bound.value);
  } else {
    conditions.push(`(value, doc_id) ${op} (?, ?)`);
    params.push(bound.value, storedId(bound.docId));
  }
}

function toShape(row: DocumentRow): VersionShape {
  return {
    parent: row.parent,
    doc_id: storedId(row.id),
    collection_id: row.collectionId,
    name_key: row.nameKey,
    create_time: row.createTime,
    update_time: row.updateTime,
    fields: row.fields,
  };
}

function toRow(shape: RowShape): DocumentRow {
  const id = idFromStored(shape.doc_id);
  const path = shape.parent === '' ? id : `${shape.parent}/${id}`;
  return {
    path,
    parent: shape.parent,
    collectionId: shape.collection_id,
    id,
    nameKey: shape.name_key,
    createTime: shape.create_time,
    updateTime: shape.update_time,
    fields: shape.fields,
  };
}
