import type Database from 'better-sqlite3';
import type { DocumentChange, DocumentLoad, DocumentLoadReport, DocumentRow, DocumentScan, DocumentStore } from '../document-store.js';
import type { IndexEntry, IndexHit, IndexScan, VectorEntry, VectorRow } from '../document-store.js';
import type { TriggerEventSelector } from '../trigger-events.js';
import { addBound, entryKey, idFromStored, storedId, toRow, toShape } from './sqlite-document-rows.js';
import { CommitGroups } from './sqlite-commit-group.js';
import { tryBeginImmediate } from './sqlite-write-lock.js';
import { BatchRunner, type WriteBatch } from './sqlite-write-batch.js';
import { addVectorWrites, SqliteVectorRows } from './sqlite-vector-rows.js';
import { SqliteWriter } from './sqlite-writer.js';
import { loadSqliteDocuments } from './sqlite-document-load.js';
import { SqliteDocumentHistory, type VersionShape } from './sqlite-document-history.js';
import { documentScanOrder, documentScanWhere } from './sqlite-document-scan.js';
import { SqliteCollectionIds } from './sqlite-collection-ids.js';
import { parentRange } from '../parent-range.js';
import type { LogChangeFeed } from '../log-change-feed.js';
import type { SqliteChangeLog } from './sqlite-change-log.js';

/**
 * Where other processes write the same file (--workers): commits are logged (sqlite-change-log.ts)
 * and told to `feed` after their COMMIT; `announce` tells the other processes how far a database's
 * log now reaches.
 */
export interface SharedFile {
  log: SqliteChangeLog;
  feed: LogChangeFeed;
  announce: (db: string, seq: number) => void;
}

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
    private readonly shared?: SharedFile,
  ) {
    this.history = new SqliteDocumentHistory(db);
    this.vectors = new SqliteVectorRows(db);
    this.childIds = new SqliteCollectionIds(db);
    this.writer = new SqliteWriter(options.file, options.writerLatch);
    this.groups = new CommitGroups(this.writer, {
      start: () => {
        this.overlay.clear();
        // Under the write lock: other processes' commits count from here.
        if (shared) this.lastCommit.clear();
      },
      finish: (batch) => {
        this.recordLastCommits(batch);
        shared?.log.writeAccepted();
      },
      end: (written) => {
        if (written) for (const db of this.pendingFirst.keys()) this.lastWritten.set(db, this.lastCommitTimeSync(db));
        this.pendingFirst.clear();
        this.overlay.clear();
        if (shared) this.tell(shared.log.take(written));
      },
    }, { maxBytes: options.inlineWriteBytes ?? defaultInlineWriteBytes, write: (batch) => this.writeHere(batch) }, 500, shared ? {
      begin: () => tryBeginImmediate(db),
      end: (commit) => {
        if (db.inTransaction) db.exec(commit ? 'COMMIT' : 'ROLLBACK');
      },
    } : undefined);
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
      pruneChanges: db.prepare('DELETE FROM fs_changes WHERE (db, seq) IN (SELECT db, seq FROM fs_changes WHERE commit_time < ? LIMIT ?)'),
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
      this.shared?.log.commit(db, commitTime, changes.map((change) => ({ path: change.path, before: current.get(change.path), after: change.row })));
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
    // Other processes commit too: as stored now, never as remembered.
    if (this.shared) return this.statements.getMeta.get(db)?.last_commit_time ?? 0;
    this.lastCommitTimeSync(db); // loads both from the file the first time
    return this.lastWritten.get(db)!;
  }

  pendingCommitTime(db: string): number | undefined {
    return this.pendingFirst.get(db);
  }

  /** Where other processes commit too: see SqliteChangeLog.settledCommitTime. */
  async settledCommitTime(db: string): Promise<number> {
    return this.shared ? this.shared.log.settledCommitTime(db) : this.lastCommitTime(db);
  }

  /** After a transaction that logged: this process's listeners hear at once, the others are told. */
  private tell(logged: ReturnType<SqliteChangeLog['take']>): void {
    if (!this.shared || logged.length === 0) return;
    const reached = new Map<string, number>();
    for (const { db, seq, event } of logged) {
      this.shared.feed.local(db, seq, event);
      reached.set(db, seq);
    }
    for (const [db, seq] of reached) this.shared.announce(db, seq);
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
    await this.groups.exclusive(() => this.resetting(() => {
      this.statements.clearDocuments.run(db);
      this.statements.clearIndex.run(db);
      this.vectors.clear(db);
      const at = Math.max(Math.floor(Date.now() * 1000), this.lastCommitTimeSync(db));
      this.history.clear(db, at);
      this.shared?.log.reset(db, at);
    }));
  }

  async loadDocuments(db: string, load: DocumentLoad): Promise<DocumentLoadReport> {
    return this.groups.exclusive(() => this.resetting(() => {
      const report = loadSqliteDocuments(this.db, db, load, Math.max(Math.floor(Date.now() * 1000), this.lastCommitTimeSync(db) + 1));
      this.lastCommit.set(db, report.commitTime);
      this.lastWritten.set(db, report.commitTime);
      this.shared?.log.reset(db, report.commitTime);
      return report;
    }));
  }

  /**
   * A clear or a load, in one transaction that holds the write lock from its first read (its last
   * commit time is read under it, where other processes write too); listeners start over after it.
   */
  private resetting<T>(run: () => T): T {
    if (this.shared) this.lastCommit.clear();
    let written = false;
    try {
      const value = this.db.transaction(run).immediate();
      written = true;
      return value;
    } finally {
      if (this.shared) this.tell(this.shared.log.take(written));
    }
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
    return this.groups.exclusive(() => {
      // The change log of --workers is kept as long as the versions: a process away longer starts
      // over. One process alone writes none, but prunes what workers left before it.
      this.statements.pruneChanges.run(before, limit);
      return this.history.prune(before, limit);
    });
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
