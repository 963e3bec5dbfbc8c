/**
 * The storage rules the web app ships (packages/web/storage.rules), released to the default project
 * outside --dev, judged through the official SDKs in Node (firebase/storage, firebase/auth, and
 * firebase/firestore for the notes): each user reads, lists and writes only their own files; a photo
 * is an image of at most 5 MiB; an attachment goes only on a note that exists; a signed-out caller
 * and a download token of another object open nothing. --storage-rules and --dev keep their meaning.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth, type User } from 'firebase/auth';
import { addDoc, collection, connectFirestoreEmulator, getFirestore, serverTimestamp, setLogLevel, terminate } from 'firebase/firestore';
import { connectStorageEmulator, deleteObject, getBytes, getDownloadURL, getStorage, listAll, ref, uploadBytes, type FirebaseStorage } from 'firebase/storage';
import { defaultShippedRulesFile, defaultShippedStorageRulesFile } from '../../packages/server/src/config.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { solidPng } from '../helpers/png.js';
import { adminObject, testBucket } from '../helpers/storage-clients.js';

setLogLevel('silent');

let server: TestHearth;
const apps: FirebaseApp[] = [];

interface Person {
  user: User | null;
  storage: FirebaseStorage;
  /** Adds a note through the Firestore SDK (as the web app does); its id. */
  addNote(text: string): Promise<string>;
}

async function person(tag: string | null): Promise<Person> {
  const app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId, storageBucket: testBucket }, `rules-${apps.length}-${Date.now()}`);
  apps.push(app);
  const auth = initializeAuth(app, { persistence: inMemoryPersistence });
  connectAuthEmulator(auth, server.url, { disableWarnings: true });
  const user = tag === null ? null : (await createUserWithEmailAndPassword(auth, uniqueEmail(tag), 'secret123')).user;
  const storage = getStorage(app);
  const { hostname, port } = new URL(server.url);
  connectStorageEmulator(storage, hostname, Number(port));
  const db = getFirestore(app);
  connectFirestoreEmulator(db, hostname, Number(port));
  return {
    user,
    storage,
    async addNote(text) {
      return (await addDoc(collection(db, 'users', user!.uid, 'notes'), { text, createdAt: serverTimestamp() })).id;
    },
  };
}

const refused = (error: { code?: string }) => error.code === 'storage/unauthorized';

before(async () => {
  server = await startHearth({ dev: false, shippedRulesFile: defaultShippedRulesFile, shippedStorageRulesFile: defaultShippedStorageRulesFile });
});
after(async () => {
  for (const app of apps) {
    await terminate(getFirestore(app)).catch(() => undefined);
    await deleteApp(app);
  }
  await server?.close();
});

