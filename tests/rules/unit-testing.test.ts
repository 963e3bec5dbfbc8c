/**
 * A Security Rules suite written with @firebase/rules-unit-testing exactly as its documentation shows
 * (initializeTestEnvironment, authenticatedContext with claims, unauthenticatedContext, withSecurityRulesDisabled,
 * assertSucceeds / assertFails, clearFirestore) and the modular `firebase/firestore` calls an app makes: getDoc,
 * setDoc, updateDoc, deleteDoc, getDocs of queries, onSnapshot, writeBatch and runTransaction. The judge of "a suite
 * written with it passes unchanged": the same suite runs against Hearth (in-process, --dev) and, to prove the suite
 * itself right, against Google's Firestore emulator (skipped when it is not installed).
 * RULES_UNIT_TESTING_TARGET=hearth or =emulator runs one of the two only.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { assertFails, assertSucceeds, initializeTestEnvironment, type RulesTestContext, type RulesTestEnvironment } from '@firebase/rules-unit-testing';
import {
  collection,
  deleteDoc,
  doc,
  getDoc,
  getDocs,
  increment,
  limit,
  onSnapshot,
  orderBy,
  query,
  runTransaction,
  serverTimestamp,
  setDoc,
  setLogLevel,
  updateDoc,
  where,
  writeBatch,
  type Firestore,
  type Query,
} from 'firebase/firestore';
import { findCloudSdkWithFirestoreEmulator, startGoogleEmulator, type GoogleEmulator } from '../helpers/firestore-emulator.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

// The SDK logs every refused listener; the assertions say what matters.
setLogLevel('silent');

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function signedIn() {
      return request.auth != null;
    }
    function isAdmin() {
      return signedIn() && request.auth.token.get('admin', false) == true;
    }
    match /users/{userId} {
      allow read: if signedIn();
      allow create: if request.auth.uid == userId
        && request.resource.data.keys().hasOnly(['name', 'createdAt'])
        && request.resource.data.createdAt == request.time;
      allow update: if request.auth.uid == userId
        && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['name']);
      allow delete: if isAdmin();
    }
    match /posts/{postId} {
      allow read: if resource.data.published == true || (signedIn() && request.auth.uid == resource.data.author);
      allow create: if signedIn() && request.resource.data.author == request.auth.uid
        && request.resource.data.title is string && request.resource.data.title.size() <= 50
        && exists(/databases/$(database)/documents/users/$(request.auth.uid));
      allow update: if signedIn() && request.auth.uid == resource.data.author
        && request.resource.data.author == resource.data.author;
      allow update: if signedIn()
        && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['likes'])
        && request.resource.data.likes == resource.data.likes + 1;
      allow delete: if signedIn() && (request.auth.uid == resource.data.author || isAdmin());
    }
  }
}
`;

/** The compat Firestore a context hands out is what the modular functions take, as the documentation uses it. */
const db = (context: RulesTestContext) => context.firestore() as unknown as Firestore;

/**
 * The first snapshot of a listener that the server confirmed, or its error. (A snapshot from the SDK's cache, of
 * documents an earlier listener of the same client brought in, may come before the server's answer.)
 */
function firstServerSnapshot(target: Query): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const unsubscribe = onSnapshot(
      target,
      { includeMetadataChanges: true },
      (snapshot) => {
        if (snapshot.metadata.fromCache) return;
        unsubscribe();
        resolve(snapshot.docs.map((document) => document.id).sort());
      },
      reject,
    );
  });
}

const onlyTarget = process.env.RULES_UNIT_TESTING_TARGET;

interface Target {
  name: 'hearth' | 'emulator';
  label: string;
  skip: string | false;
  start(): Promise<{ host: string; port: number; stop(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: 'hearth',
    label: 'Hearth',
    skip: false,
    async start() {
      const hearth: TestHearth = await startHearth();
      return { host: '127.0.0.1', port: Number(new URL(hearth.url).port), stop: () => hearth.close() };
    },
  },
  {
    name: 'emulator',
    label: "Google's Firestore emulator",
    skip: !findCloudSdkWithFirestoreEmulator() && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator)',
    async start() {
      const emulator: GoogleEmulator | undefined = await startGoogleEmulator();
      if (!emulator) throw new Error('the Firestore emulator did not start');
      const [host, port] = emulator.hostPort.split(':');
      return { host: host!, port: Number(port), stop: () => emulator.stop() };
    },
  },
];

