/**
 * 2. Query latency for results of exactly 20 documents, and its floor: a fetch round trip to a bare
 * Fastify route in this process.
 */
import { startTrivialServer } from '../baselines.js';
import { count, spread, type Spread } from '../stats.js';
import { int, type Layout } from './data.js';
import { minimumQueries, settings } from './settings.js';
import { headers, post, type Json, type Target } from './targets.js';

export interface QueryKind {
  name: string;
  describe(layout: Layout): string;
  /** A query body and the check of its answer, from a random number in [0, 1). */
  make(layout: Layout, random: () => number): { body: string; check(docs: Json[]): string | undefined };
}

const fieldFilter = (field: string, value: number) => ({ fieldFilter: { field: { fieldPath: field }, op: 'EQUAL', value: int(value) } });

function integerField(doc: Json, field: string): number {
  const fields = doc.fields as Record<string, { integerValue?: string }> | undefined;
  return Number(fields?.[field]?.integerValue);
}

export const queryKinds: QueryKind[] = [
  {
    name: 'group == K limit 20',
    describe: (layout) => `${layout.groups} groups of exactly 20`,
    make(layout, random) {
      const group = Math.floor(random() * layout.groups);
      const body = JSON.stringify({ structuredQuery: { from: [{ collectionId: layout.collection }], where: fieldFilter('group', group), limit: 20 } });
      return {
        body,
        check: (docs) => (docs.every((doc) => integerField(doc, 'group') === group) ? undefined : `a document outside group ${group}`),
      };
    },
  },
  {
    name: 'orderBy n startAt X limit 20',
    describe: (layout) => `n = 0…${layout.size - 1}`,
    make(layout, random) {
      const start = Math.floor(random() * (layout.size - 19));
      const body = JSON.stringify({
        structuredQuery: {
          from: [{ collectionId: layout.collection }],
          orderBy: [{ field: { fieldPath: 'n' }, direction: 'ASCENDING' }],
          startAt: { values: [int(start)], before: true },
          limit: 20,
        },
      });
      return {
        body,
        check: (docs) => (docs.every((doc, k) => integerField(doc, 'n') === start + k) ? undefined : `n is not ${start}…${start + 19} in order`),
      };
    },
  },
  {
    name: 'a == x AND b == y (no limit)',
    describe: (layout) => `a matches ${count(layout.size / layout.A)}, b matches ${count(layout.size / layout.B)}, both 20`,
    make(layout, random) {
      const a = Math.floor(random() * layout.A);
      const b = Math.floor(random() * layout.B);
      const body = JSON.stringify({
        structuredQuery: { from: [{ collectionId: layout.collection }], where: { compositeFilter: { op: 'AND', filters: [fieldFilter('a', a), fieldFilter('b', b)] } } },
      });
      return {
        body,
        check: (docs) => (docs.every((doc) => integerField(doc, 'a') === a && integerField(doc, 'b') === b) ? undefined : `a document outside a == ${a} AND b == ${b}`),
      };
    },
  },
];

/** Mulberry32: the same query parameters for every target. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Latency extends Spread {
  capped: boolean;
  /** Documents the server read for one such query, when it says (query explain). */
  scanned?: number;
  /** The indexes it used, when it says. */
  plan?: string;
}

/** One client, one query at a time; every answer must hold exactly 20 documents that match. */
export async function measureQueries(target: Target, layout: Layout, kind: QueryKind, seed: number): Promise<Latency> {
  const random = seeded(seed);
  const runOne = async (): Promise<number> => {
    const query = kind.make(layout, random);
    const began = performance.now();
    const text = await post(target, ':runQuery', query.body);
    const elapsed = performance.now() - began;
    const answer = JSON.parse(text) as unknown;
    if (!Array.isArray(answer)) throw new Error(`${target.name} ${kind.name}: runQuery answered ${text.slice(0, 300)}`);
    const docs = (answer as Json[]).filter((item) => item.document !== undefined).map((item) => item.document as Json);
    const names = new Set(docs.map((doc) => doc.name));
    const problem = docs.length !== 20 ? `${docs.length} documents` : names.size !== 20 ? 'repeated documents' : query.check(docs);
    if (problem) throw new Error(`${target.name} ${kind.name} on ${count(layout.size)}: expected 20 matching documents, got ${problem}; query ${query.body}`);
    return elapsed;
  };
  // Warm-up: up to queryWarmup queries, no more than 5 s of them, at least one.
  const warmupEnd = performance.now() + 5000;
  for (let i = 0; i < settings.queryWarmup && (i === 0 || performance.now() < warmupEnd); i++) await runOne();
  const latencies: number[] = [];
  const deadline = performance.now() + settings.querySeconds * 1000;
  let capped = false;
  while (latencies.length < settings.queries) {
    if (latencies.length >= minimumQueries && performance.now() > deadline) {
      capped = true;
      break;
    }
    latencies.push(await runOne());
  }
  return { ...spread(latencies), capped, ...(await explain(target, layout, kind, seed)) };
}

/**
 * One more query, untimed, with `explainOptions: {analyze: true}`: the documents the server read to
 * answer (Hearth reports `debugStats.documents_scanned`) and the index it chose. Blank when the target
 * does not explain.
 */
async function explain(target: Target, layout: Layout, kind: QueryKind, seed: number): Promise<Pick<Latency, 'scanned' | 'plan'>> {
  if (!target.explains) return {};
  const query = kind.make(layout, seeded(seed));
  const body = JSON.stringify({ ...(JSON.parse(query.body) as Json), explainOptions: { analyze: true } });
  try {
    const answer = JSON.parse(await post(target, ':runQuery', body)) as Json[];
    const metrics = answer.find((item) => item.explainMetrics !== undefined)?.explainMetrics as
      | { planSummary?: { indexesUsed?: { properties?: string }[] }; executionStats?: { debugStats?: Record<string, unknown> } }
      | undefined;
    const scanned = Number(metrics?.executionStats?.debugStats?.documents_scanned);
    const plan = metrics?.planSummary?.indexesUsed?.map((index) => index.properties ?? '?').join(' + ');
    return { ...(Number.isFinite(scanned) ? { scanned } : {}), ...(plan ? { plan } : {}) };
  } catch {
    return {};
  }
}

/** The floor under every query: a fetch round trip to a bare Fastify route in this process. */
export async function roundTripFloor(): Promise<Latency> {
  const trivial = await startTrivialServer();
  try {
    const once = async () => {
      const began = performance.now();
      const response = await fetch(trivial.url + trivial.path, { method: 'POST', headers, body: '{}' });
      await response.text();
      return performance.now() - began;
    };
    for (let i = 0; i < 50; i++) await once();
    const latencies: number[] = [];
    for (let i = 0; i < settings.queries; i++) latencies.push(await once());
    return { ...spread(latencies), capped: false };
  } finally {
    await trivial.close();
  }
}
