/**
 * Cloud Firestore through the official SDK's lite build (`firebase/firestore/lite`: REST only,
 * `batchGet` / `commit` / `runQuery` / `runAggregationQuery`) in Node: every call, every query
 * shape, every value type, transactions under contention, and the error codes the SDK raises.
 *
 * It runs against Hearth (in-process, --dev; every client signs in anonymously first, since
 * Hearth's Firestore only answers signed requests there). With HEARTH_FIRESTORE_TARGET=google-emulator
 * the same assertions run against Google's official emulator (`gcloud emulators firestore start`),
 * which is how they were checked; that mode is for validating the suite, not for CI. Set
 * HEARTH_FIRESTORE_EMULATOR=127.0.0.1:PORT as well to reuse an emulator that is already running.
 *
 * Two facts of the lite SDK shape the error assertions: it maps a failed REST call to a code by
 * HTTP status alone (400 → `failed-precondition`, 409 → `aborted`, 404 → `not-found`), so for
 * server-side rejections the suite also checks the `status` the server put in its error body, read
 * by a spy on `fetch`; and it refuses some bad input itself before sending anything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, inMemoryPersistence, initializeAuth, signInAnonymously } from 'firebase/auth';
import {
  Bytes,
  DocumentReference,
  FieldPath,
  GeoPoint,
  Timestamp,
  VectorValue,
  addDoc,
  and,
  arrayRemove,
  arrayUnion,
  average,
  collection,
  collectionGroup,
  connectFirestoreEmulator,
  count,
  deleteDoc,
  deleteField,
  doc,
  documentId,
  endAt,
  endBefore,
  getAggregate,
  getCount,
  getDoc,
  getDocs,
  getFirestore,
  increment,
  limit,
  limitToLast,
  maximum,
  minimum,
  or,
  orderBy,
  query,
  runTransaction,
  serverTimestamp,
  setDoc,
  setLogLevel,
  startAfter,
  startAt,
  sum,
  updateDoc,
  vector,
  where,
  writeBatch,
  type DocumentData,
  type DocumentSnapshot,
  type Firestore,
  type Query,
  type QueryConstraint,
} from 'firebase/firestore/lite';
import { startGoogleEmulator } from './helpers/firestore-emulator.js';
import { startHearth, type TestHearth } from './helpers/hearth.js';

const useGoogleEmulator = process.env.HEARTH_FIRESTORE_TARGET === 'google-emulator';
/** Per SDK call: long enough for a slow machine, short enough to name the call that hung. */
const CALL_TIMEOUT_MS = 15_000;

interface Target {
  /** 127.0.0.1 */
  host: string;
  port: number;
  projectId: string;
  apiKey: string;
  /** Where the Auth emulator API lives, or undefined when requests go unsigned (Google's emulator). */
  authUrl: string | undefined;
  close(): Promise<void>;
}

let target: Target;
const apps: FirebaseApp[] = [];
/** One signed-in client; most tests use it. */
let db: Firestore;

// The SDK logs every failed RPC at error level, which would bury the test output.
setLogLevel('silent');

/** Rejects with a message naming the call if `promise` has not settled in time. */
function within<T>(promise: Promise<T>, label: string, ms = CALL_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---- the server's own error status, seen through a spy on fetch ----

interface ServerError {
  url: string;
  httpStatus: number;
  status: string | undefined;
  message: string | undefined;
}
const serverErrors: ServerError[] = [];
let firestoreRequests = 0;
const realFetch = globalThis.fetch;
globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const response = await realFetch(input, init);
  if (/\/v1\/projects\/[^/]+\/databases\//.test(url)) {
    firestoreRequests++;
    if (!response.ok) {
      let body: any;
      try {
        body = await response.clone().json();
      } catch {
        body = undefined;
      }
      if (Array.isArray(body)) body = body[0];
      serverErrors.push({ url, httpStatus: response.status, status: body?.error?.status, message: body?.error?.message });
    }
  }
  return response;
};

/**
 * `promise` rejects with the SDK code `sdkCode`; when `serverStatus` is given, the server's last
 * error body carried that status (e.g. INVALID_ARGUMENT, which the lite SDK surfaces as
 * failed-precondition because it only looks at the HTTP status).
 */
async function rejectsWith(promise: Promise<unknown>, sdkCode: string, serverStatus?: string): Promise<void> {
  const before = serverErrors.length;
  await assert.rejects(within(promise, `call expected to fail with ${sdkCode}`), (error: { code?: string; message?: string }) => {
    assert.equal(error.code, sdkCode, `expected ${sdkCode}, got ${error.code}: ${error.message}`);
    return true;
  });
  if (serverStatus !== undefined) {
    const seen = serverErrors.slice(before);
    assert.ok(seen.length > 0, 'the SDK rejected the call without a server error');
    assert.equal(seen[seen.length - 1].status, serverStatus, `server said ${JSON.stringify(seen[seen.length - 1])}`);
  }
}

/** `promise` rejects with `sdkCode` and no request reached the server: the SDK refused it itself. */
async function refusedBySdk(call: () => Promise<unknown>, sdkCode: string): Promise<void> {
  const sent = firestoreRequests;
  await assert.rejects(
    within(
      Promise.resolve().then(call),
      'a call the SDK should refuse',
    ),
    (error: { code?: string; message?: string }) => {
      assert.equal(error.code, sdkCode, `expected ${sdkCode}, got ${error.code}: ${error.message}`);
      return true;
    },
  );
  assert.equal(firestoreRequests, sent, 'the SDK sent a request');
}

// ---- targets ----

async function startGoogleEmulatorTarget(): Promise<Target> {
  const projectId = `demo-lite-${Date.now()}`;
  const reuse = process.env.HEARTH_FIRESTORE_EMULATOR;
  if (reuse) {
    const [host, port] = reuse.split(':');
    return { host, port: Number(port), projectId, apiKey: 'fake-api-key', authUrl: undefined, close: async () => {} };
  }
  const emulator = await startGoogleEmulator();
  if (!emulator) throw new Error('HEARTH_FIRESTORE_TARGET=google-emulator needs gcloud with its Firestore emulator component');
  const [host, port] = emulator.hostPort.split(':');
  return { host, port: Number(port), projectId, apiKey: 'fake-api-key', authUrl: undefined, close: () => emulator.stop() };
}

async function startHearthTarget(): Promise<Target> {
  const server: TestHearth = await startHearth();
  const url = new URL(server.url);
  return {
    host: url.hostname,
    port: Number(url.port),
    projectId: server.projectId,
    apiKey: server.apiKey,
    authUrl: server.url,
    close: () => server.close(),
  };
}

