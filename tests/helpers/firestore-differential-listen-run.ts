/**
 * Running a write sequence in the differential test of Firestore listeners (tests/firestore/differential-listen.test.ts):
 * the same listeners on both servers, one commit at a time to both, and after each one every listener caught up and
 * compared.
 */
import { isDeepStrictEqual } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseRoot, outcome, relativePath, rest, settleMs, type Side } from './firestore-differential-listen.js';
import { adminQuery, describeListener, type ListenerSpec } from './firestore-differential-listen-query.js';
import { mayHold, retoken, stepDocument, writeDataset, type Plan, type WriteStep } from './firestore-differential-listen-plan.js';
import { documentSyncKey, querySyncKey, seenInDocument, seenInQuery, type Seen } from './firestore-differential-listen-seen.js';
import { within } from './firestore-target.js';

class LiveListener {
  readonly seen: Seen[] = [];
  error: string | undefined;
  unsubscribe: () => void = () => undefined;
  private readonly waiters = new Set<() => void>();

  constructor(readonly read: () => Promise<string>) {}

  push = (seen: Seen): void => {
    this.seen.push(seen);
    for (const wake of [...this.waiters]) wake();
  };

  fail = (error: Error): void => {
    this.error = error.message;
    for (const wake of [...this.waiters]) wake();
  };

  get latest(): Seen | undefined {
    return this.seen.at(-1);
  }

  /** Waits until the latest snapshot passes `check`, or an error; false at the deadline. */
  async until(check: (latest: Seen | undefined) => boolean, deadline: number): Promise<boolean> {
    while (!check(this.latest) && this.error === undefined) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 250));
        this.waiters.add(wake);
      });
    }
    return true;
  }
}

interface CatchUp {
  /** What the listener had to reach: its own server's read, or the state it reached following the emulator. */
  syncKey: string;
  reached: boolean;
}

/**
 * Waits until the listener holds what a fresh read on its own server gives. Without `read` (the write cannot
 * concern this listener) it must simply stay where it is, which is checked after the pause.
 */
async function catchUpWithRead(side: LiveListener, read: boolean, deadline: number): Promise<CatchUp> {
  const unchanged = side.latest?.syncKey;
  if (unchanged !== undefined && !read) return { syncKey: unchanged, reached: true };
  try {
    const syncKey = await side.read();
    return { syncKey, reached: await side.until((latest) => latest?.syncKey === syncKey, deadline) };
  } catch (error) {
    // A read that fails while the listener works: shown as stuck, with the read's error.
    return { syncKey: `<the read failed: ${(error as Error).message}>`, reached: false };
  }
}

function listen(side: Side, spec: ListenerSpec): LiveListener {
  if (spec.kind === 'document') {
    const ref = side.db.doc(relativePath(spec.name));
    const live = new LiveListener(async () => documentSyncKey(await within(ref.get(), `${side.label}: get ${ref.path}`)));
    live.unsubscribe = ref.onSnapshot((snapshot) => live.push(seenInDocument(snapshot)), live.fail);
    return live;
  }
  const query = adminQuery(side.db, spec);
  const live = new LiveListener(async () => querySyncKey(await within(query.get(), `${side.label}: get ${describeListener(spec)}`)));
  live.unsubscribe = query.onSnapshot((snapshot) => live.push(seenInQuery(snapshot)), live.fail);
  return live;
}

type MismatchKind = 'write outcome' | 'listener error' | 'stuck' | 'state' | 'snapshot raised on one side only' | 'docChanges';

/** What one server showed a listener for one write. */
export interface Observation {
  /** The snapshots raised for this write (coalesced ones count as one). */
  snapshots: Seen[];
  /** The listener's state after the write. */
  latest: Seen | undefined;
  error?: string;
  /** Stuck only: what a fresh read gave, which the listener never reached. */
  expected?: string;
  /** Write outcome only */
  outcome?: string;
}

