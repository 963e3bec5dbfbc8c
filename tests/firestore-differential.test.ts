/**
 * Differential test of the Cloud Firestore v1 REST API: the same seeded random requests go to Google's official
 * emulator (the oracle) and to Hearth (in-process, --dev), and the answers must agree, order included. Runs
 * random queries with every filter, order, cursor, offset, limit, projection and collection-group shape, a fixed
 * set of invalid queries (same HTTP status and error.status), aggregations, batchGet/GET, and commits with
 * transforms and preconditions.
 *
 * What is compared: document names in order and field values parsed (not key order: the emulator keeps write
 * order), integers apart from doubles (1 vs 1.0), doubles by value. createTime/updateTime/readTime differ by
 * nature and are only checked for presence. Error answers: HTTP status and error.status, never the message.
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 * Knobs: FIRESTORE_DIFF_SEEDS=1,2,3 picks the seeds (a failure prints its seed);
 * FIRESTORE_DIFF_QUERIES=N sets the random queries per seed; FIRESTORE_DIFF_SUBJECT=emulator compares a second
 * emulator instead of Hearth, to check the harness and the emulator's determinism.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { startGoogleEmulator, type GoogleEmulator } from './helpers/firestore-emulator.js';
import { startHearth, type TestHearth } from './helpers/hearth.js';
import {
  Random,
  aggregationAlias,
  inScope,
  invalidQueries,
  layoutForSeed,
  randomAggregationCase,
  randomDataset,
  randomTransformCase,
  randomValidQuery,
  validityProblem,
  valueAtPath,
  type Aggregation,
  type Dataset,
  type Fields,
  type Filter,
  type StructuredQuery,
  type TransformCase,
  type Value,
} from './helpers/random-firestore.js';

const seeds = (process.env.FIRESTORE_DIFF_SEEDS ?? '1,2,3,4').split(',').map(Number);
const queriesPerSeed = Number(process.env.FIRESTORE_DIFF_QUERIES ?? 100);
const aggregationsPerSeed = 25;
const transformCasesPerSeed = 30;
const compareWithSecondEmulator = process.env.FIRESTORE_DIFF_SUBJECT === 'emulator';
/** Mismatches shown in full per test; shrinking each costs a few dozen requests. */
const mismatchesShown = 6;

const oracle = await startGoogleEmulator();

// ---------------------------------------------------------------------------------------------------------------
// Servers and requests

interface Server {
  label: string;
  url: string;
}

interface Answer {
  status: number;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: any;
}

