/**
 * Cloud Firestore over gRPC, the transport of the Node SDKs: firebase-admin (FIRESTORE_EMULATOR_HOST,
 * `Bearer owner`, server transactions) and the full `firebase/firestore` SDK running in Node (Listen
 * and Write streams, client transactions with `verify` writes). Every unary, server-streaming and
 * bidirectional RPC of google.firestore.v1.Firestore is used at least once.
 *
 * It runs against Hearth (in-process, --dev; gRPC shares the HTTP port). With
 * HEARTH_FIRESTORE_TARGET=google-emulator the same assertions run against Google's official
 * emulator, which is how they were checked; set HEARTH_FIRESTORE_EMULATOR=127.0.0.1:PORT as well to
 * reuse a running emulator. Tests about Hearth itself (sign-in required, the shared port, a
 * separate gRPC port) are skipped there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App as AdminApp } from 'firebase-admin/app';
import {
  AggregateField,
  FieldPath as AdminFieldPath,
  FieldValue,
  Filter,
  GeoPoint as AdminGeoPoint,
  Timestamp as AdminTimestamp,
  getFirestore as getAdminFirestore,
  setLogFunction,
  type CollectionReference,
  type DocumentSnapshot as AdminDocumentSnapshot,
  type Firestore as AdminFirestore,
  type Query as AdminQuery,
  type QuerySnapshot as AdminQuerySnapshot,
} from 'firebase-admin/firestore';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, inMemoryPersistence, initializeAuth, signInAnonymously } from 'firebase/auth';
import {
  Bytes,
  GeoPoint,
  Timestamp,
  arrayUnion,
  average,
  collection,
  connectFirestoreEmulator,
  deleteDoc,
  deleteField,
  doc,
  getAggregateFromServer,
  getCountFromServer,
  getDoc,
  getDocFromServer,
  getDocs,
  getFirestore,
  increment,
  limit,
  onSnapshot,
  orderBy,
  query,
  runTransaction,
  serverTimestamp,
  setDoc,
  setLogLevel,
  sum,
  terminate,
  updateDoc,
  where,
  writeBatch,
  type DocumentChangeType,
  type DocumentSnapshot,
  type Firestore,
  type QuerySnapshot,
} from 'firebase/firestore';
import * as grpc from '@grpc/grpc-js';
import { loadFirestoreRoot, messageFromJson, messageToJson } from '../packages/server/src/firestore/api/grpc-codec.js';
import { startGoogleEmulator } from './helpers/firestore-emulator.js';
import { freePort, startHearth, type TestHearth } from './helpers/hearth.js';

const useGoogleEmulator = process.env.HEARTH_FIRESTORE_TARGET === 'google-emulator';
/** Per SDK call: the Node SDKs retry a closed or failing port for minutes; this names the call that hung. */
const CALL_TIMEOUT_MS = 15_000;
/** Collections are named per run, so a reused emulator starts clean. */
const run = Date.now().toString(36);

interface Target {
  /** 127.0.0.1:PORT, for FIRESTORE_EMULATOR_HOST and connectFirestoreEmulator */
  hostPort: string;
  projectId: string;
  apiKey: string;
  /** Where the Auth API lives; undefined for Google's emulator, which takes unsigned requests. */
  authUrl: string | undefined;
  hearth: TestHearth | undefined;
  close(): Promise<void>;
}

let target: Target;
let adminApp: AdminApp;
let admin: AdminFirestore;
const adminApps: AdminApp[] = [];
const clientApps: Array<{ app: FirebaseApp; db: Firestore }> = [];

setLogLevel('silent');
setLogFunction(null);

function within<T>(promise: Promise<T>, label: string, ms = CALL_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `promise` rejects with this code: a gRPC status number (admin) or an SDK code string (firebase). */
async function rejectsWith(promise: Promise<unknown>, code: number | string, label: string): Promise<void> {
  await assert.rejects(within(promise, label), (error: { code?: unknown; message?: string }) => {
    assert.equal(error.code, code, `${label}: expected ${code}, got ${String(error.code)}: ${error.message}`);
    return true;
  });
}

async function startTarget(): Promise<Target> {
  if (!useGoogleEmulator) {
    const server = await startHearth();
    return { hostPort: server.hostPort, projectId: server.projectId, apiKey: server.apiKey, authUrl: server.url, hearth: server, close: () => server.close() };
  }
  const projectId = `demo-grpc-${run}`;
  const reuse = process.env.HEARTH_FIRESTORE_EMULATOR;
  if (reuse) return { hostPort: reuse, projectId, apiKey: 'fake-api-key', authUrl: undefined, hearth: undefined, close: async () => {} };
  const emulator = await startGoogleEmulator();
  if (!emulator) throw new Error('HEARTH_FIRESTORE_TARGET=google-emulator needs gcloud with its Firestore emulator component');
  return { hostPort: emulator.hostPort, projectId, apiKey: 'fake-api-key', authUrl: undefined, hearth: undefined, close: () => emulator.stop() };
}

/** Another firebase-admin instance (FIRESTORE_EMULATOR_HOST is read when it is created). */
function newAdmin(name: string, hostPort = target.hostPort, settings: { useBigInt?: boolean } = {}): AdminFirestore {
  const saved = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = hostPort;
  try {
    const app = initializeAdminApp({ projectId: target.projectId }, `grpc-${name}-${run}`);
    adminApps.push(app);
    const db = getAdminFirestore(app);
    if (settings.useBigInt) db.settings({ useBigInt: true });
    return db;
  } finally {
    process.env.FIRESTORE_EMULATOR_HOST = saved;
  }
}

/** A full-SDK client in Node (gRPC), signed in anonymously unless `signIn` is false. */
async function newClient(signIn = true): Promise<Firestore> {
  const app = initializeApp({ apiKey: target.apiKey, projectId: target.projectId }, `grpc-client-${clientApps.length}`);
  if (target.authUrl !== undefined) {
    const auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, target.authUrl, { disableWarnings: true });
    if (signIn) await within(signInAnonymously(auth), 'signInAnonymously');
  }
  const db = getFirestore(app);
  const [host, port] = target.hostPort.split(':');
  connectFirestoreEmulator(db, host, Number(port));
  clientApps.push({ app, db });
  return db;
}

