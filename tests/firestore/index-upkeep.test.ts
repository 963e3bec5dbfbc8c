/**
 * Index upkeep on overwrite: a commit that replaces a document compares only the top-level fields
 * whose value changed (document-entries.ts), and the entries it removes and adds must be exactly
 * those a full comparison of every entry finds. Then, end to end on the configured backend, queries
 * by an overwritten value find nothing while unchanged fields' entries stay; and a multi-row
 * INSERT of entries (sqlite-write-batch.ts BatchRunner) keeps each row's effect and order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { IndexEntry } from '../../packages/server/src/storage/document-store.js';
import { changeFor, compositeKind, singleFieldEntries, type Doc } from '../../packages/server/src/firestore/core/documents.js';
import { diffEntries } from '../../packages/server/src/firestore/core/document-entries.js';
import { keyFromSegments } from '../../packages/server/src/firestore/core/paths.js';
import { fieldsFromWire } from '../../packages/server/src/firestore/core/value-wire.js';
import { migrate } from '../../packages/server/src/storage/sqlite/migrations.js';
import { BatchRunner, WriteBatch, entryRowsPerStatement } from '../../packages/server/src/storage/sqlite/sqlite-write-batch.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

const key = keyFromSegments(['things', 'one']);
const doc = (fields: Record<string, unknown>): Doc => ({ key, fields: fieldsFromWire(fields, 'fields'), createTime: 1, updateTime: 2 });
const int = (n: number) => ({ integerValue: String(n) });
const str = (s: string) => ({ stringValue: s });
const array = (...values: unknown[]) => ({ arrayValue: { values } });
const map = (fields: Record<string, unknown>) => ({ mapValue: { fields } });

/** A stand-in composite index over fields a and b: its entries depend on two fields at once. */
const indexing = {
  composite: (d: Doc): IndexEntry[] => {
    const a = singleFieldEntries(d.fields).find((entry) => entry.field === 'a' && entry.kind === 0);
    const b = singleFieldEntries(d.fields).find((entry) => entry.field === 'b' && entry.kind === 0);
    return a && b ? [{ field: 'a,b', kind: compositeKind, value: Buffer.concat([a.value, b.value]) }] : [];
  },
};

const id = (entry: IndexEntry) => `${entry.kind}/${entry.field}/${entry.value.toString('hex')}`;
const ids = (entries: readonly IndexEntry[]) => entries.map(id).sort();

describe('an overwrite writes exactly the entries a full comparison finds', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['one field of several changes', { a: int(1), b: int(2), s: str('x') }, { a: int(1), b: int(3), s: str('x') }],
    ['nothing changes', { a: int(1), b: str('y') }, { a: int(1), b: str('y') }],
    ['an integer becomes the equal double (same entries)', { a: int(1), b: int(2) }, { a: { doubleValue: 1 }, b: int(2) }],
    ['a nested leaf changes, its sibling stays', { m: map({ x: int(1), y: int(2) }), a: int(0) }, { m: map({ x: int(1), y: int(5) }), a: int(0) }],
    ['an array element changes, the others and duplicates stay', { tags: array(str('a'), str('b'), str('b')) }, { tags: array(str('b'), str('c'), str('a')) }],
    ['a field goes, another comes', { a: int(1), gone: str('old') }, { a: int(1), fresh: str('new') }],
    ['a field changes type', { a: int(1), b: str('1') }, { a: int(1), b: array(str('1')) }],
    ['a map becomes a scalar', { m: map({ x: map({ y: int(1) }) }) }, { m: int(1) }],
    ['a vector changes', { v: map({ __type__: str('__vector__'), value: array({ doubleValue: 1 }, { doubleValue: 2 }) }) }, { v: map({ __type__: str('__vector__'), value: array({ doubleValue: 1 }, { doubleValue: 3 }) }) }],
  ];
  for (const [name, beforeFields, afterFields] of cases) {
    test(name, () => {
      const before = doc(beforeFields);
      const after = doc(afterFields);
      const all = (d: Doc) => [...singleFieldEntries(d.fields), ...indexing.composite(d)];
      const expected = diffEntries(all(before), all(after));
      const change = changeFor(before, after, indexing);
      assert.deepEqual(ids(change.removeEntries), ids(expected.remove));
      assert.deepEqual(ids(change.addEntries), ids(expected.add));
    });
  }
});

