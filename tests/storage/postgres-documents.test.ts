/**
 * The document store on PostgreSQL answers as on SQLite: the same random datasets (every value
 * type, numeric and odd ids, subcollections) written to a Hearth on each backend, then random
 * valid queries (filters, orders, cursors, limits, collection groups) must answer identically,
 * document for document. Then what only PostgreSQL needs care for: ids starting with NUL (TEXT
 * refuses NUL; keys are bytea), index values longer than the kept prefix (equality and order still
 * exact), a key too long for a B-tree refused with INVALID_ARGUMENT and nothing written, and
 * collection ids listed the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { createTestPgDatabase, type TestPgDatabase } from '../helpers/pg-database.js';
import { Random, layoutForSeed, randomDataset, randomValidQuery, type Dataset } from '../helpers/random-firestore.js';

let pgDatabase: TestPgDatabase;
let sqlite: TestHearth;
let postgres: TestHearth;
const owner = { authorization: 'Bearer owner' };

const root = (server: TestHearth) => `projects/${server.projectId}/databases/(default)/documents`;

async function commit(server: TestHearth, writes: unknown[]): Promise<{ status: number; body: any }> {
  return postJson(`${server.url}/v1/${root(server)}:commit`, { writes }, owner);
}

async function query(server: TestHearth, parent: string, structuredQuery: unknown): Promise<unknown> {
  const answer = await postJson(`${server.url}/v1/${parent}:runQuery`, { structuredQuery }, owner);
  if (answer.status !== 200) return { status: answer.status, error: answer.body?.error?.status };
  return (answer.body as Array<{ document?: { name: string; fields?: unknown } }>).filter((item) => item.document).map((item) => [item.document!.name, item.document!.fields]);
}

async function writeBoth(writes: unknown[]): Promise<void> {
  for (const server of [sqlite, postgres]) {
    const answer = await commit(server, writes);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  }
}

describe('documents on PostgreSQL answer as on SQLite', () => {
  before(async () => {
    pgDatabase = await createTestPgDatabase();
    sqlite = await startHearth();
    postgres = await startHearth({ databaseUrl: pgDatabase.url });
    assert.equal(root(sqlite), root(postgres));
  });

  after(async () => {
    await sqlite?.close();
    await postgres?.close();
    await pgDatabase?.drop();
  });

  test('random datasets and random valid queries: the same answers, in the same order', async () => {
    let compared = 0;
    let nonEmpty = 0;
    for (const seed of [11, 12, 13, 14]) {
      const rng = new Random(seed);
      const dataset: Dataset = randomDataset(rng, layoutForSeed(root(sqlite), seed), 60);
      await writeBoth(dataset.documents.map((doc) => ({ update: { name: doc.name, fields: doc.fields } })));
      for (let i = 0; i < 40; i++) {
        const structured = randomValidQuery(rng, dataset);
        const [onSqlite, onPostgres] = [await query(sqlite, dataset.parent, structured), await query(postgres, dataset.parent, structured)];
        assert.deepEqual(onPostgres, onSqlite, `seed ${seed} query ${i}: ${JSON.stringify(structured)}`);
        compared++;
        if (Array.isArray(onSqlite) && onSqlite.length > 0) nonEmpty++;
      }
    }
    assert.ok(nonEmpty > compared / 3, `most queries found documents (${nonEmpty} of ${compared})`);
  });

  test('ids with NUL, numeric ids and long values keep their order; equality on a long value is exact', async () => {
    // Values beyond the kept index prefix (1,000 bytes): they differ within it, except two that
    // share 3,000 bytes and differ after (equality must still tell them apart). Values sharing the
    // whole prefix tie (the next test).
    const long = (tail: string) => 'x'.repeat(3000) + tail;
    const differing = (head: string) => head + 'y'.repeat(3000);
    const docs: Array<[string, string]> = [
      ['\u0000a', long('b')],
      ['\u0000\u0000', long('a')],
      ['__id-5__', long('a') + 'z'],
      ['__id7__', 'short'],
      ['plain', differing('c')],
      ['\u0001', differing('')],
      ['\u0002', differing('b')],
    ];
    await writeBoth(docs.map(([id, s]) => ({ update: { name: `${root(sqlite)}/odd/${id}`, fields: { s: { stringValue: s } } } })));
    const byName = { from: [{ collectionId: 'odd' }] };
    const byValue = { from: [{ collectionId: 'odd' }], where: { fieldFilter: { field: { fieldPath: 's' }, op: 'LESS_THAN', value: { stringValue: 'x' } } }, orderBy: [{ field: { fieldPath: 's' }, direction: 'DESCENDING' }] };
    const equal = { from: [{ collectionId: 'odd' }], where: { fieldFilter: { field: { fieldPath: 's' }, op: 'EQUAL', value: { stringValue: long('a') } } } };
    const between = (op: string, value: string) => ({ fieldFilter: { field: { fieldPath: 's' }, op, value: { stringValue: value } } });
    const range = { from: [{ collectionId: 'odd' }], where: { compositeFilter: { op: 'AND', filters: [between('GREATER_THAN', differing('b')), between('LESS_THAN', 'x')] } }, orderBy: [{ field: { fieldPath: 's' } }] };
    for (const structured of [byName, byValue, equal, range]) {
      const onSqlite = await query(sqlite, root(sqlite), structured);
      assert.deepEqual(await query(postgres, root(postgres), structured), onSqlite, JSON.stringify(structured).slice(0, 200));
      assert.ok(Array.isArray(onSqlite) && onSqlite.length > 0);
    }
    const equalNames = (await query(postgres, root(postgres), equal)) as Array<[string, unknown]>;
    assert.deepEqual(equalNames.map(([name]) => name), [`${root(postgres)}/odd/\u0000\u0000`]);
  });

  test('long values sharing the kept prefix tie and come in id order on both backends, as on Firestore', async () => {
    // Google's emulator: strings sharing their first 1,499 bytes sort by document id (descending
    // with a descending order); Hearth keeps 1,000 bytes of the encoded value on both backends.
    // Ids run opposite to the values' own order, so the value order would be visible.
    const shared = 'p'.repeat(1200);
    const values: Array<[string, string]> = [['a', `${shared}d`], ['b', `${shared}c`], ['c', `${shared}b`], ['d', `${shared}a`], ['e', 'p'.repeat(900) + 'z']];
    await writeBoth(values.map(([id, s]) => ({ update: { name: `${root(sqlite)}/tie/${id}`, fields: { s: { stringValue: s }, list: { arrayValue: { values: [{ stringValue: `${shared}1` }, { stringValue: `${shared}2` }] } } } } })));
    const names = async (server: TestHearth, structured: unknown) => ((await query(server, root(server), structured)) as Array<[string, unknown]>).map(([name]) => name.split('/').pop());
    const ordered = (direction: string) => ({ from: [{ collectionId: 'tie' }], orderBy: [{ field: { fieldPath: 's' }, direction }] });
    const after = { ...ordered('ASCENDING'), startAt: { values: [{ stringValue: `${shared}c` }, { referenceValue: `${root(sqlite)}/tie/b` }], before: false } };
    const equal = { from: [{ collectionId: 'tie' }], where: { fieldFilter: { field: { fieldPath: 's' }, op: 'EQUAL', value: { stringValue: `${shared}c` } } } };
    const contains = { from: [{ collectionId: 'tie' }], where: { fieldFilter: { field: { fieldPath: 'list' }, op: 'ARRAY_CONTAINS', value: { stringValue: `${shared}2` } } } };
    for (const server of [sqlite, postgres]) {
      assert.deepEqual(await names(server, ordered('ASCENDING')), ['a', 'b', 'c', 'd', 'e'], `${server === sqlite ? 'SQLite' : 'PostgreSQL'} ascending`);
      assert.deepEqual(await names(server, ordered('DESCENDING')), ['e', 'd', 'c', 'b', 'a']);
      assert.deepEqual(await names(server, after), ['c', 'd', 'e'], 'a cursor inside the tie goes on by id');
      assert.deepEqual(await names(server, equal), ['b'], 'equality is still exact');
    }
    // An element removed whose kept prefix another element shares: the document is still found by the other.
    await writeBoth([{ update: { name: `${root(sqlite)}/tie/a`, fields: { s: { stringValue: `${shared}d` }, list: { arrayValue: { values: [{ stringValue: `${shared}2` }] } } } } }]);
    for (const server of [sqlite, postgres]) assert.deepEqual(await names(server, contains), ['a', 'b', 'c', 'd', 'e']);
  });

  test('a key too long for a PostgreSQL index is refused with INVALID_ARGUMENT, and the commit writes nothing', async () => {
    const deep = Array.from({ length: 30 }, (_, i) => `c${i}/${'p'.repeat(80)}`).join('/');
    const answer = await commit(postgres, [
      { update: { name: `${root(postgres)}/fine/one`, fields: { n: { integerValue: '1' } } } },
      { update: { name: `${root(postgres)}/${deep}/leaf/doc`, fields: { s: { stringValue: 'x'.repeat(900) } } } },
    ]);
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    const fine = await fetch(`${postgres.url}/v1/${root(postgres)}/fine/one`, { headers: owner });
    assert.equal(fine.status, 404, 'the other write of the refused commit is not there');
  });

  test('collection ids are listed the same', async () => {
    for (const parent of [root(sqlite), `${root(sqlite)}/runs/seed11`]) {
      const list = async (server: TestHearth) => (await postJson(`${server.url}/v1/${parent}:listCollectionIds`, {}, owner)).body;
      assert.deepEqual(await list(postgres), await list(sqlite));
    }
  });
});
