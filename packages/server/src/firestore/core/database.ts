import { randomBytes } from 'node:crypto';
import type { DocumentRow, DocumentStore } from '../../storage/document-store.js';
import type { FeedEvent } from '../../storage/change-feed.js';
import { hasSnapshotReads } from '../../storage/snapshot-reads.js';
import { compositeEntries, indexSetText } from './composite-indexes.js';
import { encodeReplacements, encodingOf } from './commit-encoding.js';
import { changeFor, docFromRow, type Doc, type DocumentIndexing } from './documents.js';
import { firestoreErrors } from './errors.js';
import { checkPartitionable, partitionPoints } from './partitions.js';
import { executeQuery, type PlanContext, type QueryResult } from './planner.js';
import { executeFindNearest, type NearestSide } from './nearest-query.js';
import { declaredVectorFields, vectorChangeFor, vectorEntriesOfRow, vectorSetKeys } from './vector-fields.js';
import { requireVectorIndex } from './vector-indexes.js';
import { VectorSets } from './vector-sets.js';
import { documentKey, type DatabaseId } from './paths.js';
import { defaultQueryLimits, type Query, type QueryLimits } from './query.js';
import { parseStructuredQuery } from './query-parse.js';
import { checkReadsUnchanged, contention, defaultTransactionTimeouts, TransactionManager, type ServerTransaction } from './transactions.js';
import { checkWriteSequence } from './write-sequence.js';
import { applyWrite, type Write, type WriteResult } from './writes.js';
import { timestampFromMicros } from './value-wire.js';
import { defaultVersionRetentionMs, type DatabaseOptions, type ReadConsistency, type CommitOutcome, type CommitEvent, type CommitPlan, type CommitAuthorizer, type FoundDocumentsCheck, type QueryAnswerCheck } from './database-types.js';

export type { ReadConsistency, CommitOutcome, CommittedChange, CommitEvent, CommitPlan, CommitAuthorizer, FoundDocumentsCheck, QueryAnswerCheck } from './database-types.js';

/** A commit whose documents changed between its authorization and its write: authorized again. */
class ChangedSinceAuthorized extends Error {}

const maxAuthorizationAttempts = 5;

export { defaultVersionRetentionMs, type DatabaseOptions } from './database-types.js';
/** Versions pruned per statement: a prune never holds the database for long. */
const pruneBatch = 2_000;

/**
 * The document database: reads, atomic commits and queries over the DocumentStore. Protocol
 * adapters (REST now, streams later) parse requests into these calls and format the answers.
 */
export class DocumentDatabase {
  readonly transactions: TransactionManager;
  private readonly commitListeners = new Set<(event: CommitEvent) => void>();
  private readonly clearListeners = new Set<(dbKey: string) => void>();
  private readonly prepared = new Map<string, Promise<void>>();
  private readonly indexSet: string;
  /** The side table of declared vector fields, and the sets findNearest holds in memory. */
  private readonly vectorSide: NearestSide;

  constructor(
    private readonly store: DocumentStore,
    private readonly options: DatabaseOptions = { queryLimits: defaultQueryLimits, compositeIndexes: [] },
  ) {
    const vectorFields = declaredVectorFields(options.vectorIndexes ?? []);
    this.vectorSide = { fields: vectorFields, sets: new VectorSets() };
    // Vector fields join the recorded set only when declared, so a folder without them keeps its set.
    this.indexSet = indexSetText(options.compositeIndexes, vectorSetKeys(vectorFields));
    this.transactions = new TransactionManager(defaultTransactionTimeouts, options.instanceTag ?? (options.changeFeed ? randomBytes(8) : undefined));
    options.changeFeed?.subscribe((event) => this.fromFeed(event));
  }

  private fromFeed(event: FeedEvent): void {
    if (event.kind === 'reset') {
      for (const listener of this.clearListeners) listener(event.db);
      return;
    }
    const slash = event.db.indexOf('/');
    const db: DatabaseId = { projectId: event.db.slice(0, slash), databaseId: event.db.slice(slash + 1) };
    const changes = event.changes.map((change) => ({
      path: change.path,
      before: change.before ? docFromRow(change.before) : undefined,
      after: change.after ? docFromRow(change.after) : undefined,
    }));
    this.publish({ db, dbKey: event.db, commitTime: event.commitTime, changes });
  }

