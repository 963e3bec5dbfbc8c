/**
 * The overview's document count, kept by the change feed: equal to a real COUNT of the store
 * after creates, deletes, a batch, a transaction, a collection-group delete (the admin SDK's
 * BulkWriter: batchWrite) an import by `hearth import firestore`'s code in another storage
 * handle (on SQLite a write the server is never told of; on PostgreSQL a reset on the feed) and a clear.
 *
 * The overview's "keys about to rotate" warning, over raw HTTP with the admin key: none on a
 * server whose keys were just made (none either before its first key: that one signs at once) (the next rotation is a day away), one per key ring when the
 * server's clock stands within two hours of the handover (ID token keys rotate daily, session
 * cookie keys weekly, each new key published an hour before it signs).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Firestore } from 'firebase-admin/firestore';
import { openTransferStorage } from '../../packages/server/src/cli/firestore-transfer.js';
import { exportDatabase, importExport } from '../../packages/server/src/firestore/exports/firestore-transfer.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { storedRows, testDatabaseUrl } from '../helpers/test-backend.js';

const hour = 60 * 60_000;
let fresh: TestHearth;
let later: TestHearth;
let shiftMs = 0;

before(async () => {
  [fresh, later] = await Promise.all([startHearth({ dev: false }), startHearth({ dev: false, clock: () => Date.now() + shiftMs })]);
  // A ring makes its first key when first needed: publishing the keys makes both rings' first.
  for (const server of [fresh, later]) {
    for (const path of ['/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com', '/www.googleapis.com/identitytoolkit/v3/relyingparty/publicKeys']) {
      const published = await fetch(`${server.url}${path}`);
      assert.equal(published.status, 200, path);
      assert.ok(Object.keys((await published.json()) as object).length > 0, path);
    }
  }
});
after(async () => {
  await Promise.all([fresh?.close(), later?.close()]);
});

async function warnings(server: TestHearth): Promise<string[]> {
  const answer = await fetch(`${server.url}/hearth/v1/projects/${server.projectId}/overview`, { headers: { authorization: `Bearer ${server.adminKey}` } });
  assert.equal(answer.status, 200);
  return ((await answer.json()) as { warnings: string[] }).warnings;
}

const rotation = (text: string) => /signing keys are about to rotate/.test(text);

test('no warning while the keys are young', async () => {
  assert.deepEqual((await warnings(fresh)).filter(rotation), []);
});

test('within two hours of the daily rotation, the ID token keys are about to rotate; within two of the weekly, the cookies too', async () => {
  shiftMs = 22.5 * hour;
  const daily = (await warnings(later)).filter(rotation);
  assert.equal(daily.length, 1, daily.join('\n'));
  assert.match(daily[0]!, /^ID token signing keys are about to rotate: a new key is published at \S+Z and signs from \S+Z\. Servers that verify with the published keys \(firebase-admin does\) need nothing/);
  const [publishedAt, signsFrom] = [...daily[0]!.matchAll(/(\d{4}-\d\d-\d\dT[\d:.]+Z)/g)].map((m) => Date.parse(m[1]!));
  assert.equal(signsFrom! - publishedAt!, hour, 'a new key is published an hour before it signs');

  shiftMs = 7 * 24 * hour - 30 * 60_000;
  const both = (await warnings(later)).filter(rotation);
  assert.deepEqual(both.map((w) => w.split(' signing keys')[0]), ['ID token', 'Session cookie']);
  // Past the age limit the rotation is at the next check: published now.
  assert.match(both[0]!, /a new key is published and signs from/);
});

/** The overview's documents once counted (null while the first count runs: asked again). */
async function overviewDocuments(server: TestHearth, projectId: string): Promise<number> {
  for (;;) {
    const answer = await fetch(`${server.url}/hearth/v1/projects/${projectId}/overview`, { headers: { authorization: `Bearer ${server.adminKey}` } });
    assert.equal(answer.status, 200);
    const { documents } = (await answer.json()) as { documents: number | null };
    if (documents !== null) return documents;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function storedCount(server: TestHearth, projectId: string): Promise<number> {
  const [row] = await storedRows(server.dataDir, 'SELECT COUNT(*) AS n FROM fs_documents WHERE db = ?', [`${projectId}/(default)`]);
  return Number(row!.n);
}

/** The overview's count once it equals the store's (on PostgreSQL the feed tells commits a moment later); the test's timeout fails it otherwise. */
async function countsAgree(server: TestHearth, projectId: string, expected: number): Promise<void> {
  assert.equal(await storedCount(server, projectId), expected, 'the store holds what the test wrote');
  let shown = await overviewDocuments(server, projectId);
  while (shown !== expected) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    shown = await overviewDocuments(server, projectId);
  }
  assert.equal(shown, expected);
}

test('the document count follows creates, deletes, a batch, a transaction, a collection-group delete and an import exactly', { timeout: 60_000 }, async () => {
  const { hostname, port } = new URL(fresh.url);
  const db = new Firestore({
    projectId: fresh.projectId,
    host: hostname,
    port: Number(port),
    ssl: false,
    customHeaders: { Authorization: `Bearer ${fresh.adminKey}` },
    // Never used (the header is the credential), but without any google-gax looks for default credentials.
    credentials: { client_email: 'overview@example.invalid', private_key: 'unused' },
  });
  try {
    await countsAgree(fresh, fresh.projectId, 0);
    const things = db.collection('things');
    const [a, b, c] = await Promise.all([things.add({ n: 1 }), things.add({ n: 2 }), things.add({ n: 3 })]);
    await a.update({ n: 10 });
    await b.delete();
    await things.doc('never-there').delete();
    await countsAgree(fresh, fresh.projectId, 2);

    const batch = db.batch();
    batch.set(things.doc('batch-1'), { n: 4 });
    batch.set(db.doc('users/u1/notes/n1'), { text: 'one' });
    batch.set(db.doc('users/u2/notes/n2'), { text: 'two' });
    batch.set(c, { n: 30 });
    batch.delete(a);
    await batch.commit();
    await countsAgree(fresh, fresh.projectId, 4);

    await db.runTransaction(async (transaction) => {
      const seen = await transaction.get(c);
      transaction.set(things.doc('from-transaction'), { from: seen.get('n') as number });
      transaction.delete(things.doc('batch-1'));
      transaction.create(things.doc('also-from-transaction'), { n: 5 });
    });
    await countsAgree(fresh, fresh.projectId, 5);

    const writer = db.bulkWriter();
    for (const note of (await db.collectionGroup('notes').get()).docs) void writer.delete(note.ref);
    await writer.close();
    await countsAgree(fresh, fresh.projectId, 3);

    // An import into another project the overview already counts (as zero), as `hearth import firestore` does it.
    const imported = 'overview-imported';
    await countsAgree(fresh, imported, 0);
    const folder = mkdtempSync(join(tmpdir(), 'hearth-overview-export-'));
    const databaseUrl = await testDatabaseUrl(fresh.dataDir);
    const transfer = await openTransferStorage({ data: fresh.dataDir, ...(databaseUrl ? { databaseUrl } : {}) });
    try {
      await exportDatabase(transfer.storage.documents, { projectId: fresh.projectId, databaseId: '(default)' }, folder);
      assert.equal((await importExport(transfer.storage.documents, folder, { projectId: imported })).documents, 3);
    } finally {
      await transfer.close();
      rmSync(folder, { recursive: true, force: true });
    }
    await countsAgree(fresh, imported, 3);
    await countsAgree(fresh, fresh.projectId, 3);

    // A clear (the emulator's endpoint, the admin's in production) empties it at once: counted again.
    const cleared = await fetch(`${fresh.url}/emulator/v1/projects/${imported}/databases/(default)/documents`, { method: 'DELETE', headers: { authorization: `Bearer ${fresh.adminKey}` } });
    assert.equal(cleared.status, 200);
    await countsAgree(fresh, imported, 0);
    await db.collection('after-clear').add({ n: 1 });
    await countsAgree(fresh, fresh.projectId, 4);
  } finally {
    await db.terminate();
  }
});