/**
 * A separate client: its own Firebase app, signed in anonymously when the target needs it
 * (`signIn: false` gives a client nobody signed in to).
 */
async function newClient(signIn = true): Promise<Firestore> {
  const app = initializeApp({ apiKey: target.apiKey, projectId: target.projectId }, `firestore-lite-${apps.length}`);
  apps.push(app);
  if (target.authUrl !== undefined) {
    const auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, target.authUrl, { disableWarnings: true });
    if (signIn) await within(signInAnonymously(auth), 'signInAnonymously');
  }
  const firestore = getFirestore(app);
  connectFirestoreEmulator(firestore, target.host, target.port);
  return firestore;
}

before(async () => {
  target = useGoogleEmulator ? await startGoogleEmulatorTarget() : await startHearthTarget();
  db = await newClient();
});

after(async () => {
  await Promise.all(apps.splice(0).map((app) => deleteApp(app)));
  await target?.close();
});

// ---- small helpers ----

const get = (ref: DocumentReference) => within(getDoc(ref), `getDoc(${ref.path})`);
const data = async (ref: DocumentReference): Promise<DocumentData | undefined> => (await get(ref)).data();
const ids = async (q: Query): Promise<string[]> => (await within(getDocs(q), 'getDocs')).docs.map((d) => d.id);
const paths = async (q: Query): Promise<string[]> => (await within(getDocs(q), 'getDocs')).docs.map((d) => d.ref.path);

/** A value nested `levels` maps deep: levels = 1 → {m: 1}. */
function nestedMaps(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { m: value };
  return value;
}

// ---- writes and reads ----

describe('single-document writes and reads', () => {
  test('setDoc replaces the document; getDoc of an existing and of a missing document', async () => {
    const ref = doc(db, 'writes/set');
    await within(setDoc(ref, { a: 1, b: { c: 'x', d: true } }), 'setDoc');
    const first = await get(ref);
    assert.equal(first.exists(), true);
    assert.equal(first.id, 'set');
    assert.equal(first.ref.path, 'writes/set');
    assert.deepEqual(first.data(), { a: 1, b: { c: 'x', d: true } });
    assert.equal(first.get('b.c'), 'x');

    await within(setDoc(ref, { z: 'only' }), 'setDoc again');
    assert.deepEqual(await data(ref), { z: 'only' });

    const missing = await get(doc(db, 'writes/never-written'));
    assert.equal(missing.exists(), false);
    assert.equal(missing.id, 'never-written');
    assert.equal(missing.data(), undefined);

    // A document in a subcollection of a document that does not exist.
    const deep = doc(db, 'writes/ghost/children/kid');
    await within(setDoc(deep, { k: 1 }), 'setDoc deep');
    assert.deepEqual(await data(deep), { k: 1 });
    assert.equal((await get(doc(db, 'writes/ghost'))).exists(), false);
  });

  test('setDoc with merge: true merges nested maps and honours deleteField', async () => {
    const ref = doc(db, 'writes/merge');
    await within(setDoc(ref, { a: 1, keep: 'k', m: { x: 1, y: 2 }, gone: true }), 'setDoc');
    await within(setDoc(ref, { a: 2, m: { y: 3, z: 4 }, gone: deleteField(), fresh: 'f' }, { merge: true }), 'setDoc merge');
    assert.deepEqual(await data(ref), { a: 2, keep: 'k', m: { x: 1, y: 3, z: 4 }, fresh: 'f' });

    // merge on a missing document creates it
    const created = doc(db, 'writes/merge-created');
    await within(setDoc(created, { m: { x: 1 } }, { merge: true }), 'setDoc merge create');
    assert.deepEqual(await data(created), { m: { x: 1 } });

    // merging a map over a non-map replaces it
    await within(setDoc(ref, { keep: { now: 'a map' } }, { merge: true }), 'setDoc merge over scalar');
    assert.deepEqual((await data(ref))!.keep, { now: 'a map' });
  });

  test('setDoc with mergeFields writes only the listed fields (strings and FieldPaths)', async () => {
    const ref = doc(db, 'writes/merge-fields');
    await within(setDoc(ref, { a: 1, b: 1, m: { x: 1, y: 1 }, 'dot.ted': 1 }), 'setDoc');
    await within(
      setDoc(ref, { a: 2, b: 2, m: { x: 2, y: 2 }, 'dot.ted': 2 }, { mergeFields: ['a', 'm.x', new FieldPath('dot.ted')] }),
      'setDoc mergeFields',
    );
    assert.deepEqual(await data(ref), { a: 2, b: 1, m: { x: 2, y: 1 }, 'dot.ted': 2 });

    // a listed field whose value is deleteField() is removed
    await within(setDoc(ref, { b: deleteField() }, { mergeFields: ['b'] }), 'setDoc mergeFields delete');
    assert.deepEqual(await data(ref), { a: 2, m: { x: 2, y: 1 }, 'dot.ted': 2 });

    // a listed map field is replaced whole, not merged
    await within(setDoc(ref, { m: { z: 3 } }, { mergeFields: ['m'] }), 'setDoc mergeFields map');
    assert.deepEqual((await data(ref))!.m, { z: 3 });
  });

  test('updateDoc: dotted field paths, FieldPath with dots in names, deleteField, varargs form', async () => {
    const ref = doc(db, 'writes/update');
    await within(setDoc(ref, { a: 1, m: { x: 1, y: 1, deep: { q: 1 } }, 'a.b': 'literal', list: [1, 2] }), 'setDoc');
    await within(updateDoc(ref, { 'm.x': 10, 'm.deep.r': 2, 'm.newMap.k': 'v', a: deleteField() }), 'updateDoc dotted');
    assert.deepEqual(await data(ref), { m: { x: 10, y: 1, deep: { q: 1, r: 2 }, newMap: { k: 'v' } }, 'a.b': 'literal', list: [1, 2] });

    // FieldPath('a.b') names the top-level field "a.b"; 'a.b' as a string would create a map
    await within(updateDoc(ref, new FieldPath('a.b'), 'changed', new FieldPath('m', 'y'), 20, 'list', ['replaced']), 'updateDoc varargs');
    let now = await data(ref);
    assert.equal(now!['a.b'], 'changed');
    assert.equal(now!.a, undefined);
    assert.equal(now!.m.y, 20);
    assert.deepEqual(now!.list, ['replaced']);

    await within(updateDoc(ref, 'a.b', 'nested now'), 'updateDoc dotted string');
    now = await data(ref);
    assert.deepEqual(now!.a, { b: 'nested now' });
    assert.equal(now!['a.b'], 'changed');

    await within(updateDoc(ref, new FieldPath('a.b'), deleteField(), 'm.deep', deleteField()), 'updateDoc delete');
    now = await data(ref);
    assert.equal('a.b' in now!, false);
    assert.deepEqual(now!.m, { x: 10, y: 20, newMap: { k: 'v' } });
    // a field name that needs backquotes on the wire
    await within(updateDoc(ref, new FieldPath('we`ird', 'sp ace'), 1), 'updateDoc backquote');
    assert.deepEqual((await data(ref))!['we`ird'], { 'sp ace': 1 });
  });

  test('updateDoc on a missing document fails with not-found and creates nothing', async () => {
    const ref = doc(db, 'writes/update-missing');
    await rejectsWith(updateDoc(ref, { a: 1 }), 'not-found', 'NOT_FOUND');
    assert.equal((await get(ref)).exists(), false);
  });

  test('deleteDoc removes the document, keeps its subcollections, and succeeds on a missing one', async () => {
    const ref = doc(db, 'writes/delete');
    const child = doc(db, 'writes/delete/sub/child');
    await within(setDoc(ref, { a: 1 }), 'setDoc');
    await within(setDoc(child, { c: 1 }), 'setDoc child');
    await within(deleteDoc(ref), 'deleteDoc');
    assert.equal((await get(ref)).exists(), false);
    assert.deepEqual(await data(child), { c: 1 });
    await within(deleteDoc(doc(db, 'writes/never-there')), 'deleteDoc missing');
  });

  test('addDoc creates a document under a new 20-character id', async () => {
    const parent = collection(db, 'writes-add');
    const first = await within(addDoc(parent, { n: 1 }), 'addDoc');
    const second = await within(addDoc(parent, { n: 2 }), 'addDoc');
    assert.match(first.id, /^[A-Za-z0-9]{20}$/);
    assert.notEqual(first.id, second.id);
    assert.equal(first.parent.path, 'writes-add');
    assert.deepEqual(await data(first), { n: 1 });
    assert.deepEqual((await ids(query(parent, orderBy('n')))), [first.id, second.id]);
  });
});

