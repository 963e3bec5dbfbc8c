/**
 * --dev as Google's Firestore emulator: named databases take the emulator's ids (the SDK's own
 * multi-database test uses `db1` and `db2`), over gRPC (firebase v12 and firebase-admin in Node)
 * and REST; and an app whose projectId is not Hearth's `--project` is served as the emulators
 * serve it (its ID tokens name the project it signed in to), with one clear line in the log.
 * Outside --dev production's 4-63 rule stands.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App as AdminApp } from 'firebase-admin/app';
import { getFirestore as getAdminFirestore } from 'firebase-admin/firestore';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, initializeAuth, inMemoryPersistence, signInAnonymously } from 'firebase/auth';
import { collection, connectFirestoreEmulator, doc, getDoc, getDocFromServer, getFirestore, setDoc, setLogLevel, terminate, type Firestore } from 'firebase/firestore';
import { within } from '../helpers/firestore-target.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

setLogLevel('silent');

const logLines: Array<Record<string, unknown>> = [];
const logger = pino(
  { level: 'warn' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  }),
);

let dev: TestHearth;
const apps: FirebaseApp[] = [];
const databases: Firestore[] = [];

before(async () => {
  dev = await startHearth({ dev: true }, logger);
});
after(async () => {
  await Promise.all(databases.map((db) => within(terminate(db), 'terminate').catch(() => undefined)));
  await Promise.all(apps.map((app) => deleteApp(app)));
  await dev.close();
});

/** firebase v12 in Node (gRPC) on `databaseId` of the app's `projectId`, signed in anonymously through Hearth. */
async function client(projectId: string, databaseId: string): Promise<Firestore> {
  const app = initializeApp({ apiKey: 'any-key', projectId, authDomain: dev.hostPort }, `dev-db-${apps.length}`);
  apps.push(app);
  const auth = initializeAuth(app, { persistence: inMemoryPersistence });
  connectAuthEmulator(auth, dev.url, { disableWarnings: true });
  await signInAnonymously(auth);
  const db = getFirestore(app, databaseId);
  const { hostname, port } = new URL(dev.url);
  connectFirestoreEmulator(db, hostname, Number(port));
  databases.push(db);
  return db;
}

describe('--dev: the emulator\'s database ids', () => {
  test('db1 and db2 keep their documents apart (the SDK\'s "can keep docs separate with multi-db when online")', async () => {
    const [db1, db2] = [await client(dev.projectId, 'db1'), await client(dev.projectId, 'db2')];
    const data = { name: 'Rafi', email: 'abc@xyz.com' };
    const ref1 = doc(collection(db1, 'users'), 'doc1');
    await within(setDoc(ref1, data), 'write to db1');
    const snapshot1 = await within(getDoc(ref1), 'read db1');
    assert.deepEqual(snapshot1.data(), data);
    const snapshot2 = await within(getDocFromServer(doc(collection(db2, 'users'), 'doc1')), 'read db2');
    assert.equal(snapshot2.exists(), false);
  });

  test('firebase-admin and REST take them too', async () => {
    process.env.FIRESTORE_EMULATOR_HOST = dev.hostPort;
    const app: AdminApp = initializeAdminApp({ projectId: dev.projectId }, 'dev-db-admin');
    try {
      const db = getAdminFirestore(app, 'db9');
      await within(db.doc('admin/one').set({ ok: true }), 'admin write');
      assert.equal((await within(db.doc('admin/one').get(), 'admin read')).get('ok'), true);
    } finally {
      delete process.env.FIRESTORE_EMULATOR_HOST;
      await deleteAdminApp(app);
    }
    const rest = await fetch(`${dev.url}/v1/projects/${dev.projectId}/databases/db9/documents/admin/one`, { headers: { authorization: 'Bearer owner' } });
    assert.equal(rest.status, 200, await rest.text());
    const missing = await fetch(`${dev.url}/v1/projects/${dev.projectId}/databases/db2/documents/admin/one`, { headers: { authorization: 'Bearer owner' } });
    assert.equal(missing.status, 404);
    const invalid = await fetch(`${dev.url}/v1/projects/${dev.projectId}/databases/${encodeURIComponent('no/such')}/documents/a/b`, { headers: { authorization: 'Bearer owner' } });
    assert.equal(invalid.status, 400, 'ids are still checked: no slashes');
  });
});

test("--dev: an app whose projectId is not --project is served as by Google's emulators, and told once in the log", async () => {
  const before = logLines.length;
  const db = await client('some-other-project', '(default)');
  const ref = doc(db, 'notes/first');
  await within(setDoc(ref, { text: 'hello' }), 'write with a token of another project');
  assert.equal((await within(getDocFromServer(ref), 'read it back')).get('text'), 'hello');
  await within(setDoc(doc(db, 'notes/second'), { text: 'again' }), 'second write');
  const told = logLines.slice(before).filter((line) => String(line.msg).includes('differs from the project it signs in to'));
  assert.equal(told.length, 1, JSON.stringify(logLines.slice(before)));
  assert.equal(told[0]!.requestedProject, 'some-other-project');
  assert.equal(told[0]!.tokenProject, dev.projectId);
  assert.equal(told[0]!.level, 40, 'a warning');
});

test('outside --dev the 4-63 rule stands: db1 is INVALID_ARGUMENT', async () => {
  const production = await startHearth({ dev: false });
  try {
    const answer = await fetch(`${production.url}/v1/projects/${production.projectId}/databases/db1/documents/users/doc1`, { headers: { authorization: `Bearer ${production.adminKey}` } });
    assert.equal(answer.status, 400);
    const body = (await answer.json()) as { error: { status: string; message: string } };
    assert.equal(body.error.status, 'INVALID_ARGUMENT');
    assert.equal(body.error.message, 'Invalid database id db1');
  } finally {
    await production.close();
  }
});
