/**
 * `hearth migrate` and Cloud Storage: a data folder moved into PostgreSQL keeps its objects' metadata
 * (the bytes stay in the data folder's files/), so firebase/storage reads the same objects, metadata,
 * listings and download URLs from the PostgreSQL instance; the project's bytes in use (the quota)
 * move with them, the recorded events too (new ones numbered after them), and a resumable upload
 * begun before the move is finished after it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { deleteApp, initializeApp } from 'firebase/app';
import { connectStorageEmulator, deleteObject, getBytes, getDownloadURL, getMetadata, getStorage, listAll, ref, updateMetadata, uploadBytes, type FirebaseStorage } from 'firebase/storage';
import pg from 'pg';
import { defaultOptions, type HearthOptions } from '../../packages/server/src/config.js';
import { createHearth, createLogger, type Hearth } from '../../packages/server/src/server.js';
import { repoRoot, tempDataDir } from '../helpers/hearth.js';
import { createTestPgDatabase } from '../helpers/pg-database.js';
import { hearthCommand } from '../helpers/hearth-command.js';

const bucket = 'demo-test.appspot.com';

/** Started directly, not through startHearth: the source is SQLite whatever HEARTH_TEST_BACKEND says. */
async function start(dataDir: string, overrides: Partial<HearthOptions> = {}): Promise<Hearth> {
  const options = defaultOptions({ port: 0, dataDir, dev: true, defaultProjectId: 'demo-test', logLevel: 'silent', webRoot: undefined, ...overrides });
  const hearth = await createHearth(options, createLogger('silent'));
  await hearth.listen();
  return hearth;
}

let apps = 0;
function storageOf(hearth: Hearth): { storage: FirebaseStorage; close: () => Promise<void> } {
  const app = initializeApp({ apiKey: 'any', projectId: 'demo-test', storageBucket: bucket, appId: '1:1:web:1' }, `migrate-files-${apps++}`);
  const storage = getStorage(app);
  const { hostname, port } = new URL(hearth.url);
  connectStorageEmulator(storage, hostname, Number(port));
  return { storage, close: () => deleteApp(app) };
}

async function migrate(dataDir: string, databaseUrl: string): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, [...hearthCommand(), 'migrate', '--data', dataDir, '--database-url', databaseUrl], { cwd: repoRoot });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
}

const pattern = (size: number, seed: number) => Uint8Array.from({ length: size }, (_, i) => (i * seed + (i >> 7)) & 0xff);
const chunk = 256 * 1024;