  get queryLimits(): QueryLimits {
    return this.options.queryLimits;
  }

  dbKey(db: DatabaseId): string {
    return `${db.projectId}/${db.databaseId}`;
  }

  /**
   * The change feed: every commit, in commit order, right after it is durable. Listeners run
   * synchronously and must not throw.
   */
  onCommit(listener: (event: CommitEvent) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /**
   * True once listeners have been told every commit of `db` visible now. A single process tells
   * its own commits as they happen; a shared store's feed may still be reading another's (or its
   * own, on PostgreSQL), and a Listen resume must not take documents read now for changes told.
   */
  async commitsTold(db: DatabaseId): Promise<boolean> {
    return this.options.changeFeed ? this.options.changeFeed.caughtUp(this.dbKey(db)) : true;
  }

  /** Before a database's first use: its composite index entries must match the declared set. */
  private async ready(db: DatabaseId): Promise<string> {
    const key = this.dbKey(db);
    let preparing = this.prepared.get(key);
    if (!preparing) {
      preparing = (async () => {
        if ((await this.store.indexSet(key)) === this.indexSet) return;
        const composites = (row: DocumentRow) => compositeEntries(this.options.compositeIndexes, docFromRow(row));
        await this.store.rebuildComposite(key, this.indexSet, composites, (row) => vectorEntriesOfRow(this.vectorSide.fields, row));
        this.vectorSide.sets.dropDatabase(key);
      })();
      this.prepared.set(key, preparing);
      preparing.catch(() => this.prepared.delete(key));
    }
    await preparing;
    return key;
  }

  /** The time reads are answered at: never before the last commit they may see, nor at or after one they cannot see yet. */
  async readTime(db: DatabaseId): Promise<number> {
    const key = await this.ready(db);
    // The clock is read before the commits being written are waited out: a commit of another process
    // that takes its time after that wait takes a later one, so the time labels everything a read
    // starting now will see (one microsecond back, as a commit's time can equal the clock's).
    const clock = Math.floor(Date.now() * 1000) - 1;
    const at = Math.max(clock, await (this.store.settledCommitTime ?? this.store.lastCommitTime).call(this.store, key));
    const pending = this.store.pendingCommitTime?.(key);
    return pending === undefined ? at : Math.min(at, pending - 1);
  }

  /**
   * A read time a request asked for: past the epoch, not in the future, and within the versions
   * kept (the retention, and no earlier than the history began). Google's errors (its emulator's
   * texts; production refuses what is older than its retention the same way).
   */
  async checkReadTime(db: DatabaseId, readTime: number): Promise<void> {
    if (!(readTime > 0)) throw firestoreErrors.invalidArgument('Only timestamps past epoch are supported.');
    if (readTime > (await this.readTime(db))) throw firestoreErrors.invalidArgument("The requested 'read_time' cannot be in the future.");
    const retention = this.options.versionRetentionMs ?? defaultVersionRetentionMs;
    const oldest = Math.max(Math.floor((Date.now() - retention) * 1000), await this.store.historyStart(await this.ready(db)));
    if (readTime < oldest) throw firestoreErrors.failedPrecondition("The requested 'read_time' is too old.");
  }

  /** Drops the versions no allowed read time can see any more; how many went. */
  async pruneHistory(shouldStop: () => boolean = () => false): Promise<number> {
    const before = Math.floor((Date.now() - (this.options.versionRetentionMs ?? defaultVersionRetentionMs)) * 1000);
    let pruned = 0;
    while (!shouldStop()) {
      const count = await this.store.pruneVersions(before, pruneBatch);
      pruned += count;
      if (count < pruneBatch) break;
      // Let requests run between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return pruned;
  }

  /**
   * The documents at `paths` (missing ones left out), as the consistency sees them. `check` judges
   * exactly these versions before a transaction records (or locks) any of them.
   */
  async getDocuments(db: DatabaseId, paths: readonly string[], consistency: ReadConsistency = {}, check?: FoundDocumentsCheck): Promise<Map<string, Doc>> {
    const key = await this.ready(db);
    const readTime = readTimeOf(consistency);
    const rows = readTime === undefined ? await this.store.getDocuments(key, paths) : await this.store.getDocumentsAt(key, paths, readTime);
    const docs = new Map<string, Doc>();
    for (const path of paths) {
      const row = rows.get(path);
      if (row) docs.set(path, docFromRow(row));
    }
    await check?.(docs);
    if (consistency.transaction) for (const path of paths) this.transactions.recordRead(consistency.transaction, path, docs.get(path)?.updateTime);
    return docs;
  }

  parseQuery(db: DatabaseId, parent: string, structuredQuery: unknown): Query {
    return parseStructuredQuery(db, parent, structuredQuery, this.options.queryLimits);
  }

  /** A query's answer; `check` judges the versions it found before a transaction records (or locks) any of them. */
  async runQuery(db: DatabaseId, query: Query, consistency: ReadConsistency = {}, check?: QueryAnswerCheck): Promise<QueryResult> {
    const dbKey = await this.ready(db);
    const readTime = readTimeOf(consistency);
    if (query.findNearest && !this.options.anyVectorField) requireVectorIndex(this.options.vectorIndexes ?? [], db.projectId, query);
    const run = query.findNearest ? (context: PlanContext) => executeFindNearest(context, this.vectorSide) : executeQuery;
    const runOn = (store: DocumentStore) => run({ store, dbKey, db, query, composites: this.options.compositeIndexes, ...(readTime !== undefined ? { readTime } : {}) });
    // A query reads in several steps; where commits of other processes could fall between them, one snapshot holds them together.
    const result = hasSnapshotReads(this.store) ? await this.store.inSnapshot(runOn) : await runOn(this.store);
    await check?.(result.docs);
    if (consistency.transaction) for (const doc of result.docs) this.transactions.recordRead(consistency.transaction, doc.key.path, doc.updateTime);
    return result;
  }

  /** PartitionQuery's split points (relative paths), now or at a past read time. */
  async partitionPoints(db: DatabaseId, query: Query, partitionCount: number, readTime?: number): Promise<string[]> {
    checkPartitionable(query);
    return partitionPoints(this.store, await this.ready(db), query, partitionCount, readTime);
  }

  /**
   * Applies the writes atomically and in order at one commit time. With a transaction, its
   * locks are honoured and released, and what it read must be unchanged.
   */
  async commit(db: DatabaseId, requested: readonly Write[], transaction?: ServerTransaction, authorize?: CommitAuthorizer): Promise<CommitOutcome> {
    let writes: readonly Write[];
    try {
      writes = checkWriteSequence(requested);
    } catch (error) {
      if (transaction) this.transactions.end(transaction);
      throw error;
    }
    if (!authorize) return this.commitOnce(db, writes, transaction);
    for (let attempt = 1; ; attempt++) {
      let plan: CommitPlan;
      try {
        if (transaction?.readOnly && writes.length) throw firestoreErrors.invalidArgument('Cannot modify entities in a read-only transaction.');
        plan = await this.plan(db, writes);
        await authorize(plan);
      } catch (error) {
        if (transaction) this.transactions.end(transaction);
        throw error;
      }
      try {
        return await this.commitOnce(db, writes, transaction, plan);
      } catch (error) {
        if (!(error instanceof ChangedSinceAuthorized)) throw error;
        // Rules judged documents that have changed since: judge again, or (in a transaction, whose
        // locks are gone now) let the client retry.
        if (transaction || attempt >= maxAuthorizationAttempts) throw contention();
      }
    }
  }

  /** Applies the writes to the documents as they are now, without storing anything. */
  private async plan(db: DatabaseId, writes: readonly Write[]): Promise<CommitPlan> {
    const paths = [...new Set(writes.map((write) => write.key.path))];
    const current = await this.getDocuments(db, paths);
    const stored = new Map(paths.map((path) => [path, current.get(path)]));
    const requestMicros = Math.floor(Date.now()) * 1000;
    const commitTime = Math.max(requestMicros, ...paths.map((path) => (current.get(path)?.updateTime ?? 0) + 1));
    const times = { db, commitTime, requestTime: timestampFromMicros(requestMicros), planning: true };
    const after = new Map<string, Doc | undefined>();
    const claimed = new Map<string, 'create' | 'update'>();
    const verified: string[] = [];
    for (const write of writes) {
      // A verify is never beside another write of its document (checkWriteSequence).
      if (write.kind === 'verify') {
        verified.push(write.key.path);
        continue;
      }
      const path = write.key.path;
      if (!after.has(path)) {
        // The first write of a document says what it claims to be: rules judge that claim before
        // the precondition is checked (so a refused caller never learns whether the document exists).
        const claim = write.precondition === undefined ? undefined : 'exists' in write.precondition && !write.precondition.exists ? 'create' : 'update';
        if (claim) claimed.set(path, claim);
        after.set(path, stored.get(path));
      }
      const { precondition: _precondition, ...unconditional } = write;
      after.set(path, applyWrite(unconditional, after.get(path), times).after);
    }
    const kinds = new Map<string, 'create' | 'update' | 'delete'>();
    for (const [path, doc] of after) kinds.set(path, doc === undefined ? 'delete' : (claimed.get(path) ?? (stored.get(path) === undefined ? 'create' : 'update')));
    return { requestTime: requestMicros, kinds, stored, after, verified };
  }

  private async commitOnce(db: DatabaseId, writes: readonly Write[], transaction?: ServerTransaction, authorized?: CommitPlan): Promise<CommitOutcome> {
    const dbKey = await this.ready(db);
    const paths = writes.map((write) => write.key.path);
    try {
      if (transaction?.readOnly && writes.length) throw firestoreErrors.invalidArgument('Cannot modify entities in a read-only transaction.');
      const encoded = await encodeReplacements(writes, (doc) => this.indexing.composite(doc));
      await this.transactions.acquireForWrite(dbKey, paths, transaction);
      const { result, commitTime } = await this.store.transact(dbKey, [...paths, ...(transaction ? transaction.reads.keys() : [])], (current, commitTime) => {
        if (transaction) checkReadsUnchanged(transaction, current);
        if (authorized) {
          for (const [path, doc] of authorized.stored) if ((current.get(path)?.updateTime ?? 0) !== (doc?.updateTime ?? 0)) throw new ChangedSinceAuthorized();
        }
        const before = new Map<string, Doc | undefined>();
        const state = new Map<string, Doc | undefined>();
        for (const path of paths) {
          if (state.has(path)) continue;
          const row = current.get(path);
          const doc = row ? docFromRow(row) : undefined;
          before.set(path, doc);
          state.set(path, doc);
        }
        // With rules, server timestamps take the request time the rules saw (`request.time`).
        const requestTime = timestampFromMicros(authorized ? authorized.requestTime : Math.floor(commitTime / 1000) * 1000);
        const writeResults = writes.map((write) => {
          // A caller judged by rules (it has an authorization) is told nothing stored it may not read.
          const { after, result } = applyWrite(write, state.get(write.key.path), { db, commitTime, requestTime, discreet: authorized !== undefined });
          state.set(write.key.path, after);
          return result;
        });
        // A write that left a document as it was keeps its updateTime: nothing to store or tell.
        const changed = [...state.entries()].filter(([path, after]) => before.get(path)?.updateTime !== after?.updateTime);
        const changes = changed.map(([path, after]) => changeFor(before.get(path), after, this.indexing, encodingOf(after, encoded.get(path)), current.get(path)?.nameKey));
        const committed = changed.map(([path, after]) => ({ path, before: before.get(path), after }));
        return { changes, result: { writeResults, committed, documents: state } };
      });
      if (result.committed.length && !this.options.changeFeed) this.publish({ db, dbKey, commitTime, changes: result.committed });
      return { writeResults: result.writeResults, commitTime, documents: result.documents };
    } finally {
      if (transaction) this.transactions.end(transaction);
    }
  }

  private publish(event: CommitEvent): void {
    for (const listener of this.commitListeners) listener(event);
  }

  /** Each write on its own: one failing does not stop the others. */
  async batchWrite(db: DatabaseId, writes: readonly Write[], authorize?: CommitAuthorizer): Promise<Array<{ result?: WriteResult; commitTime?: number; error?: Error }>> {
    const seen = new Set<string>();
    for (const write of writes) {
      if (seen.has(write.key.path)) throw firestoreErrors.invalidArgument('A batch write cannot write to the same document more than once.');
      seen.add(write.key.path);
    }
    const outcomes: Array<{ result?: WriteResult; commitTime?: number; error?: Error }> = [];
    for (const write of writes) {
      try {
        const outcome = await this.commit(db, [write], undefined, authorize);
        outcomes.push({ result: outcome.writeResults[0]!, commitTime: outcome.commitTime });
      } catch (error) {
        outcomes.push({ error: error as Error });
      }
    }
    return outcomes;
  }

  /** Collection ids directly under a document (or the root). */
  async listCollectionIds(db: DatabaseId, parent: string, readTime?: number): Promise<string[]> {
    const dbKey = await this.ready(db);
    if (parent !== '') documentKey(parent);
    if (readTime === undefined) return (await this.store.collectionIds(dbKey, parent)).sort();
    const paths = await this.store.collectionPaths(dbKey, parent, readTime);
    const depth = parent === '' ? 0 : parent.split('/').length;
    const ids = new Set<string>();
    // Every path the store returns lies under the parent.
    for (const path of paths) ids.add(path.split('/')[depth]!);
    return [...ids].sort();
  }

  /** Ids in a collection that name no document but have subcollections (ListDocuments' showMissing). */
  async missingDocumentIds(db: DatabaseId, collection: string, readTime?: number): Promise<string[]> {
    const dbKey = await this.ready(db);
    const depth = collection.split('/').length;
    const ids = new Set<string>();
    if (readTime === undefined) for (const id of await this.store.collectionIds(dbKey, collection)) ids.add(id);
    else for (const path of await this.store.collectionPaths(dbKey, collection, readTime)) ids.add(path.split('/')[depth]!);
    const paths = [...ids].map((id) => `${collection}/${id}`);
    const existing = readTime === undefined ? await this.store.getDocuments(dbKey, paths) : await this.store.getDocumentsAt(dbKey, paths, readTime);
    return [...ids].filter((id) => !existing.has(`${collection}/${id}`));
  }

  /**
   * Deletes up to `batch` of a document and the documents in its subcollections (at any depth), in
   * one ordinary commit (listeners hear it); called until it returns 0, nothing is left.
   */
  async deleteTree(db: DatabaseId, documentPath: string, batch = 200): Promise<number> {
    const dbKey = await this.ready(db);
    documentKey(documentPath);
    const paths = new Set<string>();
    const own = await this.store.getDocuments(dbKey, [documentPath]);
    if (own.size) paths.add(documentPath);
    for (const collection of await this.store.collectionPaths(dbKey, documentPath)) {
      if (!collection.startsWith(`${documentPath}/`) || paths.size >= batch) continue;
      for (const row of await this.store.scanDocuments(dbKey, { parent: collection, descending: false, limit: batch - paths.size })) paths.add(`${row.parent}/${row.id}`);
    }
    if (!paths.size) return 0;
    await this.commitOnce(db, [...paths].map((path) => ({ kind: 'delete' as const, key: documentKey(path), transforms: [] })));
    return paths.size;
  }

  async clear(db: DatabaseId): Promise<void> {
    const dbKey = await this.ready(db);
    await this.store.clear(dbKey);
    if (!this.options.changeFeed) for (const listener of this.clearListeners) listener(dbKey);
  }

  /** Told after a database was emptied at once (the emulator's clear), which no commit event says. */
  onClear(listener: (dbKey: string) => void): () => void {
    this.clearListeners.add(listener);
    return () => this.clearListeners.delete(listener);
  }

  private readonly indexing: DocumentIndexing = {
    composite: (doc) => (this.options.compositeIndexes.length ? compositeEntries(this.options.compositeIndexes, doc) : []),
    vectors: (before, after) => (this.vectorSide.fields.size ? vectorChangeFor(this.vectorSide.fields, before, after) : undefined),
  };
}

/** A read's snapshot time: the one asked for, or its read-only transaction's. */
function readTimeOf(consistency: ReadConsistency): number | undefined {
  return consistency.readTime ?? consistency.transaction?.readTime;
}