// ---- values ----

describe('value types', () => {
  test('every value type round-trips exactly', async () => {
    const ref = doc(db, 'values/all');
    const pointed = doc(db, 'values/target/sub/doc');
    const sent = {
      nul: null,
      yes: true,
      no: false,
      zero: 0,
      int: 42,
      negative: -7,
      maxSafe: Number.MAX_SAFE_INTEGER,
      minSafe: Number.MIN_SAFE_INTEGER,
      double: 1.5,
      tenth: 0.1,
      tiny: 5e-324,
      huge: 1.7976931348623157e308,
      nan: NaN,
      inf: Infinity,
      negInf: -Infinity,
      negZero: -0,
      timestamp: new Timestamp(1_700_000_000, 123_456_000),
      epoch: new Timestamp(0, 0),
      beforeEpoch: new Timestamp(-62_135_596_800, 1_000), // 0001-01-01T00:00:00.000001Z
      empty: '',
      text: 'héllo wörld',
      emoji: '😀 👩‍👩‍👧 𝄞',
      nulChar: 'a\u0000b',
      bytes: Bytes.fromUint8Array(new Uint8Array([0, 1, 127, 128, 255])),
      noBytes: Bytes.fromUint8Array(new Uint8Array([])),
      ref: pointed,
      geo: new GeoPoint(48.8566, 2.3522),
      geoZero: new GeoPoint(0, 0),
      geoEdge: new GeoPoint(-90, 180),
      array: [1, 'two', null, true, { three: 3 }, 4.5, new GeoPoint(1, 2)],
      emptyArray: [],
      emptyMap: {},
      map: { a: { b: { c: [1, { d: 'e' }] } }, 'key with spaces': 1, 'dot.key': 2 },
      vec: vector([1, 2.5, -3, 0]),
    };
    await within(setDoc(ref, sent), 'setDoc');
    for (const snapshot of [await get(ref), (await within(getDocs(query(collection(db, 'values'), where(documentId(), '==', 'all'))), 'getDocs')).docs[0]]) {
      const got = snapshot.data()!;
      assert.deepEqual(Object.keys(got).sort(), Object.keys(sent).sort());
      assert.equal(got.nul, null);
      assert.equal(got.yes, true);
      assert.equal(got.no, false);
      for (const key of ['zero', 'int', 'negative', 'maxSafe', 'minSafe', 'double', 'tenth', 'tiny', 'huge', 'inf', 'negInf'] as const) {
        assert.equal(got[key], sent[key], key);
      }
      assert.ok(Number.isNaN(got.nan), 'NaN');
      // Google's emulator (1.19.9) stores the SDK's {doubleValue: "-0"} as 0.0; production keeps the
      // sign (the JS SDK's own round-trip test once asserted -0.0 against the backend), and so must Hearth.
      if (!useGoogleEmulator) assert.ok(Object.is(got.negZero, -0), `-0 came back as ${got.negZero}`);
      else assert.equal(got.negZero, 0);
      for (const key of ['timestamp', 'epoch', 'beforeEpoch'] as const) {
        assert.ok(got[key] instanceof Timestamp, key);
        assert.equal(got[key].seconds, sent[key].seconds, key);
        assert.equal(got[key].nanoseconds, sent[key].nanoseconds, key);
      }
      assert.equal(got.empty, '');
      assert.equal(got.text, sent.text);
      assert.equal(got.emoji, sent.emoji);
      assert.equal(got.nulChar, sent.nulChar);
      assert.ok(got.bytes instanceof Bytes);
      assert.deepEqual([...got.bytes.toUint8Array()], [0, 1, 127, 128, 255]);
      assert.equal(got.noBytes.toUint8Array().length, 0);
      assert.ok(got.ref instanceof DocumentReference);
      assert.equal(got.ref.path, 'values/target/sub/doc');
      assert.ok(got.geo instanceof GeoPoint && got.geo.isEqual(sent.geo));
      assert.ok(got.geoZero.isEqual(sent.geoZero));
      assert.ok(got.geoEdge.isEqual(sent.geoEdge));
      assert.equal(got.array.length, 7);
      assert.deepEqual(got.array.slice(0, 6), [1, 'two', null, true, { three: 3 }, 4.5]);
      assert.ok(got.array[6].isEqual(new GeoPoint(1, 2)));
      assert.deepEqual(got.emptyArray, []);
      assert.deepEqual(got.emptyMap, {});
      assert.deepEqual(got.map, sent.map);
      assert.ok(got.vec instanceof VectorValue, 'vector() comes back as a VectorValue');
      assert.deepEqual(got.vec.toArray(), [1, 2.5, -3, 0]);
    }
  });

  test('timestamps are kept to the microsecond (nanoseconds are truncated)', async () => {
    const ref = doc(db, 'values/nanos');
    await within(setDoc(ref, { t: new Timestamp(1_700_000_000, 123_456_789), u: new Timestamp(1_700_000_000, 999_999_999) }), 'setDoc');
    const got = (await data(ref))!;
    assert.equal(got.t.nanoseconds, 123_456_000);
    assert.equal(got.u.nanoseconds, 999_999_000);
    assert.equal(got.u.seconds, 1_700_000_000);
  });

  test('a string of 1,048,487 bytes is accepted', async () => {
    const ref = doc(db, 'values/long-string');
    const long = 'é'.repeat(524_243) + 'x'; // 1,048,487 UTF-8 bytes
    await within(setDoc(ref, { s: long }), 'setDoc');
    assert.equal((await data(ref))!.s, long);
  });
});

