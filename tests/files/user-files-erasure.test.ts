/**
 * A deleted account's files, where the web app keeps them (`users/{uid}/` in the project's default
 * buckets), erased for the account-data erasure (Hearth.eraseUserFiles): every object under the
 * account's folder goes, bytes included, in batches; a neighbour such as `users/u10/` and other
 * folders stay; a second run finds nothing left.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { adminObject, adminUpload, storedFiles, testBucket } from '../helpers/storage-clients.js';

let server: TestHearth;
const otherBucket = 'demo-test.firebasestorage.app';

before(async () => {
  server = await startHearth();
});
after(async () => server?.close());

test("a deleted account's files go, and nobody else's", async () => {
  const gone = [
    [testBucket, 'users/u1/photo'],
    [testBucket, 'users/u1/notes/n1/a.txt'],
    [otherBucket, 'users/u1/elsewhere.txt'],
  ];
  const kept = [
    [testBucket, 'users/u10/keep.txt'],
    [testBucket, 'users/u2/photo'],
    [testBucket, 'shared/users/u1/copy.txt'],
    ['some-other-bucket', 'users/u1/not-the-default-bucket.txt'],
  ];
  for (const [bucket, name] of [...gone, ...kept]) await adminUpload(server, name!, `bytes of ${name}`, 'text/plain', bucket);
  const blobsBefore = storedFiles(server.dataDir).blobs.length;

  assert.equal(await server.hearth.eraseUserFiles(server.projectId, 'u1'), gone.length);
  for (const [bucket, name] of gone) assert.equal(await adminObject(server, name!, bucket), undefined, name);
  for (const [bucket, name] of kept) assert.ok(await adminObject(server, name!, bucket), name);
  // The bytes (in the data folder: no --storage-url here) are removed a moment after their metadata.
  for (let waited = 0; storedFiles(server.dataDir).blobs.length > blobsBefore - gone.length; waited += 50) {
    assert.ok(waited < 20_000, 'the erased objects\u2019 bytes are still on disk');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(await server.hearth.eraseUserFiles(server.projectId, 'u1'), 0, 'a second run finds nothing');
});

test('an account with more files than one batch', { timeout: 240_000 }, async () => {
  const names = Array.from({ length: 600 }, (_, i) => `users/u3/files/${String(i).padStart(4, '0')}.txt`);
  for (let i = 0; i < names.length; i += 20) await Promise.all(names.slice(i, i + 20).map((name) => adminUpload(server, name, name)));
  assert.equal(await server.hearth.eraseUserFiles(server.projectId, 'u3'), names.length);
  const listed = await fetch(`${server.url}/v0/b/${testBucket}/o?prefix=users/u3/`, { headers: { authorization: `Bearer ${server.adminKey}` } });
  assert.deepEqual(((await listed.json()) as { items: unknown[] }).items, []);
});
