/**
 * The console's storage rules editor and playground on the server: `storage/rules:check` lists a
 * storage source's issues at their line (a Firestore source is the wrong service);
 * `storage/rules:simulate` judges a made-up request on the engine the storage guard uses, with the
 * stored object as `resource`, the described upload as `request.resource` and firestore.exists()
 * reading the project's documents, and names the allow statement that decided. Its verdicts are
 * checked against the real guard answering firebase/storage. Operators only; bad bodies are 400.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth } from 'firebase/auth';
import { connectStorageEmulator, getBytes, getStorage, ref, updateMetadata, uploadBytes } from 'firebase/storage';
import { uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { adminUpload, testBucket } from '../helpers/storage-clients.js';

const rules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file} {
      allow get: if request.auth.uid == uid && resource.metadata.shared == 'yes';
      allow create: if request.auth.uid == uid && request.resource.size < 1000 && request.resource.contentType == 'text/plain';
      allow update: if request.auth.uid == uid && request.resource.metadata.keep == resource.metadata.keep;
    }
    match /teams/{team}/{file} {
      allow get: if firestore.exists(/databases/(default)/documents/teams/$(team)/members/$(request.auth.uid));
    }
  }
}
`;

let server: TestHearth;
const admin = () => ({ authorization: `Bearer ${server.adminKey}` });
const base = () => `${server.url}/hearth/v1/console/projects/${server.projectId}/storage`;
const simulate = (body: Record<string, unknown>, headers: Record<string, string> = admin()) => postJson(`${base()}/rules:simulate`, { bucket: testBucket, ...body }, headers);
const check = (body: unknown, headers: Record<string, string> = admin()) => postJson(`${base()}/rules:check`, body, headers);
const alice = { uid: 'alice', token: {} };

before(async () => {
  server = await startHearth({ dev: false });
  const released = await fetch(`${server.url}/internal/setRules`, {
    method: 'PUT',
    headers: { ...admin(), 'content-type': 'application/json' },
    body: JSON.stringify({ rules: { files: [{ name: 'storage.rules', content: rules }] } }),
  });
  assert.equal(released.status, 200, await released.text());
  await adminUpload(server, 'users/alice/shared.txt', 'hello');
  const shared = await fetch(`${server.url}/storage/v1/b/${testBucket}/o/${encodeURIComponent('users/alice/shared.txt')}`, {
    method: 'PATCH',
    headers: { ...admin(), 'content-type': 'application/json' },
    body: JSON.stringify({ metadata: { shared: 'yes', keep: 'k1' } }),
  });
  assert.equal(shared.status, 200);
  await adminUpload(server, 'users/alice/private.txt', 'secret');
  await adminUpload(server, 'teams/red/plan.txt', 'plan');
  const member = await fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/teams/red/members/alice`, {
    method: 'PATCH',
    headers: { ...admin(), 'content-type': 'application/json' },
    body: JSON.stringify({ fields: {} }),
  });
  assert.equal(member.status, 200);
});
after(async () => server.close());

describe('storage/rules:check', () => {
  test('a storage source has no issues; an error is at its line; a Firestore source is the wrong service', async () => {
    assert.deepEqual((await check({ source: rules })).body, { issues: [] });
    const broken = await check({ source: rules.replace("request.resource.size < 1000 &&", 'request.resource.size < &&') });
    assert.equal(broken.status, 200);
    assert.equal(broken.body.issues[0].line, 6);
    assert.equal(broken.body.issues[0].severity, 'ERROR');
    const firestore = await check({ source: "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { } }" });
    assert.match(firestore.body.issues[0].message, /Expected 'service firebase\.storage'/);
  });
});

describe('storage/rules:simulate', () => {
  test('the stored object is resource: its custom metadata decides a get, and the deciding line is named', async () => {
    const shared = await simulate({ method: 'get', path: 'users/alice/shared.txt', auth: alice });
    assert.equal(shared.status, 200, JSON.stringify(shared.body));
    assert.equal(shared.body.allowed, true);
    assert.equal(shared.body.decidedBy.line, 5);
    assert.equal(shared.body.decidedBy.match, '/b/{bucket}/o/users/{uid}/{file}');
    assert.equal((await simulate({ method: 'get', path: 'users/alice/private.txt', auth: alice })).body.allowed, false);
    // A resource described by hand stands in for the stored one; null means none.
    assert.equal((await simulate({ method: 'get', path: 'users/alice/private.txt', auth: alice, resource: { metadata: { shared: 'yes' } } })).body.allowed, true);
    assert.equal((await simulate({ method: 'get', path: 'users/alice/shared.txt', auth: alice, resource: null })).body.allowed, false);
  });

  test('an upload is judged on the described request.resource; an update keeps what it does not name', async () => {
    assert.equal((await simulate({ method: 'create', path: 'users/alice/new.txt', auth: alice, request: { size: 10, contentType: 'text/plain' } })).body.allowed, true);
    assert.equal((await simulate({ method: 'create', path: 'users/alice/new.txt', auth: alice, request: { size: 5000, contentType: 'text/plain' } })).body.allowed, false);
    assert.equal((await simulate({ method: 'create', path: 'users/alice/new.txt', auth: alice, request: { size: 10, contentType: 'text/html' } })).body.allowed, false);
    assert.equal((await simulate({ method: 'create', path: 'users/alice/new.txt', auth: null, request: { size: 10, contentType: 'text/plain' } })).body.allowed, false);
    assert.equal((await simulate({ method: 'update', path: 'users/alice/shared.txt', auth: alice, request: { contentType: 'text/csv' } })).body.allowed, true);
    assert.equal((await simulate({ method: 'update', path: 'users/alice/shared.txt', auth: alice, request: { metadata: { keep: 'other' } } })).body.allowed, false);
  });

  test('firestore.exists() reads the project\'s documents', async () => {
    assert.equal((await simulate({ method: 'get', path: 'teams/red/plan.txt', auth: alice })).body.allowed, true);
    assert.equal((await simulate({ method: 'get', path: 'teams/red/plan.txt', auth: { uid: 'bob' } })).body.allowed, false);
  });

  test('list is judged on its folder; unsaved source is judged instead of the released rules', async () => {
    const denied = await simulate({ method: 'list', path: 'users/alice/', auth: alice });
    assert.equal(denied.body.allowed, false);
    const listing = rules.replace("match /teams/{team}/{file} {", "match /users/{uid} {\n      allow list: if request.auth.uid == uid;\n    }\n    match /teams/{team}/{file} {");
    const allowed = await simulate({ source: listing, method: 'list', path: 'users/alice/', auth: alice });
    assert.equal(allowed.body.allowed, true, JSON.stringify(allowed.body));
    const broken = await simulate({ source: 'service firebase.storage {', method: 'get', path: 'a', auth: null });
    assert.equal(broken.body.allowed, false);
    assert.equal(broken.body.error, 'The rules do not compile.');
  });

  test('its verdicts are the guard\'s: firebase/storage as alice meets the same answers', async () => {
    const app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId, storageBucket: testBucket }, `simulate-${Date.now()}`);
    try {
      const auth = initializeAuth(app, { persistence: inMemoryPersistence });
      connectAuthEmulator(auth, server.url, { disableWarnings: true });
      const { user } = await createUserWithEmailAndPassword(auth, uniqueEmail('simulate'), 'secret123');
      const storage = getStorage(app);
      const { hostname, port } = new URL(server.url);
      connectStorageEmulator(storage, hostname, Number(port));
      const own = `users/${user.uid}/note.txt`;
      const asUser = { uid: user.uid, token: {} };
      for (const [contentType, size] of [['text/plain', 10], ['text/html', 10], ['text/plain', 2000]] as const) {
        const verdict = (await simulate({ method: 'create', path: own, auth: asUser, request: { size, contentType } })).body.allowed as boolean;
        const real = await uploadBytes(ref(storage, own), new Uint8Array(size), { contentType }).then(
          () => true,
          () => false,
        );
        assert.equal(real, verdict, `${contentType} ${size}`);
        if (real) await fetch(`${server.url}/v0/b/${testBucket}/o/${encodeURIComponent(own)}`, { method: 'DELETE', headers: admin() });
      }
      await uploadBytes(ref(storage, own), new Uint8Array(10), { contentType: 'text/plain' });
      assert.equal((await simulate({ method: 'get', path: own, auth: asUser })).body.allowed, false);
      await assert.rejects(getBytes(ref(storage, own)));
      await adminPatch(own, { shared: 'yes' });
      assert.equal((await simulate({ method: 'get', path: own, auth: asUser })).body.allowed, true);
      assert.equal((await getBytes(ref(storage, own))).byteLength, 10);
      await assert.rejects(updateMetadata(ref(storage, own), { customMetadata: { keep: 'changed' } }));
    } finally {
      await deleteApp(app);
    }
  });

  test('operators only; bad bodies are 400 in Google\'s shape', async () => {
    assert.equal((await simulate({ method: 'get', path: 'a', auth: null }, {})).status, 401);
    assert.equal((await check({ source: rules }, {})).status, 401);
    for (const body of [
      { method: 'read', path: 'a' },
      { method: 'get', path: '' },
      { method: 'get', path: 'a', bucket: 'Not A Bucket' },
      { method: 'get', path: 'a', request: { size: 1 } },
      { method: 'create', path: 'a', request: { size: -1 } },
      { method: 'create', path: 'a', request: { metadata: { n: 1 } } },
      { method: 'get', path: 'a', extra: true },
    ]) {
      const answer = await simulate(body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.error.status, 'INVALID_ARGUMENT', JSON.stringify(answer.body));
    }
  });
});

async function adminPatch(name: string, metadata: Record<string, string>): Promise<void> {
  const response = await fetch(`${server.url}/storage/v1/b/${testBucket}/o/${encodeURIComponent(name)}`, {
    method: 'PATCH',
    headers: { ...admin(), 'content-type': 'application/json' },
    body: JSON.stringify({ metadata }),
  });
  assert.equal(response.status, 200);
}
