/**
 * SQLite document writes on the writer thread (storage/sqlite/sqlite-writer*.ts): while SQLite
 * writes a big commit, the event loop answers other callers; nothing is acknowledged before the
 * writer's COMMIT; identity writes on the main connection wait their turn without blocking; commits
 * of one group see each other's writes; a writer that dies fails its commits (UNAVAILABLE), stores
 * none of them, and the next commit gets a new writer. Small groups are written on the main thread
 * (inlineWriteBytes): the in-process tests send every group to the thread. The writer is held before COMMIT by a latch
 * (a SharedArrayBuffer the thread waits on), so these are orderings, not timings.
 */
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import { defaultQueryLimits } from '../../packages/server/src/firestore/core/query.js';
import { parseWrite, type Write } from '../../packages/server/src/firestore/core/writes.js';
import { ApiError } from '../../packages/server/src/http/api-error.js';
import { toApiError } from '../../packages/server/src/http/error-handler.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { startHearth, tempDataDir } from '../helpers/hearth.js';
import { testBackend } from '../helpers/test-backend.js';

const skip = testBackend === 'postgres' ? 'the writer thread is SQLite only' : false;
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** latch[0]: 0 runs freely, 1 holds each group before COMMIT, 2 kills the thread there; latch[1]: 1 while held. */
function newLatch(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(8));
}

