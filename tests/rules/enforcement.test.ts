/**
 * Security rules enforced in production mode (no --dev), judged by the official SDKs: the full
 * `firebase/firestore` in Node (gRPC: Listen and Write streams, getDoc, queries, batches,
 * transactions), signed in through Hearth's Auth with real RS256 tokens; firebase-admin's
 * `securityRules()` deploying through the Firebase Rules API; raw HTTP for exact answers.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth } from 'firebase/auth';
import {
  collection,
  connectFirestoreEmulator,
  doc,
  getDoc,
  getDocs,
  getFirestore,
  onSnapshot,
  query,
  runTransaction,
  serverTimestamp,
  setDoc,
  setLogLevel,
  updateDoc,
  where,
  writeBatch,
  type Firestore,
} from 'firebase/firestore';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp } from 'firebase-admin/app';
import { getSecurityRules } from 'firebase-admin/security-rules';
import pino from 'pino';
import { uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

setLogLevel('silent');

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function signedIn() { return request.auth != null; }
    match /users/{uid}/notes/{note} {
      allow read, write: if signedIn() && request.auth.uid == uid;
    }
    match /posts/{post} {
      allow get: if resource.data.visibility == 'public' || (signedIn() && resource.data.owner == request.auth.uid);
      allow list: if resource.data.visibility == 'public' || (signedIn() && resource.data.owner == request.auth.uid);
      allow create: if signedIn() && request.resource.data.owner == request.auth.uid
        && request.resource.data.keys().hasOnly(['owner', 'visibility', 'title', 'at'])
        && request.resource.data.at == request.time;
      allow update: if signedIn() && resource.data.owner == request.auth.uid
        && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title', 'visibility']);
    }
    match /secrets/{id} {
      allow read: if signedIn() && exists(/databases/$(database)/documents/admins/$(request.auth.uid));
    }
  }
}
`;

let server: TestHearth;
const logLines: string[] = [];
const apps: FirebaseApp[] = [];
let alice: { db: Firestore; uid: string };
let bob: { db: Firestore; uid: string };

const base = () => `${server.url}/v1/projects/${server.projectId}/databases/(default)/documents`;
const adminHeaders = () => ({ authorization: `Bearer ${server.adminKey}` });

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

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: { code?: string }) => error.code ?? String(error),
  );
}

/** The first snapshot or error of a listener, within 10 s. */
function firstEvent(subscribe: (next: () => void, fail: (error: { code: string }) => void) => () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no snapshot or error within 10 s')), 10_000);
    const stop = subscribe(
      () => {
        clearTimeout(timer);
        stop();
        resolve('snapshot');
      },
      (error) => {
        clearTimeout(timer);
        resolve(error.code);
      },
    );
  });
}

async function putRules(source: string, headers: Record<string, string> = adminHeaders()) {
  const response = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}:securityRules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: source }] } }),
  });
  return { status: response.status, body: (await response.json()) as { error?: { message: string; status: string } } };
}

before(async () => {
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  server = await startHearth({ dev: false }, pino({ level: 'info' }, capture));
  alice = await signedInClient('alice');
  bob = await signedInClient('bob');
});

after(async () => {
  await Promise.all(apps.map((app) => deleteApp(app)));
  await server.close();
});