for (const target of targets.filter((candidate) => !onlyTarget || candidate.name === onlyTarget)) {
  describe(`@firebase/rules-unit-testing against ${target.label}`, { skip: target.skip, timeout: 120_000 }, () => {
    let server: Awaited<ReturnType<Target['start']>>;
    let testEnv: RulesTestEnvironment;

    before(async () => {
      server = await target.start();
      testEnv = await initializeTestEnvironment({ projectId: 'demo-rules-unit-testing', firestore: { host: server.host, port: server.port, rules } });
    });
    after(async () => {
      await testEnv?.cleanup();
      await server?.stop();
    });

    beforeEach(async () => {
      await testEnv.clearFirestore();
      await testEnv.withSecurityRulesDisabled(async (context) => {
        const admin = db(context);
        await setDoc(doc(admin, 'users/alice'), { name: 'Alice', createdAt: new Date('2024-01-01T00:00:00Z') });
        await setDoc(doc(admin, 'users/bob'), { name: 'Bob', createdAt: new Date('2024-01-02T00:00:00Z') });
        await setDoc(doc(admin, 'posts/public1'), { author: 'alice', title: 'Hello', published: true, likes: 0 });
        await setDoc(doc(admin, 'posts/draft1'), { author: 'alice', title: 'Draft', published: false, likes: 0 });
        await setDoc(doc(admin, 'posts/public2'), { author: 'bob', title: 'Hi', published: true, likes: 3 });
      });
    });

    test('profiles: signed-in users read, nobody else', async () => {
      await assertFails(getDoc(doc(db(testEnv.unauthenticatedContext()), 'users/alice')));
      const snapshot = await assertSucceeds(getDoc(doc(db(testEnv.authenticatedContext('bob')), 'users/alice')));
      assert.equal(snapshot.get('name'), 'Alice');
    });

    test('creating one\'s own profile needs exactly the allowed keys and createdAt == request.time', async () => {
      const carol = db(testEnv.authenticatedContext('carol'));
      await assertFails(setDoc(doc(carol, 'users/carol'), { name: 'Carol', createdAt: new Date() }));
      await assertFails(setDoc(doc(carol, 'users/carol'), { name: 'Carol', createdAt: serverTimestamp(), admin: true }));
      await assertFails(setDoc(doc(carol, 'users/dave'), { name: 'Dave', createdAt: serverTimestamp() }));
      await assertSucceeds(setDoc(doc(carol, 'users/carol'), { name: 'Carol', createdAt: serverTimestamp() }));
    });

    test('updates may change only the name; deletes need the admin claim', async () => {
      const alice = db(testEnv.authenticatedContext('alice'));
      await assertSucceeds(updateDoc(doc(alice, 'users/alice'), { name: 'Alicia' }));
      await assertFails(updateDoc(doc(alice, 'users/alice'), { createdAt: serverTimestamp() }));
      await assertFails(updateDoc(doc(alice, 'users/bob'), { name: 'Robert' }));
      await assertFails(deleteDoc(doc(alice, 'users/bob')));
      await assertSucceeds(deleteDoc(doc(db(testEnv.authenticatedContext('root', { admin: true })), 'users/bob')));
      await testEnv.withSecurityRulesDisabled(async (context) => {
        assert.equal((await getDoc(doc(db(context), 'users/bob'))).exists(), false);
        assert.equal((await getDoc(doc(db(context), 'users/alice'))).get('name'), 'Alicia');
      });
    });

    test('posts: drafts only for their author; queries must stay within what the rules allow', async () => {
      const unauthed = db(testEnv.unauthenticatedContext());
      const alice = db(testEnv.authenticatedContext('alice'));
      const bob = db(testEnv.authenticatedContext('bob'));
      await assertSucceeds(getDoc(doc(unauthed, 'posts/public1')));
      await assertFails(getDoc(doc(unauthed, 'posts/draft1')));
      await assertSucceeds(getDoc(doc(alice, 'posts/draft1')));
      await assertFails(getDoc(doc(bob, 'posts/draft1')));

      const published = await assertSucceeds(getDocs(query(collection(unauthed, 'posts'), where('published', '==', true))));
      assert.deepEqual(published.docs.map((document) => document.id).sort(), ['public1', 'public2']);
      await assertFails(getDocs(collection(unauthed, 'posts')));
      await assertSucceeds(getDocs(query(collection(alice, 'posts'), where('author', '==', 'alice'))));
      await assertFails(getDocs(query(collection(bob, 'posts'), where('author', '==', 'alice'))));
      const top = await assertSucceeds(getDocs(query(collection(bob, 'posts'), where('published', '==', true), orderBy('likes', 'desc'), limit(1))));
      assert.deepEqual(top.docs.map((document) => document.id), ['public2']);
    });

    test('creating a post needs a profile (exists()) and a short title', async () => {
      const alice = db(testEnv.authenticatedContext('alice'));
      const carol = db(testEnv.authenticatedContext('carol'));
      await assertSucceeds(setDoc(doc(alice, 'posts/new'), { author: 'alice', title: 'New', published: false, likes: 0 }));
      await assertFails(setDoc(doc(alice, 'posts/long'), { author: 'alice', title: 'x'.repeat(51), published: false, likes: 0 }));
      await assertFails(setDoc(doc(alice, 'posts/forged'), { author: 'bob', title: 'Forged', published: false, likes: 0 }));
      await assertFails(setDoc(doc(carol, 'posts/carol'), { author: 'carol', title: 'No profile', published: false, likes: 0 }));
    });

    test('listeners: an allowed query streams its documents, a refused one gets permission-denied', async () => {
      const unauthed = db(testEnv.unauthenticatedContext());
      assert.deepEqual(await assertSucceeds(firstServerSnapshot(query(collection(unauthed, 'posts'), where('published', '==', true)))), ['public1', 'public2']);
      await assertFails(firstServerSnapshot(collection(unauthed, 'posts')));
      await assertFails(firstServerSnapshot(query(collection(unauthed, 'posts'), where('author', '==', 'alice'))));
    });

    test('batches: all writes are allowed or none is written', async () => {
      const alice = db(testEnv.authenticatedContext('alice'));
      const allowed = writeBatch(alice);
      allowed.set(doc(alice, 'posts/batch1'), { author: 'alice', title: 'One', published: true, likes: 0 });
      allowed.update(doc(alice, 'users/alice'), { name: 'Alice B.' });
      await assertSucceeds(allowed.commit());

      const refused = writeBatch(alice);
      refused.set(doc(alice, 'posts/batch2'), { author: 'alice', title: 'Two', published: true, likes: 0 });
      refused.update(doc(alice, 'users/bob'), { name: 'not yours' });
      await assertFails(refused.commit());
      await testEnv.withSecurityRulesDisabled(async (context) => {
        assert.equal((await getDoc(doc(db(context), 'posts/batch1'))).exists(), true);
        assert.equal((await getDoc(doc(db(context), 'posts/batch2'))).exists(), false, 'a refused batch writes nothing');
        assert.equal((await getDoc(doc(db(context), 'users/bob'))).get('name'), 'Bob');
      });
    });

    test('transactions: a like is likes + 1 and nothing else; increment() too', async () => {
      const bob = db(testEnv.authenticatedContext('bob'));
      const post = doc(bob, 'posts/public1');
      await assertSucceeds(
        runTransaction(bob, async (transaction) => {
          const snapshot = await transaction.get(post);
          transaction.update(post, { likes: snapshot.get('likes') + 1 });
        }),
      );
      await assertFails(
        runTransaction(bob, async (transaction) => {
          const snapshot = await transaction.get(post);
          transaction.update(post, { likes: snapshot.get('likes') + 2 });
        }),
      );
      await assertFails(
        runTransaction(bob, async (transaction) => {
          await transaction.get(doc(bob, 'posts/draft1'));
        }),
      );
      await assertSucceeds(updateDoc(post, { likes: increment(1) }));
      await assertFails(updateDoc(post, { likes: increment(1), title: 'Taken over' }));
      await testEnv.withSecurityRulesDisabled(async (context) => {
        assert.equal((await getDoc(doc(db(context), 'posts/public1'))).get('likes'), 2);
      });
    });

    test('clearFirestore() empties the database', async () => {
      await testEnv.clearFirestore();
      await testEnv.withSecurityRulesDisabled(async (context) => {
        const all = await getDocs(collection(db(context), 'posts'));
        assert.equal(all.size, 0);
        assert.equal((await getDoc(doc(db(context), 'users/alice'))).exists(), false);
      });
    });
  });
}
