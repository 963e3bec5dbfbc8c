/**
 * v1 Auth triggers of an unmodified code base: functions.auth.user().onCreate hears of accounts
 * made by the web SDK's sign-up and by firebase-admin, onDelete of deleted ones, with the account in
 * firebase-admin's UserRecord shape and Google's event type and resource; concurrent deletes of
 * one account raise one onDelete; a custom token's first sign-in raises none (as on Google's servers).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth } from 'firebase-admin/auth';
import { getFirestore, type Firestore } from 'firebase-admin/firestore';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth, signInWithCustomToken } from 'firebase/auth';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { waitFor } from '../helpers/wait-for.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');

describe('v1 Auth triggers', () => {
  let server: TestHearth;
  let admin: App;
  let web: FirebaseApp;
  let db: Firestore;

  before(async () => {
    server = await startHearth({ functionsDir: fixture, functionsDispatcher: { pollMs: 100 } });
    process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
    process.env.FIRESTORE_EMULATOR_HOST = server.hostPort;
    admin = initializeAdminApp({ projectId: server.projectId }, 'auth-triggers-admin');
    db = getFirestore(admin);
    web = initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, 'auth-triggers-web');
  });
  after(async () => {
    await deleteApp(web);
    await deleteAdminApp(admin);
    delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
    delete process.env.FIRESTORE_EMULATOR_HOST;
    await server?.close();
  });

  const document = (path: string) => waitFor(path, async () => {
    const snap = await db.doc(path).get();
    return snap.exists ? snap.data()! : undefined;
  });

  test('onCreate hears of a web sign-up and of an admin-made account; onDelete of a deletion', async () => {
    const auth = initializeAuth(web, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, server.url, { disableWarnings: true });
    const { user } = await createUserWithEmailAndPassword(auth, 'new@fine.example', 'secret123');
    const profile = await document(`profiles/${user.uid}`);
    assert.equal(profile.email, 'new@fine.example');
    assert.equal(profile.eventType, 'google.firebase.auth.user.create');
    assert.equal(profile.resource, `projects/${server.projectId}`);
    assert.ok(!Number.isNaN(Date.parse(profile.created)));

    const made = await getAdminAuth(admin).createUser({ email: 'made@fine.example' });
    assert.equal((await document(`profiles/${made.uid}`)).email, 'made@fine.example');
    await getAdminAuth(admin).deleteUser(made.uid);
    const gone = await document(`deletedUsers/${made.uid}`);
    assert.deepEqual(gone, { email: 'made@fine.example', eventType: 'google.firebase.auth.user.delete' });
  });

  test('concurrent deletes of one account raise one onDelete event', async () => {
    const farewells = () => new Set(server.hearth.functions.dispatcher!.deliveries.filter((record) => record.target === 'farewell').map((record) => record.id));
    await waitFor('the queue to drain', async () => ((await server.hearth.functions.eventCounts()).pending === 0 ? true : undefined));
    const before = farewells().size;
    const made = await getAdminAuth(admin).createUser({ email: 'twice@fine.example' });
    // Each delete is acknowledged or finds the account gone; none fails otherwise.
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => getAdminAuth(admin).deleteUser(made.uid)));
    for (const outcome of outcomes) if (outcome.status === 'rejected') assert.equal((outcome.reason as { code?: string }).code, 'auth/user-not-found');
    assert.ok(outcomes.some((outcome) => outcome.status === 'fulfilled'));
    await document(`deletedUsers/${made.uid}`);
    await waitFor('the queue to drain', async () => ((await server.hearth.functions.eventCounts()).pending === 0 ? true : undefined));
    assert.equal(farewells().size, before + 1);
  });

  test('a custom token\'s first sign-in raises no onCreate', async () => {
    const auth = initializeAuth(initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, 'auth-triggers-custom'), { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, server.url, { disableWarnings: true });
    const { user } = await signInWithCustomToken(auth, JSON.stringify({ uid: 'custom-made' }));
    assert.equal(user.uid, 'custom-made');
    // An account made after it is heard of; once every event is delivered, the custom one has none.
    const made = await getAdminAuth(admin).createUser({ email: 'after-custom@fine.example' });
    await document(`profiles/${made.uid}`);
    await waitFor('the queue to drain', async () => ((await server.hearth.functions.eventCounts()).pending === 0 ? true : undefined));
    assert.equal((await db.doc('profiles/custom-made').get()).exists, false);
    await deleteApp(auth.app);
  });
});

