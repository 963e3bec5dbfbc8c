/**
 * Document ids are stored so that SQLite's byte order is Firestore's id order (numeric ids first, by number). Ids
 * starting with NUL, which sorted first before numeric ids existed, are moved behind them by a migration: written
 * as an older Hearth stored them, they keep their documents, their index entries and their place after it.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { indexPrefixMigration, storedIdsMigration } from '../../packages/server/src/storage/sqlite/migrations.js';
import { idFromStored } from '../../packages/server/src/storage/sqlite/sqlite-document-rows.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

const root = (hearth: TestHearth) => `${hearth.url}/v1/projects/${hearth.projectId}/databases/(default)/documents`;

async function post(hearth: TestHearth, verb: string, body: unknown): Promise<any> {
  const response = await fetch(`${root(hearth)}:${verb}`, { method: 'POST', headers: { authorization: 'Bearer owner', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(response.status, 200, `${verb}: ${await response.clone().text()}`);
  return response.json();
}

const ids = (answer: Array<{ document?: { name: string } }>) => answer.filter((element) => element.document).map((element) => element.document!.name.split('/').pop());

test('ids starting with NUL, stored by an older Hearth, keep their documents and their order after the upgrade', async () => {
  const dataDir = tempDataDir();
  try {
    const older = await startHearth({ dataDir });
    const name = (id: string) => `projects/${older.projectId}/databases/(default)/documents/old/${id}`;
    await post(older, 'commit', { writes: ['\u0000b', 'a', '\u0000a', '!'].map((id) => ({ update: { name: name(id), fields: { v: { integerValue: '1' } } } })) });
    await older.close();

    // The rows as an older Hearth wrote them (ids as they are), then the migration that upgrades them.
    const file = new Database(join(dataDir, 'hearth.sqlite'));
    for (const table of ['fs_documents', 'fs_index']) {
      const moved = file.prepare(`SELECT DISTINCT doc_id FROM ${table} WHERE doc_id < char(1)`).all() as Array<{ doc_id: string }>;
      assert.equal(moved.length, 2, `${table} holds the two NUL ids`);
      for (const row of moved) file.prepare(`UPDATE ${table} SET doc_id = ? WHERE doc_id = ?`).run(idFromStored(row.doc_id), row.doc_id);
    }
    file.exec(storedIdsMigration);
    file.close();

    const upgraded = await startHearth({ dataDir });
    try {
      await post(upgraded, 'commit', { writes: [{ update: { name: name('__id5__'), fields: { v: { integerValue: '1' } } } }] });
      const expected = ['__id5__', '\u0000a', '\u0000b', '!', 'a'];
      assert.deepEqual(ids(await post(upgraded, 'runQuery', { structuredQuery: { from: [{ collectionId: 'old' }] } })), expected, 'name order (the documents table)');
      const byIndex = { structuredQuery: { from: [{ collectionId: 'old' }], where: { fieldFilter: { field: { fieldPath: 'v' }, op: 'EQUAL', value: { integerValue: '1' } } } } };
      assert.deepEqual(ids(await post(upgraded, 'runQuery', byIndex)), expected, 'an equality (the index entries)');
      const descending = { structuredQuery: { from: [{ collectionId: 'old' }], orderBy: [{ field: { fieldPath: 'v' }, direction: 'DESCENDING' }] } };
      assert.deepEqual(ids(await post(upgraded, 'runQuery', descending)), [...expected].reverse(), 'descending');
      const found = await post(upgraded, 'batchGet', { documents: [name('\u0000a'), name('__id5__')] });
      assert.deepEqual(found.map((element: { found?: unknown }) => element.found !== undefined), [true, true]);
    } finally {
      await upgraded.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('index values stored whole by an older Hearth are cut to the kept prefix: long values tie by id, and a removed element leaves its twin', async () => {
  const dataDir = tempDataDir();
  try {
    const older = await startHearth({ dataDir });
    const name = (id: string) => `projects/${older.projectId}/databases/(default)/documents/long/${id}`;
    const shared = 'q'.repeat(1500);
    const fields = (tail: string) => ({ s: { stringValue: shared + tail }, list: { arrayValue: { values: [{ stringValue: `${shared}1` }, { stringValue: `${shared}2` }] } } });
    await post(older, 'commit', { writes: [['a', 'z'], ['b', 'y'], ['c', 'x']].map(([id, tail]) => ({ update: { name: name(id!), fields: fields(tail!) } })) });
    await older.close();

    // The entries as an older Hearth wrote them (whole values, one per element), then the migration.
    const file = new Database(join(dataDir, 'hearth.sqlite'));
    const whole = (suffix: string) => Buffer.concat([Buffer.of(0x19), Buffer.from(shared + suffix), Buffer.of(0, 1)]);
    const cut = whole('').subarray(0, 1000);
    for (const [id, tail] of [['a', 'z'], ['b', 'y'], ['c', 'x']]) {
      file.prepare("UPDATE fs_index SET value = ? WHERE doc_id = ? AND field = 's' AND value = ?").run(whole(tail!), id, cut);
      file.prepare("UPDATE fs_index SET value = ? WHERE doc_id = ? AND field = 'list' AND kind = 1 AND value = ?").run(whole('1'), id, cut);
      file.prepare("INSERT INTO fs_index (db, parent, field, kind, value, doc_id) SELECT db, parent, field, kind, ?, doc_id FROM fs_index WHERE doc_id = ? AND field = 'list' AND kind = 1").run(whole('2'), id);
    }
    assert.equal((file.prepare('SELECT count(*) AS n FROM fs_index WHERE length(value) > 1000').get() as { n: number }).n, 9, 'whole values as before (s and both elements of each)');
    file.exec(indexPrefixMigration);
    assert.equal((file.prepare('SELECT count(*) AS n FROM fs_index WHERE length(value) > 1000').get() as { n: number }).n, 0);
    file.close();

    const upgraded = await startHearth({ dataDir });
    try {
      const ordered = { structuredQuery: { from: [{ collectionId: 'long' }], orderBy: [{ field: { fieldPath: 's' } }] } };
      assert.deepEqual(ids(await post(upgraded, 'runQuery', ordered)), ['a', 'b', 'c'], 'tied, in id order (by value it would be c, b, a)');
      await post(upgraded, 'commit', { writes: [{ update: { name: name('a'), fields: { ...fields('z'), list: { arrayValue: { values: [{ stringValue: `${shared}2` }] } } } } }] });
      const contains = { structuredQuery: { from: [{ collectionId: 'long' }], where: { fieldFilter: { field: { fieldPath: 'list' }, op: 'ARRAY_CONTAINS', value: { stringValue: `${shared}2` } } } } };
      assert.deepEqual(ids(await post(upgraded, 'runQuery', contains)), ['a', 'b', 'c']);
    } finally {
      await upgraded.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
