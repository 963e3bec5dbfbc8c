/**
 * Existence filters with bloom filters (`unchangedNames`). The builder is held to the golden data
 * Google's backend and the SDKs share (firebase-js-sdk
 * packages/firestore/test/unit/remote/bloom_filter_golden_test_data: names
 * `projects/project-1/databases/database-1/documents/coll/doc<i>`, i < n, at a given bit count and
 * hash count), and the full SDK in Node is resumed against a restarted Hearth (whose listen hub no
 * longer remembers what changed): it drops the documents that left its query by the bloom filter,
 * as its testing hook reports, without listening again from scratch.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import * as firestoreSdk from 'firebase/firestore';
import {
  collection,
  connectFirestoreEmulator,
  disableNetwork,
  enableNetwork,
  getFirestore,
  onSnapshot,
  query,
  terminate,
  where,
  type QuerySnapshot,
} from 'firebase/firestore';
import { bloomFilterSize, buildBloomFilter, unchangedNamesFilter } from '../../packages/server/src/firestore/core/bloom-filter.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { firestoreRest, int } from '../helpers/firestore-rest.js';
import { within } from '../helpers/firestore-target.js';

const goldenPrefix = 'projects/project-1/databases/database-1/documents/coll/doc';
const goldenNames = (n: number) => Array.from({ length: n }, (_, i) => `${goldenPrefix}${i}`);

test('the builder reproduces the golden filters bit for bit', () => {
  // Validation_BloomFilterTest_MD5_1_01_bloom_filter_proto.json: 1 name, 11 bits, 8 hashes.
  assert.deepEqual(buildBloomFilter(goldenNames(1), 2 * 8 - 5, 8), { bits: { bitmap: 'mwE=', padding: 5 }, hashCount: 8 });
  // Validation_BloomFilterTest_MD5_500_01_bloom_filter_proto.json: 500 names at 1%: 600 bytes less 7 bits, 7 hashes,
  // exactly Hearth's own sizing for 500 names.
  const golden500 =
    'n+36qf4UgWXLxRabHwqwva8jpXlZ7yfdCjRNwHQ5MBmgc35tGNWFvTgrWyfmznuz1j0wMabH29pR84MjjWGgAxLhDXU3dyYTY505812+BYTO5GXEAyGoUZhcBlUZPK+RAqSZ+9e3q9Gxpmoes/4iCbxJFc5eew0+95v5Z0h5fvlF2Y9iRBDu2PWC1pVGuc/j3W+34+5IwPtDLPbtfvYhnohTfXP02vsf2/77YqEtfmMVFfIMZJ5e7uLOA+rcmQC5fFfxjubJfKR5R+Rzw/UWd0Eg3gi+FCUIk/WUP5938R4tPH3fnrtQjclvsZhtj5dak7WWw1Ph4ZFdJE2XdFBH1JSvggI5tFKH5WUeIBlHYj+V3HomQ2gDrwMXGsIJokcwQi1qTUjECnwYGlOl/FRjZQg7h3QoSkyxgBnp6w7XKttc/EJf+279WLkvm6K/sTuQiFsOGqdQQ+c6osu9SzICn7Rtu4+RzmfxgCx1i2rX1OvVt+DLWa8/K5TlLvVM7GqXiHeaLuvkaz4uR754T1Iurp8/Ps2yJdXYHLyGndJa+7DJ1BPsGK8ZYbYFN7jGamHF9de+3K/syp1raDltsNUxUGAaMBghK1nIRDtHLSHBtVkuxvUkP3iVIkm6pEp0K/2npYUEAsbYVkug4Iv7qhnLTGwMUXP3piTMySLLoZ9bGY0k13FMX7h/s79dJDcIIf4fR9S0SN6fWXKdZOBLFzyXGcxbD+o0o3NO/UOZDgmTet2or8rvipr4tGDyGluUnW1o/fWPlGvEIo/7Ep6avGyw7jilLKYiunAA';
  assert.equal(Buffer.from(golden500, 'base64').length, 600);
  assert.deepEqual(bloomFilterSize(500), { bitCount: 600 * 8 - 7, hashCount: 7 });
  assert.deepEqual(unchangedNamesFilter(goldenNames(500)), { bits: { bitmap: golden500, padding: 7 }, hashCount: 7 });
});

test('sizing: an empty filter for no names (as the SDK requires), about 9.6 bits per name at 1%', () => {
  assert.deepEqual(unchangedNamesFilter([]), { bits: { bitmap: '', padding: 0 }, hashCount: 0 });
  const { bitCount, hashCount } = bloomFilterSize(1000);
  assert.ok(bitCount >= 9000 && bitCount <= 10_000, String(bitCount));
  assert.equal(hashCount, 7);
  const filter = unchangedNamesFilter(goldenNames(1000));
  assert.equal(Buffer.from(filter.bits.bitmap, 'base64').length * 8 - filter.bits.padding, bitCount);
});

// ---- through the SDK ------------------------------------------------------------------------

const dataDir = tempDataDir();
let server: TestHearth | undefined;
after(async () => server?.close());

/** The SDK's testing hook (exported as `_TestingHooks`, absent from its typings): told of every existence filter mismatch. */
const TestingHooks = (firestoreSdk as unknown as { _TestingHooks: { onExistenceFilterMismatch(callback: (info: unknown) => void): () => void } })._TestingHooks;