before(async () => {
  target = await startTarget();
  process.env.FIRESTORE_EMULATOR_HOST = target.hostPort;
  adminApp = initializeAdminApp({ projectId: target.projectId }, `grpc-admin-${run}`);
  admin = getAdminFirestore(adminApp);
});

after(async () => {
  // Clients first: against a closed port they would retry for minutes.
  await Promise.all(clientApps.splice(0).map(async ({ app, db }) => {
    await within(terminate(db), 'terminate client').catch(() => undefined);
    await deleteApp(app);
  }));
  for (const app of [adminApp, ...adminApps.splice(0)]) {
    if (!app) continue;
    await within(getAdminFirestore(app).terminate(), 'terminate admin').catch(() => undefined);
    await deleteAdminApp(app);
  }
  await target?.close();
});

const coll = (name: string): CollectionReference => admin.collection(`${name}-${run}`);
const adminIds = async (q: AdminQuery, label = 'query'): Promise<string[]> => (await within(q.get(), label)).docs.map((d) => d.id);

/**
 * Snapshots from a listener, in order; `until` waits for the first one (already seen or still to
 * come) that passes a check, so the assertions do not depend on how many intermediate snapshots a
 * server sends.
 */
class Snapshots<T> {
  readonly seen: T[] = [];
  private wake: (() => void) | undefined;
  error: Error | undefined;
  stop: () => void = () => undefined;

  push = (snapshot: T): void => {
    this.seen.push(snapshot);
    this.wake?.();
  };

  fail = (error: Error): void => {
    this.error = error;
    this.wake?.();
  };