async function call(server: Server, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${server.url}/v1/${path}`, {
    method,
    headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Canonical forms: what must be equal between the two servers

interface CanonicalContext {
  databaseRoot: string;
  /** Transform tests: timestamps near now came from REQUEST_TIME and can only be checked for shape. */
  maskRequestTimes?: boolean;
}

function canonicalValue(value: any, context: CanonicalContext): string {
  const kinds = value !== null && typeof value === 'object' ? Object.keys(value) : [];
  if (kinds.length !== 1) return `<malformed value ${JSON.stringify(value)}>`;
  const kind = kinds[0]!;
  const inner = value[kind];
  switch (kind) {
    case 'nullValue':
      return 'null';
    case 'booleanValue':
      return String(inner);
    case 'integerValue':
      // proto3 JSON writes int64 as a decimal string.
      return typeof inner === 'string' && /^-?\d+$/.test(inner) ? BigInt(inner).toString() : `<integerValue ${JSON.stringify(inner)}>`;
    case 'doubleValue':
      return canonicalDouble(inner);
    case 'timestampValue':
      return canonicalTimestamp(inner, context);
    case 'stringValue':
      return JSON.stringify(inner);
    case 'bytesValue':
      return `b'${Buffer.from(String(inner), 'base64').toString('hex')}'`;
    case 'referenceValue':
      return `ref(${relativeName(String(inner), context)})`;
    case 'geoPointValue':
      // Zero coordinates are left out of proto3 JSON.
      return `geo(${canonicalDouble(inner?.latitude ?? 0)}, ${canonicalDouble(inner?.longitude ?? 0)})`;
    case 'arrayValue':
      return `[${((inner?.values ?? []) as unknown[]).map((element) => canonicalValue(element, context)).join(', ')}]`;
    case 'mapValue':
      return canonicalFields(inner?.fields ?? {}, context);
    default:
      return `<unknown value ${JSON.stringify(value)}>`;
  }
}

/** Integral doubles print with ".0" so that they never look like integers. */
function canonicalDouble(raw: unknown): string {
  const number = parseDouble(raw);
  if (number === undefined) return `<doubleValue ${JSON.stringify(raw)}>`;
  if (!Number.isFinite(number)) return String(number);
  // Emulator 1.19.9 answers 0.0 for an input of "-0"; production is unverified, so -0 and 0 count as equal.
  const text = String(Object.is(number, -0) ? 0 : number);
  return Number.isInteger(number) && !text.includes('e') ? `${text}.0` : text;
}

/** proto3 JSON doubles are numbers, or strings such as "NaN", "Infinity", "-0" and "1.5". */
function parseDouble(raw: unknown): number | undefined {
  if (typeof raw === 'number') return raw;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  const number = Number(raw);
  return Number.isNaN(number) && raw !== 'NaN' ? undefined : number;
}

const timestampPattern = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/;
const requestTimeWindowMs = 10 * 60_000;

function canonicalTimestamp(raw: unknown, context: CanonicalContext): string {
  const match = typeof raw === 'string' ? timestampPattern.exec(raw) : null;
  if (!match) return `<timestampValue ${JSON.stringify(raw)}>`;
  const nanos = (match[2] ?? '').padEnd(9, '0');
  if (context.maskRequestTimes && Math.abs(Date.parse(`${match[1]}Z`) - Date.now()) < requestTimeWindowMs) {
    // REQUEST_TIME is stored with millisecond precision (research note §1.4).
    return nanos.endsWith('000000') ? '<request time>' : `<request time with sub-millisecond digits ${raw}>`;
  }
  return `${match[1]}.${nanos}Z`;
}

function canonicalFields(fields: Record<string, unknown>, context: CanonicalContext): string {
  const entries = Object.keys(fields)
    .sort()
    .map((key) => `${key}: ${canonicalValue(fields[key], context)}`);
  return `{${entries.join(', ')}}`;
}

function relativeName(name: string, context: CanonicalContext): string {
  return name.startsWith(`${context.databaseRoot}/`) ? name.slice(context.databaseRoot.length + 1) : name;
}

function canonicalDocument(document: any, context: CanonicalContext): string {
  const times = typeof document?.createTime === 'string' && typeof document?.updateTime === 'string' ? '' : ' <without createTime/updateTime>';
  return `${relativeName(String(document?.name), context)} ${canonicalFields(document?.fields ?? {}, context)}${times}`;
}

function canonicalError(answer: Answer): string {
  return `HTTP ${answer.status} ${answer.body?.error?.status ?? `<no error.status in ${JSON.stringify(answer.body).slice(0, 200)}>`}`;
}

/** Streaming REST answers are one JSON array; skippedResults is not compared: emulator 1.19.9 never sends it. */
function canonicalStream(answer: Answer): { elements: any[]; problems: string[] } | undefined {
  if (answer.status !== 200 || !Array.isArray(answer.body)) return undefined;
  const elements: any[] = answer.body;
  const problems: string[] = [];
  if (elements.some((element) => typeof element?.readTime !== 'string')) problems.push('an element without readTime');
  return { elements, problems };
}

function canonicalRunQuery(answer: Answer, context: CanonicalContext): unknown {
  const stream = canonicalStream(answer);
  if (!stream) return canonicalError(answer);
  if (stream.elements.at(-1)?.done !== true) stream.problems.push('the last element is not done: true');
  const documents = stream.elements.filter((element) => element?.document).map((element) => canonicalDocument(element.document, context));
  return { documents, problems: stream.problems };
}

function canonicalAggregation(answer: Answer, context: CanonicalContext): unknown {
  const stream = canonicalStream(answer);
  if (!stream) return canonicalError(answer);
  const results = stream.elements.filter((element) => element?.result).map((element) => canonicalAggregateFields(element.result.aggregateFields ?? {}, context));
  return { results, problems: stream.problems };
}

function canonicalAggregateFields(fields: Record<string, any>, context: CanonicalContext): Record<string, string> {
  return Object.fromEntries(
    Object.keys(fields)
      .sort()
      .map((alias) => [alias, canonicalValue(roundDouble(fields[alias]), context)]),
  );
}

/** Doubles from sum/avg to 12 significant digits: servers may add in different orders. */
function roundDouble(value: any): any {
  return typeof value?.doubleValue === 'number' ? { doubleValue: Number(value.doubleValue.toPrecision(12)) } : value;
}

/**
 * What the aggregations give over these rows (research note §2.6): sum and avg skip non-numbers; sum stays an
 * integer unless a double takes part or the total leaves int64; avg is a double, null over no numbers. Only
 * documents that hold every sum/avg field take part, count included: the emulator scans an index on those fields.
 */
function expectedAggregateFields(rows: Fields[], aggregations: Aggregation[]): Record<string, Value> {
  const aggregatedPaths = aggregations.flatMap((aggregation) => ('sum' in aggregation ? [aggregation.sum.field.fieldPath] : 'avg' in aggregation ? [aggregation.avg.field.fieldPath] : []));
  const taking = rows.filter((fields) => aggregatedPaths.every((path) => valueAtPath(fields, path) !== undefined));
  const numbersAt = (path: string) => taking.map((fields) => valueAtPath(fields, path)!).filter((value) => 'integerValue' in value || 'doubleValue' in value);
  const entries = aggregations.map((aggregation, index): [string, Value] => {
    const alias = aggregationAlias(aggregation, index);
    if ('count' in aggregation) return [alias, { integerValue: String(Math.min(taking.length, aggregation.count.upTo ?? Infinity)) }];
    if ('sum' in aggregation) return [alias, sumOf(numbersAt(aggregation.sum.field.fieldPath))];
    const numbers = numbersAt(aggregation.avg.field.fieldPath);
    return [alias, numbers.length === 0 ? { nullValue: null } : { doubleValue: doubleSum(numbers) / numbers.length }];
  });
  return Object.fromEntries(entries);
}

function sumOf(numbers: Value[]): Value {
  if (numbers.every((value) => 'integerValue' in value)) {
    const total = numbers.reduce((sum, value) => sum + BigInt((value as { integerValue: string }).integerValue), 0n);
    if (total >= -(2n ** 63n) && total < 2n ** 63n) return { integerValue: String(total) };
  }
  return { doubleValue: doubleSum(numbers) };
}

function doubleSum(numbers: Value[]): number {
  return numbers.reduce((sum, value) => sum + ('integerValue' in value ? Number(value.integerValue) : 'doubleValue' in value ? Number(value.doubleValue) : Number.NaN), 0);
}

/** batchGet answers may come in any order. */
function canonicalBatchGet(answer: Answer, context: CanonicalContext): unknown {
  const stream = canonicalStream(answer);
  if (!stream) return canonicalError(answer);
  const entries = stream.elements.map((element) => {
    if (element?.found) return `found ${canonicalDocument(element.found, context)}`;
    return element?.missing ? `missing ${relativeName(element.missing, context)}` : `<neither found nor missing ${JSON.stringify(element)}>`;
  });
  return { entries: entries.sort(), problems: stream.problems };
}

function canonicalGet(answer: Answer, context: CanonicalContext): unknown {
  return answer.status === 200 ? canonicalDocument(answer.body, context) : canonicalError(answer);
}

function canonicalCommit(answer: Answer, context: CanonicalContext): unknown {
  if (answer.status !== 200) return canonicalError(answer);
  const writeResults: any[] = answer.body?.writeResults ?? [];
  return {
    commitTime: typeof answer.body?.commitTime === 'string',
    writeResults: writeResults.map((result) => ({
      updateTime: typeof result?.updateTime === 'string',
      transformResults: ((result?.transformResults ?? []) as unknown[]).map((value) => canonicalValue(value, context)),
    })),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Mismatch bookkeeping

interface Mismatch {
  seed: number;
  what: string;
  request: unknown;
  oracle: unknown;
  subject: unknown;
  /** Error messages are never compared, only shown. */
  oracleMessage?: string;
  subjectMessage?: string;
}

/** The mismatch between two answers to one request, or undefined when their canonical forms agree. */
function compareAnswers(
  where: { seed: number; what: string; request: unknown },
  fromOracle: Answer,
  fromSubject: Answer,
  canonicalize: (answer: Answer) => unknown,
): Mismatch | undefined {
  const [oracle, subject] = [canonicalize(fromOracle), canonicalize(fromSubject)];
  if (isDeepStrictEqual(oracle, subject)) return undefined;
  return { ...where, oracle, subject, oracleMessage: errorMessage(fromOracle), subjectMessage: errorMessage(fromSubject) };
}

function errorMessage(answer: Answer): string | undefined {
  return answer.status === 200 ? undefined : truncate(answer.body?.error?.message ?? JSON.stringify(answer.body));
}

/** Mismatches that only repeat the error-status pair of an earlier one add nothing to the report. */
function mismatchesToShow(mismatches: Mismatch[], count: number): Mismatch[] {
  const seenPairs = new Set<string>();
  return mismatches
    .filter((mismatch) => {
      if (typeof mismatch.oracle !== 'string' || typeof mismatch.subject !== 'string') return true;
      const pair = `${mismatch.oracle} / ${mismatch.subject}`;
      const repeated = seenPairs.has(pair);
      seenPairs.add(pair);
      return !repeated;
    })
    .slice(0, count);
}

function describeMismatches(subject: Server, mismatches: Mismatch[], showAll: boolean): string {
  const shown = (showAll ? mismatches : mismatchesToShow(mismatches, mismatchesShown)).map((mismatch) =>
    [
      `seed ${mismatch.seed}: ${mismatch.what}`,
      `  request: ${JSON.stringify(mismatch.request)}`,
      ...describeDifference(mismatch.oracle, mismatch.subject, subject.label),
      ...(mismatch.oracleMessage ? [`  the emulator says: ${mismatch.oracleMessage}`] : []),
      ...(mismatch.subjectMessage ? [`  ${subject.label} says: ${mismatch.subjectMessage}`] : []),
    ].join('\n'),
  );
  const more = mismatches.length > shown.length ? `\n… and ${mismatches.length - shown.length} more (repeats of an error pair shown above, or beyond the first ${mismatchesShown})` : '';
  return `${mismatches.length} mismatch(es) between the emulator and ${subject.label}:\n\n${shown.join('\n\n')}${more}`;
}

/** Long document lists are cut to where they start to differ, plus the names only one side returned. */
function describeDifference(oracle: unknown, subject: unknown, subjectLabel: string): string[] {
  const [oracleDocuments, subjectDocuments] = [documentsOf(oracle), documentsOf(subject)];
  if (!oracleDocuments || !subjectDocuments || (oracleDocuments.length <= 6 && subjectDocuments.length <= 6))
    return [`  emulator: ${truncate(JSON.stringify(oracle, null, 1))}`, `  ${subjectLabel}: ${truncate(JSON.stringify(subject, null, 1))}`];
  let first = 0;
  while (first < oracleDocuments.length && oracleDocuments[first] === subjectDocuments[first]) first++;
  const names = (documents: string[]) => new Set(documents.map((document) => document.split(' {')[0]));
  const [oracleNames, subjectNames] = [names(oracleDocuments), names(subjectDocuments)];
  const onlyIn = (a: Set<string | undefined>, b: Set<string | undefined>) => [...a].filter((name) => !b.has(name)).slice(0, 10);
  const window = (documents: string[]) => truncate(JSON.stringify(documents.slice(first, first + 4), null, 1));
  return [
    `  ${oracleDocuments.length} documents from the emulator, ${subjectDocuments.length} from ${subjectLabel}; they differ from position ${first}`,
    `  emulator from there: ${window(oracleDocuments)}`,
    `  ${subjectLabel} from there: ${window(subjectDocuments)}`,
    `  only from the emulator: ${JSON.stringify(onlyIn(oracleNames, subjectNames))}; only from ${subjectLabel}: ${JSON.stringify(onlyIn(subjectNames, oracleNames))}`,
    `  problems: emulator ${JSON.stringify((oracle as { problems?: unknown }).problems)}, ${subjectLabel} ${JSON.stringify((subject as { problems?: unknown }).problems)}`,
  ];
}

function documentsOf(canonical: unknown): string[] | undefined {
  const documents = (canonical as { documents?: unknown } | undefined)?.documents;
  return Array.isArray(documents) ? documents : undefined;
}

function truncate(text: string): string {
  return text.length > 3000 ? `${text.slice(0, 3000)}…` : text;
}

function assertNoMismatches(subject: Server, mismatches: Mismatch[], { showAll = false } = {}): void {
  if (mismatches.length > 0) assert.fail(describeMismatches(subject, mismatches, showAll));
}

/** Requests finish in any order: list mismatches as the generator produced them. */
function sortBySeedAndIndex(mismatches: Mismatch[]): Mismatch[] {
  const index = (mismatch: Mismatch) => Number(/#(\d+)/.exec(mismatch.what)?.[1] ?? 0);
  return mismatches.sort((a, b) => a.seed - b.seed || index(a) - index(b));
}

/** Both servers handle requests in parallel; a few in flight keep the test well under a minute. */
async function forEachConcurrently<T>(items: T[], run: (item: T, index: number) => Promise<void>, concurrency = 4): Promise<void> {
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
function rngFor(seed: number, purpose: string): Random {
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

// ---------------------------------------------------------------------------------------------------------------
// The suite

const skipWithoutEmulator = !oracle && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator; .ci/run installs them)';

describe('Firestore REST: Hearth answers like the official emulator', { skip: skipWithoutEmulator }, () => {
  const oracleServer: Server = { label: 'emulator', url: oracle?.url ?? '' };
  let subject: Server;
  let hearth: TestHearth | undefined;
  let secondEmulator: GoogleEmulator | undefined;
  let databaseRoot: string;
  let context: CanonicalContext;
  const datasets = new Map<number, Dataset>();

  before(async () => {
    if (compareWithSecondEmulator) {
      secondEmulator = await startGoogleEmulator();
      subject = { label: 'second emulator', url: secondEmulator!.url };
      databaseRoot = 'projects/demo-differential/databases/(default)/documents';
    } else {
      hearth = await startHearth();
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

  function both(method: 'GET' | 'POST', path: string, body?: unknown): Promise<[Answer, Answer]> {
    return Promise.all([call(oracleServer, method, path, body), call(subject, method, path, body)]);
  }

  function runQueryPath(dataset: Dataset): string {
    return `${dataset.parent}:runQuery`;
  }

  async function compareQuery(seed: number, what: string, structuredQuery: StructuredQuery): Promise<{ oracleStatus: number; mismatch?: Mismatch }> {
    const dataset = datasets.get(seed)!;
    const [fromOracle, fromSubject] = await both('POST', runQueryPath(dataset), { structuredQuery });
    const mismatch = compareAnswers({ seed, what, request: structuredQuery }, fromOracle, fromSubject, (answer) => canonicalRunQuery(answer, context));
    return { oracleStatus: fromOracle.status, mismatch };
  }

  test('random valid queries return the same documents in the same order', async () => {
    const mismatches: Mismatch[] = [];
    const refusedByOracle: Mismatch[] = [];
    for (const seed of seeds) {
      const rng = rngFor(seed, 'queries');
      const queries = Array.from({ length: queriesPerSeed }, () => randomValidQuery(rng, datasets.get(seed)!));
      await forEachConcurrently(queries, async (query, index) => {
        const { oracleStatus, mismatch } = await compareQuery(seed, `query #${index}`, query);
        if (oracleStatus !== 200) refusedByOracle.push({ ...mismatch!, what: `${mismatch!.what}: the emulator refused a query the generator thinks valid` });
        else if (mismatch) mismatches.push(mismatch);
      });
    }
    // A refused "valid" query is a bug in the generator's validity rules, not in the subject.
    assertNoMismatches(oracleServer, sortBySeedAndIndex(refusedByOracle));
    sortBySeedAndIndex(mismatches);
    for (const shown of mismatchesToShow(mismatches, mismatchesShown)) Object.assign(shown, await shrunk(shown));
    assertNoMismatches(subject, mismatches);
  });

  async function shrunk(mismatch: Mismatch): Promise<Mismatch> {
    let smallest = mismatch;
    await shrinkQuery(mismatch.request as StructuredQuery, async (candidate) => {
      const { oracleStatus, mismatch: candidateMismatch } = await compareQuery(mismatch.seed, `${mismatch.what}, shrunk`, candidate);
      if (oracleStatus !== 200 || !candidateMismatch) return false;
      smallest = candidateMismatch;
      return true;
    });
    return smallest;
  }

  test('invalid queries are refused with the same HTTP status and error.status', async () => {
    const mismatches: Mismatch[] = [];
    const acceptedByOracle: string[] = [];
    const seed = seeds[0]!;
    const dataset = datasets.get(seed)!;
    for (const { description, structuredQuery } of invalidQueries(dataset)) {
      const [fromOracle, fromSubject] = await both('POST', runQueryPath(dataset), { structuredQuery });
      if (fromOracle.status === 200) acceptedByOracle.push(description);
      const mismatch = compareAnswers({ seed, what: description, request: structuredQuery }, fromOracle, fromSubject, (answer) => (answer.status === 200 ? 'accepted' : canonicalError(answer)));
      if (mismatch) mismatches.push(mismatch);
    }
    assert.deepEqual(acceptedByOracle, [], 'the emulator accepted queries listed as invalid');
    assertNoMismatches(subject, mismatches, { showAll: true });
  });

  test('aggregations (count, sum, avg) agree, where the emulator agrees with its own runQuery', async (t) => {
    const mismatches: Mismatch[] = [];
    const distrusted: string[] = [];
    let compared = 0;
    for (const seed of seeds) {
      const dataset = datasets.get(seed)!;
      const rng = rngFor(seed, 'aggregations');
      const cases = Array.from({ length: aggregationsPerSeed }, () => randomAggregationCase(rng, dataset));
      await forEachConcurrently(cases, async ({ structuredQuery, aggregations }, index) => {
        const what = `aggregation #${index}`;
        const request = { structuredAggregationQuery: { structuredQuery, aggregations } };
        const [rows, [fromOracle, fromSubject]] = await Promise.all([
          call(oracleServer, 'POST', runQueryPath(dataset), { structuredQuery }),
          both('POST', `${dataset.parent}:runAggregationQuery`, request),
        ]);
        // The research note saw emulator counts disagree with its runQuery: check its answer before trusting it.
        const expected = rows.status === 200 ? { results: [canonicalAggregateFields(expectedAggregateFields(documentFields(rows), aggregations), context)], problems: [] } : canonicalError(rows);
        const fromEmulator = canonicalAggregation(fromOracle, context);
        if (!isDeepStrictEqual(expected, fromEmulator)) {
          distrusted.push(`seed ${seed} ${what}: ${JSON.stringify(request)}\n  from its runQuery ${JSON.stringify(expected)}, answered ${JSON.stringify(fromEmulator)}`);
        } else {
          compared++;
          const mismatch = compareAnswers({ seed, what, request }, fromOracle, fromSubject, (answer) => canonicalAggregation(answer, context));
          if (mismatch) mismatches.push(mismatch);
        }
      });
    }
    t.diagnostic(`${compared} aggregation(s) compared`);
    if (distrusted.length > 0) t.diagnostic(`${distrusted.length} aggregation(s) not compared, the emulator disagreeing with its own runQuery:\n${distrusted.join('\n')}`);
    assertNoMismatches(subject, sortBySeedAndIndex(mismatches));
  });

  function documentFields(runQueryAnswer: Answer): Fields[] {
    return (runQueryAnswer.body as any[]).filter((element) => element.document).map((element) => element.document.fields ?? {});
  }

  test('batchGet and GET return the same documents', async () => {
    const mismatches: Mismatch[] = [];
    for (const seed of seeds) {
      const dataset = datasets.get(seed)!;
      const rng = rngFor(seed, 'reads');
      const names = () => [
        ...rng.sample(dataset.documents, rng.between(1, 10)).map((doc) => doc.name),
        ...rng.sample(['nope', 'd99', 'A/sub/x'], rng.between(0, 2)).map((id) => `${dataset.parent}/${dataset.collectionId}/${id}`),
      ];
      const masks = () => (rng.chance(0.3) ? { mask: { fieldPaths: rng.sample(['a', 'm.x', 'tags', 'zz'], rng.between(1, 3)) } } : {});
      for (let index = 0; index < 6; index++) {
        const request = { documents: names(), ...masks() };
        const [fromOracle, fromSubject] = await both('POST', `${databaseRoot}:batchGet`, request);
        const mismatch = compareAnswers({ seed, what: `batchGet #${index}`, request }, fromOracle, fromSubject, (answer) => canonicalBatchGet(answer, context));
        if (mismatch) mismatches.push(mismatch);
      }
      for (const name of names()) {
        const mask = masks().mask?.fieldPaths.map((path) => `mask.fieldPaths=${encodeURIComponent(path)}`).join('&');
        const path = `${name}${mask ? `?${mask}` : ''}`;
        const [fromOracle, fromSubject] = await both('GET', path);
        const mismatch = compareAnswers({ seed, what: 'GET', request: `GET /v1/${path}` }, fromOracle, fromSubject, (answer) => canonicalGet(answer, context));
        if (mismatch) mismatches.push(mismatch);
      }
    }
    assertNoMismatches(subject, mismatches);
  });

  test('commits with transforms and preconditions give the same results and documents', async (t) => {
    const mismatches: Mismatch[] = [];
    let committed = 0;
    const transformContext = { ...context, maskRequestTimes: true };
    for (const seed of seeds) {
      const rng = rngFor(seed, 'transforms');
      const cases = Array.from({ length: transformCasesPerSeed }, (_, index) => randomTransformCase(rng, `${databaseRoot}/transforms${seed}/t${index}`, databaseRoot));
      // Each case has a document of its own, so they can run side by side.
      await forEachConcurrently(cases, async (testCase, index) => {
        const [fromOracle, fromSubject] = await Promise.all([runTransformCase(oracleServer, testCase), runTransformCase(subject, testCase)]);
        if (fromOracle.commit.status === 200) committed++;
        const where = { seed, what: `transform case #${index}`, request: { ...testCase, write: fromOracle.write } };
        const mismatch =
          compareAnswers(where, fromOracle.commit, fromSubject.commit, (answer) => canonicalCommit(answer, transformContext)) ??
          compareAnswers({ ...where, what: `${where.what}, the document after the commit` }, fromOracle.document, fromSubject.document, (answer) => canonicalGet(answer, transformContext));
        if (mismatch) mismatches.push(mismatch);
      });
    }
    sortBySeedAndIndex(mismatches);
    t.diagnostic(`${committed} of ${seeds.length * transformCasesPerSeed} commits succeeded on the emulator; the others were refused by a precondition or a transform`);
    assertNoMismatches(subject, mismatches);
  });

  interface TransformOutcome {
    write: unknown;
    commit: Answer;
    document: Answer;
  }

  /** No document here was written in 2001. */
  const staleUpdateTime = '2001-02-03T04:05:06.789Z';

  async function runTransformCase(server: Server, testCase: TransformCase): Promise<TransformOutcome> {
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

  test('the generated queries cover every operator and shape', () => {
    // Guards the generator itself: a change that stops producing some shape would silently weaken the test.
    const text = seeds
      .flatMap((seed) => {
        const rng = rngFor(seed, 'queries');
        return Array.from({ length: queriesPerSeed }, () => JSON.stringify(randomValidQuery(rng, datasets.get(seed)!)));
      })
      .join('\n');
    const shapes = [
      ...['EQUAL', 'NOT_EQUAL', 'LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'ARRAY_CONTAINS', 'IN', 'NOT_IN', 'ARRAY_CONTAINS_ANY'].map((op) => `"op":"${op}"`),
      ...['IS_NULL', 'IS_NAN', 'IS_NOT_NULL', 'IS_NOT_NAN', 'AND', 'OR'].map((op) => `"op":"${op}"`),
      '"DESCENDING"',
      '"fieldPath":"__name__"',
      '"startAt"',
      '"endAt"',
      '"offset"',
      '"limit"',
      '"select"',
      // Collection-group queries run from the root parent only, which even seeds use.
      ...(seeds.some((seed) => seed % 2 === 0) ? ['"allDescendants":true'] : []),
    ];
    assert.deepEqual(
      shapes.filter((shape) => !text.includes(shape)),
      [],
      'shapes no generated query has',
    );
    const dataset = datasets.get(seeds[0]!)!;
    assert.ok(inScope(dataset, true).some((doc) => doc.name.split('/').length > inScope(dataset, false)[0]!.name.split('/').length), 'no documents in subcollections');
  });
});
