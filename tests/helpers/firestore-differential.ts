/**
 * The servers and requests of the differential tests of the Cloud Firestore v1 REST API
 * (tests/firestore-differential-*.test.ts): Google's official emulator (the oracle) and Hearth (in-process, --dev)
 * or a second emulator, the same seeded random documents written to both, requests sent to both, and the shrinking
 * of a query that differs to the smallest that still does.
 *
 * Knobs: FIRESTORE_DIFF_SEEDS=1,2,3 picks the seeds (a failure prints its seed);
 * FIRESTORE_DIFF_QUERIES=N sets the random queries per seed; FIRESTORE_DIFF_SUBJECT=emulator compares a second
 * emulator instead of Hearth, to check the harness and the emulator's determinism.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { startGoogleEmulator, type GoogleEmulator } from './firestore-emulator.js';
import { startHearth, tempDataDir, type TestHearth } from './hearth.js';
import { call, canonicalRunQuery, compareAnswers, type Answer, type CanonicalContext, type Mismatch, type Server } from './firestore-differential-compare.js';
import {
  Random,
  layoutForSeed,
  randomDataset,
  validityProblem,
  type Dataset,
  type Fields,
  type Filter,
  type StructuredQuery,
  type TransformCase,
} from './random-firestore.js';

export { call };

export const seeds = (process.env.FIRESTORE_DIFF_SEEDS ?? '1,2,3,4').split(',').map(Number);
export const queriesPerSeed = Number(process.env.FIRESTORE_DIFF_QUERIES ?? 100);
export const aggregationsPerSeed = 25;
export const transformCasesPerSeed = 30;
const compareWithSecondEmulator = process.env.FIRESTORE_DIFF_SUBJECT === 'emulator';

const oracle = await startGoogleEmulator();

// ---------------------------------------------------------------------------------------------------------------
// Servers and requests


/** Both servers handle requests in parallel; a few in flight keep the test well under a minute. */
export async function forEachConcurrently<T>(items: T[], run: (item: T, index: number) => Promise<void>, concurrency = 4): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await run(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A distinct, reproducible random stream per seed and purpose. */
export function rngFor(seed: number, purpose: string): Random {
  let hash = seed >>> 0;
  for (const char of purpose) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return new Random(hash);
}

// ---------------------------------------------------------------------------------------------------------------
// Query shrinking: report the smallest query that still differs

function* simplerQueries(query: StructuredQuery): Generator<StructuredQuery> {
  const without = (...keys: Array<keyof StructuredQuery>) => {
    const copy = { ...query };
    for (const key of keys) delete copy[key];
    return copy;
  };
  if (query.where) yield without('where');
  if (query.where) for (const where of simplerFilters(query.where)) yield { ...query, where };
  if (query.orderBy) yield without('orderBy', 'startAt', 'endAt');
  if (query.orderBy && query.orderBy.length > 1) yield trimCursors({ ...query, orderBy: query.orderBy.slice(0, -1) });
  for (const key of ['startAt', 'endAt', 'offset', 'limit', 'select'] as const) if (query[key] !== undefined) yield without(key);
  if (query.from[0]?.allDescendants) yield { ...query, from: [{ collectionId: query.from[0].collectionId }] };
}

function* simplerFilters(filter: Filter): Generator<Filter> {
  if (!('compositeFilter' in filter)) return;
  const { op, filters } = filter.compositeFilter;
  yield* filters;
  for (let i = 0; i < filters.length; i++) {
    if (filters.length > 1) yield { compositeFilter: { op, filters: filters.filter((_, j) => j !== i) } };
    for (const simpler of simplerFilters(filters[i]!)) yield { compositeFilter: { op, filters: filters.map((child, j) => (j === i ? simpler : child)) } };
  }
}

function trimCursors(query: StructuredQuery): StructuredQuery {
  const length = query.orderBy?.length ?? 0;
  const trim = (cursor: StructuredQuery['startAt']) => (cursor ? { ...cursor, values: cursor.values.slice(0, length) } : undefined);
  const { startAt, endAt, ...rest } = query;
  return { ...rest, ...(startAt && { startAt: trim(startAt) }), ...(endAt && { endAt: trim(endAt) }) };
}

async function shrinkQuery(query: StructuredQuery, stillDiffers: (candidate: StructuredQuery) => Promise<boolean>, budget = 80): Promise<StructuredQuery> {
  let smallest = query;
  for (let improved = true; improved && budget > 0; ) {
    improved = false;
    for (const candidate of simplerQueries(smallest)) {
      if (validityProblem(candidate)) continue;
      if (--budget < 0) break;
      if (await stillDiffers(candidate)) {
        smallest = candidate;
        improved = true;
        break;
      }
    }
  }
  return smallest;
}

export const skipWithoutEmulator = !oracle && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator; .ci/run installs them)';

