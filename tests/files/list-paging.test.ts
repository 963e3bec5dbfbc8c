/**
 * Listing more objects than the store reads in one step (256), on both backends: firebase/storage's
 * list and listAll see every name once, in order, across the server's own batches and across pages
 * (the cursor after a name used to end in U+0000, which PostgreSQL's text refuses: a 500, so the SDK
 * retried until it gave up); a prefix or page token with a control character is a 400 in Google's
 * JSON on both APIs, never a 500.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { list, listAll, ref } from 'firebase/storage';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { adminUpload, storageClient, testBucket, type StorageClient } from '../helpers/storage-clients.js';

let server: TestHearth;
let client: StorageClient;
const names = Array.from({ length: 600 }, (_, i) => `many/${String(i).padStart(4, '0')}.txt`);

before(async () => {
  server = await startHearth();
  client = await storageClient(server);
  for (let i = 0; i < names.length; i += 20) await Promise.all(names.slice(i, i + 20).map((name) => adminUpload(server, name, name)));
  // A folder among them: listed once, as a prefix.
  await adminUpload(server, 'many/0300.txt.d/inner.txt', 'inner');
});
after(async () => {
  await client?.close();
  await server?.close();
});

test('listAll sees all 600 names once, in order, and the folder among them', async () => {
  const listed = await listAll(ref(client.storage, 'many'));
  assert.deepEqual(listed.items.map((item) => item.fullPath), names);
  assert.deepEqual(listed.prefixes.map((prefix) => prefix.fullPath), ['many/0300.txt.d']);
});

test('pages of 250 follow one another without a gap or a repeat', async () => {
  const seen: string[] = [];
  let pageToken: string | undefined;
  do {
    const page = await list(ref(client.storage, 'many'), { maxResults: 250, ...(pageToken ? { pageToken } : {}) });
    seen.push(...page.items.map((item) => item.fullPath), ...page.prefixes.map((prefix) => `${prefix.fullPath}/`));
    pageToken = page.nextPageToken;
  } while (pageToken);
  assert.deepEqual(seen.filter((name) => !name.endsWith('/')), names);
  assert.equal(seen.length, names.length + 1);
});

test('a prefix or page token with a control character is a 400, not a 500', async () => {
  const token = Buffer.from('many/\u0000').toString('base64url');
  for (const base of [`${server.url}/v0/b/${testBucket}/o`, `${server.url}/storage/v1/b/${testBucket}/o`]) {
    for (const query of ['prefix=many%00/', 'prefix=many%01/', `prefix=many/&pageToken=${token}`]) {
      const response = await fetch(`${base}?${query}`, { headers: { authorization: 'Bearer owner' } });
      assert.equal(response.status, 400, `${base}?${query}`);
      const body = (await response.json()) as { error: { code: number; message: string } };
      assert.equal(body.error.code, 400);
    }
  }
});
