/**
 * The Cloud Storage JSON API through firebase-admin's getStorage() (@google-cloud/storage under it):
 * in --dev through FIREBASE_STORAGE_EMULATOR_HOST (no credential: the administrator, as in Google's
 * emulator), and in production with a Hearth-issued service-account key given to cert(), its requests
 * to Google's hosts forwarded to Hearth. Uploads (multipart, resumable in one request and in chunks),
 * downloads, metadata, list with pages, copy, delete, preconditions, getDownloadURL, and the objects
 * the web SDK sees; the JSON API without a credential in production is judged by the rules.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { cert, deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getDownloadURL as adminDownloadURL, getStorage } from 'firebase-admin/storage';
import { getBytes, ref, uploadString } from 'firebase/storage';
import { redirectGoogleHosts, type GoogleHostsRedirect } from '../helpers/google-hosts.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { storageClient, testBucket } from '../helpers/storage-clients.js';

const pattern = (size: number, seed = 3) => Buffer.from(Uint8Array.from({ length: size }, (_, i) => (i * seed + (i >> 9)) & 0xff));
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('base64');
let appCount = 0;

describe('firebase-admin in --dev (FIREBASE_STORAGE_EMULATOR_HOST)', () => {
  let server: TestHearth;
  let app: App;
  const bucket = () => getStorage(app).bucket(testBucket);

  before(async () => {
    server = await startHearth();
    delete process.env.STORAGE_EMULATOR_HOST;
    process.env.FIREBASE_STORAGE_EMULATOR_HOST = server.hostPort;
    app = initializeApp({ projectId: server.projectId, storageBucket: testBucket }, `admin-dev-${appCount++}`);
  });
  after(async () => {
    await deleteApp(app);
    delete process.env.FIREBASE_STORAGE_EMULATOR_HOST;
    delete process.env.STORAGE_EMULATOR_HOST;
    await server.close();
  });

  test('save (multipart, resumable in one request, resumable in chunks) and download the same bytes', async () => {
    const small = pattern(5000);
    await bucket().file('admin/small.bin').save(small, { resumable: false, metadata: { contentType: 'application/x-small', metadata: { who: 'admin' } } });
    const [downloaded] = await bucket().file('admin/small.bin').download();
    assert.deepEqual(downloaded, small);
    const [metadata] = await bucket().file('admin/small.bin').getMetadata();
    assert.equal(metadata.contentType, 'application/x-small');
    assert.equal(metadata.md5Hash, md5(small));
    assert.deepEqual(metadata.metadata, { who: 'admin' });

    const large = pattern(1024 * 1024 + 123, 7);
    await bucket().file('admin/one-request.bin').save(large, { resumable: true });
    assert.deepEqual((await bucket().file('admin/one-request.bin').download())[0], large);

    await new Promise<void>((resolve, reject) => {
      const stream = bucket().file('admin/chunked.bin').createWriteStream({ resumable: true, chunkSize: 256 * 1024, metadata: { contentType: 'application/x-chunked' } });
      stream.on('error', reject).on('finish', resolve);
      stream.end(large);
    });
    const [chunked] = await bucket().file('admin/chunked.bin').getMetadata();
    assert.equal(Number(chunked.size), large.length);
    assert.equal(chunked.md5Hash, md5(large));
  });

  test('metadata, list with pages, copy, delete, exists and preconditions', async () => {
    const file = bucket().file('admin/small.bin');
    const [updated] = await file.setMetadata({ cacheControl: 'no-cache', metadata: { who: null, extra: 'yes' } });
    assert.equal(updated.cacheControl, 'no-cache');
    assert.deepEqual(updated.metadata, { extra: 'yes' });
    await bucket().file('admin/small.bin').copy(bucket().file('copies/small.bin'));
    assert.deepEqual((await bucket().file('copies/small.bin').download())[0], pattern(5000));
    const [files] = await bucket().getFiles({ prefix: 'admin/' });
    assert.deepEqual(files.map((f) => f.name), ['admin/chunked.bin', 'admin/one-request.bin', 'admin/small.bin']);
    const [first, next] = await bucket().getFiles({ prefix: 'admin/', maxResults: 2, autoPaginate: false });
    assert.equal(first.length, 2);
    assert.ok(next && (next as { pageToken?: string }).pageToken);
    const [, , folders] = await bucket().getFiles({ delimiter: '/', autoPaginate: false });
    assert.deepEqual((folders as { prefixes?: string[] }).prefixes, ['admin/', 'copies/']);
    await assert.rejects(bucket().file('copies/small.bin').save('x', { resumable: false, preconditionOpts: { ifGenerationMatch: 0 } }), (error: { code: number }) => error.code === 412);
    await bucket().file('copies/small.bin').delete();
    assert.deepEqual(await bucket().file('copies/small.bin').exists(), [false]);
    await assert.rejects(bucket().file('copies/small.bin').download(), (error: { code: number }) => error.code === 404);
  });

  test('the web SDK and firebase-admin see the same objects; getDownloadURL works', async () => {
    const web = await storageClient(server);
    try {
      await uploadString(ref(web.storage, 'shared/from-web.txt'), 'web bytes');
      assert.equal((await bucket().file('shared/from-web.txt').download())[0].toString(), 'web bytes');
      await bucket().file('shared/from-admin.txt').save('admin bytes', { resumable: false });
      assert.equal(new TextDecoder().decode(await getBytes(ref(web.storage, 'shared/from-admin.txt'))), 'admin bytes');
      const url = await adminDownloadURL(bucket().file('shared/from-admin.txt'));
      assert.equal(await (await fetch(url)).text(), 'admin bytes');
    } finally {
      await web.close();
    }
  });
});

describe('firebase-admin in production (a service-account key, cert())', () => {
  let server: TestHearth;
  let google: GoogleHostsRedirect;
  let app: App;
  const bucket = () => getStorage(app).bucket(testBucket);

  before(async () => {
    server = await startHearth({ dev: false });
    delete process.env.FIREBASE_STORAGE_EMULATOR_HOST;
    delete process.env.STORAGE_EMULATOR_HOST;
    google = redirectGoogleHosts(server.url);
    const response = await fetch(`${server.url}/hearth/v1/projects/${server.projectId}/serviceAccountKeys`, { method: 'POST', headers: { authorization: `Bearer ${server.adminKey}` } });
    const key = (await response.json()) as Parameters<typeof cert>[0];
    app = initializeApp({ credential: cert(key), storageBucket: testBucket }, `admin-prod-${appCount++}`);
  });
  after(async () => {
    google.restore();
    await deleteApp(app);
    await server.close();
  });

  test('uploads, downloads, lists and deletes with the exchanged access token', async () => {
    await bucket().file('prod/a.bin').save(pattern(3000), { resumable: false });
    await bucket().file('prod/b.bin').save(pattern(300_000, 5), { resumable: true });
    assert.deepEqual((await bucket().file('prod/b.bin').download())[0], pattern(300_000, 5));
    const [files] = await bucket().getFiles({ prefix: 'prod/' });
    assert.deepEqual(files.map((f) => f.name), ['prod/a.bin', 'prod/b.bin']);
    const url = await adminDownloadURL(bucket().file('prod/a.bin'));
    assert.match(url, /^https:\/\/firebasestorage\.googleapis\.com\/v0\/b\/.*token=/);
    await bucket().file('prod/a.bin').delete();
    assert.ok(google.seen.some((path) => path.startsWith('/storage.googleapis.com/upload/storage/v1/')));
  });

  test('v4 signed URLs (getSignedUrl) read and write one object for whoever holds them, until they expire', async () => {
    const atHearth = (signed: string) => signed.replace('https://storage.googleapis.com/', `${server.url}/storage.googleapis.com/`);
    await bucket().file('signed/photo.jpg').save(pattern(4000, 9), { resumable: false, metadata: { contentType: 'image/jpeg' } });
    const [readUrl] = await bucket().file('signed/photo.jpg').getSignedUrl({ version: 'v4', action: 'read', expires: Date.now() + 60_000 });
    assert.match(readUrl, /X-Goog-Algorithm=GOOG4-RSA-SHA256/);
    const read = await fetch(atHearth(readUrl));
    assert.equal(read.status, 200);
    assert.deepEqual(Buffer.from(await read.arrayBuffer()), pattern(4000, 9));
    const [writeUrl] = await bucket().file('signed/upload.txt').getSignedUrl({ version: 'v4', action: 'write', expires: Date.now() + 60_000, contentType: 'text/plain' });
    const written = await fetch(atHearth(writeUrl), { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'written by a signed URL' });
    assert.equal(written.status, 200);
    assert.equal((await bucket().file('signed/upload.txt').download())[0].toString(), 'written by a signed URL');
    // The signature covers the object, the method and the signed headers: nothing else goes.
    const otherObject = atHearth(readUrl).replace('signed/photo.jpg', 'signed/upload.txt');
    assert.equal((await fetch(otherObject)).status, 403);
    assert.equal((await fetch(atHearth(readUrl), { method: 'PUT', body: 'x' })).status, 403);
    const tampered = atHearth(readUrl).replace(/X-Goog-Signature=([0-9a-f])/, (_, c: string) => `X-Goog-Signature=${c === '0' ? '1' : '0'}`);
    assert.equal((await fetch(tampered)).status, 403);
    assert.equal((await fetch(atHearth(writeUrl), { method: 'PUT', headers: { 'content-type': 'text/html' }, body: '<script>' })).status, 403);
    const [shortUrl] = await bucket().file('signed/photo.jpg').getSignedUrl({ version: 'v4', action: 'read', accessibleAt: Date.now() - 3600_000, expires: Date.now() + 1000 });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const expired = await fetch(atHearth(shortUrl));
    assert.equal(expired.status, 403);
    assert.match(((await expired.json()) as { error: { message: string } }).error.message, /expired/);
  });

  test('the JSON API without a credential, or with a wrong one, is refused (no rules released: closed)', async () => {
    const anonymous = await fetch(`${server.url}/storage/v1/b/${testBucket}/o/${encodeURIComponent('prod/b.bin')}?alt=media`);
    assert.equal(anonymous.status, 403);
    const body = (await anonymous.json()) as { error: { code: number; errors: Array<{ reason: string }> } };
    assert.equal(body.error.code, 403);
    assert.equal(body.error.errors[0]!.reason, 'forbidden');
    const upload = await fetch(`${server.url}/upload/storage/v1/b/${testBucket}/o?uploadType=media&name=planted`, { method: 'POST', body: 'x' });
    assert.equal(upload.status, 403);
    const list = await fetch(`${server.url}/storage/v1/b/${testBucket}/o`);
    assert.equal(list.status, 403);
    const wrong = await fetch(`${server.url}/storage/v1/b/${testBucket}/o`, { headers: { authorization: 'Bearer not-a-token' } });
    assert.equal(wrong.status, 401);
  });
});