test('hearth migrate moves storage metadata: objects, download URLs, bytes in use, events and a resumable upload in flight', async () => {
  const database = await createTestPgDatabase();
  const dataDir = tempDataDir();
  try {
    const old = await start(dataDir);
    const before = storageOf(old);
    const photo = pattern(5000, 3);
    await uploadBytes(ref(before.storage, 'users/u1/photo.png'), photo, { contentType: 'image/png', customMetadata: { owner: 'u1' } });
    await uploadBytes(ref(before.storage, 'users/u1/notes/a.txt'), new TextEncoder().encode('first note'), { contentType: 'text/plain' });
    await uploadBytes(ref(before.storage, 'users/u2/gone.txt'), new TextEncoder().encode('deleted before the move'));
    await updateMetadata(ref(before.storage, 'users/u1/photo.png'), { cacheControl: 'max-age=60' });
    await deleteObject(ref(before.storage, 'users/u2/gone.txt'));
    const metadataBefore = await getMetadata(ref(before.storage, 'users/u1/photo.png'));
    const downloadUrl = await getDownloadURL(ref(before.storage, 'users/u1/photo.png'));
    // A resumable upload whose first chunk arrived before the move.
    const big = pattern(chunk + 1000, 5);
    const started = await fetch(`${old.url}/v0/b/${bucket}/o?name=${encodeURIComponent('users/u1/big.bin')}`, {
      method: 'POST',
      headers: { 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'x-goog-upload-header-content-length': String(big.length), 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'application/octet-stream' }),
    });
    assert.equal(started.status, 200);
    const uploadUrl = new URL(started.headers.get('x-goog-upload-url')!);
    const first = await fetch(uploadUrl, { method: 'POST', headers: { 'x-goog-upload-command': 'upload', 'x-goog-upload-offset': '0' }, body: big.subarray(0, chunk) });
    assert.equal(first.status, 200);
    await before.close();
    await old.close();

    const sqlite = new Database(join(dataDir, 'hearth.sqlite'), { readonly: true });
    const eventsBefore = sqlite.prepare('SELECT id, kind, name FROM files_events ORDER BY id').all() as Array<{ id: number; kind: string; name: string }>;
    const usedBefore = (sqlite.prepare('SELECT bytes FROM files_usage').get() as { bytes: number }).bytes;
    sqlite.close();
    assert.deepEqual(
      eventsBefore.map((event) => `${event.kind} ${event.name}`),
      ['finalize users/u1/photo.png', 'finalize users/u1/notes/a.txt', 'finalize users/u2/gone.txt', 'metadataUpdate users/u1/photo.png', 'delete users/u2/gone.txt'],
    );

    const moved = await migrate(dataDir, database.url);
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(moved.stderr, /files_objects 2\b/);
    assert.match(moved.stderr, /files_uploads 1\b/);

    // The same data folder (its files/ holds the bytes), now on PostgreSQL; the quota sits 100 bytes above what is in use.
    const fresh = await start(dataDir, { databaseUrl: database.url, files: { ...defaultOptions().files, projectQuotaBytes: usedBefore + 100 } });
    const after = storageOf(fresh);
    try {
      const metadataAfter = await getMetadata(ref(after.storage, 'users/u1/photo.png'));
      for (const field of ['generation', 'metageneration', 'md5Hash', 'size', 'contentType', 'cacheControl', 'timeCreated', 'updated'] as const) {
        assert.equal(metadataAfter[field], metadataBefore[field], field);
      }
      assert.deepEqual(metadataAfter.customMetadata, { owner: 'u1' });
      assert.deepEqual(Buffer.from(await getBytes(ref(after.storage, 'users/u1/photo.png'))), Buffer.from(photo));
      const listed = await listAll(ref(after.storage, 'users/u1'));
      assert.deepEqual(listed.items.map((item) => item.fullPath), ['users/u1/photo.png']);
      assert.deepEqual(listed.prefixes.map((prefix) => prefix.fullPath), ['users/u1/notes']);
      // The download URL handed out before the move (its token is in the moved metadata).
      const viaToken = await fetch(downloadUrl.replace(old.url, fresh.url));
      assert.equal(viaToken.status, 200);
      assert.deepEqual(Buffer.from(await viaToken.arrayBuffer()), Buffer.from(photo));

      // The bytes in use moved: 101 more bytes pass the quota, which the next upload shows.
      await assert.rejects(uploadBytes(ref(after.storage, 'users/u1/over.bin'), pattern(101, 1)), (error: { code?: string }) => error.code === 'storage/quota-exceeded');
      await uploadBytes(ref(after.storage, 'users/u1/fits.bin'), pattern(100, 1));

    } finally {
      await after.close();
      await fresh.close();
    }

    // The resumable upload goes on where it stopped; events go on after the moved ones.
    const unlimited = await start(dataDir, { databaseUrl: database.url });
    const third = storageOf(unlimited);
    try {
      const rest = await fetch(uploadUrl.toString().replace(old.url, unlimited.url), {
        method: 'POST',
        headers: { 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': String(chunk) },
        body: big.subarray(chunk),
      });
      assert.equal(rest.status, 200, await rest.clone().text());
      assert.deepEqual(Buffer.from(await getBytes(ref(third.storage, 'users/u1/big.bin'))), Buffer.from(big));
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ id: string; kind: string; name: string }>('SELECT id, kind, name FROM files_events ORDER BY id');
        assert.deepEqual(
          rows.slice(0, eventsBefore.length).map((row) => [Number(row.id), row.kind, row.name]),
          eventsBefore.map((event) => [event.id, event.kind, event.name]),
        );
        const last = rows.at(-1)!;
        assert.deepEqual([last.kind, last.name], ['finalize', 'users/u1/big.bin']);
        assert.ok(Number(last.id) > eventsBefore.at(-1)!.id);
      } finally {
        await client.end();
      }
    } finally {
      await third.close();
      await unlimited.close();
    }
  } finally {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
