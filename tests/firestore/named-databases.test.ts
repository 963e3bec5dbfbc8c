/**
 * Named databases: databases other than `(default)` in one project, as firebase-admin's
 * `getFirestore(app, 'other')` and the web SDK's `getFirestore(app, 'other')` use them. Data,
 * listeners, the emulator's clear endpoint and security rules (a release `cloud.firestore/<db>`)
 * are per database; ids are checked as Google checks them.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getFirestore as getAdminFirestore, type Firestore as AdminFirestore } from 'firebase-admin/firestore';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectFirestoreEmulator, doc, getDoc, getFirestore, onSnapshot, terminate, type Firestore, type DocumentSnapshot } from 'firebase/firestore';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { within } from '../helpers/firestore-target.js';

let server: TestHearth;
let adminApp: App;
let adminDefault: AdminFirestore;
let adminOther: AdminFirestore;
let webApp: FirebaseApp;
let webDefault: Firestore;
let webOther: Firestore;

before(async () => {
  server = await startHearth();
  const { hostname, port } = new URL(server.url);
  process.env.FIRESTORE_EMULATOR_HOST = server.hostPort;
  adminApp = initializeAdminApp({ projectId: server.projectId }, 'named-databases-admin');
  adminDefault = getAdminFirestore(adminApp);
  adminOther = getAdminFirestore(adminApp, 'other');
  webApp = initializeApp({ projectId: server.projectId, apiKey: 'any' }, 'named-databases-web');
  webDefault = getFirestore(webApp);
  webOther = getFirestore(webApp, 'other');
  for (const db of [webDefault, webOther]) connectFirestoreEmulator(db, hostname, Number(port), { mockUserToken: { sub: 'reader' } });
});

after(async () => {
  await Promise.all([terminate(webDefault), terminate(webOther)]);
  await deleteApp(webApp);
  await Promise.all([adminDefault.terminate(), adminOther.terminate()]);
  await deleteAdminApp(adminApp);
  await server.close();
});

test("firebase-admin: 'other' holds its own documents beside (default)", async () => {
  await adminDefault.doc('shared/one').set({ where: 'default' });
  await adminOther.doc('shared/one').set({ where: 'other' });
  await adminOther.doc('shared/two').set({ where: 'other' });
  assert.equal((await adminDefault.doc('shared/one').get()).get('where'), 'default');
  assert.equal((await adminOther.doc('shared/one').get()).get('where'), 'other');
  assert.deepEqual((await adminDefault.collection('shared').get()).docs.map((d) => d.id), ['one']);
  assert.deepEqual((await adminOther.collection('shared').get()).docs.map((d) => d.id), ['one', 'two']);
  const counted = await adminOther.runTransaction(async (tx) => (await tx.get(adminOther.collection('shared'))).size);
  assert.equal(counted, 2);
  // Its past is its own too: a read-only transaction at a read time before a change in 'other'.
  const before = (await adminOther.doc('shared/two').get()).readTime;
  await adminOther.doc('shared/two').set({ where: 'other, later' });
  const then = await adminOther.runTransaction(async (tx) => (await tx.get(adminOther.doc('shared/two'))).get('where'), { readOnly: true, readTime: before });
  assert.equal(then, 'other');
  assert.equal((await adminOther.doc('shared/two').get()).get('where'), 'other, later');
});

test("the web SDK reads and listens in 'other'; writes to (default) do not reach its listener", async () => {
  assert.equal((await getDoc(doc(webOther, 'shared/one'))).get('where'), 'other');
  assert.equal((await getDoc(doc(webDefault, 'shared/one'))).get('where'), 'default');
  const seen: DocumentSnapshot[] = [];
  let wake: (() => void) | undefined;
  const stop = onSnapshot(doc(webOther, 'live/x'), (snapshot) => {
    seen.push(snapshot);
    wake?.();
  });
  const until = async (label: string, ok: () => boolean) => {
    while (!ok()) await within(new Promise<void>((resolve) => (wake = resolve)), label);
  };
  await until('first snapshot', () => seen.some((s) => !s.metadata.fromCache));
  assert.equal(seen.at(-1)!.exists(), false);
  await adminDefault.doc('live/x').set({ db: 'default' });
  await adminOther.doc('live/x').set({ db: 'other' });
  await until('the write in other', () => seen.some((s) => s.exists()));
  assert.deepEqual(seen.filter((s) => s.exists()).map((s) => s.get('db')), ['other']);
  stop();
});

test("rules released as cloud.firestore/other apply to 'other' only", async () => {
  const rulesApi = `${server.url}/firebaserules.googleapis.com/v1/projects/${server.projectId}`;
  const owner = { authorization: 'Bearer owner' };
  const source = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /{document=**} {\n      allow read: if false;\n    }\n  }\n}\n";
  const ruleset = await postJson(`${rulesApi}/rulesets`, { source: { files: [{ name: 'firestore.rules', content: source }] } }, owner);
  assert.equal(ruleset.status, 200, JSON.stringify(ruleset.body));
  const release = await postJson(`${rulesApi}/releases`, { name: `projects/${server.projectId}/releases/cloud.firestore/other`, rulesetName: ruleset.body.name }, owner);
  assert.equal(release.status, 200, JSON.stringify(release.body));
  await assert.rejects(getDoc(doc(webOther, 'shared/one')), (error: { code?: string }) => error.code === 'permission-denied');
  // (default) has no release of its own: open, as --dev leaves a database without rules.
  assert.equal((await getDoc(doc(webDefault, 'shared/one'))).get('where'), 'default');
});

test("the emulator's clear endpoint clears one database", async () => {
  const cleared = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/databases/other/documents`, { method: 'DELETE', headers: { authorization: 'Bearer owner' } });
  assert.equal(cleared.status, 200);
  assert.equal((await adminOther.doc('shared/one').get()).exists, false);
  assert.equal((await adminDefault.doc('shared/one').get()).exists, true);
});

test('outside --dev database ids are checked as Google checks them: 4 to 63 lowercase letters, digits and hyphens', async () => {
  // In --dev the emulator's ids are taken too (tests/firestore/dev-named-databases.test.ts).
  const production = await startHearth({ dev: false });
  try {
    const get = (database: string) => fetch(`${production.url}/v1/projects/${production.projectId}/databases/${database}/documents/c/d`, { headers: { authorization: `Bearer ${production.adminKey}` } });
    for (const good of ['abcd', 'a-1-b', `a${'b'.repeat(62)}`]) assert.equal((await get(good)).status, 404, good);
    for (const bad of ['abc', 'Other', '1abc', 'abc-', 'ab_cd', `a${'b'.repeat(63)}`, '(other)']) {
      const answer = await get(encodeURIComponent(bad));
      assert.equal(answer.status, 400, bad);
      const body = (await answer.json()) as { error: { status: string; message: string } };
      assert.equal(body.error.status, 'INVALID_ARGUMENT', bad);
      assert.equal(body.error.message, `Invalid database id ${bad}`, bad);
    }
  } finally {
    await production.close();
  }
});

test("outside --dev a named database works on first use too, closed to users until rules are released for it", async () => {
  const production = await startHearth({ dev: false });
  try {
    const base = `${production.url}/v1/projects/${production.projectId}/databases/reports/documents`;
    const created = await postJson(`${base}:commit`, { writes: [{ update: { name: `projects/${production.projectId}/databases/reports/documents/r/1`, fields: { ok: { booleanValue: true } } } }] }, { authorization: `Bearer ${production.adminKey}` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const asAdmin = await fetch(`${base}/r/1`, { headers: { authorization: `Bearer ${production.adminKey}` } });
    assert.equal(asAdmin.status, 200);
    const asNobody = await fetch(`${base}/r/1`);
    assert.equal(asNobody.status, 403);
    const inDefault = await fetch(`${production.url}/v1/projects/${production.projectId}/databases/(default)/documents/r/1`, { headers: { authorization: `Bearer ${production.adminKey}` } });
    assert.equal(inDefault.status, 404);
  } finally {
    await production.close();
  }
});
