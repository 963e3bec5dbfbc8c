/** What one commit sends every listener of a query alike, built once; and the tick that sends it. */
import type { Doc } from '../core/documents.js';
import { formatMicros, parseMicros } from '../core/value-wire.js';

export interface DueSession {
  /**
   * Sends the commits noted while its queue was idle. With `mayWait`, a session that meets a version
   * leaving a target before it is judged stops there, stays due and returns that judgement, to be
   * flushed again once it is made; otherwise it goes on, on its queue.
   */
  flushDue(mayWait?: boolean): Promise<unknown> | undefined;
}

/** Sessions with commits noted while idle: sent together once this turn's commits are all in. */
let dueSessions: DueSession[] = [];

export function scheduleDue(session: DueSession): void {
  dueSessions.push(session);
  // nextTick, not queueMicrotask: commits of one group (they resolve in one run of microtasks) share it.
  if (dueSessions.length === 1) process.nextTick(flushDueSessions);
}

function flushDueSessions(): void {
  const due = dueSessions;
  dueSessions = [];
  let waiting: DueSession[] | undefined;
  const judging = new Set<Promise<unknown>>();
  for (const session of due) {
    const judged = session.flushDue(true);
    if (!judged) continue;
    (waiting ??= []).push(session);
    judging.add(judged);
  }
  // A version leaving the targets of many sessions is judged once per caller identity (sharedVerdict):
  // the sessions that met it wait for those few judgements together, then go on without waiting.
  if (waiting) {
    const resume = waiting;
    void Promise.allSettled(judging).then(() => {
      for (const session of resume) session.flushDue(false);
    });
  }
}

/**
 * A committed document reaches every listener of its scope as the same Doc object (listen-hub.ts):
 * whether it matches a query is worked out once per distinct query (queryKey), not once per
 * listener. A match depends on the query and the document only. It is also what lets a version go
 * to a query target allowed on its constraints (listen-gate.ts), which asks the same question.
 */
const matchesByDoc = new WeakMap<Doc, Map<string, boolean>>();

export function sharedMatch(doc: Doc, queryKey: string, match: () => boolean): boolean {
  let known = matchesByDoc.get(doc);
  if (!known) matchesByDoc.set(doc, (known = new Map()));
  let answer = known.get(queryKey);
  if (answer === undefined) {
    answer = match();
    known.set(queryKey, answer);
  }
  return answer;
}

/**
 * Whether `get` allows a version leaving a query target, per caller identity: every listener with the
 * same identity (every anonymous one; every stream of one ID token, whose verified claims are one
 * object) gets the same answer for the same version, so the rules run once per identity and
 * version, not once per listener. The answer lives as long as the version's Doc object (one commit's
 * delivery), so it is judged under the rules in force when that commit is sent.
 */
interface Verdict {
  /** The rules generation it was judged at (security/rules-registry.ts): a release makes it stale. */
  generation: number;
  promise: Promise<boolean>;
  /** Once judged. */
  allowed?: boolean;
}

const verdictsByDoc = new WeakMap<Doc, Map<unknown, Verdict>>();

/** The judgement of a version for an identity: started once, then shared (a failed one is asked again). */
export function sharedVerdict(doc: Doc, identity: unknown, generation: number, judge: () => Promise<boolean>): Promise<boolean> {
  let known = verdictsByDoc.get(doc);
  if (!known) verdictsByDoc.set(doc, (known = new Map()));
  const existing = known.get(identity);
  if (existing?.generation === generation) return existing.promise;
  const verdict: Verdict = { generation, promise: judge() };
  known.set(identity, verdict);
  verdict.promise.then(
    (allowed) => (verdict.allowed = allowed),
    () => known.get(identity) === verdict && known.delete(identity),
  );
  return verdict.promise;
}

/** The verdict on a version for an identity under the rules of that generation, once judged; undefined before. */
export function knownVerdict(doc: Doc, identity: unknown, generation: number): boolean | undefined {
  const verdict = verdictsByDoc.get(doc)?.get(identity);
  return verdict?.generation === generation ? verdict.allowed : undefined;
}

/** The global NO_CHANGE of a read time: every listener sends the same one after a commit, built once. */
let lastReadTimeChange: { readTime: number; change: { resumeToken: string; readTime: string } } | undefined;

export function readTimeChange(readTime: number): { resumeToken: string; readTime: string } {
  if (lastReadTimeChange?.readTime !== readTime) lastReadTimeChange = { readTime, change: { resumeToken: resumeToken(readTime), readTime: formatMicros(readTime) } };
  return lastReadTimeChange.change;
}

/** A commit's time as text, for the removals and deletes every listener of it is sent: formatted once. */
let lastTimeText: { micros: number; text: string } | undefined;

export function timeText(micros: number): string {
  if (lastTimeText?.micros !== micros) lastTimeText = { micros, text: formatMicros(micros) };
  return lastTimeText.text;
}

/** Opaque to clients; it carries the read time it stands for. */
export function resumeToken(readTime: number): string {
  return Buffer.from(`t${readTime}`).toString('base64');
}

/** The time a target resumes from: its resume token (ours), or a read time. */
export function resumeTimeOf(spec: Record<string, unknown>): number | undefined {
  if (typeof spec.resumeToken === 'string') {
    const text = Buffer.from(spec.resumeToken, 'base64').toString();
    const micros = /^t\d{1,17}$/.test(text) ? Number(text.slice(1)) : NaN;
    return Number.isSafeInteger(micros) ? micros : undefined;
  }
  return typeof spec.readTime === 'string' ? parseMicros(spec.readTime) : undefined;
}