// ---- queries ----

const FRUITS: Record<string, DocumentData> = {
  q1: { n: 1, s: 'apple', tags: ['red', 'fruit'], grp: 'a', opt: null },
  q2: { n: 2, s: 'banana', tags: ['yellow', 'fruit'], grp: 'a', opt: NaN },
  q3: { n: 3, s: 'cherry', tags: ['red'], grp: 'b', opt: 5 },
  q4: { n: 4, s: 'date', tags: [], grp: 'b' },
  q5: { n: 5.5, s: 'elder', tags: ['green'], grp: 'c', opt: 'x' },
  q6: { n: '6', s: 'fig', tags: 'red', grp: null },
  q7: { s: 'grape', tags: ['green', 'red'], grp: 'c' },
};

describe('queries', () => {
  const fruits = () => collection(db, 'fruits');
  const cg = `grp${Date.now().toString(36)}`;

  before(async () => {
    const batch = writeBatch(db);
    for (const [id, fields] of Object.entries(FRUITS)) batch.set(doc(db, 'fruits', id), fields);
    // collection group: three collections named `cg` at different depths, and one that is not
    batch.set(doc(db, `parent/p1/${cg}/x1`), { k: 1 });
    batch.set(doc(db, `parent/p2/${cg}/x2`), { k: 2 });
    batch.set(doc(db, `${cg}/x3`), { k: 3 });
    batch.set(doc(db, `parent/p1/${cg}/x1/${cg}/x4`), { k: 4 });
    batch.set(doc(db, `${cg}-other/x5`), { k: 5 });
    batch.set(doc(db, `parent/p1/${cg}x/x6`), { k: 6 });
    await within(batch.commit(), 'seed batch');
  });

  test('no filter: every document, by id', async () => {
    assert.deepEqual(await ids(fruits()), ['q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7']);
  });

  test('== and != (which leaves out missing and null fields)', async () => {
    assert.deepEqual(await ids(query(fruits(), where('grp', '==', 'a'))), ['q1', 'q2']);
    assert.deepEqual(await ids(query(fruits(), where('n', '==', 5.5))), ['q5']);
    assert.deepEqual(await ids(query(fruits(), where('n', '==', '6'))), ['q6']);
    assert.deepEqual(await ids(query(fruits(), where('tags', '==', ['red']))), ['q3']);
    assert.deepEqual(await ids(query(fruits(), where('grp', '!=', 'a'))), ['q3', 'q4', 'q5', 'q7']);
    assert.deepEqual(await ids(query(fruits(), where('n', '!=', 3))), ['q1', 'q2', 'q4', 'q5', 'q6']);
  });

  test('<, <=, >, >= match only values of the same type', async () => {
    assert.deepEqual(await ids(query(fruits(), where('n', '<', 3))), ['q1', 'q2']);
    assert.deepEqual(await ids(query(fruits(), where('n', '<=', 3))), ['q1', 'q2', 'q3']);
    assert.deepEqual(await ids(query(fruits(), where('n', '>', 3))), ['q4', 'q5']);
    assert.deepEqual(await ids(query(fruits(), where('n', '>=', 3))), ['q3', 'q4', 'q5']);
    assert.deepEqual(await ids(query(fruits(), where('n', '>', 2.5))), ['q3', 'q4', 'q5']);
    assert.deepEqual(await ids(query(fruits(), where('n', '<', 'z'))), ['q6']);
    assert.deepEqual(await ids(query(fruits(), where('s', '>=', 'cherry'), where('s', '<', 'fig'))), ['q3', 'q4', 'q5']);
  });

  test('array-contains and array-contains-any', async () => {
    assert.deepEqual(await ids(query(fruits(), where('tags', 'array-contains', 'red'))), ['q1', 'q3', 'q7']);
    assert.deepEqual(await ids(query(fruits(), where('tags', 'array-contains-any', ['green', 'yellow']))), ['q2', 'q5', 'q7']);
  });

  test('in and not-in', async () => {
    assert.deepEqual(await ids(query(fruits(), where('s', 'in', ['apple', 'cherry', 'zzz']))), ['q1', 'q3']);
    assert.deepEqual(await ids(query(fruits(), where('n', 'in', [2, 5.5, '6']))), ['q2', 'q5', 'q6']);
    assert.deepEqual(await ids(query(fruits(), where('tags', 'in', [['red'], ['green', 'red']]))), ['q3', 'q7']);
    assert.deepEqual(await ids(query(fruits(), where('grp', 'not-in', ['a', 'b']))), ['q5', 'q7']);
    assert.deepEqual(await ids(query(fruits(), where('n', 'not-in', [1, 2, 3]))), ['q4', 'q5', 'q6']);
  });

  test('== null and == NaN (IS_NULL / IS_NAN), != null and != NaN', async () => {
    assert.deepEqual(await ids(query(fruits(), where('opt', '==', null))), ['q1']);
    assert.deepEqual(await ids(query(fruits(), where('grp', '==', null))), ['q6']);
    assert.deepEqual(await ids(query(fruits(), where('opt', '==', NaN))), ['q2']);
    // ordered by opt: NaN, then numbers, then strings
    assert.deepEqual(await ids(query(fruits(), where('opt', '!=', null))), ['q2', 'q3', 'q5']);
    assert.deepEqual(await ids(query(fruits(), where('opt', '!=', NaN))), ['q3', 'q5']);
  });

  test('and() and or() composites', async () => {
    assert.deepEqual(await ids(query(fruits(), and(where('grp', '==', 'b'), where('n', '>', 3)))), ['q4']);
    assert.deepEqual(await ids(query(fruits(), or(where('grp', '==', 'a'), where('s', '==', 'grape')))), ['q1', 'q2', 'q7']);
    // the inequality on n orders by n, which leaves out q7 (no n)
    assert.deepEqual(await ids(query(fruits(), or(where('grp', '==', 'c'), where('n', '<', 2)))), ['q1', 'q5']);
    assert.deepEqual(
      await ids(query(fruits(), or(and(where('grp', '==', 'c'), where('s', '==', 'grape')), and(where('grp', '==', 'a'), where('s', '==', 'banana'))))),
      ['q2', 'q7'],
    );
    assert.deepEqual(await ids(query(fruits(), or(where('tags', 'array-contains', 'green'), where('s', 'in', ['apple', 'date'])))), ['q1', 'q4', 'q5', 'q7']);
  });

  test('inequalities on several fields', async () => {
    assert.deepEqual(await ids(query(fruits(), where('n', '>', 1), where('s', '<', 'e'))), ['q2', 'q3', 'q4']);
  });

  test('orderBy ascending and descending, on one field and on several', async () => {
    // documents without n are left out; strings sort after numbers
    assert.deepEqual(await ids(query(fruits(), orderBy('n'))), ['q1', 'q2', 'q3', 'q4', 'q5', 'q6']);
    assert.deepEqual(await ids(query(fruits(), orderBy('n', 'desc'))), ['q6', 'q5', 'q4', 'q3', 'q2', 'q1']);
    assert.deepEqual(await ids(query(fruits(), orderBy('grp'), orderBy('n', 'desc'))), ['q6', 'q2', 'q1', 'q4', 'q3', 'q5']);
    assert.deepEqual(await ids(query(fruits(), orderBy('grp', 'desc'), orderBy('s'))), ['q5', 'q7', 'q3', 'q4', 'q1', 'q2', 'q6']);
    // ties are broken by document name, in the direction of the last orderBy
    assert.deepEqual(await ids(query(fruits(), orderBy('grp', 'desc'))), ['q7', 'q5', 'q4', 'q3', 'q2', 'q1', 'q6']);
    assert.deepEqual(await ids(query(fruits(), where('grp', '==', 'a'), orderBy('s', 'desc'))), ['q2', 'q1']);
  });

  test('limit and limitToLast', async () => {
    assert.deepEqual(await ids(query(fruits(), orderBy('n'), limit(2))), ['q1', 'q2']);
    assert.deepEqual(await ids(query(fruits(), orderBy('n'), limitToLast(2))), ['q5', 'q6']);
    assert.deepEqual(await ids(query(fruits(), orderBy('n', 'desc'), limitToLast(2))), ['q2', 'q1']);
    assert.deepEqual(await ids(query(fruits(), where('grp', '==', 'b'), limit(1))), ['q3']);
  });

  test('startAt, startAfter, endAt, endBefore with values', async () => {
    const byN = (...constraints: QueryConstraint[]) => ids(query(fruits(), orderBy('n'), ...constraints));
    assert.deepEqual(await byN(startAt(2)), ['q2', 'q3', 'q4', 'q5', 'q6']);
    assert.deepEqual(await byN(startAfter(2)), ['q3', 'q4', 'q5', 'q6']);
    assert.deepEqual(await byN(endAt(4)), ['q1', 'q2', 'q3', 'q4']);
    assert.deepEqual(await byN(endBefore(4)), ['q1', 'q2', 'q3']);
    assert.deepEqual(await byN(startAt(2), endBefore(5.5)), ['q2', 'q3', 'q4']);
    assert.deepEqual(await byN(startAfter(2.5), endAt(5.5)), ['q3', 'q4', 'q5']);
    assert.deepEqual(await ids(query(fruits(), orderBy('n', 'desc'), startAt(4), endAt(2))), ['q4', 'q3', 'q2']);
    assert.deepEqual(await ids(query(fruits(), orderBy('grp'), orderBy('s'), startAt('b', 'date'))), ['q4', 'q5', 'q7']);
    assert.deepEqual(await ids(query(fruits(), orderBy('n'), startAfter(1), limit(2))), ['q2', 'q3']);
    assert.deepEqual(await ids(query(fruits(), orderBy('n'), startAt(1), limitToLast(2), endAt(4))), ['q3', 'q4']);
  });

  test('cursors from a DocumentSnapshot (ties broken by document name)', async () => {
    const snap = (id: string): Promise<DocumentSnapshot> => get(doc(db, 'fruits', id));
    // by grp: q6 (null), q1, q2 (a), q3, q4 (b), q5, q7 (c)
    assert.deepEqual(await ids(query(fruits(), orderBy('grp'), startAfter(await snap('q1')))), ['q2', 'q3', 'q4', 'q5', 'q7']);
    assert.deepEqual(await ids(query(fruits(), orderBy('grp'), startAt(await snap('q3')))), ['q3', 'q4', 'q5', 'q7']);
    assert.deepEqual(await ids(query(fruits(), orderBy('grp'), startAt(await snap('q2')), endBefore(await snap('q5')))), ['q2', 'q3', 'q4']);
    assert.deepEqual(await ids(query(fruits(), orderBy('grp'), endAt(await snap('q5')))), ['q6', 'q1', 'q2', 'q3', 'q4', 'q5']);
    assert.deepEqual(await ids(query(fruits(), orderBy('grp', 'desc'), startAfter(await snap('q4')))), ['q3', 'q2', 'q1', 'q6']);
    // no orderBy: the cursor is on the document name
    assert.deepEqual(await ids(query(fruits(), startAfter(await snap('q5')))), ['q6', 'q7']);
  });

  test('collectionGroup queries', async () => {
    assert.deepEqual(await paths(collectionGroup(db, cg)), [`${cg}/x3`, `parent/p1/${cg}/x1`, `parent/p1/${cg}/x1/${cg}/x4`, `parent/p2/${cg}/x2`]);
    assert.deepEqual(await paths(query(collectionGroup(db, cg), where('k', '>=', 2))), [`parent/p2/${cg}/x2`, `${cg}/x3`, `parent/p1/${cg}/x1/${cg}/x4`]);
    assert.deepEqual(await paths(query(collectionGroup(db, cg), orderBy('k', 'desc'), limit(2))), [`parent/p1/${cg}/x1/${cg}/x4`, `${cg}/x3`]);
    assert.deepEqual(
      await paths(query(collectionGroup(db, cg), where(documentId(), '>=', `parent/p1/${cg}/x1/${cg}/x4`))),
      [`parent/p1/${cg}/x1/${cg}/x4`, `parent/p2/${cg}/x2`],
    );
  });

  test('documentId() filters and ordering', async () => {
    assert.deepEqual(await ids(query(fruits(), where(documentId(), '==', 'q3'))), ['q3']);
    assert.deepEqual(await ids(query(fruits(), where(documentId(), '==', doc(db, 'fruits/q4')))), ['q4']);
    assert.deepEqual(await ids(query(fruits(), where(documentId(), 'in', ['q1', 'q4', 'nope']))), ['q1', 'q4']);
    assert.deepEqual(await ids(query(fruits(), where(documentId(), 'not-in', ['q1', 'q4']))), ['q2', 'q3', 'q5', 'q6', 'q7']);
    assert.deepEqual(await ids(query(fruits(), where(documentId(), '>=', 'q5'))), ['q5', 'q6', 'q7']);
    assert.deepEqual(await ids(query(fruits(), where(documentId(), '!=', 'q5'), limit(2))), ['q1', 'q2']);
    // (ordering by the name descending with no other field is refused by the emulator, "Firestore does
    // not support descending key scans", and needs an index in production; with an equality it is fine)
    assert.deepEqual(await ids(query(fruits(), where('grp', '==', 'b'), orderBy(documentId(), 'desc'))), ['q4', 'q3']);
  });
});

