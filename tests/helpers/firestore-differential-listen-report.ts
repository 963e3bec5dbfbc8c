/**
 * What the differential test of Firestore listeners (tests/firestore/differential-listen.test.ts) prints on a
 * mismatch: the write sequence shrunk to a short one that still shows it, and both servers' observations.
 */
import { isDeepStrictEqual } from 'node:util';
import { mismatchesShown, replayCatchUpMs, type Side } from './firestore-differential-listen.js';
import { stepDocument, type Plan, type WriteStep } from './firestore-differential-listen-plan.js';
import { describeListener } from './firestore-differential-listen-query.js';
import { runSequence, type Mismatch, type Observation } from './firestore-differential-listen-run.js';

// ---------------------------------------------------------------------------------------------------------------
// Shrinking: the shortest write sequence that still shows the same kind of mismatch on the same listener

export async function shrink(plan: Plan, sides: [Side, Side], mismatch: Mismatch, deadline: number): Promise<{ mismatch: Mismatch; replays: number; reproduced: boolean }> {
  let replays = 0;
  let smallest = mismatch;
  let reproduced = false;
  const listeners = mismatch.listener ? [mismatch.listener] : [];
  const attempt = async (candidate: WriteStep[]): Promise<boolean> => {
    if (Date.now() > deadline) return false;
    replays++;
    const token = `${plan.token}-r${replayCounter++}`;
    const { mismatches } = await runSequence(plan, sides, listeners, candidate, { token, catchUpMs: replayCatchUpMs, stopAtFirst: true });
    const same = mismatches.find((found) => found.kind === mismatch.kind);
    if (!same) return false;
    reproduced = true;
    // Everything after the write where it showed is not needed.
    smallest = { ...same, steps: candidate.slice(0, same.at + 1) };
    return true;
  };
  let current = mismatch.steps.slice(0, mismatch.at + 1);
  // The whole sequence first, with only this listener: the starting point must reproduce on its own.
  if (!(await attempt(current))) return { mismatch, replays, reproduced: false };
  current = smallest.steps;
  // Shown in the first snapshot: there is nothing to shrink.
  if (current.length === 0) return { mismatch: smallest, replays, reproduced };
  // Cheap guesses first: the failing write alone, then with the earlier writes to the same document.
  const last = current.at(-1)!;
  if (current.length > 1 && (await attempt([last]))) current = smallest.steps;
  const sameDocument = current.filter((step) => stepDocument(step) === stepDocument(last));
  if (sameDocument.length < current.length && (await attempt(sameDocument))) current = smallest.steps;
  // ddmin on what is left.
  let chunks = 2;
  while (current.length > 1 && Date.now() < deadline) {
    const size = Math.ceil(current.length / chunks);
    let reduced = false;
    for (let start = 0; start < current.length; start += size) {
      const candidate = [...current.slice(0, start), ...current.slice(start + size)];
      if (candidate.length > 0 && (await attempt(candidate))) {
        current = smallest.steps;
        chunks = Math.max(chunks - 1, 2);
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      if (chunks >= current.length) break;
      chunks = Math.min(current.length, chunks * 2);
    }
  }
  return { mismatch: smallest, replays, reproduced };
}

let replayCounter = 0;

// ---------------------------------------------------------------------------------------------------------------
// Reports

/** Steps and listeners are in the seed's own collection; observations of a replay name its fresh one. */
export function describeMismatch(mismatch: Mismatch, subjectLabel: string, note: string): string {
  const when = mismatch.at < 0 ? 'in the first snapshot' : `after write ${mismatch.at + 1} of this sequence`;
  const lines = [
    `seed ${mismatch.seed}: ${mismatch.kind} ${when}${note}`,
    ...(mismatch.listener ? [`  listener: ${describeListener(mismatch.listener)}`] : []),
    ...(mismatch.at < 0
      ? [`  no writes: the seed's initial documents`]
      : [
          `  writes (one commit each, on the seed's initial documents; #n is the position in the seed's sequence, w the write marker):`,
          ...mismatch.steps.slice(0, mismatch.at + 1).map((step, position) => `    ${position + 1}. #${step.index + 1} ${step.description}: ${truncate(JSON.stringify(step.write), 600)}`),
        ]),
    ...describeObservations(mismatch, subjectLabel).map((line) => `  ${line}`),
  ];
  return lines.join('\n').replaceAll(mismatch.token, mismatch.token.replace(/-r\d+$/, ''));
}

function describeObservations(mismatch: Mismatch, subjectLabel: string): string[] {
  const sides: Array<[string, Observation]> = [
    ['emulator', mismatch.oracle],
    [subjectLabel, mismatch.subject],
  ];
  if (mismatch.kind === 'write outcome') return sides.map(([label, observation]) => `${label}: ${observation.outcome}`);
  const lines: string[] = [];
  if (mismatch.kind === 'state') lines.push(...stateDifference(mismatch.oracle.latest?.documents ?? [], mismatch.subject.latest?.documents ?? [], subjectLabel));
  for (const [label, observation] of sides) {
    if (observation.error !== undefined) lines.push(`${label}: the listener failed: ${truncate(observation.error, 500)}`);
    if (observation.expected !== undefined) lines.push(`${label}: the listener never came to what a fresh read on ${label} gives (path @updateTime {data}):`, ...indent(lineDifference(observation.expected, observation.latest?.syncKey ?? '')));
    const snapshots = observation.snapshots.map((seen, index) => `snapshot ${index + 1}: ${seen.changes.length > 0 ? seen.changes.join(', ') : seen.documents.length > 0 ? '(a document snapshot)' : '(missing)'}`);
    lines.push(`${label}: ${observation.snapshots.length} snapshot(s) for this write${snapshots.length > 0 ? `: ${snapshots.join('; ')}` : ''}`);
  }
  if (mismatch.kind !== 'state') {
    // The states are equal (or the difference is shown above): the documents, for the indexes.
    const documents = mismatch.oracle.latest?.documents ?? [];
    lines.push(`the emulator's listener holds ${documents.length} document(s)${documents.length > 0 ? ':' : ''}`, ...indent(documents.slice(0, 20).map((entry) => truncate(entry, 300))));
    if (documents.length > 20) lines.push(`    … and ${documents.length - 20} more`);
  }
  return lines;
}

/** The lines of a fresh read that the listener lacks, and those it has that the read lacks. */
function lineDifference(read: string, listener: string): string[] {
  const [fromRead, fromListener] = [new Set(read.split('\n').filter(Boolean)), new Set(listener.split('\n').filter(Boolean))];
  return [
    ...[...fromRead].filter((line) => !fromListener.has(line)).map((line) => `only in the read:     ${truncate(line, 400)}`),
    ...[...fromListener].filter((line) => !fromRead.has(line)).map((line) => `only in the listener: ${truncate(line, 400)}`),
  ];
}

function stateDifference(fromOracle: string[], fromSubject: string[], subjectLabel: string): string[] {
  const path = (entry: string) => entry.split(' ')[0]!;
  const [oracleByPath, subjectByPath] = [new Map(fromOracle.map((entry) => [path(entry), entry])), new Map(fromSubject.map((entry) => [path(entry), entry]))];
  const lines = [`state: ${fromOracle.length} documents from the emulator, ${fromSubject.length} from ${subjectLabel}`];
  for (const [name, entry] of oracleByPath) {
    const other = subjectByPath.get(name);
    if (other === undefined) lines.push(`  only from the emulator: ${truncate(entry, 400)}`);
    else if (other !== entry) lines.push(`  different data: emulator ${truncate(entry, 400)}`, `                  ${subjectLabel} ${truncate(other, 400)}`);
  }
  for (const [name, entry] of subjectByPath) if (!oracleByPath.has(name)) lines.push(`  only from ${subjectLabel}: ${truncate(entry, 400)}`);
  const order = (entries: string[]) => entries.map(path).filter((name) => oracleByPath.has(name) && subjectByPath.has(name));
  if (!isDeepStrictEqual(order(fromOracle), order(fromSubject))) lines.push(`  order: emulator ${JSON.stringify(fromOracle.map(path))}`, `         ${subjectLabel} ${JSON.stringify(fromSubject.map(path))}`);
  return lines;
}

function indent(lines: string[]): string[] {
  return lines.map((line) => `    ${line}`);
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}

/** One of each (kind, listener) pair, the earliest first. */
export function mismatchesToShow(mismatches: Mismatch[]): Mismatch[] {
  const seen = new Set<string>();
  return mismatches
    .filter((mismatch) => {
      const key = `${mismatch.seed} ${mismatch.kind} ${mismatch.listener ? describeListener(mismatch.listener) : ''}`;
      const repeated = seen.has(key);
      seen.add(key);
      return !repeated;
    })
    .sort((a, b) => a.seed - b.seed || a.at - b.at)
    .slice(0, mismatchesShown);
}