describe('queries after overwrites find the new values only', () => {
  let server: TestHearth;
  const owner = { authorization: 'Bearer owner' };
  const root = () => `projects/${server.projectId}/databases/(default)/documents`;

  before(async () => {
    server = await startHearth();
  });
  after(async () => {
    await server?.close();
  });

  const write = async (id: string, fields: Record<string, unknown>) => {
    const answer = await postJson(`${server.url}/v1/${root()}:commit`, { writes: [{ update: { name: `${root()}/upkeep/${id}`, fields } }] }, owner);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  };
  const where = async (field: string, op: string, value: unknown) => {
    const structuredQuery = { from: [{ collectionId: 'upkeep' }], where: { fieldFilter: { field: { fieldPath: field }, op, value } } };
    const answer = await postJson(`${server.url}/v1/${root()}:runQuery`, { structuredQuery }, owner);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return (answer.body as Array<{ document?: { name: string } }>).filter((item) => item.document).map((item) => item.document!.name.split('/').pop());
  };

  test('an overwrite changing one field keeps the others found and the old value gone', async () => {
    await write('d', { a: int(1), b: int(2), m: map({ x: int(7), y: int(8) }), tags: array(str('p'), str('q')) });
    await write('d', { a: int(1), b: int(3), m: map({ x: int(7), y: int(9) }), tags: array(str('q'), str('r')) });
    assert.deepEqual(await where('a', 'EQUAL', int(1)), ['d']);
    assert.deepEqual(await where('b', 'EQUAL', int(2)), []);
    assert.deepEqual(await where('b', 'EQUAL', int(3)), ['d']);
    assert.deepEqual(await where('m.x', 'EQUAL', int(7)), ['d']);
    assert.deepEqual(await where('m.y', 'EQUAL', int(8)), []);
    assert.deepEqual(await where('m.y', 'EQUAL', int(9)), ['d']);
    assert.deepEqual(await where('tags', 'ARRAY_CONTAINS', str('p')), []);
    assert.deepEqual(await where('tags', 'ARRAY_CONTAINS', str('q')), ['d']);
    assert.deepEqual(await where('tags', 'ARRAY_CONTAINS', str('r')), ['d']);
    assert.deepEqual(await where('b', 'GREATER_THAN', int(0)), ['d']);
  });

  test('an integer overwritten by the equal double stays found by either', async () => {
    await write('e', { n: int(5) });
    await write('e', { n: { doubleValue: 5 } });
    assert.deepEqual(await where('n', 'EQUAL', int(5)), ['e']);
    assert.deepEqual(await where('n', 'EQUAL', { doubleValue: 5 }), ['e']);
  });

  test('a field dropped by an overwrite is no longer found', async () => {
    await write('f', { keep: str('k'), drop: str('z') });
    await write('f', { keep: str('k') });
    assert.deepEqual(await where('drop', 'EQUAL', str('z')), []);
    assert.deepEqual(await where('keep', 'EQUAL', str('k')), ['f']);
  });
});

test('entries inserted several rows per statement land as one statement each would leave them', () => {
  const db = new Database(':memory:');
  migrate(db);
  const runner = new BatchRunner(db);
  const batch = new WriteBatch();
  const entry = (docId: string, value: string) => ['p/(default)', 'c', 'f', 0, Buffer.from(value), docId] as const;
  // More rows than one statement takes, a duplicate (ignored, not an error), and a delete between
  // two inserts of the same entry: the delete must run after the first and before the second.
  for (let i = 0; i < entryRowsPerStatement * 2 + 3; i++) batch.add('insertEntry', ...entry(`d${i}`, `v${i}`));
  batch.add('insertEntry', ...entry('d0', 'v0'));
  batch.add('insertEntry', ...entry('x', 'gone'));
  batch.add('deleteEntry', ...entry('x', 'gone'));
  batch.add('insertEntry', ...entry('y', 'back'));
  batch.add('deleteEntry', ...entry('y', 'back'));
  batch.add('insertEntry', ...entry('y', 'back'));
  db.transaction(() => runner.run(batch.entries()))();
  const rows = db.prepare('SELECT doc_id FROM fs_index ORDER BY doc_id').all() as Array<{ doc_id: string }>;
  const expected = [...Array.from({ length: entryRowsPerStatement * 2 + 3 }, (_, i) => `d${i}`), 'y'].sort();
  assert.deepEqual(rows.map((row) => row.doc_id), expected);
  db.close();
});
