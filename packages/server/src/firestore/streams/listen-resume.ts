import { ApiError } from '../../http/api-error.js';
import { unchangedNamesFilter } from '../core/bloom-filter.js';
import type { DocumentDatabase } from '../core/database.js';
import { keyOfPath, type Doc } from '../core/documents.js';
import { fullName } from '../core/paths.js';
import { inScope } from '../core/query.js';
import type { ListenGate } from './listen-gate.js';
import type { ActiveTarget } from './listen-target.js';
import type { StreamContext } from './stream.js';

/** What a new target's first answer needs of its session. */
export interface ResumingSession {
  readonly database: DocumentDatabase;
  readonly context: StreamContext;
  readonly gate: ListenGate;
  /** Documents that left the target, each judged (false: the target was removed as denied). */
  sendGone(target: ActiveTarget, paths: readonly string[], readTime: number): Promise<boolean>;
}

export interface FirstAnswer {
  /** The target's documents now (judged, for named and documents targets). */
  docs: Doc[];
  /** The read time the answer is at. */
  now: number;
  /** The target named a resume token or read time (ours or not). */
  resuming: boolean;
  /** The time the client says it holds the result of, when we can read it. */
  resumeFrom?: number;
  /** The documents changed since `resumeFrom`, when the hub still remembers them all. */
  changed?: Set<string>;
}

/**
 * Sends a new target's documents: the whole result, or for a resume what changed since the
 * client's time. A resume token or read time is the client's word, not a proof: anyone may name any
 * recent time. So a resume never tells more than a first listen would: the documents matching now
 * (through the gate), and removals only of documents the target matched at that time (their names
 * were the caller's to read, as the target's query was allowed); when that cannot be known, an
 * existence filter whose bloom filter holds only the names matching now. False when the target was
 * removed as denied.
 */
export async function sendFirstAnswer(session: ResumingSession, target: ActiveTarget, answer: FirstAnswer): Promise<boolean> {
  const { docs, resumeFrom, changed } = answer;
  if (changed && resumeFrom !== undefined) {
    const done = await sendChangesSince(session, target, answer, changed, resumeFrom);
    if (done !== undefined) return done;
  }
  if (resumeFrom !== undefined && resumeFrom <= answer.now && target.query && !target.rerun) {
    sendNewerThan(session, target, docs, resumeFrom);
    return true;
  }
  // A first listen, or a resume the history cannot serve: the whole result again.
  if (answer.resuming) session.gate.targetChange({ targetChangeType: 'RESET', targetIds: [target.id] });
  for (const doc of docs) session.gate.sendIn(target, doc);
  return true;
}

/**
 * Resuming while the hub remembers every change since: only the documents changed since then are
 * sent (in, changed, or gone), then an existence filter with the full count so the client can
 * check it holds exactly the right set. Undefined when the versions at that time are no longer
 * kept, so the documents a query target held then cannot be told.
 */
async function sendChangesSince(session: ResumingSession, target: ActiveTarget, answer: FirstAnswer, changed: Set<string>, since: number): Promise<boolean | undefined> {
  const current = new Map(answer.docs.map((doc) => [doc.key.path, doc]));
  const relevant = new Set([...changed].filter((path) => (target.documents ? target.documents.has(path) : inScope(target.query!, keyOfPath(path)))));
  // A version newer than the resume time is one the client cannot hold, whatever the hub has heard.
  for (const doc of answer.docs) if (doc.updateTime > since) relevant.add(doc.key.path);
  let gone = [...relevant].filter((path) => !current.has(path));
  if (target.query && gone.length) {
    // A documents target names its documents itself; a query target held those it matched then.
    const then = await versionsAt(session, gone, since);
    if (!then) return undefined;
    gone = gone.filter((path) => {
      const version = then.get(path);
      return version !== undefined && session.gate.matches(target, version);
    });
  }
  for (const path of relevant) {
    const doc = current.get(path);
    if (doc) session.gate.sendIn(target, doc);
  }
  if (!(await session.sendGone(target, gone, answer.now))) return false;
  for (const doc of answer.docs) target.sent.set(doc.key.path, doc.updateTime);
  session.gate.filter({ targetId: target.id, count: answer.docs.length });
  return true;
}

/** The documents as they were at `readTime`; undefined when that time is older than the versions kept (or not a valid read time). */
async function versionsAt(session: ResumingSession, paths: readonly string[], readTime: number): Promise<Map<string, Doc> | undefined> {
  try {
    await session.database.checkReadTime(session.context.db, readTime);
  } catch (error) {
    if (error instanceof ApiError) return undefined;
    throw error;
  }
  return session.database.getDocuments(session.context.db, paths, { readTime });
}

/**
 * Resuming past what the hub remembers (an old token, or one from before a restart): the
 * documents matching now that changed since the token are sent, and the ones that left are
 * told by the existence filter's bloom filter of every name matching now, as Google does. The
 * client drops its cached documents the filter does not hold; only if its count still differs
 * (a false positive) does it listen again from scratch.
 */
function sendNewerThan(session: ResumingSession, target: ActiveTarget, docs: Doc[], since: number): void {
  for (const doc of docs) {
    if (doc.updateTime > since) session.gate.sendIn(target, doc);
    else target.sent.set(doc.key.path, doc.updateTime);
  }
  const names = docs.map((doc) => fullName(session.context.db, doc.key.path));
  session.gate.filter({ targetId: target.id, count: docs.length, unchangedNames: unchangedNamesFilter(names) });
}
