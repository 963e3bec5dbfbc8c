/**
 * For the differential tests of the Cloud Firestore v1 REST API (tests/firestore-differential-*.test.ts): the
 * canonical forms in which the answers of Google's emulator (the oracle) and of the subject must be equal, and the
 * bookkeeping of the mismatches between them.
 *
 * What is compared: document names in order and field values parsed (not key order: the emulator keeps write
 * order), integers apart from doubles (1 vs 1.0), doubles by value. createTime/updateTime/readTime differ by
 * nature and are only checked for presence. Error answers: HTTP status and error.status, never the message.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { aggregationAlias, valueAtPath, type Aggregation, type Fields, type Value } from './random-firestore.js';

/** Mismatches shown in full per test; shrinking each costs a few dozen requests. */
export const mismatchesShown = 6;

// ---------------------------------------------------------------------------------------------------------------
// Servers and requests

export interface Server {
  label: string;
  url: string;
}

export interface Answer {
  status: number;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: any;
}

// ---------------------------------------------------------------------------------------------------------------
// Canonical forms: what must be equal between the two servers

export interface CanonicalContext {
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

/** One call of the v1 REST API as the administrator (`Bearer owner`, as the emulators take it): status and body. */
export async function call(server: Server, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
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

export function canonicalError(answer: Answer): string {
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

export function canonicalRunQuery(answer: Answer, context: CanonicalContext): unknown {
  const stream = canonicalStream(answer);
  if (!stream) return canonicalError(answer);
  if (stream.elements.at(-1)?.done !== true) stream.problems.push('the last element is not done: true');
  const documents = stream.elements.filter((element) => element?.document).map((element) => canonicalDocument(element.document, context));
  return { documents, problems: stream.problems };
}

export function canonicalAggregation(answer: Answer, context: CanonicalContext): unknown {
  const stream = canonicalStream(answer);
  if (!stream) return canonicalError(answer);
  const results = stream.elements.filter((element) => element?.result).map((element) => canonicalAggregateFields(element.result.aggregateFields ?? {}, context));
  return { results, problems: stream.problems };
}

export function canonicalAggregateFields(fields: Record<string, any>, context: CanonicalContext): Record<string, string> {
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
export function expectedAggregateFields(rows: Fields[], aggregations: Aggregation[]): Record<string, Value> {
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
export function canonicalBatchGet(answer: Answer, context: CanonicalContext): unknown {
  const stream = canonicalStream(answer);
  if (!stream) return canonicalError(answer);
  const entries = stream.elements.map((element) => {
    if (element?.found) return `found ${canonicalDocument(element.found, context)}`;
    return element?.missing ? `missing ${relativeName(element.missing, context)}` : `<neither found nor missing ${JSON.stringify(element)}>`;
  });
  return { entries: entries.sort(), problems: stream.problems };
}

export function canonicalGet(answer: Answer, context: CanonicalContext): unknown {
  return answer.status === 200 ? canonicalDocument(answer.body, context) : canonicalError(answer);
}

export function canonicalCommit(answer: Answer, context: CanonicalContext): unknown {
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

export interface Mismatch {
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
export function compareAnswers(
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
export function mismatchesToShow(mismatches: Mismatch[], count: number): Mismatch[] {
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

export function assertNoMismatches(subject: Server, mismatches: Mismatch[], { showAll = false } = {}): void {
  if (mismatches.length > 0) assert.fail(describeMismatches(subject, mismatches, showAll));
}

/** Requests finish in any order: list mismatches as the generator produced them. */
export function sortBySeedAndIndex(mismatches: Mismatch[]): Mismatch[] {
  const index = (mismatch: Mismatch) => Number(/#(\d+)/.exec(mismatch.what)?.[1] ?? 0);
  return mismatches.sort((a, b) => a.seed - b.seed || index(a) - index(b));
}
