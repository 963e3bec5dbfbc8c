import type { TriggerEventSelector } from './trigger-events.js';

/**
 * Storage for the document database, behind one interface. The store keeps rows and index
 * entries and scans byte ranges; what the rows mean (values, order, queries, transforms) is
 * decided by firestore/core, which hands the store finished index entries. `db` is
 * `project/database`.
 */

export interface DocumentRow {
  /** `users/u1` */
  path: string;
  /** `users` */
  parent: string;
  collectionId: string;
  id: string;
  /** The order-preserving encoding of the path's segments. */
  nameKey: Buffer;
  /** Microseconds since the epoch. */
  createTime: number;
  updateTime: number;
  /** The fields in proto3 JSON. */
  fields: string;
}

/** One index entry of a document: kind 0 a field's value, 1 an array element, 2 a composite key. */
export interface IndexEntry {
  field: string;
  kind: number;
  value: Buffer;
  /**
   * Where the entry is filed when not under its document's collection and id: a collection-group
   * index files every document of the group under one key, by the document's whole path.
   */
  parent?: string;
  docId?: string;
}

/** What one commit does to one document: its new row (or none: deleted) and index changes. */
export interface DocumentChange {
  path: string;
  parent: string;
  id: string;
  row: DocumentRow | undefined;
  removeEntries: IndexEntry[];
  addEntries: IndexEntry[];
  /** Set when the document's declared vector fields change (its side-table rows, below). */
  vectors?: VectorChange;
}

/**
 * The side table of declared vector fields (issue 36): a document's vector per declared field, its
 * elements as contiguous float64 (little-endian), so findNearest ranks without decoding documents.
 * Written in the commit's transaction; each set (one collection's field) has a generation, raised
 * in the same transaction whenever a row of the set changes, so a copy held in memory can tell it
 * is current with one read.
 */
export interface VectorEntry {
  /** The vector field's canonical path. */
  field: string;
  vector: Buffer;
}

export interface VectorChange {
  /** Every declared vector field of the document's collection whose row this change replaces. */
  fields: string[];
  /** The new rows (a subset of `fields`); a field without one loses its row. */
  entries: VectorEntry[];
}

export interface VectorRow {
  docId: string;
  vector: Buffer;
}

export interface IndexPosition {
  value: Buffer;
  /** Without a document id the position is before (or after) every entry with that value. */
  docId?: string;
  inclusive: boolean;
}

export interface IndexScan {
  parent: string;
  field: string;
  kind: number;
  lower?: IndexPosition;
  upper?: IndexPosition;
  descending: boolean;
  limit: number;
}

export interface IndexHit {
  value: Buffer;
  docId: string;
}

export interface DocumentScan {
  /** One collection (`parent`, in id order), a collection group (`collectionId`), or every document (name order). */
  parent?: string;
  collectionId?: string;
  /** Id bounds within one collection, exclusive. */
  afterId?: string;
  beforeId?: string;
  /** Inclusive start in the scan's direction. */
  fromId?: string;
  /** Name-key bounds otherwise, exclusive; `fromNameKey` inclusive. */
  afterNameKey?: Buffer;
  beforeNameKey?: Buffer;
  fromNameKey?: Buffer;
  descending: boolean;
  limit: number;
}