// ---- aggregations ----

describe('aggregations', () => {
  before(async () => {
    const batch = writeBatch(db);
    for (const [id, fields] of Object.entries(FRUITS)) batch.set(doc(db, 'agg', id), fields);
    await within(batch.commit(), 'seed batch');
  });
  const agg = () => collection(db, 'agg');

  test('getCount', async () => {
    assert.equal((await within(getCount(agg()), 'getCount')).data().count, 7);
    assert.equal((await within(getCount(query(agg(), where('grp', '==', 'a'))), 'getCount')).data().count, 2);
    assert.equal((await within(getCount(query(agg(), orderBy('n'), limit(3))), 'getCount')).data().count, 3);
    assert.equal((await within(getCount(collection(db, 'agg-empty')), 'getCount')).data().count, 0);
  });

  test('count, sum, average together (getAggregate, the lite getAggregateFromServer)', async () => {
    const all = (await within(getAggregate(agg(), { c: count(), total: sum('n'), mean: average('n') }), 'getAggregate')).data();
    // Several aggregations count only the documents that have every aggregated field (q7 has no n),
    // as the JS SDK's integration test "performs aggregations on documents with all aggregated fields"
    // asserts against production; sum and average then skip the non-number '6'.
    assert.deepEqual(all, { c: 6, total: 15.5, mean: 3.1 });
    const alone = (await within(getAggregate(agg(), { c: count() }), 'getAggregate')).data();
    assert.deepEqual(alone, { c: 7 });
    const twoFields = (await within(getAggregate(agg(), { c: count(), total: sum('n'), optMean: average('opt') }), 'getAggregate')).data();
    assert.equal(twoFields.c, 4, 'documents with both n and opt: q1, q2, q3, q5');
    assert.equal(twoFields.total, 11.5);
    assert.ok(Number.isNaN(twoFields.optMean));

    const ints = (await within(getAggregate(query(agg(), where('grp', 'in', ['a', 'b'])), { total: sum('n'), mean: average('n'), c: count() }), 'getAggregate')).data();
    assert.deepEqual(ints, { total: 10, mean: 2.5, c: 4 });

    const none = (await within(getAggregate(query(agg(), where('grp', '==', 'nobody')), { total: sum('n'), mean: average('n'), c: count() }), 'getAggregate')).data();
    assert.deepEqual(none, { total: 0, mean: null, c: 0 });

    const opt = (await within(getAggregate(agg(), { total: sum('opt'), mean: average('opt') }), 'getAggregate')).data();
    assert.ok(Number.isNaN(opt.total) && Number.isNaN(opt.mean), `NaN anywhere gives NaN: ${JSON.stringify(opt)}`);
  });
});