describe("the web app's storage rules, released at start", () => {
  let alice: Person;
  let bob: Person;
  let aliceNote: string;
  const png = solidPng(4, 4, [1, 2, 3]);

  before(async () => {
    alice = await person('alice');
    bob = await person('bob');
    aliceNote = await alice.addNote('with files');
  });

  test('a user keeps a photo of their own, an image of at most 5 MiB', async () => {
    const own = ref(alice.storage, `users/${alice.user!.uid}/photo`);
    await uploadBytes(own, png, { contentType: 'image/png' });
    assert.deepEqual(Buffer.from(await getBytes(own)), png);
    await assert.rejects(uploadBytes(own, new TextEncoder().encode('<svg/>'), { contentType: 'image/svg+xml' }), refused);
    await assert.rejects(uploadBytes(own, new TextEncoder().encode('text'), { contentType: 'text/plain' }), refused);
    await assert.rejects(uploadBytes(own, new Uint8Array(5 * 1024 * 1024 + 1), { contentType: 'image/png' }), refused);
    assert.deepEqual(Buffer.from(await getBytes(own)), png, 'the refused uploads left the photo as it was');
  });

  test("another user's files are out of reach: read, list, write, delete", async () => {
    const alicePhoto = `users/${alice.user!.uid}/photo`;
    await assert.rejects(getBytes(ref(bob.storage, alicePhoto)), refused);
    await assert.rejects(listAll(ref(bob.storage, `users/${alice.user!.uid}`)), refused);
    await assert.rejects(uploadBytes(ref(bob.storage, alicePhoto), png, { contentType: 'image/png' }), refused);
    await assert.rejects(deleteObject(ref(bob.storage, alicePhoto)), refused);
    await assert.rejects(uploadBytes(ref(bob.storage, `users/${alice.user!.uid}/notes/${aliceNote}/x.txt`), new TextEncoder().encode('x')), refused);
    assert.ok(await adminObject(server, alicePhoto));
  });

  test('attachments go on a note that exists, in its owner\'s folder; the owner lists and deletes them', async () => {
    const uid = alice.user!.uid;
    const file = ref(alice.storage, `users/${uid}/notes/${aliceNote}/plan.txt`);
    await uploadBytes(file, new TextEncoder().encode('the plan'), { contentType: 'text/plain' });
    await assert.rejects(uploadBytes(ref(alice.storage, `users/${uid}/notes/no-such-note/plan.txt`), new TextEncoder().encode('x')), refused);
    await assert.rejects(uploadBytes(ref(alice.storage, `users/${uid}/notes/${aliceNote}/big.bin`), new Uint8Array(10 * 1024 * 1024 + 1)), refused);
    const listed = await listAll(ref(alice.storage, `users/${uid}/notes/${aliceNote}`));
    assert.deepEqual(listed.items.map((item) => item.name), ['plan.txt']);
    assert.deepEqual((await listAll(ref(alice.storage, `users/${uid}/notes`))).prefixes.map((prefix) => prefix.name), [aliceNote]);
    await deleteObject(file);
    assert.equal(await adminObject(server, file.fullPath), undefined);
  });

  test('nothing outside users/{uid}/ is open, and a signed-out caller opens nothing', async () => {
    await assert.rejects(uploadBytes(ref(alice.storage, 'public/hello.txt'), new TextEncoder().encode('x')), refused);
    await assert.rejects(uploadBytes(ref(alice.storage, `users/${alice.user!.uid}/elsewhere.txt`), new TextEncoder().encode('x')), refused);
    const nobody = await person(null);
    await assert.rejects(getBytes(ref(nobody.storage, `users/${alice.user!.uid}/photo`)), refused);
    await assert.rejects(listAll(ref(nobody.storage, 'users')), refused);
  });

  test("a photo's download URL opens that photo for anyone, and no other object", async () => {
    await uploadBytes(ref(bob.storage, `users/${bob.user!.uid}/photo`), solidPng(2, 2, [9, 9, 9]), { contentType: 'image/png' });
    const aliceUrl = await getDownloadURL(ref(alice.storage, `users/${alice.user!.uid}/photo`));
    assert.equal((await fetch(aliceUrl)).status, 200);
    const token = new URL(aliceUrl).searchParams.get('token');
    const bobPath = encodeURIComponent(`users/${bob.user!.uid}/photo`);
    assert.equal((await fetch(`${server.url}/v0/b/${testBucket}/o/${bobPath}?alt=media&token=${token}`)).status, 403);
  });
});

test('--storage-rules wins over the shipped rules, and --dev ships none', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'hearth-storage-rules-'));
  const file = join(dir, 'storage.rules');
  writeFileSync(file, "rules_version = '2';\nservice firebase.storage { match /b/{bucket}/o { match /public/{name} { allow read, write: if true; } } }\n");
  const own = await startHearth({ dev: false, storageRulesFile: file, shippedStorageRulesFile: defaultShippedStorageRulesFile });
  const dev = await startHearth({ dev: true, shippedStorageRulesFile: defaultShippedStorageRulesFile });
  try {
    const upload = (target: TestHearth, name: string) =>
      fetch(`${target.url}/v0/b/${testBucket}/o?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }).then((response) => response.status);
    assert.equal(await upload(own, 'public/a.txt'), 200);
    assert.equal(own.hearth.storageRulesSummary, `${file} (project ${own.projectId}, reloaded on change)`);
    assert.equal(await upload(dev, 'anything/a.txt'), 200, 'in --dev storage stays open, as the emulator is');
    assert.equal(dev.hearth.storageRulesSummary, 'none: storage is open to every caller (dev mode)');
    assert.match(server.hearth.storageRulesSummary, /the web app's rules/);
  } finally {
    await own.close();
    await dev.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
