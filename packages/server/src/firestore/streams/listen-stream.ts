import { toApiError } from '../../http/error-handler.js';
import type { FirestoreAccess } from '../api/access.js';
import type { CommittedChange, DocumentDatabase } from '../core/database.js';
import { unchangedNamesFilter } from '../core/bloom-filter.js';
import { keyOfPath, type Doc } from '../core/documents.js';
import { firestoreErrors } from '../core/errors.js';
import { databaseName, documentKeyFromName, fullName, relativeName } from '../core/paths.js';
import { inScope, matchesQuery, type Query } from '../core/query.js';
import { formatMicros } from '../core/value-wire.js';
import { onlyKeys, wireObject } from '../core/wire-checks.js';
import type { ListenHub } from './listen-hub.js';
import { readTimeChange, resumeTimeOf, resumeToken, scheduleDue, sharedMatch, sharedWire } from './listen-shared.js';
import type { StreamContext, StreamSession, StreamSink } from './stream.js';

/** What the client holds for a target: each document's path and the version it was sent. */
interface ActiveTarget {
  id: number;
  query?: Query;
  /** Equal for targets whose queries are equal as sent (same database): they match a change alike. */
  queryKey?: string;
  documents?: Set<string>;
  /** Limits and offsets depend on documents outside the result: such targets re-run on change. */
  rerun: boolean;
  sent: Map<string, number>;
  unregister: () => void;
}

/**
 * The Listen stream. Each addTarget is answered ADD, the matching documents, CURRENT, then a
 * global NO_CHANGE carrying the read time (the only message on which the SDK raises a snapshot);
 * each removeTarget REMOVE. After that every commit touching a target's scope is matched against
 * it and sent as deltas (documentChange / documentDelete / removal from the target), followed by
 * one global NO_CHANGE per batch of commits, with a read time that only grows. Resuming targets
 * get what changed since their token and an existence filter (with a bloom filter of the names
 * when the hub no longer remembers the changes); limit targets and unreadable tokens get RESET
 * and the full result again, which is always correct.
 */
export class ListenSession implements StreamSession {
  private readonly targets = new Map<number, ActiveTarget>();
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  private lastReadTime = 0;
  private pending: Array<{ target: ActiveTarget; commitTime: number; changes: CommittedChange[] }> = [];
  private flushScheduled = false;
  /** Work on the queue not finished yet: while there is none, commits skip the queue (`flushDue`). */
  private busy = 0;
  /** On the list of sessions whose commits are sent at the next tick (`dueSessions`). */
  private due = false;

  constructor(
    private readonly database: DocumentDatabase,
    private readonly hub: ListenHub,
    private readonly access: FirestoreAccess,
    private readonly context: StreamContext,
    private readonly sink: StreamSink,
  ) {}

  receive(request: unknown): void {
    this.enqueue(() => this.handle(request));
  }

  close(): void {
    this.closed = true;
    for (const target of this.targets.values()) target.unregister();
    this.targets.clear();
  }

  private enqueue(work: () => Promise<void> | void): void {
    // Commits noted before this work was asked for go out before it starts.
    if (this.due) this.flushDue();
    this.busy++;
    this.queue = this.queue
      .then(work)
      .catch((error: unknown) => this.end(error))
      .then(() => {
        this.busy--;
      });
  }

  private async handle(raw: unknown): Promise<void> {
    if (this.closed) return;
    const request = wireObject(raw, 'ListenRequest');
    onlyKeys(request, ['database', 'addTarget', 'removeTarget', 'labels'], 'ListenRequest');
    if (request.database !== undefined && request.database !== databaseName(this.context.db)) {
      throw firestoreErrors.invalidArgument(`Database ${String(request.database)} does not match the stream's ${databaseName(this.context.db)}.`);
    }
    if (request.addTarget !== undefined) await this.addTarget(request.addTarget);
    else if (request.removeTarget !== undefined) this.removeTarget(request.removeTarget);
  }

