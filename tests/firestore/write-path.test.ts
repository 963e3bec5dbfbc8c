/**
 * The document database's write path under concurrency: commits that arrive together share one
 * SQLite transaction (group commit) yet each keeps its own outcome, commit time and atomicity; and
 * a big commit gives the event loop to other work while it is decoded and encoded.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import { ApiError } from '../../packages/server/src/http/api-error.js';
import { defaultQueryLimits } from '../../packages/server/src/firestore/core/query.js';
import { parseWrite, type Write } from '../../packages/server/src/firestore/core/writes.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { tempDataDir } from '../helpers/hearth.js';

const db = { projectId: 'demo-write-path', databaseId: '(default)' };
const prefix = `projects/${db.projectId}/databases/(default)/documents`;
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function open(file?: string) {
  const path = file ?? join(tempDataDir(), 'hearth.sqlite');
  if (!file) dirs.push(join(path, '..'));
  const sqlite = new SqliteStore(path);
  const database = new DocumentDatabase(sqlite.documents(), { queryLimits: defaultQueryLimits, compositeIndexes: [] });
  return { path, sqlite, database };
}

function update(path: string, fields: Record<string, unknown>, extra: Record<string, unknown> = {}): Write {
  return parseWrite(db, { update: { name: `${prefix}/${path}`, fields }, ...extra }, 'writes[0]');
}

const int = (n: number) => ({ integerValue: String(n) });

/**
 * The transactions committed into a WAL file since it was last restarted: its frames whose header
 * carries the database size after a commit (non-zero only on a transaction's last frame) and the
 * WAL header's salts (older frames left behind a restart carry other salts). One such frame, one
 * fsync under synchronous=FULL.
 */
function walCommits(databaseFile: string): number {
  const wal = readFileSync(`${databaseFile}-wal`);
  if (wal.length < 32) return 0;
  const pageSize = wal.readUInt32BE(8);
  const salts = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salts[0] || wal.readUInt32BE(at + 12) !== salts[1]) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}

test('commits issued together each get their own result, in order, and all are stored', async () => {
  const { path, sqlite, database } = open();
  const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => database.commit(db, [update(`together/d${i}`, { i: int(i) }), update(`together/e${i}`, { i: int(i) })])));
  const times = outcomes.map((outcome) => outcome.commitTime);
  for (let i = 1; i < times.length; i++) assert.ok(times[i]! > times[i - 1]!, `commit ${i} is later than commit ${i - 1}`);
  for (const outcome of outcomes) {
    assert.equal(outcome.writeResults.length, 2);
    assert.equal(outcome.writeResults[0]!.updateTime, outcome.commitTime);
  }
  await sqlite.close();
  // What was acknowledged is in the file when it is opened again.
  const reopened = open(path);
  const docs = await reopened.database.getDocuments(db, Array.from({ length: 40 }, (_, i) => [`together/d${i}`, `together/e${i}`]).flat());
  assert.equal(docs.size, 80);
  for (let i = 0; i < 40; i++) assert.equal(docs.get(`together/d${i}`)!.updateTime, times[i]);
  await reopened.sqlite.close();
});

test('commits issued together share one SQLite transaction, so one fsync', async () => {
  const { path, sqlite, database } = open();
  await database.commit(db, [update('shared/first', { i: int(0) })]);
  const before = walCommits(path);
  await Promise.all(Array.from({ length: 40 }, (_, i) => database.commit(db, [update(`shared/d${i}`, { i: int(i) })])));
  const made = walCommits(path) - before;
  // One transaction per commit would be 40; they all reached the store in one turn of the event loop.
  assert.equal(made, 1, `${made} transactions for 40 commits`);
  await sqlite.close();
});

test('a refused commit among commits issued together fails alone and leaves nothing behind', async () => {
  const { sqlite, database } = open();
  await database.commit(db, [update('mixed/taken', { v: int(0) })]);
  const commits = Array.from({ length: 9 }, (_, i) =>
    i === 4
      ? // Its first write would succeed; its second is refused: the whole commit must leave no trace.
        database.commit(db, [update('mixed/half', { v: int(1) }), update('mixed/taken', { v: int(2) }, { currentDocument: { exists: false } })])
      : database.commit(db, [update(`mixed/ok${i}`, { v: int(i) })]),
  );
  const settled = await Promise.allSettled(commits);
  for (const [i, outcome] of settled.entries()) {
    if (i === 4) {
      assert.equal(outcome.status, 'rejected');
      const reason = (outcome as PromiseRejectedResult).reason as unknown;
      assert.ok(reason instanceof ApiError, String(reason));
      assert.equal(reason.status, 'ALREADY_EXISTS');
    } else {
      assert.equal(outcome.status, 'fulfilled', `commit ${i}`);
    }
  }
  const docs = await database.getDocuments(db, ['mixed/half', 'mixed/taken', ...Array.from({ length: 9 }, (_, i) => `mixed/ok${i}`)]);
  assert.equal(docs.has('mixed/half'), false, 'no half of the refused commit');
  assert.deepEqual(docs.get('mixed/taken')!.fields.get('v'), { type: 'integer', value: 0n });
  assert.equal(docs.size, 9, 'the stored document and the eight others');
  // Queries see exactly what was committed: the refused commit wrote no index entry either.
  const query = database.parseQuery(db, '', { from: [{ collectionId: 'mixed' }], where: { fieldFilter: { field: { fieldPath: 'v' }, op: 'EQUAL', value: int(1) } } });
  const result = await database.runQuery(db, query);
  assert.deepEqual(result.docs.map((doc) => doc.key.path), ['mixed/ok1']);
  await sqlite.close();
});

test('a 6 MB commit lets other work run while it is prepared, and is stored whole', async () => {
  const { sqlite, database } = open();
  const text = 'lorem ipsum dolor sit amet '.repeat(450);
  const writes = Array.from({ length: 500 }, (_, k) => update(`big/d${k}`, { k: int(k), text: { stringValue: `${k} ${text}` } }));
  let turns = 0;
  let ticking = true;
  const tick = () => {
    if (!ticking) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const outcome = await database.commit(db, writes);
  ticking = false;
  // About 6 MB of fields is encoded in slices of at most 256 KB: other work runs between them. Done
  // as one block, the ticker would not have run at all before the commit was made.
  assert.ok(turns >= 10, `other work ran ${turns} times during the commit`);
  assert.equal(outcome.writeResults.length, 500);
  const query = database.parseQuery(db, '', { from: [{ collectionId: 'big' }], where: { fieldFilter: { field: { fieldPath: 'k' }, op: 'GREATER_THAN_OR_EQUAL', value: int(0) } } });
  assert.equal((await database.runQuery(db, query)).docs.length, 500);
  await sqlite.close();
});
