/**
 * Cloud Firestore over gRPC with the full `firebase/firestore` SDK running in Node: the Listen and
 * Write streams (setDoc / getDoc / updateDoc / deleteDoc, onSnapshot on queries and documents),
 * getDocs and aggregations, client transactions with `verify` writes under contention, and a client
 * nobody signed in to (Hearth only; skipped against Google's emulator). firebase-admin on the same
 * server plays the other client.
 *
 * It runs against Hearth (in-process, --dev; gRPC shares the HTTP port). With
 * HEARTH_FIRESTORE_TARGET=google-emulator the same assertions run against Google's official
 * emulator, which is how they were checked; set HEARTH_FIRESTORE_EMULATOR=127.0.0.1:PORT as well to
 * reuse a running emulator.
 * The target and its clients are in tests/helpers/firestore-grpc-clients.ts.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import {
  Bytes,
  GeoPoint,
  Timestamp,
  arrayUnion,
  average,
  collection,
  deleteDoc,
  deleteField,
  doc,
  getAggregateFromServer,
  getCountFromServer,
  getDoc,
  getDocFromServer,
  getDocs,
  increment,
  limit,
  onSnapshot,
  orderBy,
  query,
  runTransaction,
  serverTimestamp,
  setDoc,
  sum,
  updateDoc,
  where,
  writeBatch,
  type DocumentChangeType,
  type DocumentSnapshot,
  type Firestore,
  type Query,
  type QuerySnapshot,
} from 'firebase/firestore';
import { Snapshots, admin, newClient, rejectsWith, run, target, useGrpcTarget, within } from '../helpers/firestore-grpc-clients.js';
import { signedInOnlyRules, withRules } from '../helpers/security-rules.js';

useGrpcTarget();

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

  test('numeric document ids (__id7__) are written, read and listened to, ordered by number before string ids', async () => {
    const c = collection(db, `client-numeric-${run}`);
    const batch = writeBatch(db);
    for (const [i, id] of ['b', '__id10__', 'A', '__id-3__', '__id7__'].entries()) batch.set(doc(c, id), { n: i % 2 });
    await within(batch.commit(), 'writeBatch with numeric ids');
    const ids = async (q: Query) => (await within(getDocs(q), 'getDocs')).docs.map((d) => d.id);
    assert.deepEqual(await ids(c), ['__id-3__', '__id7__', '__id10__', 'A', 'b']);
    assert.deepEqual(await ids(query(c, where('n', '==', 0))), ['__id7__', 'A', 'b']);
    assert.equal((await within(getDoc(doc(c, '__id-3__')), 'getDoc of a numeric id')).get('n'), 1);
    const listened = new Snapshots<string[]>();
    listened.stop = onSnapshot(query(c, orderBy('n'), limit(3)), (snapshot) => listened.push(snapshot.docs.map((d) => d.id)), listened.fail);
    await listened.until((seen) => JSON.stringify(seen) === JSON.stringify(['__id7__', 'A', 'b']), 'the three n = 0 in id order');
    await within(setDoc(doc(c, '__id-9223372036854775808__'), { n: 0 }), 'setDoc of the smallest numeric id');
    await listened.until((seen) => JSON.stringify(seen) === JSON.stringify(['__id-9223372036854775808__', '__id7__', 'A']), 'the new smallest id first');
    listened.stop();
    await rejectsWith(setDoc(doc(c, '__id0__'), { n: 0 }), 'invalid-argument', 'setDoc of __id0__ (not a numeric id: reserved)');
    await rejectsWith(setDoc(doc(c, '__id9223372036854775808__'), { n: 0 }), 'invalid-argument', 'setDoc of an id out of the int64 range');
  });

  test('getDocs, counts and aggregations', async () => {
    const batch = writeBatch(db);
    for (let i = 0; i < 6; i++) batch.set(doc(db, `client-query-${run}/d${i}`), { n: i, even: i % 2 === 0 });
    await within(batch.commit(), 'writeBatch');
    const c = collection(db, `client-query-${run}`);
    const ids = async (q: Query) => (await within(getDocs(q), 'getDocs')).docs.map((d) => d.id);
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

  test('a client nobody signed in to is refused by rules that ask for a signed-in user', async () => {
    await withRules(`http://${target.hostPort}`, target.projectId, signedInOnlyRules, async () => {
      const anonymous = await newClient(false);
      await rejectsWith(getDoc(doc(anonymous, `client-${run}/x`)), 'permission-denied', 'getDoc unsigned');
      await rejectsWith(setDoc(doc(anonymous, `client-${run}/x`), { a: 1 }), 'permission-denied', 'setDoc unsigned');
    });
  });
});
