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
import { storedIdsMigration } from '../packages/server/src/storage/sqlite/migrations.js';
import { idFromStored } from '../packages/server/src/storage/sqlite/sqlite-document-store.js';
import { startHearth, tempDataDir, type TestHearth } from './helpers/hearth.js';

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