  async until(check: (snapshot: T) => boolean, label: string, from = 0): Promise<{ snapshot: T; index: number }> {
    const deadline = Date.now() + CALL_TIMEOUT_MS;
    for (;;) {
      const index = this.seen.findIndex((snapshot, i) => i >= from && check(snapshot));
      if (index >= 0) return { snapshot: this.seen[index], index };
      if (this.error) throw this.error;
      if (Date.now() > deadline) throw new Error(`no snapshot where ${label} within ${CALL_TIMEOUT_MS} ms (saw ${this.seen.length})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}

// ---- firebase-admin ----------------------------------------------------------------------------

describe('firebase-admin over gRPC', () => {
  test('set and get round-trip every value type', async () => {
    const ref = coll('values').doc('all');
    const written = await within(
      ref.set({
        nothing: null,
        yes: true,
        int: 42,
        negative: -7,
        double: 1.5,
        nan: NaN,
        negZero: -0,
        inf: Infinity,
        minusInf: -Infinity,
        text: 'héllo 🔥',
        bytes: Buffer.from([0, 1, 254, 255]),
        time: new AdminTimestamp(1700000000, 123456789),
        geo: new AdminGeoPoint(45.5, -73.25),
        zeroGeo: new AdminGeoPoint(0, 0),
        ref: admin.doc('other/doc'),
        array: [1, 'two', null, { three: 3 }],
        map: { nested: { deep: true } },
        emptyMap: {},
        emptyArray: [],
        vector: FieldValue.vector([1, 2.5]),
      }),
      'set',
    );
    const snap = await within(ref.get(), 'get');
    assert.equal(snap.exists, true);
    assert.ok(snap.updateTime!.isEqual(written.writeTime), 'updateTime is the write time');
    assert.ok(snap.createTime!.isEqual(snap.updateTime!), 'a new document was created at its update time');
    assert.ok(snap.readTime.toMillis() >= written.writeTime.toMillis());
    const data = snap.data()!;
    assert.equal(data.nothing, null);
    assert.equal(data.yes, true);
    assert.equal(data.int, 42);
    assert.equal(data.negative, -7);
    assert.equal(data.double, 1.5);
    assert.ok(Number.isNaN(data.nan));
    assert.ok(Object.is(data.negZero, -0), 'negative zero survives');
    assert.equal(data.inf, Infinity);
    assert.equal(data.minusInf, -Infinity);
    assert.equal(data.text, 'héllo 🔥');
    assert.deepEqual([...data.bytes], [0, 1, 254, 255]);
    // Stored to the microsecond.
    assert.deepEqual([data.time.seconds, data.time.nanoseconds], [1700000000, 123456000]);
    assert.ok(data.geo.isEqual(new AdminGeoPoint(45.5, -73.25)));
    assert.ok(data.zeroGeo.isEqual(new AdminGeoPoint(0, 0)));
    assert.equal(data.ref.path, 'other/doc');
    assert.deepEqual(data.array, [1, 'two', null, { three: 3 }]);
    assert.deepEqual(data.map, { nested: { deep: true } });
    assert.deepEqual(data.emptyMap, {});
    assert.deepEqual(data.emptyArray, []);
    assert.deepEqual(data.vector.toArray(), [1, 2.5]);

    // int64 beyond 2^53, read as BigInt by a second client.
    const big = newAdmin('bigint', target.hostPort, { useBigInt: true });
    const bigRef = big.doc(ref.path);
    await within(bigRef.set({ max: 9223372036854775807n, min: -9223372036854775808n }), 'set int64');
    assert.deepEqual((await within(bigRef.get(), 'get int64')).data(), { max: 9223372036854775807n, min: -9223372036854775808n });
  });

  test('update: field paths, transforms, deletes and merges', async () => {
    const ref = coll('updates').doc('u');
    await within(ref.set({ count: 1, m: { a: 1, b: 2 }, list: [1, 2], keep: 'k', 'dot.ted': 0 }), 'set');
    const result = await within(
      ref.update({
        count: FieldValue.increment(4),
        'm.a': FieldValue.delete(),
        'm.c': 3,
        list: FieldValue.arrayUnion(2, 3),
        stamp: FieldValue.serverTimestamp(),
      }),
      'update',
    );
    await within(ref.update(new AdminFieldPath('dot.ted'), 5), 'update with a FieldPath');
    let data = (await within(ref.get(), 'get')).data()!;
    assert.equal(data.count, 5);
    assert.deepEqual(data.m, { b: 2, c: 3 });
    assert.deepEqual(data.list, [1, 2, 3]);
    assert.equal(data.keep, 'k');
    assert.equal(data['dot.ted'], 5);
    assert.ok(data.stamp instanceof AdminTimestamp);
    assert.ok(Math.abs(data.stamp.toMillis() - result.writeTime.toMillis()) < 1000, 'the server timestamp is the commit time');

    await within(ref.update({ list: FieldValue.arrayRemove(1), count: FieldValue.increment(0.5) }), 'update again');
    await within(ref.set({ m: { d: 4 }, extra: true }, { merge: true }), 'set with merge');
    data = (await within(ref.get(), 'get')).data()!;
    assert.deepEqual(data.list, [2, 3]);
    assert.equal(data.count, 5.5);
    assert.deepEqual(data.m, { b: 2, c: 3, d: 4 });
    assert.equal(data.extra, true);

    await within(ref.delete(), 'delete');
    assert.equal((await within(ref.get(), 'get deleted')).exists, false);
    await within(ref.delete(), 'deleting a missing document succeeds');
  });

  test('failed preconditions and bad writes carry their gRPC status codes', async () => {
    const c = coll('errors');
    await within(c.doc('exists').set({ a: 1 }), 'set');
    await rejectsWith(c.doc('exists').create({ a: 2 }), 6, 'create over an existing document (ALREADY_EXISTS)');
    await rejectsWith(c.doc('missing').update({ a: 1 }), 5, 'update of a missing document (NOT_FOUND)');
    const stale = new AdminTimestamp(1, 0);
    await rejectsWith(c.doc('exists').delete({ lastUpdateTime: stale }), 9, 'delete with a stale updateTime (FAILED_PRECONDITION)');
    await rejectsWith(c.doc('exists').update({ a: 3 }, { lastUpdateTime: stale }), 9, 'update with a stale updateTime (FAILED_PRECONDITION)');
    await rejectsWith(c.doc('reserved').set({ __x__: 1 }), 3, 'a reserved field name (INVALID_ARGUMENT)');
    assert.deepEqual((await within(c.doc('exists').get(), 'get')).data(), { a: 1 });
    // create of a new document works, and a matching updateTime is accepted
    await within(c.doc('fresh').create({ b: 1 }), 'create');
    const current = await within(c.doc('fresh').get(), 'get fresh');
    await within(c.doc('fresh').update({ b: 2 }, { lastUpdateTime: current.updateTime! }), 'update with the current updateTime');
    assert.equal((await within(c.doc('fresh').get(), 'get fresh again')).get('b'), 2);
  });

  test('batches commit atomically', async () => {
    const c = coll('batch');
    await within(c.doc('b').set({ n: 0 }), 'seed b');
    await within(c.doc('c').set({ n: 0 }), 'seed c');
    const batch = admin.batch();
    batch.set(c.doc('a'), { n: 1 });
    batch.update(c.doc('b'), { n: 2 });
    batch.delete(c.doc('c'));
    const results = await within(batch.commit(), 'batch commit');
    assert.equal(results.length, 3);
    assert.ok(results.every((r) => r.writeTime.isEqual(results[0].writeTime)), 'one commit time');
    assert.deepEqual(await adminIds(c.orderBy(AdminFieldPath.documentId())), ['a', 'b']);

    const failing = admin.batch();
    failing.set(c.doc('d'), { n: 4 });
    failing.update(c.doc('missing'), { n: 5 });
    await rejectsWith(failing.commit(), 5, 'a batch with an update of a missing document');
    assert.equal((await within(c.doc('d').get(), 'get d')).exists, false, 'nothing of the failed batch was written');
  });

  test('BulkWriter (BatchWrite): each write succeeds or fails on its own', async () => {
    const c = coll('bulk');
    await within(c.doc('taken').set({}), 'seed');
    const writer = admin.bulkWriter();
    writer.onWriteError(() => false);
    const failed = writer.create(c.doc('taken'), { n: 1 }).then(
      () => 'no error',
      (error: { code?: number }) => error.code,
    );
    const written = writer.set(c.doc('new'), { n: 2 }).then((result) => result.writeTime);
    await within(writer.close(), 'bulkWriter.close');
    assert.equal(await failed, 6);
    assert.ok((await written) instanceof AdminTimestamp);
    assert.deepEqual(await adminIds(c), ['new', 'taken']);
  });

  test('transactions: concurrent increments lose no update, reads by query, read-only, rollback', async () => {
    const c = coll('tx');
    const counter = c.doc('counter');
    await within(counter.set({ n: 0 }), 'seed');
    const attempts = { count: 0 };
    const increments = 5;
    await within(
      Promise.all(
        Array.from({ length: increments }, () =>
          admin.runTransaction(
            async (t) => {
              attempts.count++;
              const snap = await t.get(counter);
              t.update(counter, { n: snap.get('n') + 1 });
            },
            { maxAttempts: 20 },
          ),
        ),
      ),
      'concurrent transactions',
      40_000,
    );
    assert.equal((await within(counter.get(), 'get counter')).get('n'), increments);
    assert.ok(attempts.count >= increments);

    // A query read inside a transaction, and a write based on it.
    await within(c.doc('a').set({ tag: 'x', v: 1 }), 'seed a');
    await within(c.doc('b').set({ tag: 'x', v: 2 }), 'seed b');
    const total = await within(
      admin.runTransaction(async (t) => {
        const snap = await t.get(c.where('tag', '==', 'x'));
        const sum = snap.docs.reduce((acc, d) => acc + (d.get('v') as number), 0);
        t.set(c.doc('sum'), { sum });
        return sum;
      }),
      'transaction with a query',
    );
    assert.equal(total, 3);
    assert.equal((await within(c.doc('sum').get(), 'get sum')).get('sum'), 3);

    // Read-only: getAll inside.
    const values = await within(
      admin.runTransaction(async (t) => (await t.getAll(c.doc('a'), c.doc('b'), c.doc('none'))).map((s) => (s.exists ? s.get('v') : null)), { readOnly: true }),
      'read-only transaction',
    );
    assert.deepEqual(values, [1, 2, null]);

    // A callback that throws rolls back: its writes never land.
    await assert.rejects(
      within(
        admin.runTransaction(async (t) => {
          await t.get(c.doc('a'));
          t.set(c.doc('rolled-back'), { x: 1 });
          throw new Error('give up');
        }),
        'failing transaction',
      ),
      /give up/,
    );
    assert.equal((await within(c.doc('rolled-back').get(), 'get rolled-back')).exists, false);
  });

  describe('queries', () => {
    let c: CollectionReference;
    before(async () => {
      c = coll('query');
      const batch = admin.batch();
      for (let i = 0; i < 10; i++) batch.set(c.doc(`q${i}`), { n: i, g: i % 3, tags: [i % 2 ? 'odd' : 'even', 'all'], name: `item-${i}` });
      await within(batch.commit(), 'seed');
    });

    test('filters and ordering', async () => {
      assert.deepEqual(await adminIds(c.where('n', '>=', 3).where('n', '<', 7)), ['q3', 'q4', 'q5', 'q6']);
      assert.deepEqual(await adminIds(c.where('g', '==', 1).orderBy('n', 'desc')), ['q7', 'q4', 'q1']);
      assert.deepEqual(await adminIds(c.where('tags', 'array-contains', 'odd').where('n', '<', 5)), ['q1', 'q3']);
      assert.deepEqual(await adminIds(c.where('tags', 'array-contains-any', ['nope', 'even']).where('n', '>', 5)), ['q6', 'q8']);
      assert.deepEqual(await adminIds(c.where('g', 'in', [0, 2]).where('n', '<', 6)), ['q0', 'q2', 'q3', 'q5']);
      assert.deepEqual(await adminIds(c.where('n', 'not-in', [0, 1, 2, 3, 4, 5, 6])), ['q7', 'q8', 'q9']);
      assert.deepEqual(await adminIds(c.where('n', '!=', 4).where('n', '<', 6)), ['q0', 'q1', 'q2', 'q3', 'q5']);
      assert.deepEqual(await adminIds(c.where(Filter.or(Filter.where('n', '==', 1), Filter.where('name', '==', 'item-8')))), ['q1', 'q8']);
      assert.deepEqual(await adminIds(c.where(AdminFieldPath.documentId(), '>', c.doc('q7'))), ['q8', 'q9']);
      assert.deepEqual(await adminIds(c.where('missing', '==', 1)), []);
    });

    test('limits, offsets, cursors and projections', async () => {
      assert.deepEqual(await adminIds(c.orderBy('n').limit(3)), ['q0', 'q1', 'q2']);
      assert.deepEqual(await adminIds(c.orderBy('n').limitToLast(2)), ['q8', 'q9']);
      assert.deepEqual(await adminIds(c.orderBy('n').offset(7)), ['q7', 'q8', 'q9']);
      assert.deepEqual(await adminIds(c.orderBy('n').startAfter(5).endBefore(8)), ['q6', 'q7']);
      assert.deepEqual(await adminIds(c.orderBy('n', 'desc').startAt(2).endAt(0)), ['q2', 'q1', 'q0']);
      const q4 = await within(c.doc('q4').get(), 'get q4');
      assert.deepEqual(await adminIds(c.orderBy('g').orderBy('n').startAfter(q4).limit(3)), ['q7', 'q2', 'q5']);
      const projected = await within(c.where('n', '==', 3).select('name').get(), 'select');
      assert.deepEqual(projected.docs.map((d) => d.data()), [{ name: 'item-3' }]);
      const stream: string[] = [];
      for await (const d of c.orderBy('n').limit(2).stream()) stream.push((d as unknown as AdminDocumentSnapshot).id);
      assert.deepEqual(stream, ['q0', 'q1']);
    });

    test('collection group queries', async () => {
      const group = `items-${run}`;
      await within(admin.doc(`groups-${run}/a/${group}/x`).set({ kind: 'k', n: 1 }), 'seed x');
      await within(admin.doc(`groups-${run}/b/${group}/y`).set({ kind: 'k', n: 2 }), 'seed y');
      await within(admin.doc(`elsewhere-${run}/z/${group}/w`).set({ kind: 'other', n: 3 }), 'seed w');
      await within(admin.doc(`groups-${run}/a/not-${group}/v`).set({ kind: 'k', n: 4 }), 'seed v');
      const snap = await within(admin.collectionGroup(group).where('kind', '==', 'k').orderBy('n').get(), 'collection group');
      assert.deepEqual(snap.docs.map((d) => d.ref.path), [`groups-${run}/a/${group}/x`, `groups-${run}/b/${group}/y`]);
      assert.equal((await within(admin.collectionGroup(group).count().get(), 'collection group count')).data().count, 3);
    });

    test('aggregations: count, sum, average', async () => {
      const all = await within(c.aggregate({ n: AggregateField.count(), total: AggregateField.sum('n'), mean: AggregateField.average('n') }).get(), 'aggregate');
      assert.deepEqual(all.data(), { n: 10, total: 45, mean: 4.5 });
      assert.equal((await within(c.where('g', '==', 0).count().get(), 'count')).data().count, 4);
      const empty = await within(
        coll('nothing').aggregate({ n: AggregateField.count(), total: AggregateField.sum('n'), mean: AggregateField.average('n') }).get(),
        'aggregate over nothing',
      );
      assert.deepEqual(empty.data(), { n: 0, total: 0, mean: null });
    });

    test('PartitionQuery is not implemented', async () => {
      const partitions = async () => {
        const out: unknown[] = [];
        for await (const partition of admin.collectionGroup(`q-${run}`).getPartitions(3)) out.push(partition);
        return out;
      };
      await rejectsWith(partitions(), 12, 'getPartitions');
    });
  });

  test('listCollections, listDocuments and getAll', async () => {
    const c = coll('listing');
    const parent = c.doc('parent');
    await within(parent.collection('sub1').doc('x').set({}), 'seed sub1');
    await within(parent.collection('sub2').doc('y').set({}), 'seed sub2');
    await within(c.doc('plain').set({ n: 1, other: 'o' }), 'seed plain');
    assert.deepEqual((await within(parent.listCollections(), 'parent.listCollections')).map((r) => r.id).sort(), ['sub1', 'sub2']);
    const root = (await within(admin.listCollections(), 'listCollections')).map((r) => r.id);
    assert.ok(root.includes(c.id), `${c.id} among ${root.join(', ')}`);
    // listDocuments also names documents that only have subcollections (showMissing).
    assert.deepEqual((await within(c.listDocuments(), 'listDocuments')).map((r) => r.id).sort(), ['parent', 'plain']);

    const [plain, missing, ghost] = await within(admin.getAll(c.doc('plain'), c.doc('missing'), parent, { fieldMask: ['n'] }), 'getAll');
    assert.deepEqual(plain.data(), { n: 1 });
    assert.equal(missing.exists, false);
    assert.equal(ghost.exists, false);
    assert.ok(missing.readTime instanceof AdminTimestamp);
  });

  test('onSnapshot (Listen) on a query and on a document', async () => {
    const c = coll('admin-listen');
    await within(c.doc('a').set({ n: 1, live: true }), 'seed a');
    const queryEvents = new Snapshots<AdminQuerySnapshot>();
    queryEvents.stop = c.where('live', '==', true).onSnapshot(queryEvents.push, queryEvents.fail);
    const docEvents = new Snapshots<AdminDocumentSnapshot>();
    docEvents.stop = c.doc('b').onSnapshot(docEvents.push, docEvents.fail);
    try {
      const first = await queryEvents.until(() => true, 'the first query snapshot');
      assert.deepEqual(first.snapshot.docs.map((d) => d.id), ['a']);
      assert.equal((await docEvents.until(() => true, 'the first document snapshot')).snapshot.exists, false);

      await within(c.doc('b').set({ n: 2, live: true }), 'add b');
      const added = await queryEvents.until((s) => s.size === 2, 'b joined', first.index + 1);
      assert.deepEqual(added.snapshot.docChanges().map((ch) => [ch.type, ch.doc.id]), [['added', 'b']]);
      assert.equal((await docEvents.until((s) => s.exists, 'b exists')).snapshot.get('n'), 2);

      await within(c.doc('a').update({ n: 10 }), 'modify a');
      const modified = await queryEvents.until((s) => s.docs.some((d) => d.get('n') === 10), 'a modified', added.index + 1);
      assert.deepEqual(modified.snapshot.docChanges().map((ch) => [ch.type, ch.doc.id]), [['modified', 'a']]);

      await within(c.doc('a').update({ live: false }), 'a leaves the query');
      const left = await queryEvents.until((s) => s.size === 1, 'a left', modified.index + 1);
      assert.deepEqual(left.snapshot.docChanges().map((ch) => [ch.type, ch.doc.id]), [['removed', 'a']]);

      await within(c.doc('b').delete(), 'delete b');
      await queryEvents.until((s) => s.size === 0, 'b deleted', left.index + 1);
      await docEvents.until((s) => !s.exists, 'b gone');
    } finally {
      queryEvents.stop();
      docEvents.stop();
    }
  });
});

// ---- the firebase SDK in Node ------------------------------------------------------------------

describe('the firebase SDK (firebase/firestore) in Node over gRPC', () => {
  let db: Firestore;
  before(async () => {
    db = await newClient();
  });

  test('setDoc, getDoc, updateDoc and deleteDoc (Write and Listen streams)', async () => {
    const ref = doc(db, `client-${run}/values`);
    await within(
      setDoc(ref, {
        text: 'ünïcode',
        int: 7,
        double: 0.25,
        nan: NaN,
        nothing: null,
        bytes: Bytes.fromUint8Array(new Uint8Array([1, 2, 3])),
        time: new Timestamp(1700000000, 5000),
        geo: new GeoPoint(10, 20),
        ref: doc(db, 'some/where'),
        list: [1, { m: true }],
        map: { a: { b: 'c' } },
      }),
      'setDoc',
    );
    const snap = await within(getDoc(ref), 'getDoc');
    assert.equal(snap.exists(), true);
    const data = snap.data()!;
    assert.equal(data.text, 'ünïcode');
    assert.equal(data.int, 7);
    assert.equal(data.double, 0.25);
    assert.ok(Number.isNaN(data.nan));
    assert.equal(data.nothing, null);
    assert.deepEqual([...(data.bytes as Bytes).toUint8Array()], [1, 2, 3]);
    assert.ok((data.time as Timestamp).isEqual(new Timestamp(1700000000, 5000)));
    assert.ok((data.geo as GeoPoint).isEqual(new GeoPoint(10, 20)));
    assert.equal(data.ref.path, 'some/where');
    assert.deepEqual(data.list, [1, { m: true }]);
    assert.deepEqual(data.map, { a: { b: 'c' } });

    await within(updateDoc(ref, { int: increment(3), 'map.a.b': 'd', text: deleteField(), list: arrayUnion(2), at: serverTimestamp() }), 'updateDoc');
    const updated = await within(getDocFromServer(ref), 'getDocFromServer');
    assert.equal(updated.get('int'), 10);
    assert.equal(updated.get('map.a.b'), 'd');
    assert.equal(updated.get('text'), undefined);
    assert.deepEqual(updated.get('list'), [1, { m: true }, 2]);
    assert.ok(updated.get('at') instanceof Timestamp);
    // What the client wrote is what admin reads.
    assert.equal((await within(admin.doc(ref.path).get(), 'admin get')).get('int'), 10);

    await within(deleteDoc(ref), 'deleteDoc');
    assert.equal((await within(getDoc(ref), 'getDoc deleted')).exists(), false);
    await rejectsWith(updateDoc(doc(db, `client-${run}/missing`), { a: 1 }), 'not-found', 'updateDoc of a missing document');
  });

  test('getDocs, counts and aggregations', async () => {
    const batch = writeBatch(db);
    for (let i = 0; i < 6; i++) batch.set(doc(db, `client-query-${run}/d${i}`), { n: i, even: i % 2 === 0 });
    await within(batch.commit(), 'writeBatch');
    const c = collection(db, `client-query-${run}`);
    const ids = async (q: Parameters<typeof getDocs>[0]) => (await within(getDocs(q), 'getDocs')).docs.map((d) => d.id);
    assert.deepEqual(await ids(query(c, where('even', '==', true), orderBy('n', 'desc'))), ['d4', 'd2', 'd0']);
    assert.deepEqual(await ids(query(c, orderBy('n'), limit(2))), ['d0', 'd1']);
    assert.equal((await within(getCountFromServer(query(c, where('n', '>', 2))), 'getCountFromServer')).data().count, 3);
    const agg = await within(getAggregateFromServer(c, { total: sum('n'), mean: average('n') }), 'getAggregateFromServer');
    assert.deepEqual(agg.data(), { total: 15, mean: 2.5 });
  });

  test('onSnapshot sees documents enter, change, leave and disappear', async () => {
    const path = `client-listen-${run}`;
    await within(admin.doc(`${path}/a`).set({ n: 1, live: true }), 'seed a');
    const events = new Snapshots<QuerySnapshot>();
    events.stop = onSnapshot(query(collection(db, path), where('live', '==', true)), events.push, events.fail);
    try {
      const first = await events.until((s) => !s.metadata.fromCache, 'the first server snapshot');
      assert.deepEqual(first.snapshot.docs.map((d) => d.id), ['a']);
      const changes = (s: QuerySnapshot): Array<[DocumentChangeType, string]> => s.docChanges().map((ch) => [ch.type, ch.doc.id]);

      await within(admin.doc(`${path}/b`).set({ n: 2, live: true }), 'add b');
      const added = await events.until((s) => s.size === 2, 'b joined', first.index + 1);
      assert.deepEqual(changes(added.snapshot), [['added', 'b']]);

      await within(admin.doc(`${path}/a`).update({ n: 10 }), 'modify a');
      const modified = await events.until((s) => s.docs.some((d) => d.get('n') === 10), 'a modified', added.index + 1);
      assert.deepEqual(changes(modified.snapshot), [['modified', 'a']]);

      await within(admin.doc(`${path}/a`).update({ live: false }), 'a leaves');
      const left = await events.until((s) => s.size === 1, 'a left', modified.index + 1);
      assert.deepEqual(changes(left.snapshot), [['removed', 'a']]);

      await within(admin.doc(`${path}/b`).delete(), 'delete b');
      const gone = await events.until((s) => s.size === 0, 'b deleted', left.index + 1);
      assert.deepEqual(changes(gone.snapshot), [['removed', 'b']]);
    } finally {
      events.stop();
    }
  });

  test('onSnapshot on a missing document, then created by another client', async () => {
    const ref = doc(db, `client-listen-doc-${run}/later`);
    const events = new Snapshots<DocumentSnapshot>();
    events.stop = onSnapshot(ref, events.push, events.fail);
    try {
      const first = await events.until((s) => !s.metadata.fromCache, 'the first server snapshot');
      assert.equal(first.snapshot.exists(), false);
      await within(admin.doc(ref.path).set({ hello: 'world' }), 'admin set');
      const created = await events.until((s) => s.exists(), 'the document exists', first.index + 1);
      assert.deepEqual(created.snapshot.data(), { hello: 'world' });
    } finally {
      events.stop();
    }
  });

  test('client transactions (BatchGetDocuments, Commit with verify) under contention', async () => {
    const other = await newClient();
    const counter = `client-tx-${run}/counter`;
    await within(setDoc(doc(db, counter), { n: 0 }), 'seed');
    const perClient = 3;
    const increment1 = (client: Firestore) =>
      runTransaction(
        client,
        async (t) => {
          const snap = await t.get(doc(client, counter));
          t.update(doc(client, counter), { n: (snap.get('n') as number) + 1 });
        },
        { maxAttempts: 20 },
      );
    await within(Promise.all([db, other].flatMap((client) => Array.from({ length: perClient }, () => increment1(client)))), 'concurrent client transactions', 40_000);
    assert.equal((await within(admin.doc(counter).get(), 'admin get counter')).get('n'), 2 * perClient);

    // A document read but not written is verified at commit: a change in between forces a retry.
    const source = doc(db, `client-tx-${run}/source`);
    await within(setDoc(source, { v: 1 }), 'seed source');
    let attempts = 0;
    const copied = await within(
      runTransaction(db, async (t) => {
        attempts++;
        const snap = await t.get(source);
        if (attempts === 1) await admin.doc(source.path).set({ v: 2 });
        t.set(doc(db, `client-tx-${run}/copy`), { v: snap.get('v') });
        return snap.get('v') as number;
      }),
      'transaction with a verify write',
    );
    assert.equal(attempts, 2);
    assert.equal(copied, 2);
    assert.equal((await within(admin.doc(`client-tx-${run}/copy`).get(), 'get copy')).get('v'), 2);
  });

  test('a client nobody signed in to is refused (Hearth)', { skip: useGoogleEmulator && 'Google’s emulator without rules takes unsigned requests' }, async () => {
    const anonymous = await newClient(false);
    await rejectsWith(getDoc(doc(anonymous, `client-${run}/x`)), 'permission-denied', 'getDoc unsigned');
    await rejectsWith(setDoc(doc(anonymous, `client-${run}/x`), { a: 1 }), 'permission-denied', 'setDoc unsigned');
  });
});

// ---- RPCs no SDK sends ---------------------------------------------------------------------------

/** A bare gRPC client speaking proto3 JSON through Hearth's own codec, as the admin credential. */
function rawFirestore(hostPort: string, projectId: string) {
  const root = loadFirestoreRoot();
  const service = root.lookupService('google.firestore.v1.Firestore');
  const client = new grpc.Client(hostPort, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('authorization', 'Bearer owner');
  metadata.set('google-cloud-resource-prefix', `projects/${projectId}/databases/(default)`);
  const call = (method: string, request: Record<string, unknown>): Promise<any> => {
    const requestType = service.methods[method].resolvedRequestType!;
    const responseType = service.methods[method].resolvedResponseType!;
    const answer = new Promise((resolve, reject) =>
      client.makeUnaryRequest(
        `/google.firestore.v1.Firestore/${method}`,
        (json: Record<string, unknown>) => Buffer.from(requestType.encode(messageFromJson(requestType, json)).finish()),
        (bytes: Buffer) => messageToJson(responseType, responseType.decode(bytes) as unknown as Record<string, unknown>),
        request,
        metadata,
        (error, response) => (error ? reject(error) : resolve(response)),
      ),
    );
    return within(answer, method);
  };
  return { call, close: () => client.close() };
}

describe('unary document RPCs (GetDocument, CreateDocument, UpdateDocument, DeleteDocument, ListDocuments)', () => {
  test('create, get with a mask, update with a mask and a precondition, list by pages, delete', async () => {
    const raw = rawFirestore(target.hostPort, target.projectId);
    try {
      const root = `projects/${target.projectId}/databases/(default)/documents`;
      const collectionId = `raw-${run}`;
      const name = `${root}/${collectionId}/one`;
      const created = await raw.call('CreateDocument', { parent: root, collectionId, documentId: 'one', document: { fields: { a: { integerValue: '1' }, b: { stringValue: 'x' } } } });
      assert.equal(created.name, name);
      assert.deepEqual(created.fields, { a: { integerValue: '1' }, b: { stringValue: 'x' } });
      assert.equal(created.createTime, created.updateTime);
      await rejectsWith(raw.call('CreateDocument', { parent: root, collectionId, documentId: 'one', document: {} }), grpc.status.ALREADY_EXISTS, 'CreateDocument again');
      const auto = await raw.call('CreateDocument', { parent: root, collectionId, document: { fields: { n: { doubleValue: 'NaN' } } } });
      assert.match(auto.name, new RegExp(`^${root.replace(/[()]/g, '\\$&')}/${collectionId}/[A-Za-z0-9]{20}$`));
      assert.deepEqual(auto.fields, { n: { doubleValue: 'NaN' } });

      const masked = await raw.call('GetDocument', { name, mask: { fieldPaths: ['b'] } });
      assert.deepEqual(masked.fields, { b: { stringValue: 'x' } });
      await rejectsWith(raw.call('GetDocument', { name: `${root}/${collectionId}/missing` }), grpc.status.NOT_FOUND, 'GetDocument of a missing document');

      const updated = await raw.call('UpdateDocument', {
        document: { name, fields: { c: { booleanValue: false } } },
        updateMask: { fieldPaths: ['c', 'b'] },
        currentDocument: { exists: true },
      });
      assert.deepEqual(updated.fields, { a: { integerValue: '1' }, c: { booleanValue: false } });
      await rejectsWith(
        raw.call('UpdateDocument', { document: { name, fields: {} }, currentDocument: { exists: false } }),
        grpc.status.ALREADY_EXISTS,
        'UpdateDocument with exists: false',
      );
      await rejectsWith(
        raw.call('UpdateDocument', { document: { name, fields: {} }, currentDocument: { updateTime: '2000-01-01T00:00:00Z' } }),
        grpc.status.FAILED_PRECONDITION,
        'UpdateDocument with a stale updateTime',
      );

      // Pages in name order (bytewise: the auto id may sort before or after 'one').
      const names = [name, auto.name].sort((x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      const firstPage = await raw.call('ListDocuments', { parent: root, collectionId, pageSize: 1 });
      assert.deepEqual(firstPage.documents.map((d: { name: string }) => d.name), [names[0]]);
      assert.ok(firstPage.nextPageToken);
      const secondPage = await raw.call('ListDocuments', { parent: root, collectionId, pageSize: 1, pageToken: firstPage.nextPageToken });
      assert.deepEqual(secondPage.documents.map((d: { name: string }) => d.name), [names[1]]);
      const onlyNames = await raw.call('ListDocuments', { parent: root, collectionId, mask: { fieldPaths: [] } });
      assert.deepEqual(onlyNames.documents.map((d: { name: string; fields?: unknown }) => [d.name, d.fields]), names.map((n) => [n, undefined]));

      await rejectsWith(raw.call('DeleteDocument', { name: `${root}/${collectionId}/missing`, currentDocument: { exists: true } }), grpc.status.NOT_FOUND, 'DeleteDocument exists: true');
      assert.deepEqual(await raw.call('DeleteDocument', { name }), {});
      await rejectsWith(raw.call('GetDocument', { name }), grpc.status.NOT_FOUND, 'GetDocument after delete');
    } finally {
      raw.close();
    }
  });
});

// ---- the transport ---------------------------------------------------------------------------

describe('the gRPC transport (Hearth)', { skip: useGoogleEmulator && 'about Hearth’s listener' }, () => {
  test('HTTP/1.1 and gRPC share one port', async () => {
    const url = target.hearth!.url;
    const ref = coll('shared').doc('big');
    const big = 'x'.repeat(300_000);
    // A REST commit whose body spans many TCP reads, then gRPC reads it.
    const name = `projects/${target.projectId}/databases/(default)/documents/${ref.path}`;
    const commit = await fetch(`${url}/v1/projects/${target.projectId}/databases/(default)/documents:commit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer owner' },
      body: JSON.stringify({ writes: [{ update: { name, fields: { big: { stringValue: big } } } }] }),
    });
    assert.equal(commit.status, 200, await commit.clone().text());
    assert.equal((await within(ref.get(), 'gRPC get')).get('big'), big);
    // Keep-alive HTTP requests on one connection still work beside gRPC connections.
    for (let i = 0; i < 3; i++) {
      const health = await fetch(`${url}/healthz`);
      assert.deepEqual(await health.json(), { status: 'ok' });
    }
    const rest = await fetch(`${url}/v1/${name}`, { headers: { authorization: 'Bearer owner' } });
    assert.equal(((await rest.json()) as { fields: { big: { stringValue: string } } }).fields.big.stringValue.length, big.length);
  });

  test('a separate gRPC port (grpcPort)', async () => {
    const grpcPort = await freePort();
    const server = await startHearth({ grpcPort, defaultProjectId: target.projectId });
    try {
      const own = newAdmin('separate-port', `127.0.0.1:${grpcPort}`);
      await within(own.doc('separate/doc').set({ a: 1 }), 'set over the gRPC port');
      assert.deepEqual((await within(own.doc('separate/doc').get(), 'get over the gRPC port')).data(), { a: 1 });
      // The same data over the main port's REST.
      const rest = await fetch(`${server.url}/v1/projects/${target.projectId}/databases/(default)/documents/separate/doc`, { headers: { authorization: 'Bearer owner' } });
      assert.equal(rest.status, 200);
      await within(own.terminate(), 'terminate');
    } finally {
      await server.close();
    }
  });
});
