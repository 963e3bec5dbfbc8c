/**
 * The web app's shipped rules (packages/web/firestore.rules) through the official SDK, outside
 * --dev: a note is its owner's alone, {text, createdAt[, updatedAt]} with 1 to 1000 characters,
 * createdAt the server's time at creation and never changed, updatedAt the server's time of each
 * edit; a note brought back by Undo is created again with its earlier createdAt and the server's
 * updatedAt; the user document users/{uid} (noteCount) is its owner's to read, no client's to write.
 * Every other shape is refused with permission-denied.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth } from 'firebase/auth';
import {
  Timestamp,
  connectFirestoreEmulator,
  deleteDoc,
  doc,
  getDoc,
  getFirestore,
  serverTimestamp,
  setDoc,
  setLogLevel,
  updateDoc,
  type Firestore,
} from 'firebase/firestore';
import { defaultShippedRulesFile } from '../../packages/server/src/config.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
const apps: FirebaseApp[] = [];
let alice: { db: Firestore; uid: string };
let bob: { db: Firestore; uid: string };

async function signedInClient(name: string): Promise<{ db: Firestore; uid: string }> {
  const app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, `${name}-${apps.length}`);
  apps.push(app);
  const auth = initializeAuth(app, { persistence: inMemoryPersistence });
  connectAuthEmulator(auth, server.url, { disableWarnings: true });
  const { user } = await createUserWithEmailAndPassword(auth, uniqueEmail(name), 'secret123');
  const db = getFirestore(app);
  connectFirestoreEmulator(db, '127.0.0.1', Number(new URL(server.url).port));
  return { db, uid: user.uid };
}

function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: { code?: string }) => error.code ?? String(error),
  );
}

before(async () => {
  setLogLevel('silent');
  server = await startHearth({ dev: false, shippedRulesFile: defaultShippedRulesFile });
  alice = await signedInClient('alice');
  bob = await signedInClient('bob');
});

after(async () => {
  for (const app of apps) await deleteApp(app);
  await server.close();
});

const note = (who: { db: Firestore; uid: string }, id: string) => doc(who.db, 'users', who.uid, 'notes', id);

test('the owner creates, edits with a server updatedAt, reads and deletes a note', async () => {
  const ref = note(alice, 'first');
  assert.equal(await codeOf(setDoc(ref, { text: 'hello', createdAt: serverTimestamp() })), 'ok');
  assert.equal(await codeOf(updateDoc(ref, { text: 'hello again', updatedAt: serverTimestamp() })), 'ok');
  const read = await getDoc(ref);
  assert.equal(read.get('text'), 'hello again');
  assert.ok(read.get('updatedAt') instanceof Timestamp);
  assert.equal(await codeOf(deleteDoc(ref)), 'ok');
  assert.equal((await getDoc(ref)).exists(), false);
});

test('a note of 1000 characters is kept; empty, longer or oddly shaped notes are refused', async () => {
  assert.equal(await codeOf(setDoc(note(alice, 'long'), { text: 'x'.repeat(1000), createdAt: serverTimestamp() })), 'ok');
  assert.equal(await codeOf(setDoc(note(alice, 'too-long'), { text: 'x'.repeat(1001), createdAt: serverTimestamp() })), 'permission-denied');
  assert.equal(await codeOf(setDoc(note(alice, 'empty'), { text: '', createdAt: serverTimestamp() })), 'permission-denied');
  assert.equal(await codeOf(setDoc(note(alice, 'number'), { text: 42, createdAt: serverTimestamp() })), 'permission-denied');
  assert.equal(await codeOf(setDoc(note(alice, 'extra'), { text: 'hi', createdAt: serverTimestamp(), owner: 'someone' })), 'permission-denied');
  assert.equal(await codeOf(setDoc(note(alice, 'no-time'), { text: 'hi' })), 'permission-denied');
});

test('the times are the server\'s: no backdated creation, no updatedAt at creation, no edit without it', async () => {
  assert.equal(await codeOf(setDoc(note(alice, 'backdated'), { text: 'hi', createdAt: Timestamp.fromMillis(0) })), 'permission-denied');
  assert.equal(await codeOf(setDoc(note(alice, 'pre-edited'), { text: 'hi', createdAt: serverTimestamp(), updatedAt: serverTimestamp() })), 'permission-denied');
  const ref = note(alice, 'edited');
  assert.equal(await codeOf(setDoc(ref, { text: 'hi', createdAt: serverTimestamp() })), 'ok');
  assert.equal(await codeOf(updateDoc(ref, { text: 'sneaky' })), 'permission-denied');
  assert.equal(await codeOf(updateDoc(ref, { text: 'sneaky', updatedAt: Timestamp.fromMillis(0) })), 'permission-denied');
  assert.equal(await codeOf(updateDoc(ref, { createdAt: serverTimestamp(), updatedAt: serverTimestamp() })), 'permission-denied');
  assert.equal((await getDoc(ref)).get('text'), 'hi');
});

test('a deleted note is restored (Undo) with its earlier createdAt only when updatedAt is the server\'s time', async () => {
  const ref = note(alice, 'restored');
  assert.equal(await codeOf(setDoc(ref, { text: 'keep me', createdAt: serverTimestamp() })), 'ok');
  const createdAt = (await getDoc(ref)).get('createdAt') as Timestamp;
  assert.equal(await codeOf(deleteDoc(ref)), 'ok');
  assert.equal(await codeOf(setDoc(ref, { text: 'keep me', createdAt, updatedAt: Timestamp.fromMillis(0) })), 'permission-denied');
  assert.equal(await codeOf(setDoc(ref, { text: 'keep me', createdAt: Timestamp.fromMillis(Date.now() + 3600_000), updatedAt: serverTimestamp() })), 'permission-denied');
  assert.equal(await codeOf(setDoc(ref, { text: 'keep me', createdAt, updatedAt: serverTimestamp() })), 'ok');
  assert.ok(((await getDoc(ref)).get('createdAt') as Timestamp).isEqual(createdAt));
});

test('another user can neither read, write nor delete them', async () => {
  const ref = note(alice, 'private');
  assert.equal(await codeOf(setDoc(ref, { text: 'mine', createdAt: serverTimestamp() })), 'ok');
  const asBob = doc(bob.db, 'users', alice.uid, 'notes', 'private');
  assert.equal(await codeOf(getDoc(asBob)), 'permission-denied');
  assert.equal(await codeOf(updateDoc(asBob, { text: 'yours', updatedAt: serverTimestamp() })), 'permission-denied');
  assert.equal(await codeOf(deleteDoc(asBob)), 'permission-denied');
  assert.equal(await codeOf(setDoc(doc(bob.db, 'users', alice.uid, 'notes', 'planted'), { text: 'planted', createdAt: serverTimestamp() })), 'permission-denied');
  assert.equal((await getDoc(ref)).get('text'), 'mine');
});

test('the user document (noteCount, the trigger\'s) is readable by its owner only, and writable by no client', async () => {
  const own = doc(alice.db, 'users', alice.uid);
  assert.equal(await codeOf(getDoc(own)), 'ok');
  assert.equal(await codeOf(setDoc(own, { noteCount: 1000 })), 'permission-denied');
  assert.equal(await codeOf(setDoc(own, { noteCount: 1000 }, { merge: true })), 'permission-denied');
  assert.equal(await codeOf(deleteDoc(own)), 'permission-denied');
  assert.equal(await codeOf(getDoc(doc(bob.db, 'users', alice.uid))), 'permission-denied');
  assert.equal(await codeOf(getDoc(doc(alice.db, 'users', alice.uid, 'noteCountEvents', 'any'))), 'permission-denied');
});