export interface Mismatch {
  seed: number;
  kind: MismatchKind;
  /** undefined for a write outcome */
  listener: ListenerSpec | undefined;
  /** Position in `steps` of the write after which it showed; -1 for the first snapshot. */
  at: number;
  steps: WriteStep[];
  token: string;
  oracle: Observation;
  subject: Observation;
}

interface Stats {
  writes: number;
  refusedWrites: number;
  comparisons: number;
  docChangesCompared: number;
  /** Both raised snapshots, in different numbers. */
  coalescedDifferently: number;
  snapshots: [number, number];
  /** Listeners the emulator refused (after its runQuery took the query), with its error. */
  refusedListeners: string[];
}

interface RunOptions {
  token: string;
  catchUpMs: number;
  /** Replays stop at the first mismatch. */
  stopAtFirst: boolean;
}

interface Tracked {
  spec: ListenerSpec;
  sides: [LiveListener, LiveListener];
  /** The two states were equal after the last compared write: only then is a difference a new mismatch. */
  inSync: boolean;
  /** Stuck, or an error: no longer waited for nor compared. */
  done: boolean;
}

export async function runSequence(plan: Plan, sides: [Side, Side], listeners: ListenerSpec[], steps: WriteStep[], options: RunOptions): Promise<{ mismatches: Mismatch[]; stats: Stats }> {
  const local = <T>(value: T): T => retoken(value, plan.token, options.token);
  const mismatches: Mismatch[] = [];
  const stats: Stats = { writes: 0, refusedWrites: 0, comparisons: 0, docChangesCompared: 0, coalescedDifferently: 0, snapshots: [0, 0], refusedListeners: [] };
  await Promise.all(sides.map((side) => writeDataset(side, local(plan.dataset))));
  const tracked: Tracked[] = listeners.map((spec) => ({ spec, sides: [listen(sides[0], local(spec)), listen(sides[1], local(spec))], inSync: true, done: false }));
  const record = (mismatch: Omit<Mismatch, 'seed' | 'steps' | 'token'>) => mismatches.push({ ...mismatch, seed: plan.seed, steps, token: options.token });
  try {
    const marks = () => tracked.map((entry) => entry.sides.map((live) => live.seen.length));
    await settle(tracked, -1, tracked.map(() => [0, 0]), options, record, stats, () => true);
    for (let position = 0; position < steps.length; position++) {
      if (options.stopAtFirst && mismatches.length > 0) break;
      const before = marks();
      const answers = await Promise.all(sides.map((side) => rest(side, `${databaseRoot}:commit`, { writes: [local(steps[position]!.write)] })));
      stats.writes++;
      const [fromOracle, fromSubject] = answers.map(outcome) as [string, string];
      if (fromOracle !== fromSubject) {
        const observation = (text: string): Observation => ({ snapshots: [], latest: undefined, outcome: text });
        record({ kind: 'write outcome', listener: undefined, at: position, oracle: observation(fromOracle), subject: observation(fromSubject) });
        // The two databases now differ: what follows would only repeat it.
        break;
      }
      if (fromOracle !== 'committed') stats.refusedWrites++;
      const written = stepDocument(steps[position]!);
      await settle(tracked, position, before, options, record, stats, (spec) => mayHold(spec, written));
    }
  } finally {
    for (const entry of tracked) for (const live of entry.sides) live.unsubscribe();
  }
  return { mismatches, stats };
}