// ---------------------------------------------------------------------------------------------------------------
// The servers of a test file

export const oracleServer: Server = { label: 'emulator', url: oracle?.url ?? '' };
/** Hearth, or a second emulator; set by useDifferentialServers' `before`, as are databaseRoot and context. */
export let subject: Server;
let hearth: TestHearth | undefined;
let secondEmulator: GoogleEmulator | undefined;
export let databaseRoot: string;
export let context: CanonicalContext;
/** The documents written to both servers, by seed. */
export const datasets = new Map<number, Dataset>();

/**
 * Hearth answers some queries from declared indexes (the emulator needs none): collection-group
 * indexes on a, m.x and tags and a group composite on (a, b desc) for the group queries, composites
 * on (a, b) and (c desc, a) for collection queries. Group queries on b and c are left to the
 * undeclared path (a scan of the group), so both paths are compared.
 */
function declaredIndexesFile(): string {
  const collectionIds = [...new Set(seeds.map((seed) => layoutForSeed('', seed).collectionId))];
  const groupScoped = (order: Record<string, string>) => ({ ...order, queryScope: 'COLLECTION_GROUP' });
  const file = join(tempDataDir(), 'firestore.indexes.json');
  writeFileSync(file, JSON.stringify({
    indexes: collectionIds.flatMap((collectionGroup) => [
      { collectionGroup, queryScope: 'COLLECTION_GROUP', fields: [{ fieldPath: 'a', order: 'ASCENDING' }, { fieldPath: 'b', order: 'DESCENDING' }] },
      { collectionGroup, queryScope: 'COLLECTION', fields: [{ fieldPath: 'a', order: 'ASCENDING' }, { fieldPath: 'b', order: 'ASCENDING' }] },
      { collectionGroup, queryScope: 'COLLECTION', fields: [{ fieldPath: 'c', order: 'DESCENDING' }, { fieldPath: 'a', order: 'ASCENDING' }] },
    ]),
    fieldOverrides: collectionIds.flatMap((collectionGroup) => [
      { collectionGroup, fieldPath: 'a', indexes: [groupScoped({ order: 'ASCENDING' }), groupScoped({ order: 'DESCENDING' }), groupScoped({ arrayConfig: 'CONTAINS' })] },
      { collectionGroup, fieldPath: 'm.x', indexes: [groupScoped({ order: 'ASCENDING' })] },
      { collectionGroup, fieldPath: 'tags', indexes: [groupScoped({ arrayConfig: 'CONTAINS' })] },
    ]),
  }));
  return file;
}

/**
 * Starts the subject and writes every seed's documents to it and to the oracle before the tests of the suite it is
 * called in; stops all three servers after them.
 */
export function useDifferentialServers(): void {
  before(async () => {
    if (compareWithSecondEmulator) {
      secondEmulator = await startGoogleEmulator();
      subject = { label: 'second emulator', url: secondEmulator!.url };
      databaseRoot = 'projects/demo-differential/databases/(default)/documents';
    } else {
      hearth = await startHearth({ indexesFile: declaredIndexesFile() });
      subject = { label: 'Hearth', url: hearth.url };
      databaseRoot = `projects/${hearth.projectId}/databases/(default)/documents`;
    }
    context = { databaseRoot };
    await assertSubjectServesFirestore();
    for (const seed of seeds) {
      const dataset = randomDataset(rngFor(seed, 'documents'), layoutForSeed(databaseRoot, seed));
      await writeEverywhere(seed, dataset);
      datasets.set(seed, dataset);
    }
  });

  after(async () => {
    await hearth?.close();
    await secondEmulator?.stop();
    await oracle?.stop();
  });
}

