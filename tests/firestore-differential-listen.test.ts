/**
 * Differential test of Firestore listeners (Listen over gRPC): the same seeded random writes go, one at a time, to
 * Google's official emulator (the oracle) and to Hearth (in-process, --dev), and what firebase-admin `onSnapshot`
 * listeners on each server see must agree. One firebase-admin client per server (`Bearer owner`, `useBigInt` so that
 * integers and doubles stay apart) registers the same listeners: 10 random valid queries from the REST differential's
 * generator (tests/helpers/random-firestore.ts: filters, orders, cursors, offset, limit, collection groups; some as
 * limitToLast; select left out, see `listenable`) and 4 single-document listeners, one of them on a document that
 * does not exist yet. Writes go through REST :commit exactly as generated, one per commit: full sets, masked merges
 * (changed or deleted fields that move documents in and out of queries), deletes, re-creations, creates with
 * exists: false, and transforms (increment, maximum, minimum, array union and removal, REQUEST_TIME). Every write
 * also sets `w`, the write's number.
 *
 * After each write, before comparing, every listener must have caught up:
 *  - on the emulator, a listener the write may concern must come to what a fresh read of the same query (or
 *    document) gives there: the same documents, updateTimes and data. Others must stay where they are;
 *  - on the subject, a listener that agreed with the emulator so far must come to the emulator's listener's state
 *    (the write changes `w` in a document the listener holds before or after, so the old state cannot pass for the
 *    new one); otherwise, or when it does not get there, to what a fresh read on the subject gives.
 * A listener that does not get there within FIRESTORE_DIFF_LISTEN_TIMEOUT_MS (5 s), or leaves it during a short
 * pause that catches late snapshots, is "stuck": shown with what the read has and the listener lacks, and back.
 * Then, per listener:
 *  - state: the ordered document paths and their data (integers apart from doubles, -0 equal to 0, field order
 *    ignored, REQUEST_TIME values masked) must be equal on both servers. It is compared after every write, whatever
 *    the number of snapshots, because servers may coalesce events differently;
 *  - snapshots: one server raising a snapshot for the write and the other none is a mismatch;
 *  - docChanges (type, path, oldIndex, newIndex): compared only when each server raised exactly one snapshot for the
 *    write, as the emulator does for one commit. Both raising snapshots, but not as many, is counted, not failed.
 * A listener that fails on one server only is a mismatch. After a state mismatch a listener is compared again once
 * the two states are equal. Order within a firebase-admin snapshot is the SDK's (explicit orderBy, then the document
 * name: it leaves out the implicit inequality orders), so the server decides which documents a listener holds and
 * the SDK their order.
 *
 * The exact generated query goes on the wire: firebase-admin builds its queries from JavaScript values, which would
 * turn 1.0 into 1 and drop limit 0, so the listened query's internal `toProto()` is replaced by the generated
 * StructuredQuery (the public API still sets the orderBy that the SDK sorts by, and limitToLast). Before listening,
 * that path is checked against the emulator's REST runQuery.
 *
 * On a mismatch the test prints the seed, the listener, both servers' observations, and the write sequence shrunk
 * to a short one that still shows the same kind of mismatch on that listener (replayed with that listener alone, on
 * the seed's initial documents in a fresh collection).
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 * Knobs: FIRESTORE_DIFF_LISTEN_SEEDS picks the seeds (default 1,2: odd seeds listen to a collection under a
 * document, even ones to a root collection, with collection groups); FIRESTORE_DIFF_LISTEN_WRITES=N the writes per
 * seed (default 100); FIRESTORE_DIFF_SUBJECT=emulator compares a second emulator instead of Hearth, to check the
 * harness and the emulator's determinism (checked: seeds 1-5, no difference, no coalescing difference).
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import {
  DocumentReference,
  FieldPath,
  GeoPoint,
  Query,
  Timestamp,
  getFirestore,
  setLogFunction,
  type DocumentSnapshot,
  type Firestore,
  type QuerySnapshot,
} from 'firebase-admin/firestore';
import { startGoogleEmulator, type GoogleEmulator } from './helpers/firestore-emulator.js';
import { startHearth, type TestHearth } from './helpers/hearth.js';
import {
  Random,
  arrayElementValues,
  inScope,
  numberValues,
  randomDataset,
  randomFields,
  randomValidQuery,
  valuePool,
  type Cursor,
  type Dataset,
  type FieldTransform,
  type Fields,
  type Filter,
  type Order,
  type StructuredQuery,
  type Value,
} from './helpers/random-firestore.js';

const seeds = (process.env.FIRESTORE_DIFF_LISTEN_SEEDS ?? '1,2').split(',').map(Number);
const writesPerSeed = Number(process.env.FIRESTORE_DIFF_LISTEN_WRITES ?? 100);
const queryListenersPerSeed = 10;
const catchUpMs = Number(process.env.FIRESTORE_DIFF_LISTEN_TIMEOUT_MS ?? 5_000);
/** Replays while shrinking wait less: a stuck listener there only has to show again. */
const replayCatchUpMs = Math.min(catchUpMs, 2_000);
/** After every listener caught up: a late snapshot for the same write would show within this. */
const settleMs = 30;
/** Reads, commits and listener set-up: a hang names its call instead of running into the test timeout. */
const callTimeoutMs = 15_000;
const compareWithSecondEmulator = process.env.FIRESTORE_DIFF_SUBJECT === 'emulator';
/** Mismatches shown in full (and shrunk), and the time spent shrinking them. */
const mismatchesShown = 6;
const shrinkBudgetMs = 60_000;
const projectId = 'demo-test';
const databaseRoot = `projects/${projectId}/databases/(default)/documents`;
const run = Date.now().toString(36);

