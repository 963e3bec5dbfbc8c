/**
 * Cloud Firestore through the official SDK's lite build (`firebase/firestore/lite`: REST only,
 * `batchGet` / `commit`) in Node, the writes: setDoc (with merge and mergeFields), updateDoc,
 * deleteDoc and addDoc, every value type round-tripped, and the field transforms (serverTimestamp,
 * increment, maximum / minimum, arrayUnion / arrayRemove).
 *
 * It runs against Hearth (in-process, --dev; every client signs in anonymously first, since
 * Hearth's Firestore only answers signed requests there). With HEARTH_FIRESTORE_TARGET=google-emulator
 * the same assertions run against Google's official emulator (`gcloud emulators firestore start`),
 * which is how they were checked; that mode is for validating the suite, not for CI. Set
 * HEARTH_FIRESTORE_EMULATOR=127.0.0.1:PORT as well to reuse an emulator that is already running.
 * The target, its clients and the error helpers are in tests/helpers/firestore-lite-clients.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Bytes,
  DocumentReference,
  FieldPath,
  GeoPoint,
  Timestamp,
  VectorValue,
  addDoc,
  arrayRemove,
  arrayUnion,
  collection,
  deleteDoc,
  deleteField,
  doc,
  documentId,
  getDocs,
  increment,
  maximum,
  minimum,
  orderBy,
  query,
  serverTimestamp,
  setDoc,
  updateDoc,
  vector,
  where,
} from 'firebase/firestore/lite';
import { data, db, get, ids, rejectsWith, useGoogleEmulator, useLiteTarget, within } from '../helpers/firestore-lite-clients.js';

useLiteTarget();

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