// ---- field transforms ----

describe('field transforms', () => {
  test('serverTimestamp() gives every field of a write the same server time', async () => {
    const ref = doc(db, 'transforms/time');
    const before = Date.now();
    await within(setDoc(ref, { at: serverTimestamp(), nested: { at: serverTimestamp() }, plain: 1 }), 'setDoc');
    const got = (await data(ref))!;
    assert.ok(got.at instanceof Timestamp);
    assert.ok(got.at.isEqual(got.nested.at));
    assert.ok(Math.abs(got.at.toMillis() - before) < 60_000, `server time ${got.at.toDate().toISOString()} is far from the local clock`);
    await within(updateDoc(ref, { later: serverTimestamp() }), 'updateDoc');
    const later = (await data(ref))!;
    assert.ok(later.later.toMillis() >= got.at.toMillis());
    assert.ok(later.at.isEqual(got.at));
  });

  test('increment() on ints, doubles, a missing field, a non-number and a missing document', async () => {
    const ref = doc(db, 'transforms/counter');
    await within(setDoc(ref, { i: 1, d: 1.5, s: 'text' }), 'setDoc');
    await within(updateDoc(ref, { i: increment(2), d: increment(2), fresh: increment(5), s: increment(1), f: increment(0.25) }), 'updateDoc');
    assert.deepEqual(await data(ref), { i: 3, d: 3.5, s: 1, fresh: 5, f: 0.25 });
    await within(updateDoc(ref, { i: increment(0.5), d: increment(-3.5) }), 'updateDoc');
    const got = (await data(ref))!;
    assert.equal(got.i, 3.5);
    assert.equal(got.d, 0);

    const created = doc(db, 'transforms/counter-created');
    await within(setDoc(created, { n: increment(3) }, { merge: true }), 'setDoc merge increment');
    await within(setDoc(created, { n: increment(3) }, { merge: true }), 'setDoc merge increment');
    assert.deepEqual(await data(created), { n: 6 });

    const big = doc(db, 'transforms/counter-big');
    await within(setDoc(big, { n: Number.MAX_SAFE_INTEGER - 10 }), 'setDoc');
    await within(updateDoc(big, { n: increment(10) }), 'updateDoc');
    assert.equal((await data(big))!.n, Number.MAX_SAFE_INTEGER);
  });

  test('maximum() and minimum()', async () => {
    const ref = doc(db, 'transforms/minmax');
    await within(setDoc(ref, { hi: 5, lo: 5 }), 'setDoc');
    await within(updateDoc(ref, { hi: maximum(7), lo: minimum(7) }), 'updateDoc');
    await within(updateDoc(ref, { hi: maximum(6), lo: minimum(2.5), fresh: maximum(1) }), 'updateDoc');
    assert.deepEqual(await data(ref), { hi: 7, lo: 2.5, fresh: 1 });
  });

  test('arrayUnion() and arrayRemove()', async () => {
    const ref = doc(db, 'transforms/array');
    await within(setDoc(ref, { a: [1, 2, 2, 'x'], m: [{ k: 1 }, { k: 2 }], s: 'not an array' }), 'setDoc');
    await within(updateDoc(ref, { a: arrayUnion(2, 3, 'x', 'y', 3), fresh: arrayUnion('new'), m: arrayUnion({ k: 1 }, { k: 3 }) }), 'union');
    let got = (await data(ref))!;
    assert.deepEqual(got.a, [1, 2, 2, 'x', 3, 'y']);
    assert.deepEqual(got.fresh, ['new']);
    assert.deepEqual(got.m, [{ k: 1 }, { k: 2 }, { k: 3 }]);
    await within(updateDoc(ref, { a: arrayRemove(2, 'y', 'absent'), m: arrayRemove({ k: 2 }), gone: arrayRemove(1), s: arrayUnion('now') }), 'remove');
    got = (await data(ref))!;
    assert.deepEqual(got.a, [1, 'x', 3]);
    assert.deepEqual(got.m, [{ k: 1 }, { k: 3 }]);
    assert.deepEqual(got.gone, []);
    assert.deepEqual(got.s, ['now']);
  });
});