describe('without rules, outside --dev', () => {
  test('users are refused everything; the admin credential is not', async () => {
    assert.equal(await codeOf(getDoc(doc(alice.db, 'users', alice.uid, 'notes', 'n0'))), 'permission-denied');
    assert.equal(await codeOf(setDoc(doc(alice.db, 'users', alice.uid, 'notes', 'n0'), { text: 'x' })), 'permission-denied');
    const asAdmin = await postJson(`${base()}:commit`, { writes: [{ update: { name: `projects/${server.projectId}/databases/(default)/documents/admins/${alice.uid}`, fields: {} } }] }, adminHeaders());
    assert.equal(asAdmin.status, 200, JSON.stringify(asAdmin.body));
  });

  test('an unsigned (alg: none) token is not a user outside --dev', async () => {
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: alice.uid, user_id: alice.uid, aud: server.projectId })).toString('base64url')}.`;
    const response = await fetch(`${base()}/users/${alice.uid}/notes/n0`, { headers: { authorization: `Bearer ${unsigned}` } });
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { error: { status: string } }).error.status, 'UNAUTHENTICATED');
  });

  test("the emulator's rules endpoint needs the admin credential outside --dev", async () => {
    const refused = await putRules(rules, {});
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error?.status, 'PERMISSION_DENIED');
  });
});

describe('rules deployed with firebase-admin securityRules()', () => {
  test('releaseFirestoreRulesetFromSource goes through the Firebase Rules API and is in force at once', async () => {
    // firebase-admin calls firebaserules.googleapis.com; this test's one stand-in for the outside world points it at Hearth.
    const originalRequest = https.request;
    const port = Number(new URL(server.url).port);
    const called: string[] = [];
    (https as { request: unknown }).request = (options: http.RequestOptions, callback?: (res: http.IncomingMessage) => void) => {
      if (options.hostname === 'firebaserules.googleapis.com') {
        const path = `/firebaserules.googleapis.com${String(options.path)}`;
        called.push(`${options.method} ${path.split('?')[0]}`);
        const { agent: _agent, ...rest } = options;
        return http.request({ ...rest, protocol: 'http:', hostname: '127.0.0.1', port, path }, callback);
      }
      return (originalRequest as (o: http.RequestOptions, cb?: (res: http.IncomingMessage) => void) => http.ClientRequest)(options, callback);
    };
    const credential = { getAccessToken: async () => ({ access_token: server.adminKey, expires_in: 3600 }) };
    const adminApp = initializeAdminApp({ projectId: server.projectId, credential }, 'rules-admin');
    try {
      const securityRules = getSecurityRules(adminApp);
      const broken = await codeOf(securityRules.releaseFirestoreRulesetFromSource('service cloud.firestore { match /x { allow read: if } }'));
      assert.equal(broken, 'security-rules/invalid-argument');
      const released = await securityRules.releaseFirestoreRulesetFromSource(rules);
      const inForce = await securityRules.getFirestoreRuleset();
      assert.equal(inForce.name, released.name);
      assert.equal(inForce.source[0]!.content, rules);
      const listed = await securityRules.listRulesetMetadata();
      assert.ok(listed.rulesets.some((ruleset) => ruleset.name === released.name));
      assert.ok(called.some((line) => line.startsWith('POST ') && line.endsWith('/rulesets')), called.join('\n'));
    } finally {
      (https as { request: unknown }).request = originalRequest;
      await deleteAdminApp(adminApp);
    }
  });
});

describe('each user reads and writes only their own notes', () => {
  test('the owner writes and reads; another user can do neither', async () => {
    const note = doc(alice.db, 'users', alice.uid, 'notes', 'n1');
    await setDoc(note, { text: 'mine' });
    assert.equal((await getDoc(note)).data()?.text, 'mine');
    const asBob = doc(bob.db, 'users', alice.uid, 'notes', 'n1');
    assert.equal(await codeOf(getDoc(asBob)), 'permission-denied');
    assert.equal(await codeOf(setDoc(asBob, { text: 'not yours' })), 'permission-denied');
    assert.equal(await codeOf(getDocs(collection(bob.db, 'users', alice.uid, 'notes'))), 'permission-denied');
    assert.deepEqual((await getDocs(collection(alice.db, 'users', alice.uid, 'notes'))).docs.map((d) => d.id), ['n1']);
    assert.equal((await getDoc(note)).data()?.text, 'mine');
  });

  test("a listener on another user's notes fails with permission-denied; the owner's gets snapshots", async () => {
    const theirs = collection(bob.db, 'users', alice.uid, 'notes');
    assert.equal(await firstEvent((next, fail) => onSnapshot(theirs, next, fail)), 'permission-denied');
    assert.equal(await firstEvent((next, fail) => onSnapshot(doc(theirs, 'n1'), next, fail)), 'permission-denied');
    assert.equal(await firstEvent((next, fail) => onSnapshot(collection(alice.db, 'users', alice.uid, 'notes'), next, fail)), 'snapshot');
  });

  test('a batch with one write the rules refuse writes nothing', async () => {
    const batch = writeBatch(bob.db);
    batch.set(doc(bob.db, 'users', bob.uid, 'notes', 'b1'), { text: 'fine' });
    batch.set(doc(bob.db, 'users', alice.uid, 'notes', 'b1'), { text: 'not fine' });
    assert.equal(await codeOf(batch.commit()), 'permission-denied');
    assert.equal((await getDoc(doc(bob.db, 'users', bob.uid, 'notes', 'b1'))).exists(), false);
  });

  test('transactions are judged too', async () => {
    const mine = doc(alice.db, 'users', alice.uid, 'notes', 'counter');
    await runTransaction(alice.db, async (tx) => {
      const seen = await tx.get(mine);
      tx.set(mine, { count: (seen.data()?.count ?? 0) + 1 });
    });
    assert.equal((await getDoc(mine)).data()?.count, 1);
    const code = await codeOf(
      runTransaction(bob.db, async (tx) => {
        await tx.get(doc(bob.db, 'users', alice.uid, 'notes', 'counter'));
      }),
    );
    assert.equal(code, 'permission-denied');
  });
});

describe('rules are not filters', () => {
  before(async () => {
    await setDoc(doc(alice.db, 'posts', 'a-public'), { owner: alice.uid, visibility: 'public', title: 'hello', at: serverTimestamp() });
    await setDoc(doc(alice.db, 'posts', 'a-private'), { owner: alice.uid, visibility: 'private', title: 'diary', at: serverTimestamp() });
  });

  test("create checks the incoming document (owner, fields, request.time) and update the change's keys", async () => {
    assert.equal(await codeOf(setDoc(doc(bob.db, 'posts', 'forged'), { owner: alice.uid, visibility: 'public', title: 'x', at: serverTimestamp() })), 'permission-denied');
    assert.equal(await codeOf(setDoc(doc(bob.db, 'posts', 'extra'), { owner: bob.uid, visibility: 'public', title: 'x', at: serverTimestamp(), admin: true })), 'permission-denied');
    assert.equal(await codeOf(setDoc(doc(bob.db, 'posts', 'stale'), { owner: bob.uid, visibility: 'public', title: 'x', at: new Date(0) })), 'permission-denied');
    assert.equal(await codeOf(updateDoc(doc(alice.db, 'posts', 'a-public'), { title: 'hello again' })), 'ok');
    assert.equal(await codeOf(updateDoc(doc(alice.db, 'posts', 'a-public'), { owner: bob.uid })), 'permission-denied');
  });

  test('a query is allowed only when its constraints prove every result readable', async () => {
    const posts = collection(bob.db, 'posts');
    assert.deepEqual((await getDocs(query(posts, where('visibility', '==', 'public')))).docs.map((d) => d.id), ['a-public']);
    assert.equal(await codeOf(getDocs(posts)), 'permission-denied');
    assert.equal(await codeOf(getDocs(query(posts, where('owner', '==', alice.uid)))), 'permission-denied');
    assert.deepEqual((await getDocs(query(collection(alice.db, 'posts'), where('owner', '==', alice.uid)))).docs.map((d) => d.id).sort(), ['a-private', 'a-public']);
  });

  test('a document listener whose document becomes unreadable is ended with permission-denied', async () => {
    const events: string[] = [];
    const stop = onSnapshot(
      doc(bob.db, 'posts', 'a-public'),
      (snapshot) => events.push(`snapshot:${snapshot.get('visibility') as string}`),
      (error) => events.push(error.code),
    );
    const deadline = Date.now() + 10_000;
    while (!events.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await updateDoc(doc(alice.db, 'posts', 'a-public'), { visibility: 'private' });
    while (!events.includes('permission-denied') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stop();
    assert.deepEqual(events, ['snapshot:public', 'permission-denied']);
  });
});

describe('get() in rules', () => {
  test('secrets are readable by users with an admins document only', async () => {
    const seeded = await postJson(`${base()}:commit`, { writes: [{ update: { name: `projects/${server.projectId}/databases/(default)/documents/secrets/s1`, fields: { code: { stringValue: '42' } } } }] }, adminHeaders());
    assert.equal(seeded.status, 200);
    assert.equal((await getDoc(doc(alice.db, 'secrets', 's1'))).get('code'), '42');
    assert.equal(await codeOf(getDoc(doc(bob.db, 'secrets', 's1'))), 'permission-denied');
  });

  test('a looked-up document that changes is seen at once (lookups are remembered only until a commit changes them)', async () => {
    const adminDoc = `projects/${server.projectId}/databases/(default)/documents/admins/${alice.uid}`;
    assert.equal(await codeOf(getDoc(doc(alice.db, 'secrets', 's1'))), 'ok');
    assert.equal((await postJson(`${base()}:commit`, { writes: [{ delete: adminDoc }] }, adminHeaders())).status, 200);
    assert.equal(await codeOf(getDoc(doc(alice.db, 'secrets', 's1'))), 'permission-denied');
    assert.equal((await postJson(`${base()}:commit`, { writes: [{ update: { name: adminDoc, fields: {} } }] }, adminHeaders())).status, 200);
    assert.equal(await codeOf(getDoc(doc(alice.db, 'secrets', 's1'))), 'ok');
    assert.equal(await codeOf(getDoc(doc(bob.db, 'secrets', 's1'))), 'permission-denied');
    const bobAdmin = `projects/${server.projectId}/databases/(default)/documents/admins/${bob.uid}`;
    assert.equal((await postJson(`${base()}:commit`, { writes: [{ update: { name: bobAdmin, fields: {} } }] }, adminHeaders())).status, 200);
    assert.equal(await codeOf(getDoc(doc(bob.db, 'secrets', 's1'))), 'ok');
  });
});

describe('answers and logs', () => {
  test('a denial answers only "Missing or insufficient permissions."; the reason goes to the log', async () => {
    const token = await (await import('firebase/auth')).getAuth(apps[1]!).currentUser!.getIdToken();
    const response = await fetch(`${base()}/users/${alice.uid}/notes/n1`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 403);
    assert.deepEqual(await response.json(), { error: { code: 403, message: 'Missing or insufficient permissions.', status: 'PERMISSION_DENIED' } });
    const denial = logLines.map((line) => JSON.parse(line) as { msg: string; path?: string; reason?: string }).find((entry) => entry.msg === 'security rules denied a request' && entry.path === `users/${alice.uid}/notes/n1`);
    assert.ok(denial?.reason, `no denial with a reason in the log:\n${logLines.slice(-5).join('\n')}`);
  });

  test('a broken ruleset is refused whole with its line and column, and the rules in force stay', async () => {
    const broken = await putRules(`rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /x/{y} { allow read: if ; }\n  }\n}\n`);
    assert.equal(broken.status, 400);
    assert.match(broken.body.error!.message, /^Error compiling rules:\nL4:\d+ /);
    assert.equal(await codeOf(getDoc(doc(alice.db, 'users', alice.uid, 'notes', 'n1'))), 'ok');
    assert.equal(await codeOf(getDoc(doc(bob.db, 'users', alice.uid, 'notes', 'n1'))), 'permission-denied');
  });
});
