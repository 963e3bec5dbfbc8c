/**
 * Cloud Storage bytes in a real S3 service (Ceph's RADOS Gateway, started here on free ports) with
 * `--storage-url s3://bucket?endpoint=...`: firebase/storage and firebase-admin uploads (one-shot,
 * resumable across several S3 parts), ranges, deletes; and two Hearth instances on one PostgreSQL
 * database and one bucket: an object written on one is read on the other, and a resumable upload
 * started on one continues and finishes on the other (its MD5 computed again from the stored bytes).
 * Skips, saying why, only when RGW cannot be started (the Ceph packages are missing: .ci/run installs them).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { deleteObject, getBytes, getMetadata, ref, uploadBytes, uploadBytesResumable } from 'firebase/storage';
import { startRgw, type Rgw } from '../helpers/ceph-rgw.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { createTestPgDatabase, type TestPgDatabase } from '../helpers/pg-database.js';
import { storageClient, storedFiles, v0Url } from '../helpers/storage-clients.js';

const pattern = (size: number, seed = 5) => Uint8Array.from({ length: size }, (_, i) => (i * seed + (i >> 10)) & 0xff);
const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('base64');

let rgw: Rgw | undefined;
let skip: string | undefined;

before(async () => {
  const started = await startRgw();
  if (typeof started === 'string') {
    skip = started;
    return;
  }
  rgw = started;
  process.env.AWS_ACCESS_KEY_ID = rgw.accessKey;
  process.env.AWS_SECRET_ACCESS_KEY = rgw.secretKey;
});
after(async () => {
  await rgw?.stop();
});

async function s3Keys(bucket: string): Promise<string[]> {
  const client = new S3Client({ endpoint: rgw!.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: rgw!.accessKey, secretAccessKey: rgw!.secretKey } });
  try {
    return ((await client.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((entry) => entry.Key!);
  } finally {
    client.destroy();
  }
}

describe('bytes in Ceph RGW (one instance)', () => {
  let server: TestHearth;

  before(async () => {
    if (skip) return;
    server = await startHearth({ storageUrl: await rgw!.storageUrl('hearth-one') });
  });
  after(async () => server?.close());

  test('one-shot and resumable uploads (several 8 MiB parts and a tail), ranges, delete; nothing in the data folder', async (context) => {
    if (skip) return context.skip(skip);
    const c = await storageClient(server);
    try {
      const small = pattern(40_000);
      await uploadBytes(ref(c.storage, 's3/small.bin'), small);
      assert.deepEqual(new Uint8Array(await getBytes(ref(c.storage, 's3/small.bin'))), small);
      const large = pattern(19 * 1024 * 1024 + 333, 7);
      const done = await uploadBytesResumable(ref(c.storage, 's3/large.bin'), large);
      assert.equal(done.metadata.md5Hash, md5(large));
      assert.deepEqual(new Uint8Array(await getBytes(ref(c.storage, 's3/large.bin'))), large);
      const range = await fetch(`${v0Url(server, 's3/large.bin')}?alt=media`, { headers: { range: 'bytes=9000000-9000099' } });
      assert.equal(range.status, 206);
      assert.deepEqual(new Uint8Array(await range.arrayBuffer()), large.subarray(9_000_000, 9_000_100));
      assert.equal(storedFiles(server.dataDir).blobs.length, 0, 'no bytes in the data folder');
      assert.equal((await s3Keys('hearth-one')).filter((key) => key.startsWith('blobs/')).length, 2);
      await deleteObject(ref(c.storage, 's3/large.bin'));
      await eventually(async () => (await s3Keys('hearth-one')).filter((key) => key.startsWith('blobs/')).length === 1);
      assert.deepEqual((await s3Keys('hearth-one')).filter((key) => key.startsWith('staging/')), [], 'no staging tails left');
    } finally {
      await c.close();
    }
  });
});

describe('two instances, one PostgreSQL database, one bucket', () => {
  let database: TestPgDatabase;
  let one: TestHearth;
  let two: TestHearth;

  before(async () => {
    if (skip) return;
    database = await createTestPgDatabase();
    const storageUrl = await rgw!.storageUrl('hearth-shared');
    one = await startHearth({ databaseUrl: database.url, storageUrl });
    two = await startHearth({ databaseUrl: database.url, storageUrl });
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await database?.drop();
  });

  test('an object written through one instance is read, listed and deleted through the other', async (context) => {
    if (skip) return context.skip(skip);
    const a = await storageClient(one);
    const b = await storageClient(two);
    try {
      await uploadBytes(ref(a.storage, 'shared/one.bin'), pattern(10_000));
      assert.deepEqual(new Uint8Array(await getBytes(ref(b.storage, 'shared/one.bin'))), pattern(10_000));
      await deleteObject(ref(b.storage, 'shared/one.bin'));
      await assert.rejects(getMetadata(ref(a.storage, 'shared/one.bin')), { code: 'storage/object-not-found' });
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a resumable upload started on one instance continues and finishes on the other', async (context) => {
    if (skip) return context.skip(skip);
    const bytes = pattern(12 * 1024 * 1024 + 77, 3);
    const start = await fetch(`${v0Url(one)}?name=shared%2Fmoved.bin`, { method: 'POST', headers: { 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'x-goog-upload-header-content-length': String(bytes.length) }, body: '{}' });
    assert.equal(start.status, 200);
    const urlOnOne = start.headers.get('x-goog-upload-url')!;
    const urlOnTwo = urlOnOne.replace(one.url, two.url);
    const cuts = [0, 3 * 1024 * 1024, 9 * 1024 * 1024, bytes.length];
    for (let i = 0; i < cuts.length - 1; i++) {
      const last = i === cuts.length - 2;
      const target = i % 2 === 0 ? urlOnOne : urlOnTwo;
      const response = await fetch(last ? urlOnTwo : target, {
        method: 'POST',
        headers: { 'x-goog-upload-command': last ? 'upload, finalize' : 'upload', 'x-goog-upload-offset': String(cuts[i]) },
        body: bytes.subarray(cuts[i]!, cuts[i + 1]!),
      });
      assert.equal(response.status, 200, await response.clone().text());
      if (last) assert.equal(((await response.json()) as { md5Hash: string }).md5Hash, md5(bytes));
    }
    const query = await fetch(urlOnOne, { method: 'POST', headers: { 'x-goog-upload-command': 'query' } });
    assert.equal(query.headers.get('x-goog-upload-status'), 'final');
    const c = await storageClient(one);
    try {
      assert.deepEqual(new Uint8Array(await getBytes(ref(c.storage, 'shared/moved.bin'))), bytes);
    } finally {
      await c.close();
    }
  });
});

async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
