/**
 * Deleting an account of the default project erases its data (account-erasure.ts): the documents
 * under users/{uid} at any depth (the account document too, and ids that hold only subcollections)
 * and its files under users/{uid}/, whether the user deletes it (accounts:delete with an ID token)
 * or an administrator does (firebase-admin deleteUser and deleteUsers). Nobody else's data goes, and
 * a tenant's account is only deleted (its app keeps its own data, as on Firebase).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import { uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { adminObject, adminUpload } from '../helpers/storage-clients.js';

let server: TestHearth;
let adminApp: App;
let admin: AdminAuth;
const waitMs = 30_000;

before(async () => {
  server = await startHearth();
  process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
  adminApp = initializeAdminApp({ projectId: server.projectId }, 'erasure-test');
  admin = getAdminAuth(adminApp);
});

after(async () => {
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await deleteAdminApp(adminApp);
  await server.close();
});

const documents = () => `${server.url}/v1/projects/${server.projectId}/databases/(default)/documents`;
const adminHeaders = () => ({ authorization: `Bearer ${server.adminKey}` });

async function signUp(): Promise<{ uid: string; idToken: string }> {
  const answer = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server.apiKey}`, { email: uniqueEmail('erasure'), password: 'secret12', returnSecureToken: true });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return { uid: answer.body.localId, idToken: answer.body.idToken };
}

/** Notes, a nested document, the account document itself, and two files. */
async function writeDataOf(uid: string, notes = 3): Promise<void> {
  const writes = [
    { update: { name: `projects/${server.projectId}/databases/(default)/documents/users/${uid}`, fields: { plan: { stringValue: 'free' } } } },
    { update: { name: `projects/${server.projectId}/databases/(default)/documents/users/${uid}/notes/n0/comments/c1`, fields: { text: { stringValue: 'deep' } } } },
    ...Array.from({ length: notes }, (_, i) => ({ update: { name: `projects/${server.projectId}/databases/(default)/documents/users/${uid}/notes/n${i}`, fields: { text: { stringValue: `note ${i}` } } } })),
  ];
  const committed = await postJson(`${documents()}:commit`, { writes }, adminHeaders());
  assert.equal(committed.status, 200, JSON.stringify(committed.body));
  await adminUpload(server, `users/${uid}/photo`, 'a photo');
  await adminUpload(server, `users/${uid}/notes/n0/a.txt`, 'an attachment');
}

async function dataLeft(uid: string): Promise<string[]> {
  const left: string[] = [];
  for (const path of [`users/${uid}`, `users/${uid}/notes/n0`, `users/${uid}/notes/n0/comments/c1`]) {
    const response = await fetch(`${documents()}/${path}`, { headers: adminHeaders() });
    if (response.status === 200) left.push(path);
    else assert.equal(response.status, 404, path);
  }
  const notes = (await (await fetch(`${documents()}/users/${uid}/notes?pageSize=300`, { headers: adminHeaders() })).json()) as { documents?: unknown[] };
  if (notes.documents?.length) left.push(`${notes.documents.length} notes`);
  for (const name of [`users/${uid}/photo`, `users/${uid}/notes/n0/a.txt`]) if (await adminObject(server, name)) left.push(name);
  return left;
}

async function waitUntilErased(uid: string): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let left = await dataLeft(uid); left.length; left = await dataLeft(uid)) {
    if (Date.now() > deadline) assert.fail(`still there after the account was deleted: ${left.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('the user deletes their account: its documents and files go, a neighbour\u2019s stay', async () => {
  const { uid, idToken } = await signUp();
  const neighbour = await signUp();
  await writeDataOf(uid);
  await writeDataOf(neighbour.uid);
  const deleted = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:delete?key=${server.apiKey}`, { idToken });
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
  await waitUntilErased(uid);
  assert.equal((await dataLeft(neighbour.uid)).length, 6, 'the neighbour keeps everything');
});

test('an administrator deletes accounts (deleteUser, deleteUsers): their data goes, more than one batch too', { timeout: 120_000 }, async () => {
  const one = await signUp();
  const two = await signUp();
  const three = await signUp();
  await writeDataOf(one.uid, 450);
  await writeDataOf(two.uid);
  await writeDataOf(three.uid);
  await admin.deleteUser(one.uid);
  const result = await admin.deleteUsers([two.uid, three.uid]);
  assert.equal(result.successCount, 2);
  for (const { uid } of [one, two, three]) await waitUntilErased(uid);
});

test('a tenant\u2019s account is deleted, and the project\u2019s documents under its uid stay', async () => {
  const tenant = await admin.tenantManager().createTenant({ displayName: 'Erasure', emailSignInConfig: { enabled: true, passwordRequired: true } });
  const user = await admin.tenantManager().authForTenant(tenant.tenantId).createUser({ email: uniqueEmail('tenant-erasure'), password: 'secret12' });
  await writeDataOf(user.uid);
  await admin.tenantManager().authForTenant(tenant.tenantId).deleteUser(user.uid);
  // A later erasure passes through the whole queue: once it is done, the tenant's entry was seen.
  const { uid, idToken } = await signUp();
  await writeDataOf(uid);
  assert.equal((await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:delete?key=${server.apiKey}`, { idToken })).status, 200);
  await waitUntilErased(uid);
  assert.equal((await dataLeft(user.uid)).length, 6);
});
