/**
 * PartitionQuery: split points of a collection group for bulk readers. Google's emulator does not implement it
 * (UNIMPLEMENTED), so the judge is the SDK and the protocol's own promise: firebase-admin's
 * `collectionGroup(id).getPartitions(n)` gives at most n partitions, and reading every partition (`toQuery()`) yields
 * every document of the group exactly once, whatever the group's spread over parents, depths and id kinds; the
 * cursors come ordered by name and cut the group into parts of even size; pages (`pageSize`, `pageToken`) add up to
 * the whole answer; a kindless query under a document partitions that document's descendants; a read time
 * partitions the group as it was. Queries Google says cannot be partitioned, and malformed counts and tokens, are
 * refused with INVALID_ARGUMENT.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getFirestore, setLogFunction, type Firestore } from 'firebase-admin/firestore';
import { within } from '../helpers/firestore-target.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

setLogFunction(null);
process.env.METADATA_SERVER_DETECTION ??= 'none';
// google-gax warns that stream paging never autopaginates; firebase-admin reads every page itself.
process.removeAllListeners('warning');

let hearth: TestHearth;
let app: App;
let admin: Firestore;
let root: string;

async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${hearth.url}/v1/${root}${path}`, { method: 'POST', headers: { authorization: 'Bearer owner', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/** The group `items`: under the root collection and under subcollections of other documents, 2 to 6 deep. */
const groupPaths: string[] = [];
for (let i = 0; i < 1200; i++) {
  const id = i % 10 === 0 ? `__id${i - 605}__` : `i${String(i).padStart(4, '0')}`;
  const parent = ['', 'a/x/', 'a/y/', 'b/x/c/z/', 'a/x/deeper/k/'][i % 5]!;
  groupPaths.push(`${parent}items/${id}`);
}
const noise = ['a/x', 'a/y', 'b/x', 'others/o1', 'items-not/n1'];