  private async addTarget(raw: unknown): Promise<void> {
    const spec = wireObject(raw, 'addTarget');
    onlyKeys(spec, ['query', 'documents', 'targetId', 'resumeToken', 'readTime', 'once', 'expectedCount'], 'addTarget');
    const id = spec.targetId;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) throw firestoreErrors.invalidArgument('targetId must be a non-negative integer.');
    if (this.targets.has(id)) throw firestoreErrors.invalidArgument(`Target ID ${id} is already in use.`);
    const target: ActiveTarget = { id, rerun: false, sent: new Map(), unregister: () => undefined };
    try {
      this.defineTarget(target, spec);
      await this.authorize(target);
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.status !== 'PERMISSION_DENIED' && apiError.status !== 'INVALID_ARGUMENT' && apiError.status !== 'FAILED_PRECONDITION') throw error;
      // A denied or invalid target fails alone: ADD, then REMOVE with the cause; the stream goes on.
      this.sink.send({ targetChange: { targetChangeType: 'ADD', targetIds: [id] } });
      this.sink.send({ targetChange: { targetChangeType: 'REMOVE', targetIds: [id], cause: apiError.toRpcStatus() } });
      return;
    }
    if (this.closed) return;
    this.targets.set(id, target);
    target.unregister = this.hub.register({
      dbKey: this.database.dbKey(this.context.db),
      ...(target.query ? { query: target.query } : {}),
      ...(target.documents ? { documents: target.documents } : {}),
      deliver: (commitTime, changes) => this.noteCommit(target, commitTime, changes),
    });
    this.sink.send({ targetChange: { targetChangeType: 'ADD', targetIds: [id] } });
    const resuming = spec.resumeToken !== undefined || spec.readTime !== undefined;
    const resumeFrom = resumeTimeOf(spec);
    const changed = resumeFrom === undefined || target.rerun ? undefined : this.hub.changedSince(this.database.dbKey(this.context.db), resumeFrom);
    const docs = await this.currentResult(target);
    const now = await this.database.readTime(this.context.db);
    if (changed) {
      await this.sendChangesSince(target, docs, changed, resumeFrom!);
    } else if (resumeFrom !== undefined && resumeFrom <= now && target.query && !target.rerun) {
      this.sendNewerThan(target, docs, resumeFrom);
    } else {
      // A first listen, or a resume the history cannot serve: the whole result again.
      if (resuming) this.sink.send({ targetChange: { targetChangeType: 'RESET', targetIds: [id] } });
      for (const doc of docs) this.sendDocument(target, doc);
    }
    const readTime = this.nextReadTime(now);
    this.sink.send({ targetChange: { targetChangeType: 'CURRENT', targetIds: [id], resumeToken: resumeToken(readTime), readTime: formatMicros(readTime) } });
    this.sendGlobal(readTime);
  }

  /**
   * Resuming: the client holds the result as of its resume token, so only documents changed since
   * then are sent (in, changed, or gone), then an existence filter with the full count so the
   * client can check it holds exactly the right set.
   */
  private async sendChangesSince(target: ActiveTarget, docs: Doc[], changed: Set<string>, since: number): Promise<void> {
    const current = new Map(docs.map((doc) => [doc.key.path, doc]));
    const relevant = [...changed].filter((path) => (target.documents ? target.documents.has(path) : inScope(target.query!, keyOfPath(path))));
    const stillThere = await this.database.getDocuments(this.context.db, relevant.filter((path) => !current.has(path)));
    for (const path of relevant) {
      const doc = current.get(path);
      if (doc) this.sendDocument(target, doc);
      else this.sendGone(target, path, stillThere.get(path), since);
    }
    for (const doc of docs) target.sent.set(doc.key.path, doc.updateTime);
    this.sink.send({ filter: { targetId: target.id, count: docs.length } });
  }

  /**
   * Resuming past what the hub remembers (an old token, or one from before a restart): the
   * documents matching now that changed since the token are sent, and the ones that left are
   * told by the existence filter's bloom filter of every name matching now, as Google does. The
   * client drops its cached documents the filter does not hold; only if its count still differs
   * (a false positive) does it listen again from scratch.
   */
  private sendNewerThan(target: ActiveTarget, docs: Doc[], since: number): void {
    for (const doc of docs) {
      if (doc.updateTime > since) this.sendDocument(target, doc);
      else target.sent.set(doc.key.path, doc.updateTime);
    }
    const names = docs.map((doc) => fullName(this.context.db, doc.key.path));
    this.sink.send({ filter: { targetId: target.id, count: docs.length, unchangedNames: unchangedNamesFilter(names) } });
  }

  private defineTarget(target: ActiveTarget, spec: Record<string, unknown>): void {
    const db = this.context.db;
    if (spec.query !== undefined && spec.documents === undefined) {
      const query = wireObject(spec.query, 'addTarget.query');
      onlyKeys(query, ['parent', 'structuredQuery'], 'addTarget.query');
      const parent = relativeName(db, String(query.parent ?? ''), 'Parent');
      target.query = this.database.parseQuery(db, parent, query.structuredQuery);
      target.queryKey = JSON.stringify([this.database.dbKey(db), parent, query.structuredQuery ?? null]);
      if (target.query.findNearest) throw firestoreErrors.invalidArgument('FindNearest is not supported for real-time queries.');
      if (target.query.select) throw firestoreErrors.invalidArgument("'select' clauses are not supported for real-time queries.");
      target.rerun = target.query.limit !== undefined || target.query.offset > 0;
      return;
    }
    if (spec.documents !== undefined && spec.query === undefined) {
      const documents = wireObject(spec.documents, 'addTarget.documents');
      onlyKeys(documents, ['documents'], 'addTarget.documents');
      if (!Array.isArray(documents.documents)) throw firestoreErrors.invalidArgument('A documents target needs a list of document names.');
      target.documents = new Set(documents.documents.map((name, i) => documentKeyFromName(db, name, `documents[${i}]`).path));
      return;
    }
    throw firestoreErrors.invalidArgument('A target must be either a query or documents.');
  }

  /** Security rules: `list` on a query target's constraints, `get` on each document of a documents target. */
  private async authorize(target: ActiveTarget): Promise<void> {
    const judge = this.access.judge(this.context.caller, this.context.db);
    if (target.query) return judge.list(target.query);
    const paths = [...target.documents!];
    await judge.get(paths, await this.database.getDocuments(this.context.db, paths));
  }

  /**
   * A documents target is judged again on each new version (rules may read the document): a
   * version the caller may not read removes the target with PERMISSION_DENIED, as a denied
   * target is at the start. Query targets were judged on constraints that no commit changes.
   */
  private async stillReadable(target: ActiveTarget, changes: CommittedChange[]): Promise<boolean> {
    const mine = changes.filter((change) => target.documents!.has(change.path));
    if (!mine.length) return true;
    const after = new Map<string, Doc>();
    for (const change of mine) if (change.after) after.set(change.path, change.after);
    try {
      await this.access.judge(this.context.caller, this.context.db).get(mine.map((change) => change.path), after);
      return true;
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.status !== 'PERMISSION_DENIED') throw error;
      target.unregister();
      this.targets.delete(target.id);
      this.sink.send({ targetChange: { targetChangeType: 'REMOVE', targetIds: [target.id], cause: apiError.toRpcStatus() } });
      return false;
    }
  }

  private removeTarget(raw: unknown): void {
    if (typeof raw !== 'number') throw firestoreErrors.invalidArgument('removeTarget must be a target ID.');
    const target = this.targets.get(raw);
    if (target) {
      target.unregister();
      this.targets.delete(raw);
    }
    this.sink.send({ targetChange: { targetChangeType: 'REMOVE', targetIds: [raw] } });
  }

  private async currentResult(target: ActiveTarget): Promise<Doc[]> {
    if (target.query) return (await this.database.runQuery(this.context.db, target.query)).docs;
    const docs = await this.database.getDocuments(this.context.db, [...target.documents!]);
    return [...docs.values()];
  }

  // ---- commits ------------------------------------------------------------------------------

  private noteCommit(target: ActiveTarget, commitTime: number, changes: CommittedChange[]): void {
    this.pending.push({ target, commitTime, changes });
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // Everything one commit (or several in a row) did becomes one snapshot. With nothing else on
    // the queue, the commits wait for the next tick with every other session's rather than each
    // taking a turn of the promise queue (a thousand listeners made a thousand promise chains).
    if (this.busy > 0) return this.enqueue(() => this.flush());
    this.due = true;
    scheduleDue(this);
  }

  /** Sends the commits noted while the queue was idle, at once when no target needs to read. */
  flushDue(): void {
    if (!this.due) return;
    this.due = false;
    if (this.pending.some(({ target }) => target.rerun || target.documents)) return this.enqueue(() => this.flush());
    try {
      this.flushPlain();
    } catch (error) {
      this.end(error);
    }
  }

  /** `flush` for query targets without a limit: matching a change needs no read. */
  private flushPlain(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    let latest = 0;
    let sentAny = false;
    for (const { target, commitTime, changes } of batch) {
      latest = Math.max(latest, commitTime);
      if (this.targets.get(target.id) === target) sentAny = this.applyChanges(target, changes, commitTime) || sentAny;
    }
    if (sentAny && !this.closed) this.sendGlobal(this.nextReadTime(latest));
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    let latest = 0;
    let sentAny = false;
    const rerun = new Set<ActiveTarget>();
    for (const { target, commitTime, changes } of batch) {
      latest = Math.max(latest, commitTime);
      if (this.targets.get(target.id) !== target) continue;
      // A re-run reads the current result, which already holds every later commit of the batch.
      if (target.rerun) {
        if (!rerun.has(target)) sentAny = (await this.rerun(target, commitTime)) || sentAny;
        rerun.add(target);
      } else {
        if (target.documents && !(await this.stillReadable(target, changes))) continue;
        sentAny = this.applyChanges(target, changes, commitTime) || sentAny;
      }
    }
    if (sentAny && !this.closed) this.sendGlobal(this.nextReadTime(latest));
  }

  /** Matches each changed document against the target: enter, change, leave or delete. */
  private applyChanges(target: ActiveTarget, changes: CommittedChange[], commitTime: number): boolean {
    let sent = false;
    for (const change of changes) {
      const wasIn = target.sent.has(change.path);
      const isIn = change.after !== undefined && (target.query ? this.matches(target, change) : target.documents!.has(change.path));
      if (isIn) {
        if (target.sent.get(change.path) === change.after!.updateTime) continue;
        this.sendDocument(target, change.after!);
        sent = true;
      } else if (wasIn || target.documents) {
        this.sendGone(target, change.path, change.after, commitTime);
        sent = true;
      }
    }
    return sent;
  }

  /** Whether a changed document is in a query target; listeners of an equal query share the answer. */
  private matches(target: ActiveTarget, change: CommittedChange): boolean {
    return sharedMatch(change, target.queryKey!, () => matchesQuery(this.context.db, target.query!, change.after!));
  }

  /** A limit (or offset) target: run it again and send the difference. */
  private async rerun(target: ActiveTarget, commitTime: number): Promise<boolean> {
    const docs = await this.currentResult(target);
    let sent = false;
    const now = new Set<string>();
    for (const doc of docs) {
      now.add(doc.key.path);
      if (target.sent.get(doc.key.path) === doc.updateTime) continue;
      this.sendDocument(target, doc);
      sent = true;
    }
    const gone = [...target.sent.keys()].filter((path) => !now.has(path));
    const stillThere = await this.database.getDocuments(this.context.db, gone);
    for (const path of gone) this.sendGone(target, path, stillThere.get(path), commitTime);
    return sent || gone.length > 0;
  }

  private sendDocument(target: ActiveTarget, doc: Doc): void {
    target.sent.set(doc.key.path, doc.updateTime);
    this.sink.send({ documentChange: { document: sharedWire(this.context, doc), targetIds: [target.id] } });
  }

  /**
   * A document that left the target. One that still exists goes with its new version (the SDK
   * would otherwise keep its old copy, which may still match locally, and ask again in limbo).
   */
  private sendGone(target: ActiveTarget, path: string, now: Doc | undefined, commitTime: number): void {
    target.sent.delete(path);
    if (now) this.sink.send({ documentChange: { document: sharedWire(this.context, now), removedTargetIds: [target.id] } });
    else this.sink.send({ documentDelete: { document: fullName(this.context.db, path), removedTargetIds: [target.id], readTime: formatMicros(commitTime) } });
  }

  private sendGlobal(readTime: number): void {
    this.sink.send({ targetChange: readTimeChange(readTime) });
  }

  /** Read times on one stream never go back. */
  private nextReadTime(candidate: number): number {
    this.lastReadTime = Math.max(this.lastReadTime, candidate);
    return this.lastReadTime;
  }

  private end(error: unknown): void {
    if (this.closed) return;
    this.close();
    this.sink.fail(toApiError(error));
  }
}
