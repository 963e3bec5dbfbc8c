/**
 * Cloud Storage for Firebase through the official firebase/storage SDK (v12, Node) against Hearth
 * in --dev (connectStorageEmulator, no rules: open as Google's emulator is): uploads one-shot and
 * resumable, downloads whole and by range, download URLs, metadata, list, delete; then the v0 wire
 * protocol by raw HTTP where the SDK cannot reach (resumable query/cancel/offsets, torn uploads,
 * hostile input, CORS), limits, restarts, and production without rules (closed).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { crc32c } from '@node-rs/crc32';
import {
  deleteObject,
  getBytes,
  getDownloadURL,
  getMetadata,
  list,
  listAll,
  ref,
  updateMetadata,
  uploadBytes,
  uploadBytesResumable,
  uploadString,
} from 'firebase/storage';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { multipartBody, storageClient, storedFiles, testBucket, v0Url, type StorageClient } from '../helpers/storage-clients.js';

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('base64');
const crc = (bytes: Uint8Array) => {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32c(Buffer.from(bytes)) >>> 0);
  return out.toString('base64');
};
const pattern = (size: number, seed = 7): Uint8Array<ArrayBuffer> => Uint8Array.from({ length: size }, (_, i) => (i * seed + (i >> 8)) & 0xff);

let server: TestHearth;
let client: StorageClient;

before(async () => {
  server = await startHearth();
  client = await storageClient(server);
});
after(async () => {
  await client?.close();
  await server?.close();
});

describe('firebase/storage (--dev, no rules)', () => {
  test('uploadBytes keeps bytes and metadata; getMetadata and getBytes read them back with Google-style hashes', async () => {
    const bytes = pattern(10_000);
    const target = ref(client.storage, 'docs/report.bin');
    const uploaded = await uploadBytes(target, bytes, { contentType: 'application/x-test', customMetadata: { owner: 'me', n: '1' }, cacheControl: 'max-age=60' });
    assert.equal(uploaded.metadata.size, bytes.length);
    assert.equal(uploaded.metadata.md5Hash, md5(bytes));
    assert.equal(uploaded.metadata.fullPath, 'docs/report.bin');
    assert.equal(uploaded.metadata.bucket, testBucket);
    const metadata = await getMetadata(target);
    assert.equal(metadata.contentType, 'application/x-test');
    assert.equal(metadata.cacheControl, 'max-age=60');
    assert.deepEqual(metadata.customMetadata, { owner: 'me', n: '1' });
    assert.equal(metadata.md5Hash, md5(bytes));
    assert.equal((metadata as unknown as { crc32c?: string }).crc32c ?? (await rawMetadata('docs/report.bin')).crc32c, crc(bytes));
    assert.equal(metadata.generation, uploaded.metadata.generation);
    assert.deepEqual(new Uint8Array(await getBytes(target)), bytes);
  });

  test('uploadBytesResumable sends several chunks and the object is whole; a 0-byte uploadString works too', async () => {
    const bytes = pattern(3 * 1024 * 1024 + 17, 13);
    const task = uploadBytesResumable(ref(client.storage, 'big/three.bin'), bytes, { contentType: 'application/octet-stream' });
    const progress: number[] = [];
    task.on('state_changed', (snapshot) => progress.push(snapshot.bytesTransferred));
    const done = await task;
    assert.equal(done.metadata.size, bytes.length);
    assert.equal(done.metadata.md5Hash, md5(bytes));
    assert.ok(new Set(progress).size >= 3, `progress went up in chunks: ${progress.join(',')}`);
    assert.deepEqual(new Uint8Array(await getBytes(ref(client.storage, 'big/three.bin'))), bytes);
    const empty = await uploadString(ref(client.storage, 'big/empty.txt'), '');
    assert.equal(empty.metadata.size, 0);
    assert.equal((await getBytes(ref(client.storage, 'big/empty.txt'))).byteLength, 0);
  });

  test('getBytes with a maximum reads a range; raw Range requests answer 206, suffix ranges, and 416 in Google JSON', async () => {
    const bytes = pattern(1000, 3);
    await uploadBytes(ref(client.storage, 'ranges/r.bin'), bytes);
    assert.deepEqual(new Uint8Array(await getBytes(ref(client.storage, 'ranges/r.bin'), 100)), bytes.subarray(0, 100));
    const middle = await fetch(`${v0Url(server, 'ranges/r.bin')}?alt=media`, { headers: { range: 'bytes=10-19' } });
    assert.equal(middle.status, 206);
    assert.equal(middle.headers.get('content-range'), 'bytes 10-19/1000');
    assert.deepEqual(new Uint8Array(await middle.arrayBuffer()), bytes.subarray(10, 20));
    const suffix = await fetch(`${v0Url(server, 'ranges/r.bin')}?alt=media`, { headers: { range: 'bytes=-5' } });
    assert.deepEqual(new Uint8Array(await suffix.arrayBuffer()), bytes.subarray(995));
    const beyond = await fetch(`${v0Url(server, 'ranges/r.bin')}?alt=media`, { headers: { range: 'bytes=5000-' } });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), 'bytes */1000');
    assert.equal(((await beyond.json()) as { error: { code: number } }).error.code, 416);
    const whole = await fetch(`${v0Url(server, 'ranges/r.bin')}?alt=media`);
    assert.equal(whole.headers.get('x-goog-hash'), `crc32c=${crc(bytes)},md5=${md5(bytes)}`);
    assert.equal(whole.headers.get('x-content-type-options'), 'nosniff');
    assert.match(whole.headers.get('content-security-policy') ?? '', /sandbox/);
  });

  test('getDownloadURL gives a URL that downloads with its token and nothing else', async () => {
    const target = ref(client.storage, 'public/pic.png');
    await uploadBytes(target, pattern(300), { contentType: 'image/png' });
    const url = await getDownloadURL(target);
    assert.match(url, /alt=media&token=[0-9a-f-]{36}$/);
    const response = await fetch(url);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'image/png');
    assert.deepEqual(new Uint8Array(await response.arrayBuffer()), pattern(300));
  });

  test('updateMetadata sets and clears fields and custom metadata; the metageneration grows', async () => {
    const target = ref(client.storage, 'meta/m.txt');
    const first = await uploadString(target, 'x', 'raw', { customMetadata: { a: '1', b: '2' }, contentLanguage: 'en' });
    const updated = await updateMetadata(target, { contentLanguage: 'fr', contentDisposition: 'attachment', customMetadata: { a: null as unknown as string, c: '3' } });
    assert.equal(updated.contentLanguage, 'fr');
    assert.equal(updated.contentDisposition, 'attachment');
    assert.deepEqual(updated.customMetadata, { b: '2', c: '3' });
    assert.equal(Number(updated.metageneration), Number(first.metadata.metageneration) + 1);
    assert.equal(updated.generation, first.metadata.generation);
  });

  test('list and listAll: items and prefixes under a folder, pages of maxResults with page tokens', async () => {
    for (const name of ['l/a.txt', 'l/b.txt', 'l/c.txt', 'l/sub/one.txt', 'l/sub/two.txt', 'l/zz/deep/x.txt', 'lx/not-mine.txt']) await uploadString(ref(client.storage, name), name);
    const all = await listAll(ref(client.storage, 'l'));
    assert.deepEqual(all.items.map((item) => item.fullPath), ['l/a.txt', 'l/b.txt', 'l/c.txt']);
    assert.deepEqual(all.prefixes.map((prefix) => prefix.fullPath), ['l/sub', 'l/zz']);
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const page = await list(ref(client.storage, 'l'), { maxResults: 2, ...(pageToken ? { pageToken } : {}) });
      seen.push(...page.items.map((item) => item.fullPath), ...page.prefixes.map((prefix) => `${prefix.fullPath}/`));
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken);
    assert.deepEqual(seen.sort(), ['l/a.txt', 'l/b.txt', 'l/c.txt', 'l/sub/', 'l/zz/']);
    assert.equal(pages, 3);
  });

  test('deleteObject removes the object and its bytes; deleting or reading it again is object-not-found', async () => {
    const target = ref(client.storage, 'gone/soon.bin');
    await uploadBytes(target, pattern(5000));
    const before = storedFiles(server.dataDir).blobs.length;
    await deleteObject(target);
    await assert.rejects(getMetadata(target), { code: 'storage/object-not-found' });
    await assert.rejects(deleteObject(target), { code: 'storage/object-not-found' });
    await eventually(() => storedFiles(server.dataDir).blobs.length === before - 1);
  });

  test('replacing an object makes a new generation and drops the old bytes', async () => {
    const target = ref(client.storage, 'replace/me.bin');
    const first = await uploadBytes(target, pattern(100));
    const blobs = storedFiles(server.dataDir).blobs.length;
    const second = await uploadBytes(target, pattern(200, 5));
    assert.ok(BigInt(second.metadata.generation) > BigInt(first.metadata.generation));
    assert.deepEqual(new Uint8Array(await getBytes(target)), pattern(200, 5));
    await eventually(() => storedFiles(server.dataDir).blobs.length === blobs);
  });
});

