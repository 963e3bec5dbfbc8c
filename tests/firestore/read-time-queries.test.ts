/**
 * Queries at a past read time answered from the present indexes corrected by the versions kept since
 * (issue 36, item 3: core/past-reads.ts): documents updated across the order, moved into and out of a
 * filter, deleted and created since the read time. Through firebase-admin's read-only transactions
 * at a readTime; every answer is checked against the documents as they were, computed here.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getFirestore, setLogFunction, type Firestore, type Query, type Timestamp } from 'firebase-admin/firestore';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

setLogFunction(null);
process.env.METADATA_SERVER_DETECTION ??= 'none';

interface Item {
  v: number;
  cat: number;
}

let server: TestHearth;
let app: App;
let db: Firestore;
/** The documents as they were at `readTime`, by id (in `items`, and in `users/u1/items` for the group). */
const then = new Map<string, Item>();
let readTime: Timestamp;

const id = (i: number) => `i${String(i).padStart(2, '0')}`;

before(async () => {
  server = await startHearth();
  process.env.FIRESTORE_EMULATOR_HOST = server.hostPort;
  app = initializeApp({ projectId: server.projectId }, 'read-time-queries');
  db = getFirestore(app);
  const seed = db.batch();
  for (let i = 0; i < 40; i++) {
    const item = { v: (i * 7) % 23, cat: i % 3 };
    then.set(id(i), item);
    seed.set(db.collection('items').doc(id(i)), item);
  }
  seed.set(db.doc('users/u1/items/g1'), { v: 5, cat: 1 });
  const [written] = await seed.commit();
  readTime = written!.writeTime;
  // Since the read time: across the order, in and out of cat == 1, deleted, created, and a group member changed.
  const later = db.batch();
  for (let i = 0; i < 40; i += 4) later.update(db.collection('items').doc(id(i)), { v: 100 + i, cat: (i + 1) % 3 });
  for (let i = 1; i < 40; i += 9) later.delete(db.collection('items').doc(id(i)));
  for (let i = 40; i < 46; i++) later.set(db.collection('items').doc(id(i)), { v: i % 5, cat: 1 });
  later.update(db.doc('users/u1/items/g1'), { v: 50 });
  await later.commit();
  await db.collection('items').doc(id(2)).update({ v: -1 });
});

after(async () => {
  await deleteApp(app);
  await server.close();
});

async function atReadTime(query: Query): Promise<string[]> {
  return db.runTransaction(async (transaction) => (await transaction.get(query)).docs.map((doc) => doc.id), { readOnly: true, readTime });
}

/** What the query answered at the read time: filtered, ordered (ties by id), cut. */
function expected(filter: (item: Item) => boolean, order: 'v' | 'id', descending: boolean, limit: number): string[] {
  const sign = descending ? -1 : 1;
  return [...then]
    .filter(([, item]) => filter(item))
    .sort(([a, x], [b, y]) => sign * ((order === 'v' ? x.v - y.v : 0) || (a < b ? -1 : a > b ? 1 : 0)))
    .slice(0, limit)
    .map(([name]) => name);
}

test('ordered, filtered and limited queries at a past readTime answer the documents as they were', async () => {
  const items = db.collection('items');
  const cases: Array<[string, Query, string[]]> = [
    ['by name', items.limit(15), expected(() => true, 'id', false, 15)],
    ['order by v', items.orderBy('v').limit(12), expected(() => true, 'v', false, 12)],
    ['order by v, descending', items.orderBy('v', 'desc').limit(8), expected(() => true, 'v', true, 8)],
    ['cat == 1', items.where('cat', '==', 1), expected((item) => item.cat === 1, 'id', false, 100)],
    ['cat == 1, order by v', items.where('cat', '==', 1).orderBy('v').limit(6), expected((item) => item.cat === 1, 'v', false, 6)],
    ['v >= 10', items.where('v', '>=', 10).limit(9), expected((item) => item.v >= 10, 'v', false, 9)],
    ['all of them', items, expected(() => true, 'id', false, 100)],
  ];
  for (const [label, query, want] of cases) assert.deepEqual(await atReadTime(query), want, label);
  // Now, for contrast: the changes are there.
  assert.notDeepEqual((await items.orderBy('v').limit(12).get()).docs.map((doc) => doc.id), expected(() => true, 'v', false, 12));
});

test('a collection group at a past readTime', async () => {
  const group = db.collectionGroup('items').where('v', '==', 5);
  const want = [...expected((item) => item.v === 5, 'id', false, 100).map((name) => `items/${name}`), 'users/u1/items/g1'].sort();
  const got = await db.runTransaction(async (transaction) => (await transaction.get(group)).docs.map((doc) => doc.ref.path), { readOnly: true, readTime });
  assert.deepEqual(got, want);
});
