/**
 * What the rules invariant saw and what it judged: every document version a caller received (on which path, in
 * answer to what), checked against the judge on exactly that version; the other breaches (aggregates over
 * documents the caller may not see, names of such documents, verify answers that tell about them, listeners that
 * end unlike the emulator's); and the documents' history on one server, to know what a read at a past time or an
 * aggregate covered. The report groups breaches by path and shows the first of each with what reproduces it.
 */
import { judge, rulesFor, type ReadMethod } from './invariant-rules.js';
import { canonicalData, type CallerName, type DocData, type Round, type WriteStep } from './invariant-world.js';

/** A document version as it left the server. */
export interface Delivery {
  round: Round;
  caller: CallerName;
  /** rest, grpc, webchannel, or the SDK it went through. */
  transport: string;
  /** The read path: `get`, `runQuery readTime`, `Listen resume`, ... */
  path: string;
  /** The rule that decides it: get for documents, list for queries. */
  method: ReadMethod;
  /** The request, in words (query, target, read time). */
  request: string;
  /** The document's path under `documents`. */
  document: string;
  updateTime?: string;
  data: DocData;
}

export interface Breach {
  kind: string;
  round: Round;
  caller: CallerName;
  transport: string;
  path: string;
  detail: string;
  /** The document concerned, when there is one (its history goes in the reproduction). */
  document?: string;
}

export class Ledger {
  readonly breaches: Breach[] = [];
  /** Versions checked, by `transport path`. */
  readonly checked = new Map<string, number>();
  versions = 0;
  requests = 0;

  constructor(readonly seed: number) {}

  deliver(delivery: Delivery): void {
    this.versions++;
    const key = `${delivery.transport} ${delivery.path}`;
    this.checked.set(key, (this.checked.get(key) ?? 0) + 1);
    const { round } = delivery;
    if (judge(round.rules, round.names, delivery.method, delivery.caller, delivery.document, delivery.data)) return;
    this.breach({
      kind: 'a version the rules deny left the server',
      round,
      caller: delivery.caller,
      transport: delivery.transport,
      path: delivery.path,
      document: delivery.document,
      detail: `${delivery.request}\n    delivered ${delivery.document}${delivery.updateTime ? ` @ ${delivery.updateTime}` : ''} ${canonicalData(delivery.data)}, which ${delivery.method} denies to ${delivery.caller}`,
    });
  }

  breach(breach: Breach): void {
    this.breaches.push(breach);
  }

  /** Breaches grouped by kind and path, each group with its count and first occurrence as a reproduction. */
  report(): string {
    const groups = new Map<string, Breach[]>();
    for (const breach of this.breaches) {
      const key = `${breach.kind} | ${breach.transport} ${breach.path}`;
      groups.set(key, [...(groups.get(key) ?? []), breach]);
    }
    const lines: string[] = [];
    for (const [key, breaches] of groups) {
      const first = breaches[0]!;
      lines.push(`- ${key}: ${breaches.length} time(s); first: round ${first.round.index}, caller ${first.caller}`);
      lines.push(`    ${first.detail}`);
      if (first.document) {
        lines.push(`    rules: ${rulesFor(first.round.rules, first.round.names, first.document)}`);
        lines.push(`    history of ${first.document}: ${historyOf(first.round, first.document)}`);
      }
    }
    return lines.join('\n');
  }

  summary(): string {
    const paths = [...this.checked].sort(([a], [b]) => a.localeCompare(b)).map(([key, count]) => `${key}: ${count}`);
    return `seed ${this.seed}: ${this.requests} request(s), ${this.versions} delivered version(s) checked, ${this.breaches.length} breach(es)\n  ${paths.join('\n  ')}`;
  }
}

/** The seed and the writes of a round on one document, in words. */
export function historyOf(round: Round, path: string): string {
  const steps: string[] = [];
  const seeded = round.seed.get(path);
  if (seeded) steps.push(`seed ${canonicalData(seeded)}`);
  round.writes.forEach((write, i) => {
    if (write.path === path) steps.push(`#${i} ${describeWrite(write)}`);
  });
  return steps.join('; ') || 'never written';
}

export function describeWrite(write: WriteStep): string {
  if (write.kind === 'delete') return `delete ${write.path}`;
  if (write.kind === 'set') return `set ${write.path} ${canonicalData(write.data)}`;
  return `update ${write.path} [${write.mask.join(', ')}] -> ${canonicalData(write.data)}`;
}

/** The versions of a round's documents on one server, by commit time: what existed at any moment. */
export class History {
  private readonly versions = new Map<string, Array<{ time: number; data: DocData | undefined }>>();

  apply(time: number, steps: readonly WriteStep[]): void {
    for (const step of steps) {
      const list = this.versions.get(step.path) ?? [];
      list.push({ time, data: step.kind === 'delete' ? undefined : step.data });
      this.versions.set(step.path, list);
    }
  }

  /** The document at `path` as of `time` (microseconds). */
  at(path: string, time: number): DocData | undefined {
    let found: DocData | undefined;
    for (const version of this.versions.get(path) ?? []) if (version.time <= time) found = version.data;
    return found;
  }

  /** Every document that existed at `time`. */
  snapshot(time: number): Map<string, DocData> {
    const docs = new Map<string, DocData>();
    for (const path of this.versions.keys()) {
      const data = this.at(path, time);
      if (data) docs.set(path, data);
    }
    return docs;
  }
}