describe('the v0 protocol by raw HTTP', () => {
  test('resumable: start answers the upload URL; query, a wrong offset, chunks, finalize twice', async () => {
    const start = await fetch(`${v0Url(server)}?name=${encodeURIComponent('raw/resumable.bin')}`, {
      method: 'POST',
      headers: { 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'x-goog-upload-header-content-length': '600', 'content-type': 'application/json' },
      body: JSON.stringify({ contentType: 'text/plain', metadata: { k: 'v' } }),
    });
    assert.equal(start.status, 200);
    assert.equal(start.headers.get('x-goog-upload-status'), 'active');
    const uploadUrl = start.headers.get('x-goog-upload-url')!;
    assert.match(uploadUrl, /upload_id=/);
    const send = (command: string, offset: number | undefined, body?: Uint8Array) =>
      fetch(uploadUrl, { method: 'POST', headers: { 'x-goog-upload-command': command, ...(offset !== undefined ? { 'x-goog-upload-offset': String(offset) } : {}) }, ...(body ? { body: new Uint8Array(body) } : {}) });
    const bytes = pattern(600, 11);
    assert.equal((await send('upload', 0, bytes.subarray(0, 250))).headers.get('x-goog-upload-status'), 'active');
    const query = await send('query', undefined);
    assert.equal(query.headers.get('x-goog-upload-size-received'), '250');
    const wrong = await send('upload', 100, bytes.subarray(100, 200));
    assert.equal(wrong.status, 400);
    assert.equal(((await wrong.json()) as { error: { code: number } }).error.code, 400);
    const last = await send('upload, finalize', 250, bytes.subarray(250));
    assert.equal(last.status, 200);
    assert.equal(last.headers.get('x-goog-upload-status'), 'final');
    const object = (await last.json()) as { size: string; md5Hash: string; contentType: string; metadata: Record<string, string> };
    assert.deepEqual([object.size, object.md5Hash, object.contentType, object.metadata.k], ['600', md5(bytes), 'text/plain', 'v']);
    const again = await send('finalize', undefined);
    assert.equal(again.status, 200);
    assert.equal(((await again.json()) as { md5Hash: string }).md5Hash, md5(bytes));
    assert.equal(storedFiles(server.dataDir).staging.length, 0);
  });

  test('resumable: cancel discards the staged bytes; the session is gone for later chunks', async () => {
    const start = await fetch(`${v0Url(server)}?name=raw%2Fcancelled.bin`, { method: 'POST', headers: { 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start' }, body: '{}' });
    const uploadUrl = start.headers.get('x-goog-upload-url')!;
    await fetch(uploadUrl, { method: 'POST', headers: { 'x-goog-upload-command': 'upload', 'x-goog-upload-offset': '0' }, body: pattern(1000) });
    assert.equal(storedFiles(server.dataDir).staging.length, 1);
    assert.equal((await fetch(uploadUrl, { method: 'POST', headers: { 'x-goog-upload-command': 'cancel' } })).status, 200);
    assert.equal(storedFiles(server.dataDir).staging.length, 0);
    const late = await fetch(uploadUrl, { method: 'POST', headers: { 'x-goog-upload-command': 'upload', 'x-goog-upload-offset': '1000' }, body: pattern(10) });
    assert.equal(late.status, 400);
    const unknown = await fetch(`${v0Url(server)}?upload_id=nope&upload_protocol=resumable`, { method: 'POST', headers: { 'x-goog-upload-command': 'query' } });
    assert.equal(unknown.status, 404);
    await assert.rejects(getMetadata(ref(client.storage, 'raw/cancelled.bin')), { code: 'storage/object-not-found' });
  });

  test('a torn upload (the client stops mid-body) leaves no object, no blob and no temporary file', async () => {
    const before = storedFiles(server.dataDir);
    const { body, contentType } = multipartBody({ name: 'torn/file.bin' }, Buffer.from(pattern(200_000)));
    await new Promise<void>((resolve) => {
      const url = new URL(`${v0Url(server)}?name=torn%2Ffile.bin`);
      const request = httpRequest(url, { method: 'POST', headers: { 'content-type': contentType, 'x-goog-upload-protocol': 'multipart', 'content-length': String(body.length) } });
      request.on('error', () => resolve());
      request.on('response', () => resolve());
      request.write(body.subarray(0, 120_000), () => setTimeout(() => request.destroy(), 100));
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await assert.rejects(getMetadata(ref(client.storage, 'torn/file.bin')), { code: 'storage/object-not-found' });
    const now = storedFiles(server.dataDir);
    assert.equal(now.blobs.length, before.blobs.length);
    assert.equal(now.tmp.length, 0);
  });

  test('hostile input gets Google error JSON, never a 500: names, buckets, metadata, multipart, prefixes, tokens', async () => {
    const cases: Array<[string, Promise<Response>, number]> = [
      ['dot-dot segment', fetch(`${v0Url(server)}?name=${encodeURIComponent('a/../b')}`, { method: 'POST', body: 'x' }), 400],
      ['control character', fetch(`${v0Url(server)}?name=${encodeURIComponent('a\u0001b')}`, { method: 'POST', body: 'x' }), 400],
      ['no name', fetch(v0Url(server), { method: 'POST', body: 'x' }), 400],
      ['bad bucket', fetch(`${server.url}/v0/b/NOT_A_BUCKET/o/x`), 400],
      ['metadata of the wrong type', fetch(v0Url(server, 'docs/report.bin'), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"contentType": 5}' }), 400],
      ['unknown metadata field', fetch(v0Url(server, 'docs/report.bin'), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"evil": 1}' }), 400],
      ['malformed JSON', fetch(v0Url(server, 'docs/report.bin'), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"contentType":' }), 400],
      ['oversized JSON', fetch(v0Url(server, 'docs/report.bin'), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { k: 'v'.repeat(100_000) } }) }), 400],
      ['multipart without a boundary', fetch(`${v0Url(server)}?name=m.bin`, { method: 'POST', headers: { 'x-goog-upload-protocol': 'multipart', 'content-type': 'multipart/related' }, body: 'x' }), 400],
      ['multipart garbage', fetch(`${v0Url(server)}?name=m.bin`, { method: 'POST', headers: { 'x-goog-upload-protocol': 'multipart', 'content-type': 'multipart/related; boundary=zz' }, body: 'garbage without parts' }), 400],
      ['multipart unterminated', fetch(`${v0Url(server)}?name=m.bin`, { method: 'POST', headers: { 'x-goog-upload-protocol': 'multipart', 'content-type': 'multipart/related; boundary=zz' }, body: '--zz\r\nContent-Type: application/json\r\n\r\n{}\r\n--zz\r\n\r\nbytes without end' }), 400],
      ['multipart metadata not JSON', fetch(`${v0Url(server)}?name=m.bin`, { method: 'POST', headers: { 'x-goog-upload-protocol': 'multipart', 'content-type': 'multipart/related; boundary=zz' }, body: '--zz\r\n\r\nnot json\r\n--zz\r\n\r\nx\r\n--zz--' }), 400],
      ['prefix without a slash', fetch(`${v0Url(server)}?prefix=l&delimiter=/`), 400],
      ['garbage page token', fetch(`${v0Url(server)}?prefix=l/&pageToken=${Buffer.from('zzz').toString('base64url')}`), 400],
      ['maxResults not a number', fetch(`${v0Url(server)}?maxResults=-1`), 400],
      ['repeated parameter', fetch(`${v0Url(server)}?prefix=a/&prefix=b/`), 400],
      ['offset not a number', fetch(`${v0Url(server)}?upload_id=x`, { method: 'POST', headers: { 'x-goog-upload-command': 'upload', 'x-goog-upload-offset': 'abc' }, body: 'x' }), 400],
      ['unknown upload command', fetch(`${v0Url(server)}?upload_id=x`, { method: 'POST', headers: { 'x-goog-upload-command': 'explode' } }), 400],
      ['missing object', fetch(v0Url(server, 'nothing/here')), 404],
      ['bad percent escape', fetch(`${server.url}/v0/b/${testBucket}/o/%E0%A4%A`), 400],
    ];
    for (const [what, pending, status] of cases) {
      const response = await pending;
      assert.equal(response.status, status, what);
      const body = (await response.json()) as { error?: { code: number; message: string } };
      assert.equal(body.error?.code, status, what);
      assert.equal(typeof body.error?.message, 'string', what);
    }
    assert.equal(storedFiles(server.dataDir).tmp.length, 0);
  });

  test('download tokens: the administrator creates and revokes them; a user may not', async () => {
    await uploadString(ref(client.storage, 'tokens/t.txt'), 'secret');
    const meta = await rawMetadata('tokens/t.txt');
    const created = await fetch(`${v0Url(server, 'tokens/t.txt')}?create_token=true`, { method: 'POST', headers: { authorization: 'Bearer owner' } });
    assert.equal(created.status, 200);
    const tokens = ((await created.json()) as { downloadTokens: string }).downloadTokens.split(',');
    assert.equal(tokens.length, 2);
    const revoked = await fetch(`${v0Url(server, 'tokens/t.txt')}?delete_token=${tokens[0]}`, { method: 'POST', headers: { authorization: 'Bearer owner' } });
    assert.deepEqual(((await revoked.json()) as { downloadTokens: string }).downloadTokens.split(','), [tokens[1]]);
    assert.equal(tokens[0], meta.downloadTokens);
    const byUser = await fetch(`${v0Url(server, 'tokens/t.txt')}?create_token=true`, { method: 'POST' });
    assert.equal(byUser.status, 403);
    assert.equal(((await byUser.json()) as { error: { message: string } }).error.message, 'Missing admin credentials.');
  });

  test('CORS: a page on another origin may upload and read the resumable headers, but is never the administrator', async () => {
    const origin = 'https://app.example';
    const preflight = await fetch(`${v0Url(server)}?name=x`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-goog-upload-command,authorization' } });
    assert.equal(preflight.status, 204);
    const start = await fetch(`${v0Url(server)}?name=cors%2Fx.bin`, { method: 'POST', headers: { origin, 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start' }, body: '{}' });
    assert.equal(start.headers.get('access-control-allow-origin'), origin);
    assert.match(start.headers.get('access-control-expose-headers') ?? '', /X-Goog-Upload-URL/);
    const asOwner = await fetch(`${v0Url(server, 'tokens/t.txt')}?create_token=true`, { method: 'POST', headers: { origin, authorization: 'Firebase owner' } });
    assert.equal(asOwner.status, 403);
  });
});

describe('restarts, limits and production', () => {
  test('an acknowledged object is there after a restart on the same data folder', async () => {
    const dataDir = (await import('../helpers/hearth.js')).tempDataDir();
    let first: TestHearth | undefined = await startHearth({ dataDir });
    const one = await storageClient(first);
    await uploadBytes(ref(one.storage, 'keep/me.bin'), pattern(70_000));
    await one.close();
    await first.close();
    first = undefined;
    const second = await startHearth({ dataDir });
    try {
      const two = await storageClient(second);
      assert.deepEqual(new Uint8Array(await getBytes(ref(two.storage, 'keep/me.bin'))), pattern(70_000));
      await two.close();
    } finally {
      await second.close();
    }
  });

  test('size limit per object and quota per project refuse uploads and keep nothing', async () => {
    const limited = await startHearth({ files: { maxObjectBytes: 50_000, projectQuotaBytes: 80_000, uploadsPerAddress: 32, downloadsPerAddress: 16 } });
    try {
      const c = await storageClient(limited);
      await assert.rejects(uploadBytes(ref(c.storage, 'too/big.bin'), pattern(60_000)), (error: { status_?: number; code: string }) => error.code !== undefined);
      const tooBig = await fetch(`${v0Url(limited)}?name=too%2Fbig.bin`, { method: 'POST', body: pattern(60_000) });
      assert.equal(tooBig.status, 413);
      const declared = await fetch(`${v0Url(limited)}?name=too%2Fbig2.bin`, { method: 'POST', headers: { 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'x-goog-upload-header-content-length': '60000' }, body: '{}' });
      assert.equal(declared.status, 413);
      await uploadBytes(ref(c.storage, 'q/one.bin'), pattern(45_000));
      await assert.rejects(uploadBytes(ref(c.storage, 'q/two.bin'), pattern(45_000)), { code: 'storage/quota-exceeded' });
      await deleteObject(ref(c.storage, 'q/one.bin'));
      await uploadBytes(ref(c.storage, 'q/two.bin'), pattern(45_000));
      const files = storedFiles(limited.dataDir);
      await eventually(() => storedFiles(limited.dataDir).blobs.length === 1);
      assert.equal(files.tmp.length, 0);
      await c.close();
    } finally {
      await limited.close();
    }
  });

  test('production without storage rules: closed to users and to nobody, open to the admin key', async () => {
    const production = await startHearth({ dev: false });
    try {
      const c = await storageClient(production, { signIn: true });
      await assert.rejects(uploadString(ref(c.storage, 'p/x.txt'), 'x'), { code: 'storage/unauthorized' });
      const byAdmin = await fetch(`${v0Url(production)}?name=p%2Fx.txt`, { method: 'POST', headers: { authorization: `Bearer ${production.adminKey}` }, body: 'x' });
      assert.equal(byAdmin.status, 200);
      await assert.rejects(getBytes(ref(c.storage, 'p/x.txt')), { code: 'storage/unauthorized' });
      const anonymous = await fetch(v0Url(production, 'p/x.txt'));
      assert.equal(anonymous.status, 403);
      const owner = await fetch(v0Url(production, 'p/x.txt'), { headers: { authorization: 'Bearer owner' } });
      assert.equal(owner.status, 401, '`Bearer owner` is an administrator only in --dev (here a token that does not verify)');
      await c.close();
    } finally {
      await production.close();
    }
  });
});

async function rawMetadata(name: string): Promise<{ crc32c: string; downloadTokens: string }> {
  return (await (await fetch(v0Url(server, name))).json()) as { crc32c: string; downloadTokens: string };
}

async function eventually(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
