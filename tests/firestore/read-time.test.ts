/**
 * Point-in-time reads on Hearth alone (the differential test, tests/firestore/differential-read-time.test.ts,
 * holds the answers to Google's): what the emulator cannot be asked (GET and ListDocuments with `?readTime=`, which
 * it refuses whatever the time), the retention window and its pruning, the history's start (a database cleared
 * has no past before the clear), versions surviving a restart, read-only transactions reading their start's
 * snapshot, collection ids at a read time, and malformed read times. Raw REST with `Bearer owner`, and
 * firebase-admin for the transaction.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { initializeApp, deleteApp } from 'firebase-admin/app';
import { getFirestore, setLogFunction } from 'firebase-admin/firestore';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import { defaultQueryLimits } from '../../packages/server/src/firestore/core/query.js';
import { parseWrite } from '../../packages/server/src/firestore/core/writes.js';
import { SharedSqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-shared-store.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { within } from '../helpers/firestore-target.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

setLogFunction(null);
process.env.METADATA_SERVER_DETECTION ??= 'none';

const owner = { authorization: 'Bearer owner', 'content-type': 'application/json' };
const int = (n: number) => ({ integerValue: String(n) });

function client(hearth: TestHearth) {
  const root = `projects/${hearth.projectId}/databases/(default)/documents`;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${hearth.url}/v1/${path}`, { method, headers: owner, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as any };
  };
  const commit = async (writes: unknown[]) => {
    const answer = await call('POST', `${root}:commit`, { writes });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body.commitTime as string;
  };
  const set = (path: string, v: number) => ({ update: { name: `${root}/${path}`, fields: { v: int(v) } } });
  return { root, call, commit, set };
}

const hearths: TestHearth[] = [];
after(async () => {
  for (const hearth of hearths) await hearth.close();
});

async function started(options: Parameters<typeof startHearth>[0] = {}): Promise<TestHearth> {
  const hearth = await startHearth(options);
  hearths.push(hearth);
  return hearth;
}

describe('point-in-time reads', () => {
  test('GET and ListDocuments with ?readTime= answer the versions batchGet and runQuery find at that time', async () => {
    const { root, call, commit, set } = client(await started());
    const first = await commit([set('pit/a', 1), set('pit/b', 1)]);
    await commit([set('pit/a', 2), { delete: `${root}/pit/b` }, set('pit/c', 3)]);
    const got = await call('GET', `${root}/pit/a?readTime=${first}`);
    assert.deepEqual(got.body.fields, { v: int(1) });
    assert.equal((await call('GET', `${root}/pit/b?readTime=${first}`)).status, 200, 'deleted since, there then');
    assert.equal((await call('GET', `${root}/pit/c?readTime=${first}`)).status, 404, 'created since');
    const listed = await call('GET', `${root}/pit?readTime=${encodeURIComponent(first)}`);
    const queried = await call('POST', `${root}:runQuery`, { structuredQuery: { from: [{ collectionId: 'pit' }] }, readTime: first });
    assert.deepEqual(
      listed.body.documents,
      queried.body.map((element: { document: unknown }) => element.document),
    );
    assert.deepEqual(listed.body.documents.map((doc: { name: string }) => doc.name.split('/').pop()), ['a', 'b']);
    // Now, without a read time: the present.
    assert.deepEqual((await call('GET', `${root}/pit?`)).body.documents.map((doc: { name: string }) => doc.name.split('/').pop()), ['a', 'c']);
  });

  test('collection ids at a read time: the collections that held documents then', async () => {
    const { root, call, commit, set } = client(await started());
    const first = await commit([set('old/a', 1)]);
    await commit([{ delete: `${root}/old/a` }, set('new/a', 1)]);
    const ids = async (readTime?: string) => (await call('POST', `${root}:listCollectionIds`, readTime ? { readTime } : {})).body.collectionIds;
    assert.deepEqual(await ids(first), ['old']);
    assert.deepEqual(await ids(), ['new']);
  });

  test('a read-only transaction reads the snapshot of its start, whatever commits follow (firebase-admin)', async () => {
    const hearth = await started();
    const { commit, set } = client(hearth);
    await commit([set('snap/a', 1)]);
    const saved = process.env.FIRESTORE_EMULATOR_HOST;
    process.env.FIRESTORE_EMULATOR_HOST = hearth.hostPort;
    const app = initializeApp({ projectId: hearth.projectId }, `read-time-${Date.now()}`);
    // FIRESTORE_EMULATOR_HOST is read when the client is set up.
    const db = getFirestore(app);
    if (saved === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = saved;
    try {
      const seen = await within(
        db.runTransaction(
          async (transaction) => {
            const before = (await transaction.get(db.doc('snap/a'))).get('v');
            await commit([set('snap/a', 2), set('snap/b', 2)]);
            const after = (await transaction.get(db.doc('snap/a'))).get('v');
            const listed = (await transaction.get(db.collection('snap'))).docs.map((doc) => doc.id);
            return { before, after, listed };
          },
          { readOnly: true },
        ),
        'read-only transaction',
      );
      assert.deepEqual(seen, { before: 1, after: 1, listed: ['a'] });
      assert.equal((await db.doc('snap/a').get()).get('v'), 2, 'outside the transaction: the present');
    } finally {
      await db.terminate();
      await deleteApp(app);
    }
  });

  test('read times older than the retention, or than a clear, are too old; versions survive a restart', async () => {
    const dataDir = tempDataDir();
    const first = await startHearth({ dataDir, versionRetentionSeconds: 3600 });
    let { root, call, commit, set } = client(first);
    const created = await commit([set('kept/a', 1)]);
    await commit([set('kept/a', 2)]);
    await first.close();

    const second = await started({ dataDir, versionRetentionSeconds: 3600 });
    ({ root, call, commit, set } = client(second));
    assert.deepEqual((await call('POST', `${root}:batchGet`, { documents: [`${root}/kept/a`], readTime: created })).body[0].found.fields, { v: int(1) });

    const cleared = await fetch(`${second.url}/emulator/v1/projects/${second.projectId}/databases/(default)/documents`, { method: 'DELETE', headers: owner });
    assert.equal(cleared.status, 200);
    const refused = await call('POST', `${root}:batchGet`, { documents: [`${root}/kept/a`], readTime: created });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.error, { code: 400, message: "The requested 'read_time' is too old.", status: 'FAILED_PRECONDITION' });
    const afterClear = await commit([set('kept/b', 1)]);
    assert.equal((await call('POST', `${root}:batchGet`, { documents: [`${root}/kept/a`], readTime: afterClear })).body[0].missing, `${root}/kept/a`);

    // A retention of one second: a read time two seconds old is too old.
    const short = await started({ versionRetentionSeconds: 1 });
    const shortClient = client(short);
    const early = await shortClient.commit([shortClient.set('brief/a', 1)]);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const tooOld = await shortClient.call('POST', `${shortClient.root}:runQuery`, { structuredQuery: { from: [{ collectionId: 'brief' }] }, readTime: early });
    assert.equal(tooOld.body.error?.status, 'FAILED_PRECONDITION');
  });

  test('malformed read times are refused, never a 500', async () => {
    const { root, call } = client(await started());
    const cases: unknown[] = ['yesterday', 12, { seconds: 1 }, '2024-13-01T00:00:00Z', ''];
    for (const readTime of cases) {
      for (const [path, body] of [
        [`${root}:batchGet`, { documents: [`${root}/x/y`], readTime }],
        [`${root}:runQuery`, { structuredQuery: { from: [{ collectionId: 'x' }] }, readTime }],
        [`${root}:beginTransaction`, { options: { readOnly: { readTime } } }],
      ] as const) {
        const answer = await call('POST', path, body);
        assert.equal(answer.status, 400, `${path} ${JSON.stringify(readTime)}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
      }
    }
    const both = await call('POST', `${root}:batchGet`, { documents: [`${root}/x/y`], readTime: new Date().toISOString(), newTransaction: { readOnly: {} } });
    assert.equal(both.body.error?.status, 'INVALID_ARGUMENT');
    const readWrite = await call('POST', `${root}:beginTransaction`, { options: { readWrite: { readTime: new Date().toISOString() } } });
    assert.equal(readWrite.body.error?.status, 'INVALID_ARGUMENT');
    assert.equal((await call('GET', `${root}/x/y?readTime=soon`)).body.error?.status, 'INVALID_ARGUMENT');
  });
});

describe('the versions kept', () => {
  test('creates keep nothing, updates and deletes keep the version they replace, pruning drops what no read time can see', async () => {
    const dir = tempDataDir();
    const file = join(dir, 'hearth.sqlite');
    const sqlite = new SqliteStore(file);
    const db = { projectId: 'demo-versions', databaseId: '(default)' };
    const retention = 200;
    const database = new DocumentDatabase(sqlite.documents(), { queryLimits: defaultQueryLimits, compositeIndexes: [], versionRetentionMs: retention });
    const peek = new Database(file, { readonly: true });
    const versions = () => (peek.prepare('SELECT count(*) AS n FROM fs_versions').get() as { n: number }).n;
    const write = (path: string, v?: number) =>
      database.commit(db, [parseWrite(db, v === undefined ? { delete: `projects/demo-versions/databases/(default)/documents/${path}` } : { update: { name: `projects/demo-versions/databases/(default)/documents/${path}`, fields: { v: int(v) } } }, 'write')]);
    try {
      for (let i = 0; i < 10; i++) await write(`c/d${i}`, i);
      assert.equal(versions(), 0, 'inserts keep no version');
      const { commitTime: beforeUpdates } = await write('c/d0', 100);
      await write('c/d1');
      await write('c/d0', 0); // the same value again: still a new version (its update time changes)
      assert.equal(versions(), 3);
      const asOf = await database.getDocuments(db, ['c/d0', 'c/d1'], { readTime: beforeUpdates - 1 });
      assert.deepEqual([...asOf.keys()], ['c/d0', 'c/d1']);
      assert.equal(await database.pruneHistory(), 0, 'nothing ended before the retention window');
      await new Promise((resolve) => setTimeout(resolve, retention + 50));
      await write('c/d2', 200);
      assert.equal(await database.pruneHistory(), 3, 'the three versions that ended before the window');
      assert.equal(versions(), 1, 'the one that ended inside it stays');
    } finally {
      peek.close();
      await sqlite.close();
    }
  });

  test('on the file of --workers, every commit is logged under the next sequence, and the log is pruned with the versions', async () => {
    const dir = tempDataDir();
    const file = join(dir, 'hearth.sqlite');
    const sqlite = new SharedSqliteStore(file, () => undefined);
    const feed = sqlite.changeFeed()!;
    await feed.start();
    const db = { projectId: 'demo-log', databaseId: '(default)' };
    const retention = 200;
    const database = new DocumentDatabase(sqlite.documents(), { changeFeed: feed, queryLimits: defaultQueryLimits, compositeIndexes: [], versionRetentionMs: retention });
    const peek = new Database(file, { readonly: true });
    const logged = () => peek.prepare<[], { seq: number }>('SELECT seq FROM fs_changes ORDER BY seq').all().map((row) => row.seq);
    const write = (path: string, v: number) => database.commit(db, [parseWrite(db, { update: { name: `projects/demo-log/databases/(default)/documents/${path}`, fields: { v: int(v) } } }, 'write')]);
    try {
      for (let i = 0; i < 5; i++) await write(`c/d${i}`, i);
      await write('c/d0', 0); // changes nothing: not logged
      await write('c/d0', 100);
      assert.deepEqual(logged(), [1, 2, 3, 4, 5, 6]);
      assert.equal(await database.pruneHistory(), 0);
      assert.equal(logged().length, 6, 'kept while the versions are');
      await new Promise((resolve) => setTimeout(resolve, retention + 50));
      await write('c/d1', 101);
      await database.pruneHistory();
      assert.deepEqual(logged(), [7], 'what ended before the window went; the new commit stays');
    } finally {
      peek.close();
      await sqlite.close();
    }
  });
});