async function assertSubjectServesFirestore(): Promise<void> {
  const probe = await call(subject, 'POST', `${databaseRoot}:runQuery`, { structuredQuery: { from: [{ collectionId: 'probe' }] } });
  assert.equal(probe.status, 200, `${subject.label} does not answer POST /v1/${databaseRoot}:runQuery: ${JSON.stringify(probe.body).slice(0, 300)}`);
}

async function writeEverywhere(seed: number, dataset: Dataset): Promise<void> {
  const writes = dataset.documents.map(({ name, fields }) => ({ update: { name, fields } }));
  const [fromOracle, fromSubject] = await both('POST', `${databaseRoot}:commit`, { writes });
  assert.equal(fromOracle.status, 200, `the emulator refused seed ${seed}'s documents: ${JSON.stringify(fromOracle.body)}`);
  assert.equal(fromSubject.status, 200, `${subject.label} refused seed ${seed}'s documents: ${JSON.stringify(fromSubject.body).slice(0, 2000)}`);
}

export function both(method: 'GET' | 'POST', path: string, body?: unknown): Promise<[Answer, Answer]> {
  return Promise.all([call(oracleServer, method, path, body), call(subject, method, path, body)]);
}

export function runQueryPath(dataset: Dataset): string {
  return `${dataset.parent}:runQuery`;
}

export async function compareQuery(seed: number, what: string, structuredQuery: StructuredQuery): Promise<{ oracleStatus: number; mismatch?: Mismatch }> {
  const dataset = datasets.get(seed)!;
  const [fromOracle, fromSubject] = await both('POST', runQueryPath(dataset), { structuredQuery });
  const mismatch = compareAnswers({ seed, what, request: structuredQuery }, fromOracle, fromSubject, (answer) => canonicalRunQuery(answer, context));
  return { oracleStatus: fromOracle.status, mismatch };
}

export async function shrunk(mismatch: Mismatch): Promise<Mismatch> {
  let smallest = mismatch;
  await shrinkQuery(mismatch.request as StructuredQuery, async (candidate) => {
    const { oracleStatus, mismatch: candidateMismatch } = await compareQuery(mismatch.seed, `${mismatch.what}, shrunk`, candidate);
    if (oracleStatus !== 200 || !candidateMismatch) return false;
    smallest = candidateMismatch;
    return true;
  });
  return smallest;
}

export function documentFields(runQueryAnswer: Answer): Fields[] {
  return (runQueryAnswer.body as any[]).filter((element) => element.document).map((element) => element.document.fields ?? {});
}

interface TransformOutcome {
  write: unknown;
  commit: Answer;
  document: Answer;
}

/** No document here was written in 2001. */
const staleUpdateTime = '2001-02-03T04:05:06.789Z';

export async function runTransformCase(server: Server, testCase: TransformCase): Promise<TransformOutcome> {
  let currentUpdateTime = staleUpdateTime;
  if (testCase.initial) {
    const created = await call(server, 'POST', `${databaseRoot}:commit`, { writes: [{ update: { name: testCase.name, fields: testCase.initial } }] });
    assert.equal(created.status, 200, `${server.label} refused to create ${testCase.name}: ${JSON.stringify(created.body)}`);
    currentUpdateTime = created.body.writeResults[0].updateTime;
  }
  const write = transformWrite(testCase, currentUpdateTime);
  const commit = await call(server, 'POST', `${databaseRoot}:commit`, { writes: [write] });
  const document = await call(server, 'GET', testCase.name);
  return { write, commit, document };
}

function transformWrite(testCase: TransformCase, currentUpdateTime: string): Record<string, unknown> {
  const preconditions = {
    none: undefined,
    exists: { exists: true },
    missing: { exists: false },
    currentUpdateTime: { updateTime: currentUpdateTime },
    staleUpdateTime: { updateTime: staleUpdateTime },
  };
  const currentDocument = preconditions[testCase.precondition];
  const operation = testCase.update
    ? {
        update: { name: testCase.name, fields: testCase.update.fields },
        ...(testCase.update.mask && { updateMask: { fieldPaths: testCase.update.mask } }),
        updateTransforms: testCase.transforms,
      }
    : { transform: { document: testCase.name, fieldTransforms: testCase.transforms } };
  return { ...operation, ...(currentDocument && { currentDocument }) };
}