// ---- batches and transactions ----

describe('batched writes', () => {
  test('a batch applies set, update and delete together', async () => {
    const a = doc(db, 'batch/a');
    const b = doc(db, 'batch/b');
    const c = doc(db, 'batch/c');
    await within(setDoc(b, { v: 1 }), 'setDoc');
    await within(setDoc(c, { v: 1 }), 'setDoc');
    const batch = writeBatch(db);
    batch.set(a, { v: 'new' });
    batch.update(b, { v: increment(1), 'm.k': true });
    batch.delete(c);
    batch.set(a, { extra: 1 }, { merge: true }); // a second write to the same document, in order
    await within(batch.commit(), 'batch.commit');
    assert.deepEqual(await data(a), { v: 'new', extra: 1 });
    assert.deepEqual(await data(b), { v: 2, m: { k: true } });
    assert.equal((await get(c)).exists(), false);
  });

  test('a batch is atomic: one failing write (update of a missing document) leaves nothing written', async () => {
    const a = doc(db, 'batch-atomic/a');
    const b = doc(db, 'batch-atomic/b');
    const kept = doc(db, 'batch-atomic/kept');
    await within(setDoc(kept, { v: 'before' }), 'setDoc');
    const batch = writeBatch(db);
    batch.set(a, { v: 1 });
    batch.update(kept, { v: 'after' });
    batch.delete(b);
    batch.update(doc(db, 'batch-atomic/missing'), { v: 1 });
    batch.set(b, { v: 2 });
    await rejectsWith(batch.commit(), 'not-found', 'NOT_FOUND');
    assert.equal((await get(a)).exists(), false);
    assert.equal((await get(b)).exists(), false);
    assert.equal((await get(doc(db, 'batch-atomic/missing'))).exists(), false);
    assert.deepEqual(await data(kept), { v: 'before' });
  });

  test('a batch of 600 writes commits (there is no 500-write limit any more)', async () => {
    const batch = writeBatch(db);
    for (let i = 0; i < 600; i++) batch.set(doc(db, 'batch-big', `d${String(i).padStart(3, '0')}`), { i });
    await within(batch.commit(), 'batch.commit');
    assert.equal((await within(getCount(collection(db, 'batch-big')), 'getCount')).data().count, 600);
  });
});

