import type { ApiError } from '../../http/api-error.js';
import { toApiError } from '../../http/error-handler.js';
import { docToWire, type Doc, type WireDocument } from '../core/documents.js';
import { fullName } from '../core/paths.js';
import { matchesQuery, type Query } from '../core/query.js';
import type { RequestJudge } from '../security/guard.js';
import { knownVerdict, sharedMatch, sharedVerdict, timeText } from './listen-shared.js';
import type { StreamContext, StreamSink } from './stream.js';

/**
 * How a target was allowed, which says what may be sent on it:
 * - `constraints`: `list` was allowed on the query's constraints, so every version that matches the
 *   query is readable by this caller, and nothing else is without a judgement of its own;
 * - `named`: the query names one document (`__name__ ==`) and `list` was judged on that document:
 *   each of its versions is judged again before it goes;
 * - `documents`: `get` was judged on each document: each version is judged again before it goes.
 */
export type TargetGrant = 'constraints' | 'named' | 'documents';

/** What the gate needs to know of a target. */
export interface GatedTarget {
  readonly id: number;
  readonly grant: TargetGrant;
  readonly query?: Query;
  /** Equal for targets whose queries are equal as sent (same database): they match a version alike. */
  readonly queryKey?: string;
  /** What the client holds: each document's path and the update time of the version sent. */
  readonly sent: Map<string, number>;
  /** `named` and `documents` targets: the versions judged for this target, and the verdicts. */
  verdicts?: WeakMap<Doc, boolean> | undefined;
  /** The rules generation the target (and its verdicts) were judged at: a release since means judging it again. */
  judgedAt: number;
  /** The documents its judgements looked up (rules' get()/exists()): a change to one means judging it again. */
  lookups?: Set<string>;
}

/**
 * The one door document content takes to a Listen stream. A session hands its sink to the gate and
 * keeps none, so every documentChange goes through `sendIn` or `sendOut`, which put a version on
 * the wire only if it is allowed to this caller on this target, judged on that very version:
 * it matches a query allowed on its constraints, or the rules allowed it (`judgeVersion` for named
 * and documents targets, `judgeLeaving` for a version leaving a target). A version nobody judged is
 * never sent: entering, it is a fault of the session (the stream ends); leaving, it goes as a
 * removal without content (documentRemove), which the SDK resolves by asking for the document.
 *
 * Only what differs per listener is worked out per listener: a match is shared by every listener
 * of an equal query (`sharedMatch`), and rules run only for versions leaving a target that the
 * query no longer proves readable, and for every version of named and documents targets.
 */
export class ListenGate {
  /** Who the rules see: listeners with the same identity share `get` verdicts (listen-shared.ts). */
  private readonly identity: unknown;

  constructor(
    private readonly context: StreamContext,
    /** The caller's judge on the stream's database (it holds no state of its own: the rules in force are looked up on each call). */
    private readonly judge: RequestJudge,
    private readonly sink: StreamSink,
  ) {
    const caller = context.caller;
    this.identity = caller.kind === 'user' ? caller.claims : caller.kind;
  }

  /** Whether a version is in a query target: scope, filters, ordered fields and cursors. */
  matches(target: GatedTarget, doc: Doc): boolean {
    return sharedMatch(doc, target.queryKey!, () => matchesQuery(this.context.db, target.query!, doc));
  }

  /**
   * Named and documents targets: judges a version before anything is sent for it (undefined: the
   * document is gone). False means the caller may no longer read it, and the target must end.
   */
  async judgeVersion(target: GatedTarget, path: string, doc: Doc | undefined): Promise<boolean> {
    if (target.grant === 'constraints') return true;
    const known = doc && target.verdicts?.get(doc);
    if (known !== undefined) return known;
    let allowed: boolean;
    try {
      const lookups = target.grant === 'named' ? await this.judge.list(target.query!, { version: doc }) : await this.judge.get([path], doc ? new Map([[path, doc]]) : new Map());
      noteLookups(target, lookups);
      allowed = true;
    } catch (error) {
      if (toApiError(error).status !== 'PERMISSION_DENIED') throw error;
      allowed = false;
    }
    if (doc) (target.verdicts ??= new WeakMap()).set(doc, allowed);
    return allowed;
  }

  /** Grows with every release of rules (security/rules-registry.ts). */
  get rulesGeneration(): number {
    return this.judge.rulesGeneration;
  }

  /**
   * A query target allowed on its constraints, judged again (`list`) under the rules in force now;
   * false when they deny it.
   */
  async stillAllowed(target: GatedTarget): Promise<boolean> {
    try {
      noteLookups(target, await this.judge.list(target.query!));
      return true;
    } catch (error) {
      if (toApiError(error).status !== 'PERMISSION_DENIED') throw error;
      return false;
    }
  }

