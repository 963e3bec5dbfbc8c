/**
 * Cloud Firestore over gRPC, the transport of the Node SDKs: firebase-admin (FIRESTORE_EMULATOR_HOST,
 * `Bearer owner`) reading: queries (filters, orders, limits, offsets, cursors, projections, streams),
 * collection groups, aggregations, PartitionQuery, listCollections / listDocuments / getAll, and
 * onSnapshot listeners on a query and on a document (the Listen stream).
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
  AggregateField,
  FieldPath as AdminFieldPath,
  Filter,
  Timestamp as AdminTimestamp,
  type CollectionReference,
  type DocumentSnapshot as AdminDocumentSnapshot,
  type QuerySnapshot as AdminQuerySnapshot,
  type QueryPartition,
} from 'firebase-admin/firestore';
import { Snapshots, admin, adminIds, coll, rejectsWith, run, useGoogleEmulator, useGrpcTarget, within } from '../helpers/firestore-grpc-clients.js';

useGrpcTarget();

// ---- firebase-admin ----------------------------------------------------------------------------

describe('firebase-admin over gRPC', () => {
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

    test('PartitionQuery: getPartitions splits a group, every document in exactly one partition (Google\'s emulator: not implemented)', async () => {
      const partitions = async () => {
        const out: QueryPartition[] = [];
        for await (const partition of admin.collectionGroup(c.id).getPartitions(3)) out.push(partition);
        return out;
      };
      if (useGoogleEmulator) return rejectsWith(partitions(), 12, 'getPartitions');
      const parts = await within(partitions(), 'getPartitions');
      assert.equal(parts.length, 3);
      const ids = [];
      for (const part of parts) ids.push(...(await adminIds(part.toQuery(), 'a partition')));
      assert.deepEqual(ids, ['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7', 'q8', 'q9']);
    });
  });

  test('listCollections, listDocuments and getAll', async () => {
    const c = coll('listing');
    const parent = c.doc('parent');
    await within(parent.collection('sub1').doc('x').set({}), 'seed sub1');
    await within(parent.collection('sub2').doc('y').set({}), 'seed sub2');
    await within(c.doc('plain').set({ n: 1, other: 'o' }), 'seed plain');
    assert.deepEqual((await within(parent.listCollections(), 'parent.listCollections')).map((r) => r.id).sort(), ['sub1', 'sub2']);
    // Ids that sort between a collection and its documents' subcollections ('-' and '.' come before
    // '/'), after them ('0'), beyond ASCII, and one whose documents exist only in subcollections.
    const tricky = coll('listing-ids').doc('holder');
    const ids = ['a', 'a-x', 'a.b', 'a0', 'b', 'ä', '日本'];
    for (const id of ids) await within(tricky.collection(id).doc('d').set({}), `seed ${id}`);
    await within(tricky.collection('a').doc('d').collection('deep').doc('e').set({}), 'seed a/d/deep');
    await within(tricky.collection('a-x').doc('d').collection('deep').doc('e').set({}), 'seed a-x/d/deep');
    await within(tricky.collection('ghost').doc('g').collection('deep').doc('e').set({}), 'seed ghost/g/deep');
    assert.deepEqual((await within(tricky.listCollections(), 'tricky.listCollections')).map((r) => r.id).sort(), [...ids, 'ghost'].sort());
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