setLogFunction(null);
// google-gax asks google-auth-library for the universe domain when it creates a stub, which probes the GCE metadata
// server (seconds, and a MetadataLookupWarning where a proxy answers 403): these clients only talk to local servers.
process.env.METADATA_SERVER_DETECTION ??= 'none';

const oracle = await startGoogleEmulator();

// ---------------------------------------------------------------------------------------------------------------
// Servers

interface Side {
  label: string;
  /** http://127.0.0.1:PORT, for REST commits and runQuery */
  url: string;
  app: App;
  db: Firestore;
}

/** A firebase-admin client for that host (FIRESTORE_EMULATOR_HOST is read when the client is set up). */
function adminClient(label: string, hostPort: string): { app: App; db: Firestore } {
  const saved = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = hostPort;
  try {
    const app = initializeApp({ projectId }, `listen-diff-${label}-${run}`);
    const db = getFirestore(app);
    db.settings({ useBigInt: true });
    return { app, db };
  } finally {
    if (saved === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = saved;
  }
}

interface Answer {
  status: number;
  body: any;
}

async function rest(side: Side, path: string, body: unknown): Promise<Answer> {
  const response = await within(
    fetch(`${side.url}/v1/${path}`, {
      method: 'POST',
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    `${side.label}: POST ${path}`,
  );
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

function outcome(answer: Answer): string {
  return answer.status === 200 ? 'committed' : `HTTP ${answer.status} ${answer.body?.error?.status ?? JSON.stringify(answer.body).slice(0, 200)}`;
}

function within<T>(promise: Promise<T>, label: string, ms = callTimeoutMs): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------------------------
// What a listener shows, in canonical form

interface Seen {
  /** Ordered `path {data}`: what must be equal on both servers (REQUEST_TIME values masked). */
  documents: string[];
  /** `type path oldIndex->newIndex`; empty for document listeners. */
  changes: string[];
  /** The documents with updateTime and exact data, sorted: what a fresh read on the same server must give. */
  syncKey: string;
}

const requestTimeWindowMs = 10 * 60_000;

function canonical(value: unknown, maskRequestTimes: boolean): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return canonicalDouble(value);
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return String(value);
  }
  if (value instanceof Timestamp) return canonicalTimestamp(value, maskRequestTimes);
  if (value instanceof GeoPoint) return `geo(${canonicalDouble(value.latitude)}, ${canonicalDouble(value.longitude)})`;
  if (value instanceof DocumentReference) return `ref(${value.path})`;
  if (value instanceof Uint8Array) return `b'${Buffer.from(value).toString('hex')}'`;
  if (Array.isArray(value)) return `[${value.map((element) => canonical(element, maskRequestTimes)).join(', ')}]`;
  if (typeof value === 'object') return canonicalMap(value as Record<string, unknown>, maskRequestTimes);
  return `<unexpected ${typeof value}>`;
}

function canonicalMap(fields: Record<string, unknown>, maskRequestTimes: boolean): string {
  return `{${Object.keys(fields)
    .sort()
    .map((key) => `${key}: ${canonical(fields[key], maskRequestTimes)}`)
    .join(', ')}}`;
}

/** With useBigInt every integer is a bigint, so a number is a double: integral ones print with ".0". */
function canonicalDouble(number: number): string {
  if (!Number.isFinite(number)) return String(number);
  // As in the REST differential: emulator 1.19.9 stores an input of -0 as 0.0, so the two count as equal.
  const text = String(Object.is(number, -0) ? 0 : number);
  return Number.isInteger(number) && !text.includes('e') ? `${text}.0` : text;
}

function canonicalTimestamp(timestamp: Timestamp, maskRequestTimes: boolean): string {
  if (maskRequestTimes && Math.abs(timestamp.toMillis() - Date.now()) < requestTimeWindowMs) {
    // REQUEST_TIME differs between the servers by nature; it is stored with millisecond precision.
    return timestamp.nanoseconds % 1_000_000 === 0 ? '<request time>' : `<request time with sub-millisecond digits>`;
  }
  return exactTime(timestamp);
}

function exactTime(timestamp: Timestamp): string {
  return `${new Date(timestamp.seconds * 1000).toISOString().slice(0, 19)}.${String(timestamp.nanoseconds).padStart(9, '0')}Z`;
}

function documentEntry(snapshot: DocumentSnapshot, maskRequestTimes: boolean): string {
  return `${snapshot.ref.path} ${canonicalMap(snapshot.data() ?? {}, maskRequestTimes)}`;
}

function syncEntry(snapshot: DocumentSnapshot): string {
  return `${snapshot.ref.path} @${snapshot.updateTime ? exactTime(snapshot.updateTime) : '<no updateTime>'} ${canonicalMap(snapshot.data() ?? {}, false)}`;
}

function seenInQuery(snapshot: QuerySnapshot): Seen {
  return {
    documents: snapshot.docs.map((doc) => documentEntry(doc, true)),
    changes: snapshot.docChanges().map((change) => `${change.type} ${change.doc.ref.path} ${change.oldIndex}->${change.newIndex}`),
    syncKey: querySyncKey(snapshot),
  };
}

function querySyncKey(snapshot: QuerySnapshot): string {
  return snapshot.docs.map(syncEntry).sort().join('\n');
}

function seenInDocument(snapshot: DocumentSnapshot): Seen {
  return { documents: snapshot.exists ? [documentEntry(snapshot, true)] : [], changes: [], syncKey: documentSyncKey(snapshot) };
}

function documentSyncKey(snapshot: DocumentSnapshot): string {
  return snapshot.exists ? syncEntry(snapshot) : `${snapshot.ref.path} missing`;
}

// ---------------------------------------------------------------------------------------------------------------
// The exact generated query on the wire

/** proto3 JSON → the object form of the SDK's protobuf messages (its requests go through protobufjs fromObject). */
function protoValue(value: Value): unknown {
  if ('nullValue' in value) return { nullValue: 'NULL_VALUE' };
  if ('doubleValue' in value) return { doubleValue: Number(value.doubleValue) };
  if ('timestampValue' in value) return { timestampValue: protoTimestamp(value.timestampValue) };
  if ('bytesValue' in value) return { bytesValue: Buffer.from(value.bytesValue, 'base64') };
  if ('arrayValue' in value) return { arrayValue: { values: (value.arrayValue.values ?? []).map(protoValue) } };
  if ('mapValue' in value) return { mapValue: { fields: Object.fromEntries(Object.entries(value.mapValue.fields ?? {}).map(([key, inner]) => [key, protoValue(inner)])) } };
  return value;
}

function protoTimestamp(text: string): { seconds: number; nanos: number } {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(text);
  if (!match) throw new Error(`not an RFC 3339 UTC timestamp: ${text}`);
  return { seconds: Date.parse(`${match[1]}Z`) / 1000, nanos: Number((match[2] ?? '').padEnd(9, '0')) };
}

function protoFilter(filter: Filter): unknown {
  if ('compositeFilter' in filter) return { compositeFilter: { op: filter.compositeFilter.op, filters: filter.compositeFilter.filters.map(protoFilter) } };
  if ('fieldFilter' in filter) return { fieldFilter: { ...filter.fieldFilter, value: protoValue(filter.fieldFilter.value) } };
  return filter;
}

function protoCursor(cursor: Cursor): unknown {
  return { values: cursor.values.map(protoValue), before: cursor.before ?? false };
}

function protoQuery(query: StructuredQuery): unknown {
  return {
    ...(query.select && { select: query.select }),
    from: query.from,
    ...(query.where && { where: protoFilter(query.where) }),
    ...(query.orderBy && { orderBy: query.orderBy }),
    ...(query.startAt && { startAt: protoCursor(query.startAt) }),
    ...(query.endAt && { endAt: protoCursor(query.endAt) }),
    ...(query.offset !== undefined && { offset: query.offset }),
    ...(query.limit !== undefined && { limit: { value: query.limit } }),
  };
}

/** What the SDKs send for limitToLast: the orders reversed and the cursors swapped; the client reverses back. */
function flippedForLimitToLast(query: StructuredQuery): StructuredQuery {
  const flip = (order: Order): Order => ({ field: order.field, direction: order.direction === 'DESCENDING' ? 'ASCENDING' : 'DESCENDING' });
  const { startAt, endAt, ...rest } = query;
  return {
    ...rest,
    orderBy: (query.orderBy ?? []).map(flip),
    ...(endAt && { startAt: { values: endAt.values, before: !endAt.before } }),
    ...(startAt && { endAt: { values: startAt.values, before: !startAt.before } }),
  };
}

/** The query as sent: for limitToLast, the flipped one. */
function wireQuery(spec: QueryListener): StructuredQuery {
  return spec.limitToLast ? flippedForLimitToLast(spec.query) : spec.query;
}

if (typeof (Query.prototype as unknown as { toProto?: unknown }).toProto !== 'function') {
  throw new Error('firebase-admin internals changed: Query.prototype.toProto, which this test replaces to send the exact generated query, is gone');
}

/**
 * A firebase-admin query that sends exactly `spec.query`. The SDK sorts snapshot documents by the query's orderBy
 * (then the name), and reverses limitToLast results: both are set through the public API; everything else the
 * server sees comes from the replaced toProto(), which both Listen and get() call.
 */
function adminQuery(db: Firestore, spec: QueryListener): Query {
  const selector = spec.query.from[0]!;
  const parent = spec.parent === databaseRoot ? '' : `${relativePath(spec.parent)}/`;
  // A collection group under a document parent is not generated (the emulator refuses filtered or ordered ones).
  let query: Query = selector.allDescendants ? db.collectionGroup(selector.collectionId!) : db.collection(`${parent}${selector.collectionId!}`);
  for (const order of spec.query.orderBy ?? []) {
    query = query.orderBy(order.field.fieldPath === '__name__' ? FieldPath.documentId() : order.field.fieldPath, order.direction === 'DESCENDING' ? 'desc' : 'asc');
  }
  if (spec.limitToLast) query = query.limitToLast(spec.query.limit!);
  const request = { parent: spec.parent, structuredQuery: protoQuery(wireQuery(spec)) };
  Object.defineProperty(query, 'toProto', {
    value: (...args: unknown[]) => {
      if (args.some((arg) => arg !== undefined)) throw new Error('the replaced toProto() takes no transaction, read time or explain options');
      return request;
    },
  });
  return query;
}

// ---------------------------------------------------------------------------------------------------------------
// Listeners, writes, and one seed's plan

interface QueryListener {
  kind: 'query';
  /** The runQuery parent: the database root or a document */
  parent: string;
  query: StructuredQuery;
  limitToLast: boolean;
}
interface DocumentListener {
  kind: 'document';
  /** Full resource name */
  name: string;
}
type ListenerSpec = QueryListener | DocumentListener;

interface WriteStep {
  /** Position in the seed's generated sequence (shrunk sequences keep it). */
  index: number;
  description: string;
  /** One google.firestore.v1.Write in proto3 JSON, for :commit */
  write: Record<string, unknown>;
}

interface Plan {
  seed: number;
  /** The collection id everything of this seed lives under; replays substitute a fresh one. */
  token: string;
  dataset: Dataset;
  listeners: ListenerSpec[];
  steps: WriteStep[];
  /** Generated queries left out because the emulator refused them. */
  refusedByEmulator: number;
}

/** A distinct, reproducible random stream per seed and purpose. */
function rngFor(seed: number, purpose: string): Random {
  let hash = seed >>> 0;
  for (const char of `listen:${purpose}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return new Random(hash);
}

function relativePath(name: string): string {
  return name.startsWith(`${databaseRoot}/`) ? name.slice(databaseRoot.length + 1) : name;
}

/** The same JSON with the seed's collection id replaced: a fresh, empty place for a replay. */
function retoken<T>(value: T, from: string, to: string): T {
  if (from === to) return value;
  const text = JSON.stringify(value).replaceAll(`/${from}/`, `/${to}/`).replaceAll(`"collectionId":"${from}"`, `"collectionId":"${to}"`);
  return JSON.parse(text) as T;
}

/**
 * Production refuses projections in listeners (INVALID_ARGUMENT "'select' clauses are not supported for real-time
 * queries", googleapis/nodejs-firestore#1090) while emulator 1.19.9 applies them: select is left out.
 */
function listenable(query: StructuredQuery): StructuredQuery {
  const { select: _select, ...rest } = query;
  return rest;
}

async function makePlan(seed: number, oracleSide: Side): Promise<Plan> {
  const token = `listen${seed}x${run}`;
  // As in the REST differential, even seeds query a root collection (collection-group queries are generated, and
  // taken by the emulator, from the root only) and odd seeds a collection under a document. Either way every name
  // holds the token, which replays replace.
  const layout = seed % 2 === 0 ? { databaseRoot, parent: databaseRoot, collectionId: token } : { databaseRoot, parent: `${databaseRoot}/${token}/p`, collectionId: 'c' };
  const dataset = randomDataset(rngFor(seed, 'documents'), layout, 40);
  const collection = `${dataset.parent}/${dataset.collectionId}`;
  const topLevel = inScope(dataset, false).map((doc) => doc.name);
  const nested = inScope(dataset, true)
    .map((doc) => doc.name)
    .filter((name) => !topLevel.includes(name));
  const rng = rngFor(seed, 'plan');
  const fresh = [`${collection}/new0`, `${collection}/new1`, `${collection}/zz`, `${collection}/${rng.pick(topLevel).split('/').pop()}/${dataset.collectionId}/new2`];
  // No listener may ever hold it: another collection id, or the same one under another parent.
  const outsider = seed % 2 === 0 ? `${collection}/${rng.pick(topLevel).split('/').pop()}/other/new3` : `${databaseRoot}/${token}/q/${dataset.collectionId}/new3`;
  const written = [...rng.sample(topLevel, 16), ...rng.sample(nested, 4), ...fresh, outsider];
  const watched = [written[0]!, written[1]!, written[16]!, fresh[0]!];

  const listeners: ListenerSpec[] = [];
  let refusedByEmulator = 0;
  const queries = rngFor(seed, 'queries');
  await writeDataset(oracleSide, dataset);
  while (listeners.length < queryListenersPerSeed) {
    const query = listenable(randomValidQuery(queries, dataset));
    const limitToLast = query.orderBy !== undefined && query.limit !== undefined && query.offset === undefined && queries.chance(0.6);
    const spec: QueryListener = { kind: 'query', parent: dataset.parent, query, limitToLast };
    const answer = await rest(oracleSide, `${dataset.parent}:runQuery`, { structuredQuery: wireQuery(spec) });
    if (answer.status === 200) listeners.push(spec);
    else refusedByEmulator++;
  }
  listeners.push(...watched.map((name): DocumentListener => ({ kind: 'document', name })));

  const writes = rngFor(seed, 'writes');
  const pool = valuePool(databaseRoot);
  const steps = Array.from({ length: writesPerSeed }, (_, index) => randomStep(writes, writes.chance(0.3) ? writes.pick(watched) : writes.pick(written), index, pool));
  return { seed, token, dataset, listeners, steps, refusedByEmulator };
}

const mergeablePaths = ['a', 'b', 'c', 'tags', 'm', 'm.x'] as const;
const transformablePaths = ['b', 'm.x', 'tags', 'c'] as const;

function randomStep(rng: Random, name: string, index: number, pool: Value[]): WriteStep {
  const marker: Fields = { w: { integerValue: String(index + 1) } };
  const path = relativePath(name);
  const roll = rng.next();
  if (roll < 0.28) return { index, description: `set ${path}`, write: { update: { name, fields: { ...randomFields(rng, pool), ...marker } } } };
  if (roll < 0.58) {
    let paths: string[] = rng.sample(mergeablePaths, rng.between(1, 3));
    if (paths.includes('m')) paths = paths.filter((p) => p !== 'm.x');
    // Values drawn like the generator's documents; a masked path left without one is deleted.
    const source = randomFields(rng, pool);
    const fields: Fields = { ...marker };
    for (const p of paths) {
      if (p === 'm.x') {
        const m = source.m;
        const x = m && 'mapValue' in m ? m.mapValue.fields?.x : undefined;
        if (x) fields.m = { mapValue: { fields: { x } } };
      } else if (source[p]) fields[p] = source[p]!;
    }
    const mustExist = rng.chance(0.3);
    return {
      index,
      description: `merge ${path} mask [${paths.join(', ')}]${mustExist ? ' if it exists' : ''}`,
      write: { update: { name, fields }, updateMask: { fieldPaths: [...paths, 'w'] }, ...(mustExist && { currentDocument: { exists: true } }) },
    };
  }
  if (roll < 0.73) return { index, description: `delete ${path}`, write: { delete: name } };
  if (roll < 0.93) {
    const transforms = rng.sample(transformablePaths, rng.between(1, 2)).map((fieldPath) => randomTransform(rng, fieldPath));
    return {
      index,
      description: `transform ${path}: ${transforms.map((t) => Object.keys(t).find((key) => key !== 'fieldPath') + ' ' + t.fieldPath).join(', ')}`,
      write: { update: { name, fields: marker }, updateMask: { fieldPaths: ['w'] }, updateTransforms: transforms },
    };
  }
  return { index, description: `create ${path}`, write: { update: { name, fields: { ...randomFields(rng, pool), ...marker } }, currentDocument: { exists: false } } };
}

function randomTransform(rng: Random, fieldPath: string): FieldTransform {
  if (fieldPath === 'c') return { fieldPath, setToServerValue: 'REQUEST_TIME' };
  if (fieldPath === 'tags') {
    const values = rng.sample(arrayElementValues, rng.between(1, 3));
    return rng.chance(0.6) ? { fieldPath, appendMissingElements: { values } } : { fieldPath, removeAllFromArray: { values } };
  }
  const operand = rng.pick(numberValues);
  const roll = rng.int(fieldPath === 'b' ? 3 : 1);
  return roll === 0 ? { fieldPath, increment: operand } : roll === 1 ? { fieldPath, maximum: operand } : { fieldPath, minimum: operand };
}

async function writeDataset(side: Side, dataset: Dataset): Promise<void> {
  const answer = await rest(side, `${databaseRoot}:commit`, { writes: dataset.documents.map(({ name, fields }) => ({ update: { name, fields } })) });
  assert.equal(answer.status, 200, `${side.label} refused the initial documents: ${JSON.stringify(answer.body).slice(0, 2000)}`);
}

function describeListener(spec: ListenerSpec): string {
  if (spec.kind === 'document') return `document ${relativePath(spec.name)}`;
  const parent = spec.parent === databaseRoot ? '' : ` under ${relativePath(spec.parent)}`;
  return `query${parent} ${JSON.stringify(spec.query)}${spec.limitToLast ? ' as limitToLast' : ''}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Running a sequence

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
interface Observation {
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

interface Mismatch {
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

async function runSequence(plan: Plan, sides: [Side, Side], listeners: ListenerSpec[], steps: WriteStep[], options: RunOptions): Promise<{ mismatches: Mismatch[]; stats: Stats }> {
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

// ---------------------------------------------------------------------------------------------------------------
// Shrinking: the shortest write sequence that still shows the same kind of mismatch on the same listener

async function shrink(plan: Plan, sides: [Side, Side], mismatch: Mismatch, deadline: number): Promise<{ mismatch: Mismatch; replays: number; reproduced: boolean }> {
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

function stepDocument(step: WriteStep): string {
  const write = step.write as { update?: { name: string }; delete?: string };
  return write.update?.name ?? write.delete!;
}

/** Whether a listener could ever hold that document (names in the seed's own collection). */
function mayHold(spec: ListenerSpec, name: string): boolean {
  if (spec.kind === 'document') return spec.name === name;
  const selector = spec.query.from[0]!;
  const segments = name.split('/');
  if (segments.at(-2) !== selector.collectionId || !name.startsWith(`${spec.parent}/`)) return false;
  // A plain query holds its collection's own documents; a collection group all of that id under its parent.
  return selector.allDescendants === true || segments.slice(0, -2).join('/') === spec.parent;
}

// ---------------------------------------------------------------------------------------------------------------
// Reports

/** Steps and listeners are in the seed's own collection; observations of a replay name its fresh one. */
function describeMismatch(mismatch: Mismatch, subjectLabel: string, note: string): string {
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
function mismatchesToShow(mismatches: Mismatch[]): Mismatch[] {
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

// ---------------------------------------------------------------------------------------------------------------
// The suite

const skipWithoutEmulator = !oracle && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator; .ci/run installs them)';

describe('Firestore listeners: Hearth raises the snapshots the official emulator raises', { skip: skipWithoutEmulator }, () => {
  let sides: [Side, Side];
  let hearth: TestHearth | undefined;
  let secondEmulator: GoogleEmulator | undefined;

  before(async () => {
    let subjectUrl: string;
    let subjectHostPort: string;
    let subjectLabel: string;
    if (compareWithSecondEmulator) {
      secondEmulator = await startGoogleEmulator();
      [subjectUrl, subjectHostPort, subjectLabel] = [secondEmulator!.url, secondEmulator!.hostPort, 'second emulator'];
    } else {
      hearth = await startHearth({ defaultProjectId: projectId });
      [subjectUrl, subjectHostPort, subjectLabel] = [hearth.url, hearth.hostPort, 'Hearth'];
    }
    sides = [
      { label: 'emulator', url: oracle!.url, ...adminClient('emulator', oracle!.hostPort) },
      { label: subjectLabel, url: subjectUrl, ...adminClient('subject', subjectHostPort) },
    ];
  });

  after(async () => {
    // Clients first: against a closed port they would retry for minutes.
    for (const side of sides ?? []) {
      await within(side.db.terminate(), `terminate the ${side.label} client`).catch(() => undefined);
      await deleteApp(side.app);
    }
    await hearth?.close();
    await secondEmulator?.stop();
    await oracle?.stop();
  });

  for (const seed of seeds) {
    test(`seed ${seed}: ${writesPerSeed} writes, one at a time, under ${queryListenersPerSeed} query and 4 document listeners`, async (t) => {
      const plan = await makePlan(seed, sides[0]);
      await checkWireQueries(plan);
      const { mismatches, stats } = await runSequence(plan, sides, plan.listeners, plan.steps, { token: plan.token, catchUpMs, stopAtFirst: false });
      t.diagnostic(
        `${stats.writes} writes (${stats.refusedWrites} refused by both, e.g. a precondition), ${plan.listeners.length} listeners ` +
          `(${plan.refusedByEmulator} generated queries left out: the emulator refused them); ${stats.comparisons} listener states compared, ` +
          `${stats.docChangesCompared} docChanges compared, ${stats.coalescedDifferently} times both raised snapshots but not as many; ` +
          `snapshots raised: emulator ${stats.snapshots[0]}, ${sides[1].label} ${stats.snapshots[1]}`,
      );
      if (stats.refusedListeners.length > 0) t.diagnostic(`listeners the emulator refused, left out:\n${stats.refusedListeners.join('\n')}`);
      if (mismatches.length === 0) return;
      const shown = mismatchesToShow(mismatches);
      const deadline = Date.now() + shrinkBudgetMs;
      const reports: string[] = [];
      for (const mismatch of shown) {
        const { mismatch: smallest, replays, reproduced } = await shrink(plan, sides, mismatch, deadline);
        const note = !reproduced
          ? ` (did not show again when replayed with this listener alone: not shrunk; it may depend on the other listeners or on timing)`
          : mismatch.at < 0
            ? ' (shows again when replayed with this listener alone)'
            : ` (shrunk from ${mismatch.at + 1} writes in ${replays} replays)`;
        reports.push(describeMismatch(smallest, sides[1].label, note));
      }
      const more = mismatches.length > shown.length ? `\n\n… and ${mismatches.length - shown.length} more (the same kind on the same listener, or beyond the first ${mismatchesShown})` : '';
      assert.fail(`${mismatches.length} mismatch(es) between the emulator and ${sides[1].label} (seed ${seed}):\n\n${reports.join('\n\n')}${more}`);
    });
  }

  /** The replaced toProto() must put the generated query on the wire: get() through it equals the emulator's REST runQuery. */
  async function checkWireQueries(plan: Plan): Promise<void> {
    const problems: string[] = [];
    for (const spec of plan.listeners) {
      if (spec.kind !== 'query') continue;
      const answer = await rest(sides[0], `${spec.parent}:runQuery`, { structuredQuery: wireQuery(spec) });
      const fromRest = (answer.body as any[]).filter((element) => element.document).map((element) => relativePath(element.document.name));
      const fromAdmin = (await within(adminQuery(sides[0].db, spec).get(), 'get through the replaced toProto()')).docs.map((doc) => doc.ref.path);
      if (spec.limitToLast) fromAdmin.reverse();
      if (!isDeepStrictEqual(fromAdmin, fromRest)) problems.push(`${describeListener(spec)}\n  REST runQuery: ${JSON.stringify(fromRest)}\n  firebase-admin: ${JSON.stringify(fromAdmin)}`);
    }
    assert.deepEqual(problems, [], 'firebase-admin did not send the generated query (the harness is broken, not the subject)');
  }
});
