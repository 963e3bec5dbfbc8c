/**
 * Storage security rules (`service firebase.storage`) on Hearth's rules engine, through
 * firebase/storage (Node) with real ID tokens against Hearth in production mode: each user's files
 * are that user's on every path (read, write, list, update, delete, resumable and one-shot), signed-out
 * callers and wrong content types or sizes are refused, a download token opens only its own object,
 * list needs rules_version 2, firestore.get()/exists() read documents across services; deployed by
 * --storage-rules FILE (reloaded), the Rules API (firebase.storage/<bucket>) and the emulator endpoint.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteObject, getBytes, getDownloadURL, getMetadata, list, listAll, ref, updateMetadata, uploadBytes, uploadBytesResumable, uploadString } from 'firebase/storage';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { storageClient, v0Url, type StorageClient } from '../helpers/storage-clients.js';

const ownFiles = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{allPaths=**} {
      allow read: if request.auth != null && request.auth.uid == uid;
      allow create, update: if request.auth != null && request.auth.uid == uid
        && request.resource.size < 100 * 1024
        && request.resource.contentType.matches('image/.*');
      allow delete: if request.auth != null && request.auth.uid == uid;
    }
    match /shared/{file} {
      allow read: if request.auth != null
        && firestore.get(/databases/(default)/documents/members/$(request.auth.uid)).data.role == 'reader';
      allow write: if request.auth != null && firestore.exists(/databases/(default)/documents/members/$(request.auth.uid));
    }
  }
}
`;

const image = (size: number) => Uint8Array.from({ length: size }, (_, i) => i & 0xff);
const unauthorized = { code: 'storage/unauthorized' };

let server: TestHearth;
let scratch: string;
let rulesFile: string;
let alice: StorageClient;
let bob: StorageClient;
let nobody: StorageClient;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hearth-storage-rules-'));
  rulesFile = join(scratch, 'storage.rules');
  writeFileSync(rulesFile, ownFiles);
  server = await startHearth({ dev: false, storageRulesFile: rulesFile });
  alice = await storageClient(server, { signIn: true });
  bob = await storageClient(server, { signIn: true });
  nobody = await storageClient(server);
});
after(async () => {
  for (const client of [alice, bob, nobody]) await client?.close();
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const aliceFile = () => `users/${alice.user!.uid}/avatar.png`;

describe('each user keeps their own files', () => {
  test('the owner uploads (one-shot and resumable), reads, lists, updates and deletes', async () => {
    await uploadBytes(ref(alice.storage, aliceFile()), image(2000), { contentType: 'image/png' });
    const resumable = await uploadBytesResumable(ref(alice.storage, `users/${alice.user!.uid}/big.png`), image(90 * 1024), { contentType: 'image/png' });
    assert.equal(resumable.metadata.size, 90 * 1024);
    assert.equal((await getBytes(ref(alice.storage, aliceFile()))).byteLength, 2000);
    const listed = await listAll(ref(alice.storage, `users/${alice.user!.uid}`));
    assert.deepEqual(listed.items.map((item) => item.name).sort(), ['avatar.png', 'big.png']);
    assert.equal((await updateMetadata(ref(alice.storage, aliceFile()), { customMetadata: { caption: 'me' } })).customMetadata?.caption, 'me');
    await deleteObject(ref(alice.storage, `users/${alice.user!.uid}/big.png`));
  });

  test('another user is refused on every path: get, download, list, upload, resumable start, update, delete', async () => {
    const theirs = ref(bob.storage, aliceFile());
    await assert.rejects(getMetadata(theirs), unauthorized);
    await assert.rejects(getBytes(theirs), unauthorized);
    await assert.rejects(list(ref(bob.storage, `users/${alice.user!.uid}`)), unauthorized);
    await assert.rejects(uploadBytes(ref(bob.storage, `users/${alice.user!.uid}/planted.png`), image(10), { contentType: 'image/png' }), unauthorized);
    await assert.rejects(uploadBytesResumable(ref(bob.storage, `users/${alice.user!.uid}/planted-big.png`), image(300 * 1024 - 1), { contentType: 'image/png' }).then(), unauthorized);
    await assert.rejects(updateMetadata(theirs, { contentType: 'image/gif' }), unauthorized);
    await assert.rejects(deleteObject(theirs), unauthorized);
    // Nothing of Bob's attempts was kept, and Alice's file is untouched.
    await assert.rejects(getMetadata(ref(alice.storage, `users/${alice.user!.uid}/planted.png`)), { code: 'storage/object-not-found' });
    assert.equal((await getMetadata(ref(alice.storage, aliceFile()))).contentType, 'image/png');
  });

  test('a signed-out caller is refused: read, write, list', async () => {
    const mine = ref(nobody.storage, aliceFile());
    await assert.rejects(getBytes(mine), unauthorized);
    await assert.rejects(uploadString(ref(nobody.storage, 'users/anyone/x.png'), 'x', 'raw', { contentType: 'image/png' }), unauthorized);
    await assert.rejects(listAll(ref(nobody.storage, 'users')), unauthorized);
    const raw = await fetch(v0Url(server, aliceFile()));
    assert.equal(raw.status, 403);
    assert.deepEqual(await raw.json(), { error: { code: 403, message: 'Permission denied. No READ permission.' } });
  });

  test('request.resource: a wrong content type or an oversized file is refused, one-shot and resumable, and nothing is kept', async () => {
    const folder = `users/${alice.user!.uid}`;
    await assert.rejects(uploadString(ref(alice.storage, `${folder}/note.txt`), 'hello', 'raw', { contentType: 'text/plain' }), unauthorized);
    await assert.rejects(uploadBytes(ref(alice.storage, `${folder}/huge.png`), image(150 * 1024), { contentType: 'image/png' }), unauthorized);
    await assert.rejects(uploadBytesResumable(ref(alice.storage, `${folder}/huge2.png`), image(400 * 1024), { contentType: 'image/png' }).then(), unauthorized);
    // An upload that declares a small size and then sends more is judged on what arrived.
    const token = await alice.user!.getIdToken();
    const start = await fetch(`${v0Url(server)}?name=${encodeURIComponent(`${folder}/liar.png`)}`, {
      method: 'POST',
      headers: { authorization: `Firebase ${token}`, 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'x-goog-upload-header-content-type': 'image/png' },
      body: JSON.stringify({ contentType: 'image/png' }),
    });
    assert.equal(start.status, 200);
    const finish = await fetch(start.headers.get('x-goog-upload-url')!, { method: 'POST', headers: { authorization: `Firebase ${token}`, 'x-goog-upload-command': 'upload, finalize', 'x-goog-upload-offset': '0' }, body: image(120 * 1024) });
    assert.equal(finish.status, 403);
    const names = (await listAll(ref(alice.storage, folder))).items.map((item) => item.name);
    assert.deepEqual(names, ['avatar.png']);
  });

  test('a download token opens its own object to anyone, and no other object', async () => {
    const url = await getDownloadURL(ref(alice.storage, aliceFile()));
    assert.equal((await fetch(url)).status, 200, 'the token opens its object without credentials');
    await uploadBytes(ref(alice.storage, `users/${alice.user!.uid}/other.png`), image(10), { contentType: 'image/png' });
    const token = new URL(url).searchParams.get('token')!;
    const elsewhere = await fetch(`${v0Url(server, `users/${alice.user!.uid}/other.png`)}?alt=media&token=${token}`);
    assert.equal(elsewhere.status, 403);
    const forged = await fetch(`${v0Url(server, aliceFile())}?alt=media&token=00000000-0000-4000-8000-000000000000`);
    assert.equal(forged.status, 403);
  });
});

describe('across services and versions', () => {
  test('firestore.get() and firestore.exists() read the project database', async () => {
    const adminHeaders = { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' };
    const put = (uid: string, role: string) =>
      fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/members/${uid}`, { method: 'PATCH', headers: adminHeaders, body: JSON.stringify({ fields: { role: { stringValue: role } } }) });
    assert.equal((await put(alice.user!.uid, 'reader')).status, 200);
    assert.equal((await put(bob.user!.uid, 'writer')).status, 200);
    await uploadString(ref(bob.storage, 'shared/plan.txt'), 'plan');
    assert.equal(new TextDecoder().decode(await getBytes(ref(alice.storage, 'shared/plan.txt'))), 'plan');
    await assert.rejects(getBytes(ref(bob.storage, 'shared/plan.txt')), unauthorized, 'a writer is not a reader');
    await assert.rejects(uploadString(ref(nobody.storage, 'shared/x.txt'), 'x'), unauthorized);
  });

  test('list is refused under rules_version 1, and the file reloads on change', async () => {
    writeFileSync(rulesFile, ownFiles.replace("rules_version = '2';\n", ''));
    await eventually(async () => {
      try {
        await list(ref(alice.storage, `users/${alice.user!.uid}`));
        return false;
      } catch (error) {
        return (error as { code: string }).code === 'storage/unauthorized';
      }
    });
    assert.equal((await getBytes(ref(alice.storage, aliceFile()))).byteLength, 2000, 'get is still allowed under version 1');
    writeFileSync(rulesFile, ownFiles);
    await eventually(async () => (await list(ref(alice.storage, `users/${alice.user!.uid}`)).then(() => true, () => false)));
  });

  test('the Rules API releases storage rules per bucket; a storage ruleset cannot become Firestore rules', async () => {
    const rulesApi = `${server.url}/firebaserules.googleapis.com/v1/projects/${server.projectId}`;
    const headers = { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' };
    const openRules = `rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n    match /{all=**} { allow read, write: if true; }\n  }\n}\n`;
    const created = await fetch(`${rulesApi}/rulesets`, { method: 'POST', headers, body: JSON.stringify({ source: { files: [{ name: 'storage.rules', content: openRules }] } }) });
    assert.equal(created.status, 200);
    const rulesetName = ((await created.json()) as { name: string }).name;
    const wrong = await fetch(`${rulesApi}/releases`, { method: 'POST', headers, body: JSON.stringify({ name: `projects/${server.projectId}/releases/cloud.firestore/other`, rulesetName }) });
    assert.equal(wrong.status, 400);
    const other = 'side-bucket';
    const release = await fetch(`${rulesApi}/releases`, { method: 'POST', headers, body: JSON.stringify({ name: `projects/${server.projectId}/releases/firebase.storage/${other}`, rulesetName }) });
    assert.equal(release.status, 200);
    const sideNobody = await storageClient(server, { bucket: other });
    try {
      await uploadString(ref(sideNobody.storage, 'anything.txt'), 'open here');
      assert.equal(new TextDecoder().decode(await getBytes(ref(sideNobody.storage, 'anything.txt'))), 'open here');
      await assert.rejects(getBytes(ref(nobody.storage, aliceFile())), unauthorized, 'the default bucket keeps its own rules');
    } finally {
      await sideNobody.close();
    }
  });

  test('the emulator endpoint (PUT /internal/setRules) is the administrator\'s outside --dev, open in --dev', async () => {
    const body = JSON.stringify({ rules: { files: [{ name: 'storage.rules', content: ownFiles }] } });
    assert.equal((await fetch(`${server.url}/internal/setRules`, { method: 'PUT', body })).status, 403);
    assert.equal((await fetch(`${server.url}/internal/setRules`, { method: 'PUT', headers: { authorization: `Bearer ${server.adminKey}` }, body })).status, 200);
    const dev = await startHearth();
    try {
      const c = await storageClient(dev);
      await uploadString(ref(c.storage, 'open.txt'), 'x');
      const deny = JSON.stringify({ rules: { files: [{ name: 'storage.rules', content: "rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n    match /{all=**} { allow read, write: if false; }\n  }\n}\n" }] } });
      assert.equal((await fetch(`${dev.url}/internal/setRules`, { method: 'PUT', body: deny })).status, 200);
      await assert.rejects(getBytes(ref(c.storage, 'open.txt')), unauthorized);
      const broken = JSON.stringify({ rules: { files: [{ name: 'storage.rules', content: 'service firebase.storage { match' }] } });
      const refused = await fetch(`${dev.url}/internal/setRules`, { method: 'PUT', body: broken });
      assert.equal(refused.status, 400);
      assert.match(((await refused.json()) as { error: { message: string } }).error.message, /L1/);
      const fromPage = await fetch(`${dev.url}/internal/setRules`, { method: 'PUT', headers: { origin: 'https://evil.example' }, body: deny });
      assert.equal(fromPage.status, 403);
      assert.equal(fromPage.headers.get('access-control-allow-origin'), null);
      await c.close();
    } finally {
      await dev.close();
    }
  });
});

async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