  /** Whether a version leaving a target needs `judgeLeaving` before `sendOut` can decide what goes with it. */
  needsJudging(target: GatedTarget, doc: Doc): boolean {
    return !this.shows(target, doc) && knownVerdict(doc, this.identity, this.judge.rulesGeneration) === undefined;
  }

  /**
   * A version leaving a target: whether its content may go with the removal, by `get`, when the
   * target does not already allow it. Judged once per caller identity and version (listen-shared.ts).
   */
  judgeLeaving(target: GatedTarget, doc: Doc): Promise<unknown> | undefined {
    if (!this.needsJudging(target, doc)) return undefined;
    return sharedVerdict(doc, this.identity, this.judge.rulesGeneration, () => this.judge.mayGet(doc.key.path, doc));
  }

  /**
   * A change to a query target allowed on its constraints, matched once: its version goes in (it
   * matches; true), out (it left; true), or nothing changes for the client (false); or, when it
   * leaves with a version not judged yet, nothing is sent and the judgement, started, is returned.
   */
  offerMatched(target: GatedTarget, path: string, after: Doc | undefined, readTime: number): boolean | Promise<unknown> {
    if (after !== undefined && this.matches(target, after)) {
      if (target.sent.get(path) === after.updateTime) return false;
      this.send(target, after);
      return true;
    }
    if (!target.sent.has(path)) return false;
    const judging = after && this.judgeLeaving(target, after);
    if (judging) return judging;
    this.sendOut(target, path, after, readTime);
    return true;
  }

  /** A version in the target. Only an allowed one: anything else is a fault of the caller, and ends the stream. */
  sendIn(target: GatedTarget, doc: Doc): void {
    if (!this.shows(target, doc)) throw new Error(`Listen: a version of ${doc.key.path} not judged for target ${target.id} was about to be sent`);
    this.send(target, doc);
  }

  /**
   * A document that left the target. One that still exists goes with its new version when the
   * caller may read it (the SDK would otherwise keep its old copy, which may still match locally,
   * and ask for it again), else as a removal without content; a deleted one as a delete.
   */
  sendOut(target: GatedTarget, path: string, now: Doc | undefined, readTime: number): void {
    target.sent.delete(path);
    if (!now) {
      this.sink.send({ documentDelete: { document: fullName(this.context.db, path), removedTargetIds: [target.id], readTime: timeText(readTime) } });
    } else if (this.shows(target, now) || knownVerdict(now, this.identity, this.judge.rulesGeneration) === true) {
      this.sink.send({ documentChange: { document: sharedWire(this.context, now), removedTargetIds: [target.id] } });
    } else {
      this.sink.send({ documentRemove: { document: fullName(this.context.db, path), removedTargetIds: [target.id], readTime: timeText(readTime) } });
    }
  }

  /** Target changes (ADD, CURRENT, REMOVE, RESET, the global NO_CHANGE) and existence filters: no document content. */
  targetChange(change: Record<string, unknown>): void {
    this.sink.send({ targetChange: change });
  }

  filter(filter: { targetId: number; count: number; unchangedNames?: unknown }): void {
    this.sink.send({ filter });
  }

  fail(error: ApiError): void {
    this.sink.fail(error);
  }

  /** Only after `shows` (or a match) said yes. */
  private send(target: GatedTarget, doc: Doc): void {
    target.sent.set(doc.key.path, doc.updateTime);
    this.sink.send({ documentChange: { document: sharedWire(this.context, doc), targetIds: [target.id] } });
  }

  /** Whether the target already allows this version: a match of a query allowed on its constraints, or a verdict of its own. */
  private shows(target: GatedTarget, doc: Doc): boolean {
    if (target.grant === 'constraints') return this.matches(target, doc);
    return target.verdicts?.get(doc) === true;
  }
}

/** Adds what a judgement of the target looked up to its `lookups`. */
export function noteLookups(target: GatedTarget, lookups: ReadonlySet<string>): void {
  if (!lookups.size) return;
  target.lookups ??= new Set();
  for (const path of lookups) target.lookups.add(path);
}

/**
 * A committed document reaches every listener of its scope as the same Doc object: its wire form
 * (and, in the gRPC codec, its protobuf form) is built once for all of them. A Doc belongs to one
 * database, so the cache needs no other key. Nobody changes a wire object once built. Kept in this
 * module: a document's wire form is made nowhere else on the Listen path.
 */
const wireForms = new WeakMap<Doc, WireDocument>();

function sharedWire(context: StreamContext, doc: Doc): WireDocument {
  let wire = wireForms.get(doc);
  if (!wire) {
    wire = docToWire(context.db, doc);
    wireForms.set(doc, wire);
  }
  return wire;
}