/** Waits until every listener on both servers shows what a fresh read gives, then compares them. */
async function settle(
  tracked: Tracked[],
  position: number,
  marks: number[][],
  options: RunOptions,
  record: (mismatch: Omit<Mismatch, 'seed' | 'steps' | 'token'>) => void,
  stats: Stats,
  affected: (spec: ListenerSpec) => boolean,
): Promise<void> {
  const deadline = Date.now() + options.catchUpMs;
  const live = tracked.filter((entry) => !entry.done);
  const expected = await Promise.all(
    live.map(async (entry): Promise<[CatchUp, CatchUp]> => {
      const [oracleSide, subjectSide] = entry.sides;
      const read = affected(entry.spec);
      const fromOracle = await catchUpWithRead(oracleSide, read, deadline);
      if (!entry.inSync || !fromOracle.reached || oracleSide.error !== undefined) return [fromOracle, await catchUpWithRead(subjectSide, read, deadline)];
      // In step so far: the subject has caught up once it shows what the emulator shows (every write changes the
      // marker w of a document it holds before or after, so the state before the write does not pass for it).
      const target = oracleSide.latest!.documents;
      if (await subjectSide.until((latest) => isDeepStrictEqual(latest?.documents, target), deadline)) return [fromOracle, { syncKey: subjectSide.latest!.syncKey, reached: true }];
      // Elsewhere: holding what a read on its own server gives is a state mismatch, anything else is stuck.
      return [fromOracle, await catchUpWithRead(subjectSide, true, Date.now())];
    }),
  );
  await sleep(settleMs);
  live.forEach((entry, index) => {
    const [oracleSide, subjectSide] = entry.sides;
    const observe = (side: LiveListener, mark: number): Observation => ({ snapshots: side.seen.slice(mark), latest: side.latest, ...(side.error !== undefined && { error: side.error }) });
    const mark = marks[tracked.indexOf(entry)]!;
    const [fromOracle, fromSubject] = [observe(oracleSide, mark[0]!), observe(subjectSide, mark[1]!)];
    stats.snapshots[0] += fromOracle.snapshots.length;
    stats.snapshots[1] += fromSubject.snapshots.length;
    const report = (kind: MismatchKind, extra: { oracle?: Partial<Observation>; subject?: Partial<Observation> } = {}) =>
      record({ kind, listener: entry.spec, at: position, oracle: { ...fromOracle, ...extra.oracle }, subject: { ...fromSubject, ...extra.subject } });

    if (oracleSide.error !== undefined || subjectSide.error !== undefined) {
      entry.done = true;
      // A listener the emulator refuses is a shape a listener cannot take there: left out, not failed.
      if (oracleSide.error !== undefined) stats.refusedListeners.push(`${describeListener(entry.spec)}: ${oracleSide.error}${subjectSide.error === undefined ? ' (the subject took it)' : ''}`);
      else report('listener error');
      return;
    }
    // Reached, and still there after the pause (a later snapshot would have moved it away).
    const [oracleCaughtUp, subjectCaughtUp] = expected[index]!.map((result, side) => result.reached && entry.sides[side]!.latest?.syncKey === result.syncKey);
    if (!oracleCaughtUp || !subjectCaughtUp) {
      entry.done = true;
      report('stuck', {
        oracle: oracleCaughtUp ? {} : { expected: expected[index]![0]!.syncKey },
        subject: subjectCaughtUp ? {} : { expected: expected[index]![1]!.syncKey },
      });
      return;
    }
    stats.comparisons++;
    if (!isDeepStrictEqual(oracleSide.latest?.documents, subjectSide.latest?.documents)) {
      if (entry.inSync) report('state');
      entry.inSync = false;
      return;
    }
    const wasInSync = entry.inSync;
    entry.inSync = true;
    // Back in step after a difference: the snapshots of this write describe a different change on each side.
    if (!wasInSync) return;
    const [counted, subjectCount] = [fromOracle.snapshots.length, fromSubject.snapshots.length];
    if ((counted === 0) !== (subjectCount === 0)) report('snapshot raised on one side only');
    else if (counted === 1 && subjectCount === 1) {
      stats.docChangesCompared++;
      if (!isDeepStrictEqual(fromOracle.snapshots[0]!.changes, fromSubject.snapshots[0]!.changes)) report('docChanges');
    } else if (counted !== subjectCount) stats.coalescedDifferently++;
  });
}