before(async () => {
  hearth = await startHearth();
  root = `projects/${hearth.projectId}/databases/(default)/documents`;
  const writes = [...groupPaths, ...noise].map((path, n) => ({ update: { name: `${root}/${path}`, fields: { n: { integerValue: String(n) } } } }));
  for (let i = 0; i < writes.length; i += 500) assert.equal((await post(':commit', { writes: writes.slice(i, i + 500) })).status, 200);
  const saved = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = hearth.hostPort;
  app = initializeApp({ projectId: hearth.projectId }, `partitions-${Date.now()}`);
  admin = getFirestore(app);
  if (saved === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
  else process.env.FIRESTORE_EMULATOR_HOST = saved;
});

after(async () => {
  if (admin) await within(admin.terminate(), 'terminate').catch(() => undefined);
  if (app) await deleteApp(app);
  await hearth?.close();
});

const groupQuery = (extra: Record<string, unknown> = {}) => ({ structuredQuery: { from: [{ collectionId: 'items', allDescendants: true }], orderBy: [{ field: { fieldPath: '__name__' } }], ...extra } });

describe('PartitionQuery', () => {
  test('firebase-admin getPartitions(n): at most n partitions, and reading them all yields every document exactly once', async () => {
    for (const desired of [1, 2, 7, 64, 5000]) {
      const partitions = [];
      for await (const partition of admin.collectionGroup('items').getPartitions(desired)) partitions.push(partition);
      assert.ok(partitions.length >= 1 && partitions.length <= desired, `${desired}: ${partitions.length} partitions`);
      if (desired > 1) assert.equal(partitions.length, Math.min(desired, groupPaths.length), `${desired}: as many as asked while the group is larger`);
      const seen: string[] = [];
      // Read 16 partitions at a time: the largest ask makes one partition per document.
      for (let start = 0; start < partitions.length; start += 16) {
        const snapshots = await Promise.all(partitions.slice(start, start + 16).map((partition) => within(partition.toQuery().get(), `partition of ${desired}`)));
        for (const snapshot of snapshots) {
          if (desired > 1) assert.ok(snapshot.size > 0, 'no empty partition');
          seen.push(...snapshot.docs.map((doc) => doc.ref.path));
        }
      }
      assert.equal(new Set(seen).size, seen.length, `${desired}: no document twice`);
      assert.deepEqual([...seen].sort(), [...groupPaths].sort(), `${desired}: every document of the group`);
    }
  });

  test('cursors in name order cut the group into even parts; pages add up to the whole answer', async () => {
    const whole = await post(':partitionQuery', { ...groupQuery(), partitionCount: 7 });
    assert.equal(whole.status, 200);
    const cursors: string[] = whole.body.partitions.map((cursor: { values: Array<{ referenceValue: string }> }) => cursor.values[0]!.referenceValue);
    assert.equal(cursors.length, 7);
    const all = await post(':runQuery', groupQuery());
    const names: string[] = all.body.map((element: { document: { name: string } }) => element.document.name);
    const positions = cursors.map((cursor) => names.indexOf(cursor));
    assert.deepEqual([...positions].sort((a, b) => a - b), positions, 'in name order');
    const sizes = [...positions, names.length].map((position, i) => position - (i ? positions[i - 1]! : 0));
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `even parts: ${sizes}`);

    const paged: string[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < 10; page++) {
      const answer = await post(':partitionQuery', { ...groupQuery(), partitionCount: 7, pageSize: 3, ...(pageToken ? { pageToken } : {}) });
      assert.ok(answer.body.partitions.length <= 3);
      paged.push(...answer.body.partitions.map((cursor: { values: Array<{ referenceValue: string }> }) => cursor.values[0]!.referenceValue));
      pageToken = answer.body.nextPageToken;
      if (!pageToken) break;
    }
    assert.deepEqual(paged, cursors);
  });

  test('__name__ cursors bound a group read exactly: startAt, startAfter, endAt, endBefore, alone, together and with a limit', async () => {
    const names = async (extra: Record<string, unknown> = {}, under = '') =>
      ((await post(`${under}:runQuery`, groupQuery(extra))).body as Array<{ document?: { name: string } }>).filter((element) => element.document).map((element) => element.document!.name);
    const all = await names();
    assert.equal(all.length, groupPaths.length);
    const at = (name: string, before: boolean) => ({ values: [{ referenceValue: name }], before });
    // A numeric id, the first and last names, and names at each depth of nesting.
    const picks = [0, 1, 2, 3, 4, 5, 300, 601, 1199].map((i) => all[i]!).concat(all.find((name) => name.includes('/__id'))!);
    for (const name of picks) {
      const i = all.indexOf(name);
      assert.deepEqual(await names({ startAt: at(name, true) }), all.slice(i), `startAt ${name}`);
      assert.deepEqual(await names({ startAt: at(name, false) }), all.slice(i + 1), `startAfter ${name}`);
      assert.deepEqual(await names({ endAt: at(name, false) }), all.slice(0, i + 1), `endAt ${name}`);
      assert.deepEqual(await names({ endAt: at(name, true) }), all.slice(0, i), `endBefore ${name}`);
      assert.deepEqual(await names({ startAt: at(name, true), limit: 3 }), all.slice(i, i + 3), `startAt ${name} limit 3`);
    }
    assert.deepEqual(await names({ startAt: at(all[100]!, true), endAt: at(all[140]!, true) }), all.slice(100, 140));
    assert.deepEqual(await names({ startAt: at(all[100]!, false), endAt: at(all[140]!, false) }), all.slice(101, 141));
    // A cursor naming a document outside the group: a parent sorts before its descendants.
    const parent = `${root}/a/x`;
    const below = all.filter((name) => name.startsWith(`${parent}/`));
    const from = await names({ startAt: at(parent, true) });
    assert.deepEqual(from.slice(0, below.length).sort(), below.sort(), 'startAt a parent: its descendants first');
    assert.ok((await names({ endAt: at(parent, false) })).every((name) => !name.startsWith(`${parent}/`)), 'endAt a parent: none of its descendants');
    // Under a parent, bounds and cursors together.
    const kindless = (await names({ startAt: at(below[2]!, true), endAt: at(below[5]!, true) }, '/a/x'));
    assert.deepEqual(kindless, below.slice(2, 5));
  });

  test('a kindless query under a document partitions its descendants; a read time partitions the group as it was', async () => {
    const kindless = { structuredQuery: { from: [{ allDescendants: true }], orderBy: [{ field: { fieldPath: '__name__' } }] } };
    const answer = await post('/a/x:partitionQuery', { ...kindless, partitionCount: 3 });
    assert.equal(answer.status, 200);
    const cursors = answer.body.partitions.map((cursor: { values: unknown[] }) => cursor.values[0]);
    const under = async (startAt?: unknown, endBefore?: unknown) => {
      const query = { ...kindless.structuredQuery, ...(startAt ? { startAt: { values: [startAt], before: true } } : {}), ...(endBefore ? { endAt: { values: [endBefore], before: true } } : {}) };
      return ((await post('/a/x:runQuery', { structuredQuery: query })).body as Array<{ document?: { name: string } }>).filter((element) => element.document).map((element) => element.document!.name);
    };
    const parts = [await under(undefined, cursors[0]), await under(cursors[0], cursors[1]), await under(cursors[1], cursors[2]), await under(cursors[2])];
    const descendants = groupPaths.filter((path) => path.startsWith('a/x/')).map((path) => `${root}/${path}`);
    assert.deepEqual(parts.flat().sort(), descendants.sort());

    const before = (await post(':commit', { writes: [] })).body.commitTime;
    await post(':commit', { writes: groupPaths.slice(0, 600).map((path) => ({ delete: `${root}/${path}` })) });
    const now = await post(':partitionQuery', { ...groupQuery(), partitionCount: 1 });
    const then = await post(':partitionQuery', { ...groupQuery(), partitionCount: 1, readTime: before });
    const atHalf = (answer: { body: { partitions: Array<{ values: Array<{ referenceValue: string }> }> } }) => answer.body.partitions[0]!.values[0]!.referenceValue;
    const sortedNames = async (readTime?: string) =>
      ((await post(':runQuery', { ...groupQuery(), ...(readTime ? { readTime } : {}) })).body as Array<{ document: { name: string } }>).map((element) => element.document.name);
    assert.equal(atHalf(then), (await sortedNames(before))[600]);
    assert.equal(atHalf(now), (await sortedNames())[300]);
  });

  test('queries that cannot be partitioned, and malformed counts and tokens, are refused (INVALID_ARGUMENT)', async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['one collection, not a group', { structuredQuery: { from: [{ collectionId: 'items' }] }, partitionCount: 2 }],
      ['a filter', { ...groupQuery({ where: { fieldFilter: { field: { fieldPath: 'n' }, op: 'EQUAL', value: { integerValue: '1' } } } }), partitionCount: 2 }],
      ['descending', { structuredQuery: { from: [{ collectionId: 'items', allDescendants: true }], orderBy: [{ field: { fieldPath: '__name__' }, direction: 'DESCENDING' }] }, partitionCount: 2 }],
      ['an order on a field', { structuredQuery: { from: [{ collectionId: 'items', allDescendants: true }], orderBy: [{ field: { fieldPath: 'n' } }] }, partitionCount: 2 }],
      ['a limit', { ...groupQuery({ limit: 5 }), partitionCount: 2 }],
      ['a cursor', { ...groupQuery({ startAt: { values: [{ referenceValue: `${root}/items/i0001` }], before: true } }), partitionCount: 2 }],
      ['no count', groupQuery()],
      ['a count of 0', { ...groupQuery(), partitionCount: 0 }],
      ['a negative count', { ...groupQuery(), partitionCount: '-3' }],
      ['a count that is no number', { ...groupQuery(), partitionCount: 'many' }],
      ['a huge count', { ...groupQuery(), partitionCount: '99999999999999999999' }],
      ['a forged page token', { ...groupQuery(), partitionCount: 2, pageToken: 'not-ours' }],
      ['a negative page size', { ...groupQuery(), partitionCount: 2, pageSize: -1 }],
      ['an unknown field', { ...groupQuery(), partitionCount: 2, shards: 3 }],
    ];
    for (const [label, body] of cases) {
      const answer = await post(':partitionQuery', body);
      assert.equal(answer.status, 400, `${label}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.status, 'INVALID_ARGUMENT', label);
    }
  });
});
