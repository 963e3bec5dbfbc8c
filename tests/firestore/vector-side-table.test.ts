/**
 * The side table of declared vector fields (issue 36): filled when a vector index is declared over
 * documents that already exist (a restart with a new indexes file), emptied with the database, and
 * built by the upgrade of a data folder (or PostgreSQL database) written before the table existed.
 * Each answer is checked against findNearest with no index declared, which reads every document.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrations } from '../../packages/server/src/storage/sqlite/migrations.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { testBackend, testDatabaseUrl } from '../helpers/test-backend.js';

const vector = (xs: readonly number[]) => ({ mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: xs.map((x) => ({ doubleValue: x })) } } } } });

async function post(hearth: TestHearth, verb: string, body: unknown): Promise<any> {
  const url = `${hearth.url}/v1/projects/${hearth.projectId}/databases/(default)/documents:${verb}`;
  const response = await fetch(url, { method: 'POST', headers: { authorization: 'Bearer owner', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(response.status, 200, `${verb}: ${await response.clone().text()}`);
  return response.json();
}

/** Names and distances of a findNearest answer. */
async function nearest(hearth: TestHearth, queryVector: readonly number[], measure: string): Promise<Array<[string, unknown]>> {
  const structuredQuery = { from: [{ collectionId: 'vecs' }], findNearest: { vectorField: { fieldPath: 'embedding' }, queryVector: vector(queryVector), distanceMeasure: measure, limit: 7, distanceResultField: 'd' } };
  const answer = (await post(hearth, 'runQuery', { structuredQuery })) as Array<{ document?: { name: string; fields: { d: unknown } } }>;
  return answer.filter((element) => element.document).map((element) => [element.document!.name.split('/').pop()!, element.document!.fields.d]);
}

const queries: Array<[number[], string]> = [
  [[0.5, -1, 2], 'EUCLIDEAN'],
  [[1, 1, 0], 'COSINE'],
  [[-2, 0.25, 1], 'DOT_PRODUCT'],
];

async function answers(hearth: TestHearth): Promise<unknown[]> {
  const all: unknown[] = [];
  for (const [queryVector, measure] of queries) all.push(await nearest(hearth, queryVector, measure));
  return all;
}

/** 60 documents: vectors with repeated coordinates (ties), a few of another dimension, one not a vector. */
async function seed(hearth: TestHearth): Promise<void> {
  const name = (id: string) => `projects/${hearth.projectId}/databases/(default)/documents/vecs/${id}`;
  const writes = Array.from({ length: 60 }, (_, i) => {
    const embedding = i % 13 === 0 ? vector([i % 3, 1]) : i === 7 ? { stringValue: 'none' } : vector([(i * 7) % 5 - 2, (i * 3) % 4, i % 2]);
    return { update: { name: name(`d${String(i).padStart(2, '0')}`), fields: { embedding } } };
  });
  await post(hearth, 'commit', { writes });
}

function declare(dataDir: string): string {
  const indexesFile = join(dataDir, 'firestore.indexes.json');
  writeFileSync(indexesFile, JSON.stringify({ indexes: [{ collectionGroup: 'vecs', queryScope: 'COLLECTION', fields: [{ fieldPath: 'embedding', vectorConfig: { dimension: 3, flat: {} } }] }] }));
  return indexesFile;
}

test('declared over documents that exist: the side table is filled, answers as before; a clear empties it', async () => {
  const dataDir = tempDataDir();
  try {
    const plain = await startHearth({ dataDir });
    await seed(plain);
    const expected = await answers(plain);
    await plain.close();

    const declared = await startHearth({ dataDir, indexesFile: declare(dataDir) });
    try {
      assert.deepEqual(await answers(declared), expected);
      const cleared = await fetch(`${declared.url}/emulator/v1/projects/${declared.projectId}/databases/(default)/documents`, { method: 'DELETE', headers: { authorization: 'Bearer owner' } });
      assert.equal(cleared.status, 200);
      assert.deepEqual(await nearest(declared, [1, 1, 1], 'EUCLIDEAN'), []);
      await seed(declared);
      assert.deepEqual(await answers(declared), expected);
    } finally {
      await declared.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a data folder (or database) from before the side table upgrades, and its declared vector fields are filled', async () => {
  const dataDir = tempDataDir();
  try {
    const indexesFile = declare(dataDir);
    const older = await startHearth({ dataDir, indexesFile });
    await seed(older);
    const expected = await answers(older);
    await older.close();

    // Back to the schema before the side table: its tables gone, the version one step earlier.
    if (testBackend === 'sqlite') {
      const file = new Database(join(dataDir, 'hearth.sqlite'));
      file.exec('DROP TABLE fs_vectors; DROP TABLE fs_vector_sets; UPDATE fs_meta SET index_set = \'[]\'');
      // The folder as it was before the side table's step (the steps after it are re-run too).
      file.pragma(`user_version = ${migrations.findIndex((step) => step.includes('CREATE TABLE fs_vectors'))}`);
      file.close();
    } else {
      const client = new pg.Client({ connectionString: (await testDatabaseUrl(dataDir))! });
      await client.connect();
      await client.query("DROP TABLE fs_vectors; DROP TABLE fs_vector_sets; UPDATE fs_meta SET index_set = '[]'; UPDATE hearth_schema SET version = version - 1 WHERE component = 'documents'");
      await client.end();
    }

    const upgraded = await startHearth({ dataDir, indexesFile });
    try {
      assert.deepEqual(await answers(upgraded), expected);
    } finally {
      await upgraded.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