interface MismatchInfo {
  localCacheCount: number;
  existenceFilterCount: number;
  bloomFilter?: { applied: boolean; hashCount: number; bitmapLength: number; mightContain(name: string): boolean };
}

test('a query resumed after a restart drops what left it by the bloom filter, without listening again', async () => {
  server = await startHearth({ dataDir });
  const port = Number(new URL(server.url).port);
  let rest = firestoreRest(server);
  await rest.commit(['a', 'b', 'c', 'd'].map((id, i) => rest.set(`bloom/${id}`, { n: int(i) })));

  const app = initializeApp({ projectId: server.projectId, apiKey: 'any' }, 'bloom-client');
  const db = getFirestore(app);
  connectFirestoreEmulator(db, '127.0.0.1', port, { mockUserToken: { sub: 'reader' } });
  const snapshots: QuerySnapshot[] = [];
  const waiters: Array<() => void> = [];
  const unsubscribe = onSnapshot(query(collection(db, 'bloom'), where('n', '<', 10)), (snapshot) => {
    snapshots.push(snapshot);
    for (const wake of waiters.splice(0)) wake();
  });
  const snapshotWhere = async (label: string, ok: (snapshot: QuerySnapshot) => boolean): Promise<QuerySnapshot> => {
    for (;;) {
      const found = snapshots.find((snapshot) => !snapshot.metadata.fromCache && ok(snapshot));
      if (found) return found;
      await within(new Promise<void>((resolve) => waiters.push(resolve)), label);
    }
  };
  const ids = (snapshot: QuerySnapshot) => snapshot.docs.map((doc) => doc.id);
  await snapshotWhere('first snapshot', (snapshot) => ids(snapshot).join() === 'a,b,c,d');

  await within(disableNetwork(db), 'disableNetwork');
  await server.close();
  server = await startHearth({ dataDir, port });
  rest = firestoreRest(server);
  await rest.commit([rest.remove('bloom/a'), rest.set('bloom/b', { n: int(50) }), rest.set('bloom/c', { n: int(7) }), rest.set('bloom/e', { n: int(1) })]);

  const mismatches: MismatchInfo[] = [];
  const stopHook = TestingHooks.onExistenceFilterMismatch((info) => mismatches.push(info as MismatchInfo));
  snapshots.length = 0;
  try {
    await within(enableNetwork(db), 'enableNetwork');
    const resumed = await snapshotWhere('resumed snapshot', (snapshot) => ids(snapshot).join() === 'e,d,c');
    assert.deepEqual(resumed.docs.map((doc) => [doc.id, doc.get('n')]), [['e', 1], ['d', 3], ['c', 7]]);
  } finally {
    stopHook();
  }
  // The server sent c and e (changed since the token) and a filter of 3 names; the SDK held 5.
  assert.equal(mismatches.length, 1, JSON.stringify(mismatches));
  const [mismatch] = mismatches;
  assert.equal(mismatch!.existenceFilterCount, 3);
  assert.equal(mismatch!.localCacheCount, 5);
  assert.equal(mismatch!.bloomFilter?.applied, true, 'the SDK applied the bloom filter (no full re-listen)');
  for (const id of ['c', 'd', 'e']) assert.equal(mismatch!.bloomFilter!.mightContain(rest.name(`bloom/${id}`)), true, id);
  // A and b left; a false positive is possible for either in principle, but at 1% on fixed names it is not the case here.
  for (const id of ['a', 'b']) assert.equal(mismatch!.bloomFilter!.mightContain(rest.name(`bloom/${id}`)), false, id);

  unsubscribe();
  await terminate(db);
  await deleteApp(app);
});