export interface DocumentStore {
  getDocuments(db: string, paths: readonly string[]): Promise<Map<string, DocumentRow>>;
  /**
   * Atomically: reads the named documents, lets `decide` compute the changes from them and the
   * commit time (strictly greater than every earlier one of this database), and writes them.
   * Whatever `decide` throws aborts the commit with nothing written.
   */
  transact<T>(
    db: string,
    paths: readonly string[],
    decide: (current: Map<string, DocumentRow>, commitTime: number) => { changes: DocumentChange[]; result: T },
  ): Promise<{ result: T; commitTime: number }>;
  scanIndex(db: string, scan: IndexScan): Promise<IndexHit[]>;
  scanDocuments(db: string, scan: DocumentScan): Promise<DocumentRow[]>;
  /** Collection paths at or under `prefix` (every collection holding a document), now or at `readTime` (µs). */
  collectionPaths(db: string, prefix: string, readTime?: number): Promise<string[]>;
  /**
   * The ids one level below `prefix`, now, unordered: under a document (or '' for the root) its
   * collections; under a collection, its documents that have subcollections. By a walk of the
   * parents' index, one id to the next, not reading every parent as collectionPaths does.
   */
  collectionIds(db: string, prefix: string): Promise<string[]>;
  /** The latest acknowledged commit time of a database (µs), 0 if none. */
  lastCommitTime(db: string): Promise<number>;
  /**
   * The earliest commit time given to a commit that is not acknowledged yet (being written), if
   * any: its writes are not visible, so a read of the present must be labeled before it. A store
   * whose commits are decided and written in one step has none.
   */
  pendingCommitTime?(db: string): number | undefined;
  /**
   * Where other processes commit too (PostgreSQL): the latest commit time once every commit that
   * was being written when asked has ended, so a commit given a time before the call is visible to
   * every read that starts after it returns (commit times are given under the lock this waits on).
   */
  settledCommitTime?(db: string): Promise<number>;
  /** The composite indexes a database's entries were built for (opaque text), if any. */
  indexSet(db: string): Promise<string | undefined>;
  /**
   * Replaces every kind-2 entry and every vector row of a database and records the index set they
   * were built for (every vector set's generation is raised).
   */
  rebuildComposite(db: string, indexSet: string, entriesOf: (row: DocumentRow) => IndexEntry[], vectorsOf: (row: DocumentRow) => VectorEntry[]): Promise<void>;
  /** The generation of one collection's vector field set (0 before any row was written). */
  vectorGeneration(db: string, parent: string, field: string): Promise<number>;
  /** Every vector row of one collection's field, in id order. */
  scanVectors(db: string, parent: string, field: string): Promise<VectorRow[]>;
  /**
   * From now on every commit asks `selector` which trigger events each of its changes raises and
   * stores them in the same transaction (storage/trigger-events.ts); undefined stops it.
   */
  raiseTriggerEvents(selector: TriggerEventSelector | undefined): void;
  /** Deletes every document of a database (the emulator's clear endpoint), and its history. */
  clear(db: string): Promise<void>;
  /**
   * Writes new documents into a database that holds none (an import), in one transaction: all of
   * them, or none when anything fails or the process dies midway. The batches are asked for with
   * the commit time every document gets and consumed one at a time (memory stays flat). Refuses
   * with DatabaseNotEmpty when the database holds a document. No change events: nothing can listen
   * to documents that did not exist.
   */
  loadDocuments(db: string, load: DocumentLoad): Promise<DocumentLoadReport>;

  // ---- the past: superseded versions, kept by every commit that replaces or deletes a document ----

  /** The named documents as they were at `readTime` (µs). */
  getDocumentsAt(db: string, paths: readonly string[], readTime: number): Promise<Map<string, DocumentRow>>;
  /**
   * The documents of a scope as they were at `readTime`, ascending (ids in one collection, name
   * keys otherwise); `parent` or `collectionId`, `afterId`, name-key bounds and `limit` apply.
   */
  scanDocumentsAt(db: string, scan: DocumentScan, readTime: number): Promise<DocumentRow[]>;
  /**
   * The kept versions of a scope that were current at `readTime` (documents changed or deleted
   * since), in no order, at most `limit`; `parent` or `collectionId` and name-key bounds apply.
   * Their number follows the writes since `readTime`, not the scope's size.
   */
  versionsAt(db: string, scan: DocumentScan, readTime: number): Promise<DocumentRow[]>;
  /** The earliest time (µs) whose documents the kept versions can tell: earlier reads are refused. */
  historyStart(db: string): Promise<number>;
  /** Drops versions that stopped being current before `before` (µs), at most `limit`; how many went. */
  pruneVersions(before: number, limit: number): Promise<number>;
}

export interface DocumentLoad {
  /** New documents (`row` set, every index entry in `addEntries`), given the commit time. */
  batches: (commitTime: number) => Iterable<DocumentChange[]>;
  /** The composite index set the entries were built for (DocumentStore.indexSet). */
  indexSet: string;
}

export interface DocumentLoadReport {
  documents: number;
  indexEntries: number;
  commitTime: number;
}

/** An import's target database already holds documents: nothing was written. */
export class DatabaseNotEmpty extends Error {
  constructor(readonly db: string) {
    super(`the database ${db} is not empty: import into an empty database, or name another one`);
    this.name = 'DatabaseNotEmpty';
  }
}

/**
 * The store cannot keep what a commit asks for (a key longer than its indexes take); nothing of
 * the commit was stored and a retry would fail the same way. Mapped to INVALID_ARGUMENT, with this
 * message, in http/error-handler.ts.
 */
export class StorageLimitExceeded extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageLimitExceeded';
  }
}

/**
 * The store could not take a commit now (its writer stopped, or it is closed); nothing of the
 * commit was stored, so the caller may retry. Mapped to UNAVAILABLE in http/error-handler.ts.
 */
export class StorageUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageUnavailable';
  }
}
