/**
 * Reads and deletes of named documents on PostgreSQL stay one index lookup per key when the
 * planner's statistics are stale: taken while the table was empty (a new server), then 20,200
 * documents written (autovacuum off for the table here, so nothing refreshes them). Before, the lookup was a hash
 * join over every row of the database (20 documents read by scanning 20,200), and 20-result
 * queries ran at 0.4 of their rate after a burst of writes until an ANALYZE. Checked on the plans
 * PostgreSQL itself runs (EXPLAIN ANALYZE): the rows each node over the table read, in all loops.
 * Also through the store: the documents read are the ones named, at a past time too.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { openPgPool, type PgPool } from '../../packages/server/src/storage/postgres/pg-connection.js';
import { openPgDocumentStore, type PgDocumentStore } from '../../packages/server/src/storage/postgres/pg-document-store.js';
import type { PgChangeFeed } from '../../packages/server/src/storage/postgres/pg-change-feed.js';
import { documentKey, keyedDelete, keyedLookup } from '../../packages/server/src/storage/postgres/pg-keyed.js';
import { pgRowColumns } from '../../packages/server/src/storage/postgres/pg-document-scan.js';
import { createTestPgDatabase, type TestPgDatabase } from '../helpers/pg-database.js';

const db = 'demo-keyed/(default)';
const documents = 20_000;
let database: TestPgDatabase;
let pool: PgPool;
let store: PgDocumentStore;
let feed: PgChangeFeed;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

/** Every node of a plan that reads `table`, with the rows it returned over all its loops. */
function scansOf(node: PlanNode, table: string, found: Array<{ type: string; rows: number }> = []): Array<{ type: string; rows: number }> {
  if (node['Relation Name'] === table) found.push({ type: node['Node Type'], rows: node['Actual Rows'] * node['Actual Loops'] });
  for (const child of node.Plans ?? []) scansOf(child, table, found);
  return found;
}

async function plan(client: pg.PoolClient, sql: string, params: unknown[]): Promise<PlanNode> {
  const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
  return rows[0]!['QUERY PLAN'][0]!.Plan;
}

const keysOf = (ids: number[]) => [ids.map(() => Buffer.from('items')), ids.map((i) => Buffer.from(`d${i}`))];

before(async () => {
  database = await createTestPgDatabase();
  pool = openPgPool(database.url, { max: 2 });
  ({ store, feed } = await openPgDocumentStore(pool));
  await pool.query('ALTER TABLE fs_documents SET (autovacuum_enabled = false)');
  // Statistics of an empty database, as a new server has...
  await pool.query('ANALYZE fs_documents');
  const insert = (from: number, to: number) =>
    pool.query(
      `INSERT INTO fs_documents (db, parent, doc_id, collection_id, name_key, create_time, update_time, fields)
       SELECT $1, 'items'::bytea, convert_to('d' || i, 'UTF8'), 'items'::bytea, convert_to('items/d' || i, 'UTF8'), 1, 1, '{}' FROM generate_series($2::int, $3::int) AS i`,
      [db, from, to],
    );
  // ...then it is written 20,200 documents, and they are not refreshed.
  await insert(0, documents + 199);
});

after(async () => {
  await feed?.close();
  await pool?.end();
  await database?.drop();
});

test('the documents named by 20 keys are read by 20 index lookups, not by scanning the database', async () => {
  const client = await pool.connect();
  try {
    const ids = Array.from({ length: 20 }, (_, i) => i * 997);
    const scans = scansOf(await plan(client, keyedLookup('fs_documents', documentKey, pgRowColumns), [db, ...keysOf(ids)]), 'fs_documents');
    assert.ok(scans.length > 0, 'the plan reads fs_documents');
    const read = scans.reduce((sum, scan) => sum + scan.rows, 0);
    assert.ok(read <= ids.length, `rows read from fs_documents: ${read} by ${JSON.stringify(scans)}`);
  } finally {
    client.release();
  }
});

test('deleting the documents named by 20 keys reads only those rows', async () => {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const ids = Array.from({ length: 20 }, (_, i) => 5 + i * 991);
    const root = await plan(client, keyedDelete('fs_documents', documentKey), [db, ...keysOf(ids)]);
    const scans = scansOf(root, 'fs_documents');
    const read = scans.filter((scan) => scan.type !== 'ModifyTable').reduce((sum, scan) => sum + scan.rows, 0);
    assert.ok(read <= 2 * ids.length, `rows read from fs_documents: ${read} by ${JSON.stringify(scans)}`);
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM fs_documents WHERE db = $1', [db]);
    assert.equal(Number(rows[0]!.n), documents + 200 - ids.length, 'exactly the named documents went');
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});

test('through the store: the named documents are the ones read, now and at a past time', async () => {
  const paths = ['items/d3', 'items/d19999', 'items/nothing', 'items/d3'];
  assert.deepEqual([...(await store.getDocuments(db, paths)).keys()].sort(), ['items/d19999', 'items/d3']);
  assert.deepEqual([...(await store.getDocumentsAt(db, paths, 5)).keys()].sort(), ['items/d19999', 'items/d3']);
  assert.equal((await store.getDocumentsAt(db, paths, 0)).size, 0, 'written at time 1: nothing at time 0');
});