describe('transactions', () => {
  test('read then write; the update function result is returned; delete in a transaction', async () => {
    const ref = doc(db, 'tx/simple');
    const other = doc(db, 'tx/simple-other');
    await within(setDoc(ref, { n: 41 }), 'setDoc');
    await within(setDoc(other, { doomed: true }), 'setDoc');
    const result = await within(
      runTransaction(db, async (tx) => {
        const snapshot = await tx.get(ref);
        const next = (snapshot.data()!.n as number) + 1;
        tx.update(ref, { n: next });
        tx.delete(other);
        return next;
      }),
      'runTransaction',
    );
    assert.equal(result, 42);
    assert.deepEqual(await data(ref), { n: 42 });
    assert.equal((await get(other)).exists(), false);
  });

  test('a document read but not written is verified: a change to it in between makes the transaction retry', async () => {
    const source = doc(db, 'tx/verify-source');
    const dest = doc(db, 'tx/verify-dest');
    await within(setDoc(source, { v: 'first' }), 'setDoc');
    const meddler = await newClient();
    let attempts = 0;
    await within(
      runTransaction(db, async (tx) => {
        attempts++;
        const snapshot = await tx.get(source);
        if (attempts === 1) await within(setDoc(doc(meddler, 'tx/verify-source'), { v: 'second' }), 'meddling setDoc');
        tx.set(dest, { copied: snapshot.data()!.v });
      }),
      'runTransaction',
      30_000,
    );
    assert.equal(attempts, 2);
    assert.deepEqual(await data(dest), { copied: 'second' });
  });

  test('contention: two clients, ten concurrent increments each, lose no update', { timeout: 120_000 }, async () => {
    const ref = doc(db, 'tx/contended');
    await within(setDoc(ref, { n: 0 }), 'setDoc');
    const clients = [db, await newClient()];
    const perClient = 10;
    let attempts = 0;
    const runs = clients.flatMap((client) =>
      Array.from({ length: perClient }, () =>
        runTransaction(
          client,
          async (tx) => {
            attempts++;
            const snapshot = await tx.get(doc(client, 'tx/contended'));
            tx.update(doc(client, 'tx/contended'), { n: (snapshot.data()!.n as number) + 1 });
          },
          { maxAttempts: 25 },
        ),
      ),
    );
    const outcomes = await within(Promise.allSettled(runs), 'contended transactions', 90_000);
    const failures = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
    assert.deepEqual(failures, []);
    assert.equal((await data(ref))!.n, clients.length * perClient);
    assert.ok(attempts > clients.length * perClient, `no transaction had to retry (${attempts} attempts): was there any contention?`);
  });

  test('contention on a missing document: read it, create it if missing, else increment', { timeout: 120_000 }, async () => {
    const clients = [db, await newClient()];
    const perClient = 10;
    const runs = clients.flatMap((client) =>
      Array.from({ length: perClient }, (_, i) =>
        runTransaction(
          client,
          async (tx) => {
            const ref = doc(client, 'tx/created-under-contention');
            const snapshot = await tx.get(ref);
            if (snapshot.exists()) tx.update(ref, { n: (snapshot.data().n as number) + 1 });
            else tx.set(ref, { n: 1, first: i });
          },
          { maxAttempts: 25 },
        ),
      ),
    );
    const outcomes = await within(Promise.allSettled(runs), 'contended transactions', 90_000);
    const failures = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
    assert.deepEqual(failures, []);
    assert.equal((await data(doc(db, 'tx/created-under-contention')))!.n, clients.length * perClient);
  });

  test('a transaction that reads a missing document and creates it; a failing update function writes nothing', async () => {
    const ref = doc(db, 'tx/fresh');
    const created = await within(
      runTransaction(db, async (tx) => {
        const snapshot = await tx.get(ref);
        assert.equal(snapshot.exists(), false);
        tx.set(ref, { made: true });
        return 'made';
      }),
      'runTransaction',
    );
    assert.equal(created, 'made');
    assert.deepEqual(await data(ref), { made: true });

    const untouched = doc(db, 'tx/untouched');
    await assert.rejects(
      within(
        runTransaction(db, async (tx) => {
          await tx.get(untouched);
          tx.set(untouched, { v: 1 });
          throw new Error('changed my mind');
        }),
        'runTransaction',
      ),
      /changed my mind/,
    );
    assert.equal((await get(untouched)).exists(), false);
  });
});

// ---- errors ----

describe('errors', () => {
  test('a document over 1 MiB is refused by the server (INVALID_ARGUMENT)', async () => {
    const ref = doc(db, 'errors/too-big');
    const half = 'x'.repeat(600_000);
    await rejectsWith(setDoc(ref, { a: half, b: half }), 'failed-precondition', 'INVALID_ARGUMENT');
    assert.equal((await get(ref)).exists(), false);
    await rejectsWith(setDoc(ref, { s: 'x'.repeat(1_048_488) }), 'failed-precondition', 'INVALID_ARGUMENT');
  });

  test('values nested deeper than 20 levels are refused (INVALID_ARGUMENT); 20 is fine', async () => {
    await within(setDoc(doc(db, 'errors/deep-20'), { v: nestedMaps(20) }), 'setDoc depth 20');
    assert.deepEqual((await data(doc(db, 'errors/deep-20')))!.v, nestedMaps(20));
    await rejectsWith(setDoc(doc(db, 'errors/deep-21'), { v: nestedMaps(21) }), 'failed-precondition', 'INVALID_ARGUMENT');
    let mixed: unknown = 1;
    for (let i = 0; i < 21; i++) mixed = i % 2 ? { m: mixed } : [mixed];
    await rejectsWith(setDoc(doc(db, 'errors/deep-mixed'), { v: mixed }), 'failed-precondition', 'INVALID_ARGUMENT');
    assert.equal((await get(doc(db, 'errors/deep-21'))).exists(), false);
  });

  test('a field named __x__ is reserved: the SDK refuses it before sending (invalid-argument)', async () => {
    const ref = doc(db, 'errors/reserved');
    await refusedBySdk(() => setDoc(ref, { __x__: 1 }), 'invalid-argument');
    await refusedBySdk(() => setDoc(ref, { ok: { __nested__: 1 } }), 'invalid-argument');
    await refusedBySdk(() => updateDoc(ref, { __x__: 1 }), 'invalid-argument');
    await refusedBySdk(() => addDoc(collection(db, 'errors'), { __x__: 1 }), 'invalid-argument');
  });

  test('in / array-contains-any with 31 values and not-in with 11 are refused by the server (INVALID_ARGUMENT)', async () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => i);
    const errors = collection(db, 'errors');
    await rejectsWith(getDocs(query(errors, where('a', 'in', values(31)))), 'failed-precondition', 'INVALID_ARGUMENT');
    await rejectsWith(getDocs(query(errors, where('a', 'array-contains-any', values(31)))), 'failed-precondition', 'INVALID_ARGUMENT');
    await rejectsWith(getDocs(query(errors, where('a', 'not-in', values(11)))), 'failed-precondition', 'INVALID_ARGUMENT');
    // the limits themselves are fine
    await within(getDocs(query(errors, where('a', 'in', values(30)))), 'in with 30');
    await within(getDocs(query(errors, where('a', 'not-in', values(10)))), 'not-in with 10');
  });

  test('query shapes the SDK refuses itself', async () => {
    const errors = collection(db, 'errors');
    await refusedBySdk(() => getDocs(query(errors, where('a', 'in', []))), 'invalid-argument');
    await refusedBySdk(() => getDocs(query(errors, where('a', 'not-in', [1]), where('b', '!=', 2))), 'invalid-argument');
    await refusedBySdk(() => getDocs(query(errors, limitToLast(1))), 'unimplemented');
  });

  test('permission-denied when no user is signed in', { skip: useGoogleEmulator && 'the emulator without rules is open' }, async () => {
    const anonymous = await newClient(false);
    await rejectsWith(getDoc(doc(anonymous, 'writes/set')), 'permission-denied', 'PERMISSION_DENIED');
    await rejectsWith(setDoc(doc(anonymous, 'errors/unsigned'), { a: 1 }), 'permission-denied', 'PERMISSION_DENIED');
    await rejectsWith(getDocs(collection(anonymous, 'fruits')), 'permission-denied', 'PERMISSION_DENIED');
    await rejectsWith(getCount(collection(anonymous, 'fruits')), 'permission-denied', 'PERMISSION_DENIED');
    assert.equal((await get(doc(db, 'errors/unsigned'))).exists(), false);
  });
});
