import { toApiError } from '../../http/error-handler.js';
import type { FirestoreAccess } from '../api/access.js';
import type { CommittedChange, DocumentDatabase } from '../core/database.js';
import type { Doc } from '../core/documents.js';
import { firestoreErrors } from '../core/errors.js';
import { databaseName } from '../core/paths.js';
import { formatMicros } from '../core/value-wire.js';
import { onlyKeys, wireObject } from '../core/wire-checks.js';
import type { ListenHub } from './listen-hub.js';
import { ListenGate, noteLookups } from './listen-gate.js';
import { defineTarget, inTarget, type ActiveTarget } from './listen-target.js';
import { sendFirstAnswer, type ResumingSession } from './listen-resume.js';
import { readTimeChange, resumeToken, resumeTimeOf, scheduleDue } from './listen-shared.js';
import type { StreamContext, StreamSession, StreamSink } from './stream.js';

/**
 * The Listen stream. Each addTarget is answered ADD, the matching documents, CURRENT, then a
 * global NO_CHANGE carrying the read time (the only message on which the SDK raises a snapshot);
 * each removeTarget REMOVE. After that every commit touching a target's scope is matched against
 * it and sent as deltas (documentChange / documentDelete / removal from the target), followed by
 * one global NO_CHANGE per batch of commits, with a read time that only grows. Resuming targets
 * get what changed since their token (listen-resume.ts). Every document goes out through the
 * session's ListenGate, which sends only versions this caller may read.
 */
export class ListenSession implements StreamSession, ResumingSession {
  private readonly targets = new Map<number, ActiveTarget>();
  readonly gate: ListenGate;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  private lastReadTime = 0;
  private pending: Array<{ target: ActiveTarget; commitTime: number; changes: CommittedChange[] }> = [];
  private flushScheduled = false;
  /** The batch being sent (it may start at once and end on the queue): its latest commit, and whether anything went. */
  private batchLatest = 0;
  private batchSent = false;
  /** Work on the queue not finished yet: while there is none, commits skip the queue (`flushDue`). */
  private busy = 0;
  /** On the list of sessions whose commits are sent at the next tick (`dueSessions`). */
  private due = false;