/** Waits (polling: the event loop must stay free) until the writer thread holds at COMMIT; gives up after a minute. */
async function untilHeld(latch: Int32Array): Promise<void> {
  for (let polls = 0; Atomics.load(latch, 1) !== 1; polls++) {
    assert.ok(polls < 6000, 'the writer thread reached COMMIT');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function release(latch: Int32Array): void {
  Atomics.store(latch, 0, 0);
  Atomics.notify(latch, 0);
}

/** Whether a promise has settled, without waiting for it. */
function track<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return { promise, settled: () => settled };
}

test('while SQLite writes a 6.4 MiB commit of 500 documents, REST reads are answered and identity writes wait without blocking', { skip }, async () => {
  const latch = newLatch();
  const hearth = await startHearth({ defaultProjectId: 'demo-writer', sqliteWriterLatch: latch });
  try {
    const root = `${hearth.url}/v1/projects/demo-writer/databases/(default)/documents`;
    const name = (path: string) => `projects/demo-writer/databases/(default)/documents/${path}`;
    const owner = { authorization: 'Bearer owner', 'content-type': 'application/json' };
    const commit = (writes: unknown[]) => fetch(`${root}:commit`, { method: 'POST', headers: owner, body: JSON.stringify({ writes }) });
    assert.equal((await commit([{ update: { name: name('small/one'), fields: { v: { integerValue: '1' } } } }])).status, 200);

    const text = 'x'.repeat(13_500);
    const big = Array.from({ length: 500 }, (_, k) => ({ update: { name: name(`big/d${k}`), fields: { k: { integerValue: String(k) }, text: { stringValue: text } } } }));
    assert.ok(JSON.stringify({ writes: big }).length > 6.4 * 1024 * 1024);
    Atomics.store(latch, 0, 1);
    const bigCommit = track(commit(big));
    await untilHeld(latch);

    // The group is written and waits at COMMIT on the writer thread: the event loop is free.
    const get = await fetch(`${root}/small/one`, { headers: owner });
    assert.equal(get.status, 200);
    assert.deepEqual(((await get.json()) as { fields: unknown }).fields, { v: { integerValue: '1' } });
    const batch = await fetch(`${root}:batchGet`, { method: 'POST', headers: owner, body: JSON.stringify({ documents: [name('small/one'), name('big/d0')] }) });
    assert.equal(batch.status, 200);
    const found = ((await batch.json()) as Array<{ found?: { name: string }; missing?: string }>).map((entry) => entry.found?.name ?? `missing ${entry.missing}`);
    // Not acknowledged, so not visible: the big commit's documents are not there yet.
    assert.deepEqual(found, [name('small/one'), `missing ${name('big/d0')}`]);
    assert.equal(bigCommit.settled(), false, 'the big commit is not acknowledged before its COMMIT');

    // An account (the main connection's own write) waits for the writer's turn instead of blocking.
    const signUp = track(fetch(`${hearth.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${hearth.apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'waits@example.com', password: 'a-fine-password', returnSecureToken: true }),
    }));
    for (let i = 0; i < 5; i++) assert.equal((await fetch(`${root}/small/one`, { headers: owner })).status, 200);
    assert.equal(bigCommit.settled(), false);

    release(latch);
    const answer = await bigCommit.promise;
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as { writeResults: unknown[] }).writeResults.length, 500);
    assert.equal((await signUp.promise).status, 200);
    const stored = await fetch(`${root}/big/d499`, { headers: owner });
    assert.equal(stored.status, 200);
  } finally {
    release(latch);
    await hearth.close();
  }
});

const db = { projectId: 'demo-writer', databaseId: '(default)' };
const prefix = `projects/${db.projectId}/databases/(default)/documents`;
const int = (n: number) => ({ integerValue: String(n) });

function open(latch?: Int32Array) {
  const dir = tempDataDir();
  dirs.push(dir);
  // Every group on the writer thread (small ones are otherwise written on the main thread).
  const sqlite = new SqliteStore(join(dir, 'hearth.sqlite'), { inlineWriteBytes: 0, ...(latch ? { writerLatch: latch } : {}) });
  const database = new DocumentDatabase(sqlite.documents(), { queryLimits: defaultQueryLimits, compositeIndexes: [] });
  return { sqlite, database };
}

function update(path: string, fields: Record<string, unknown>, extra: Record<string, unknown> = {}): Write {
  return parseWrite(db, { update: { name: `${prefix}/${path}`, fields }, ...extra }, 'writes[0]');
}

test('commits of one group read what earlier ones of the group wrote', { skip }, async () => {
  const { sqlite, database } = open();
  const increment = parseWrite(db, { transform: { document: `${prefix}/counters/c`, fieldTransforms: [{ fieldPath: 'n', increment: int(1) }] } }, 'writes[0]');
  const outcomes = await Promise.allSettled([
    ...Array.from({ length: 25 }, () => database.commit(db, [increment])),
    database.commit(db, [update('once/x', { v: int(1) }, { currentDocument: { exists: false } })]),
    database.commit(db, [update('once/x', { v: int(2) }, { currentDocument: { exists: false } })]),
  ]);
  assert.equal(outcomes.slice(0, 26).every((outcome) => outcome.status === 'fulfilled'), true);
  const second = outcomes[26] as PromiseRejectedResult;
  assert.equal(second.status, 'rejected');
  assert.equal((second.reason as ApiError).status, 'ALREADY_EXISTS');
  const docs = await database.getDocuments(db, ['counters/c', 'once/x']);
  assert.deepEqual(docs.get('counters/c')!.fields.get('n'), { type: 'integer', value: 25n });
  assert.deepEqual(docs.get('once/x')!.fields.get('v'), { type: 'integer', value: 1n });
  await sqlite.close();
});

test('a writer thread that dies fails its commits with UNAVAILABLE, stores none of them, and the next commit gets a new one', { skip }, async () => {
  const latch = newLatch();
  const { sqlite, database } = open(latch);
  await database.commit(db, [update('crash/before', { v: int(1) })]);
  Atomics.store(latch, 0, 2);
  const doomed = await Promise.allSettled([database.commit(db, [update('crash/a', { v: int(1) })]), database.commit(db, [update('crash/b', { v: int(1) })])]);
  release(latch);
  for (const outcome of doomed) {
    assert.equal(outcome.status, 'rejected');
    const wire = toApiError((outcome as PromiseRejectedResult).reason);
    assert.equal(wire.status, 'UNAVAILABLE');
    assert.equal(wire.httpStatus, 503);
  }
  assert.deepEqual([...(await database.getDocuments(db, ['crash/before', 'crash/a', 'crash/b'])).keys()], ['crash/before']);
  const after = await database.commit(db, [update('crash/after', { v: int(1) })]);
  assert.ok(after.commitTime > 0);
  assert.equal((await database.getDocuments(db, ['crash/after'])).size, 1);
  await sqlite.close();
});

test('closing the store lets the group in flight finish before the writer stops; later commits are refused', { skip }, async () => {
  const latch = newLatch();
  const { sqlite, database } = open(latch);
  Atomics.store(latch, 0, 1);
  const held = track(database.commit(db, [update('close/held', { v: int(1) })]));
  await untilHeld(latch);
  const closed = track(sqlite.close());
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(closed.settled(), false, 'close waits for the group at COMMIT');
  release(latch);
  assert.ok((await held.promise).commitTime > 0);
  await closed.promise;
  await assert.rejects(database.commit(db, [update('close/late', { v: int(1) })]), (error: unknown) => toApiError(error).status === 'UNAVAILABLE');
  const reopened = new SqliteStore(join(dirs[dirs.length - 1]!, 'hearth.sqlite'));
  assert.equal((await new DocumentDatabase(reopened.documents()).getDocuments(db, ['close/held'])).size, 1);
  await reopened.close();
});

test('reads while a commit is being written are labeled before its commit time, so a read at that time later agrees', { skip }, async () => {
  const latch = newLatch();
  const { sqlite, database } = open(latch);
  await database.commit(db, [update('label/before', { v: int(1) })]);
  Atomics.store(latch, 0, 1);
  const held = track(database.commit(db, [update('label/held', { v: int(1) })]));
  await untilHeld(latch);
  const readTime = await database.readTime(db);
  const seen = await database.getDocuments(db, ['label/before', 'label/held']);
  assert.deepEqual([...seen.keys()], ['label/before']);
  release(latch);
  const { commitTime } = await held.promise;
  assert.ok(readTime < commitTime, `a read answered without the commit is labeled ${readTime}, before the commit's ${commitTime}`);
  await database.checkReadTime(db, readTime);
  assert.deepEqual([...(await database.getDocuments(db, ['label/before', 'label/held'], { readTime })).keys()], ['label/before']);
  assert.ok((await database.readTime(db)) >= commitTime);
  await sqlite.close();
});

test('the log stays bounded when big groups go to the writer thread and small ones are written here', { skip }, async () => {
  const dir = tempDataDir();
  dirs.push(dir);
  const file = join(dir, 'hearth.sqlite');
  const sqlite = new SqliteStore(file);
  const database = new DocumentDatabase(sqlite.documents(), { queryLimits: defaultQueryLimits, compositeIndexes: [] });
  const text = (n: number) => ({ stringValue: 'y'.repeat(n) });
  await database.commit(db, Array.from({ length: 100 }, (_, k) => update(`log/big${k}`, { t: text(8_000) })));
  // ~40 KB of log per commit (the document, its index entries, the version it replaces): 1,000
  // commits would leave a 40 MB log if nothing checkpointed it.
  for (let i = 0; i < 1_000; i++) await database.commit(db, [update(`log/s${i % 50}`, { n: int(i), t: text(2_000) })]);
  const walBytes = statSync(`${file}-wal`).size;
  assert.ok(walBytes < 12 * 1024 * 1024, `the log is ${walBytes} bytes`);
  await sqlite.close();
});

test('text and BLOBs reach the writer thread byte for byte: multi-byte text past the buffer first sized, and the buffer reused by later groups', { skip }, async () => {
  // The same commits on the writer thread and on the main thread must leave the same rows.
  const threaded = open();
  const dir = tempDataDir();
  dirs.push(dir);
  const inlineStore = new SqliteStore(join(dir, 'hearth.sqlite'), { inlineWriteBytes: Number.MAX_SAFE_INTEGER });
  const inline = new DocumentDatabase(inlineStore.documents(), { queryLimits: defaultQueryLimits, compositeIndexes: [] });
  const text = (value: string) => ({ stringValue: value });
  // 4-byte (surrogate pairs), 3-byte and 2-byte UTF-8 well past the ASCII size the buffer is first given.
  const wide = '😀中é'.repeat(30_000);
  const groups: Write[][] = [
    [update('mixed/a', { s: text('plain'), wide: text(wide), b: { bytesValue: Buffer.from([0, 1, 2, 255, 254]).toString('base64') }, n: { nullValue: null }, d: { doubleValue: 2.5 } })],
    // Smaller than the first: what the first left in the buffer past its end must not show through.
    [update('mixed/b', { s: text('ß'), b: { bytesValue: Buffer.from('x').toString('base64') } })],
    // Larger again, many documents, so the buffer grows a second time.
    Array.from({ length: 40 }, (_, i) => update(`mixed/c${i}`, { s: text(`${i}-${[...wide].slice(0, 5_000 + i).join('')}`), k: int(i), tags: { arrayValue: { values: [text('α'), text(`β${i}`)] } } })),
  ];
  for (const writes of groups) {
    await threaded.database.commit(db, writes);
    await inline.commit(db, writes);
  }
  const rows = (store: SqliteStore) => {
    const connection = (store as unknown as { db: { prepare(sql: string): { all(): unknown[] } } }).db;
    return {
      documents: connection.prepare('SELECT parent, doc_id, collection_id, hex(name_key) AS name_key, fields FROM fs_documents ORDER BY parent, doc_id').all(),
      entries: connection.prepare('SELECT parent, field, kind, hex(value) AS value, doc_id FROM fs_index ORDER BY parent, field, kind, value, doc_id').all(),
    };
  };
  const written = rows(threaded.sqlite);
  assert.equal(written.documents.length, 42);
  assert.ok(written.entries.length > 42 * 2);
  assert.deepEqual(written, rows(inlineStore));
  const stored = await threaded.database.getDocuments(db, ['mixed/a', 'mixed/b']);
  assert.deepEqual(stored.get('mixed/a')!.fields.get('wide'), { type: 'string', value: wide });
  assert.deepEqual(stored.get('mixed/b')!.fields.get('s'), { type: 'string', value: 'ß' });
  await threaded.sqlite.close();
  await inlineStore.close();
});