  constructor(
    readonly database: DocumentDatabase,
    private readonly hub: ListenHub,
    private readonly access: FirestoreAccess,
    readonly context: StreamContext,
    sink: StreamSink,
  ) {
    // The gate holds the sink: nothing else here can put a document on the wire.
    this.gate = new ListenGate(context, access.judge(context.caller, context.db), sink);
  }

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
    // The rules generation before judging: a release during the judgement makes it judged again.
    const target: ActiveTarget = { id, grant: 'constraints', rerun: false, sent: new Map(), judgedAt: this.gate.rulesGeneration, unregister: () => undefined };
    try {
      defineTarget(this.database, this.context.db, target, spec);
      // A query allowed on its constraints is judged now; named and documents targets on the versions they will send, below.
      if (target.grant === 'constraints') noteLookups(target, await this.access.judge(this.context.caller, this.context.db).list(target.query!));
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.status !== 'PERMISSION_DENIED' && apiError.status !== 'INVALID_ARGUMENT' && apiError.status !== 'FAILED_PRECONDITION') throw error;
      // A denied or invalid target fails alone: ADD, then REMOVE with the cause; the stream goes on.
      this.gate.targetChange({ targetChangeType: 'ADD', targetIds: [id] });
      this.gate.targetChange({ targetChangeType: 'REMOVE', targetIds: [id], cause: apiError.toRpcStatus() });
      return;
    }
    if (this.closed) return;
    // Registered before the first read, so no commit falls between the two.
    this.targets.set(id, target);
    const unregisterScope = this.hub.register({
      dbKey: this.database.dbKey(this.context.db),
      ...(target.query ? { query: target.query } : {}),
      ...(target.documents ? { documents: target.documents } : {}),
      deliver: (commitTime, changes) => this.noteCommit(target, commitTime, changes),
    });
    target.unregister = () => {
      unregisterScope();
      target.unwatchLookups?.();
    };
    this.watchLookups(target);
    this.gate.targetChange({ targetChangeType: 'ADD', targetIds: [id] });
    const resumeFrom = resumeTimeOf(spec);
    // Taken before the read, the time every commit at or before it is in what the read sees, even one
    // another instance was still writing; taken after, it could pass such a commit, and a client that
    // resumes from it before that commit reaches it would never be sent it.
    const before = await this.database.readTime(this.context.db);
    const docs = await this.currentResult(target);
    if (!docs) return;
    // A later commit the read saw comes with every earlier one (they become visible in time order).
    const now = docs.reduce((latest, doc) => Math.max(latest, doc.updateTime), before);
    // The changes since the resume time are asked for after the read, once the hub has heard every
    // commit the read could see: a commit read but not yet told would otherwise be neither sent nor
    // told later (counted as sent). Changes told after the read are sent again by their commit.
    const changed =
      resumeFrom === undefined || target.rerun || !(await this.database.commitsTold(this.context.db))
        ? undefined
        : this.hub.changedSince(this.database.dbKey(this.context.db), resumeFrom);
    const resuming = spec.resumeToken !== undefined || spec.readTime !== undefined;
    if (!(await sendFirstAnswer(this, target, { docs, now, resuming, ...(resumeFrom === undefined ? {} : { resumeFrom }), ...(changed ? { changed } : {}) }))) return;
    const readTime = this.nextReadTime(now);
    this.gate.targetChange({ targetChangeType: 'CURRENT', targetIds: [id], resumeToken: resumeToken(readTime), readTime: formatMicros(readTime) });
    this.sendGlobal(readTime);
  }

  /**
   * The target's documents now. Named and documents targets read their documents and judge each
   * version read (the very ones that will be sent): undefined when one is denied, and the target
   * is then removed with PERMISSION_DENIED, as a target denied when added.
   */
  async currentResult(target: ActiveTarget): Promise<Doc[] | undefined> {
    if (target.grant === 'constraints') return (await this.database.runQuery(this.context.db, target.query!)).docs;
    const paths = target.documents ? [...target.documents] : [target.namedPath!];
    const versions = await this.database.getDocuments(this.context.db, paths);
    for (const path of paths) if (!(await this.admit(target, path, versions.get(path)))) return undefined;
    return [...versions.values()].filter((doc) => inTarget(this.gate, target, doc));
  }

  /** Named and documents targets: a version is judged before anything is sent for it; a denied one ends the target. */
  async admit(target: ActiveTarget, path: string, doc: Doc | undefined): Promise<boolean> {
    if (await this.gate.judgeVersion(target, path, doc)) {
      this.watchLookups(target);
      return true;
    }
    this.removeDenied(target);
    return false;
  }

  /**
   * Rules were released, or a document they looked up changed, since the target was judged: it is
   * judged again under the rules in force (a query on its constraints; named and documents targets
   * on their documents as they are now) before anything more is sent for it. False when it was
   * removed as denied.
   */
  private async judgeAgain(target: ActiveTarget): Promise<boolean> {
    const generation = this.gate.rulesGeneration;
    target.verdicts = undefined;
    // A lookup changing while this judgement runs marks it stale again.
    target.stale = false;
    if (target.grant === 'constraints') {
      if (!(await this.gate.stillAllowed(target))) {
        this.removeDenied(target);
        return false;
      }
    } else if (!(await this.currentResult(target))) {
      return false;
    }
    target.judgedAt = generation;
    this.watchLookups(target);
    return true;
  }

  /**
   * Rules that read other documents (roles by get()/exists()): the hub watches those documents for
   * the target, and a change to one makes it judged again at its next commit, before anything more
   * is sent (a role taken away ends the listener, as a release of rules denying it would).
   */
  private watchLookups(target: ActiveTarget): void {
    const lookups = target.lookups;
    if (!lookups?.size || target.watchedLookups === lookups.size || this.targets.get(target.id) !== target) return;
    target.unwatchLookups?.();
    target.watchedLookups = lookups.size;
    target.unwatchLookups = this.hub.register({
      dbKey: this.database.dbKey(this.context.db),
      documents: new Set(lookups),
      counted: false,
      deliver: () => {
        target.stale = true;
      },
    });
  }

  /** A target the caller may no longer read ends with PERMISSION_DENIED, as one denied when added. */
  private removeDenied(target: ActiveTarget): void {
    target.unregister();
    this.targets.delete(target.id);
    this.gate.targetChange({ targetChangeType: 'REMOVE', targetIds: [target.id], cause: firestoreErrors.permissionDenied().toRpcStatus() });
  }

  private removeTarget(raw: unknown): void {
    if (typeof raw !== 'number') throw firestoreErrors.invalidArgument('removeTarget must be a target ID.');
    const target = this.targets.get(raw);
    if (target) {
      target.unregister();
      this.targets.delete(raw);
    }
    this.gate.targetChange({ targetChangeType: 'REMOVE', targetIds: [raw] });
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

  /**
   * Sends the commits noted while the queue was idle, at once when no target needs to read or
   * judge. A version leaving a target that must be judged first stops it there: with `mayWait` it
   * stays due and returns the judgement (listen-shared.ts flushes it again once made), else the rest
   * goes on the queue.
   */
  flushDue(mayWait = false): Promise<unknown> | undefined {
    if (!this.due) return undefined;
    this.due = false;
    const generation = this.gate.rulesGeneration;
    if (this.pending.some(({ target }) => target.rerun || target.grant !== 'constraints' || target.judgedAt !== generation || target.stale)) {
      this.enqueue(() => this.flush());
      return undefined;
    }
    try {
      const judging = this.flushPlain();
      if (!judging) return undefined;
      if (mayWait) {
        this.due = true;
        return judging;
      }
      this.enqueue(() => this.flush());
    } catch (error) {
      this.end(error);
    }
    return undefined;
  }

  /**
   * `flush` for query targets allowed on their constraints, without a limit: matching a change
   * needs no read. Stops at a version leaving a target that must be judged first, and returns that
   * judgement; the rest of the batch stays pending, in order (what was sent is not sent again).
   */
  private flushPlain(): Promise<unknown> | undefined {
    const batch = this.pending;
    this.pending = [];
    for (let i = 0; i < batch.length; i++) {
      const { target, commitTime, changes } = batch[i]!;
      this.batchLatest = Math.max(this.batchLatest, commitTime);
      if (this.targets.get(target.id) !== target) continue;
      for (const change of changes) {
        const offered = this.gate.offerMatched(target, change.path, change.after, commitTime);
        if (offered === true) this.batchSent = true;
        else if (offered !== false) {
          this.pending = batch.slice(i).concat(this.pending);
          return offered;
        }
      }
    }
    this.flushScheduled = false;
    this.endBatch();
    return undefined;
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    const rerun = new Set<ActiveTarget>();
    for (const { target, commitTime, changes } of batch) {
      this.batchLatest = Math.max(this.batchLatest, commitTime);
      if (this.targets.get(target.id) !== target) continue;
      if ((target.judgedAt !== this.gate.rulesGeneration || target.stale) && !(await this.judgeAgain(target))) continue;
      // A re-run reads the current result, which already holds every later commit of the batch.
      if (target.rerun) {
        if (!rerun.has(target)) await this.rerun(target, commitTime);
        rerun.add(target);
      } else {
        await this.applyChanges(target, changes, commitTime);
      }
    }
    this.endBatch();
  }

  private endBatch(): void {
    if (this.batchSent && !this.closed) this.sendGlobal(this.nextReadTime(this.batchLatest));
    this.batchSent = false;
    this.batchLatest = 0;
  }

  /** Each change to a target, judging what needs it: named and documents targets' versions, versions leaving a target. */
  private async applyChanges(target: ActiveTarget, changes: CommittedChange[], commitTime: number): Promise<void> {
    for (const change of changes) {
      const after = change.after;
      if (target.grant !== 'constraints') {
        if (target.documents ? !target.documents.has(change.path) : change.path !== target.namedPath) continue;
        if (!(await this.admit(target, change.path, after))) return;
      }
      if (after !== undefined && inTarget(this.gate, target, after)) {
        if (target.sent.get(change.path) === after.updateTime) continue;
        this.gate.sendIn(target, after);
        this.batchSent = true;
      } else if (target.sent.has(change.path) || target.documents) {
        if (after) await this.gate.judgeLeaving(target, after);
        this.gate.sendOut(target, change.path, after, commitTime);
        this.batchSent = true;
      }
    }
  }

  /** A limit (or offset) target: run it again and send the difference. */
  private async rerun(target: ActiveTarget, commitTime: number): Promise<void> {
    const docs = (await this.currentResult(target))!;
    const now = new Set<string>();
    for (const doc of docs) {
      now.add(doc.key.path);
      if (target.sent.get(doc.key.path) === doc.updateTime) continue;
      this.gate.sendIn(target, doc);
      this.batchSent = true;
    }
    const gone = [...target.sent.keys()].filter((path) => !now.has(path));
    if (gone.length) this.batchSent = true;
    await this.sendGone(target, gone, commitTime);
  }

  /** Documents that left a target: each with its version now, judged, or as a delete. */
  async sendGone(target: ActiveTarget, paths: readonly string[], readTime: number): Promise<boolean> {
    if (!paths.length) return true;
    const now = await this.database.getDocuments(this.context.db, paths);
    for (const path of paths) {
      const doc = now.get(path);
      if (!(await this.admit(target, path, doc))) return false;
      if (doc) await this.gate.judgeLeaving(target, doc);
      this.gate.sendOut(target, path, doc, readTime);
    }
    return true;
  }

  private sendGlobal(readTime: number): void {
    this.gate.targetChange(readTimeChange(readTime));
  }

  /** Read times on one stream never go back. */
  private nextReadTime(candidate: number): number {
    this.lastReadTime = Math.max(this.lastReadTime, candidate);
    return this.lastReadTime;
  }

  private end(error: unknown): void {
    if (this.closed) return;
    this.close();
    this.gate.fail(toApiError(error));
  }
}
