/**
 * Issue 28, item 5: a `verify` write tells whether a document exists and its exact update time, so
 * it is a read of that document: judged as `get` on the stored version before its precondition, as
 * Google's emulator does (the oracle test at the end runs the same cases on both). Nothing a write
 * finds stored (a precondition's outcome, the stored version, the stored document's size) may reach
 * a caller before the rules allowed the write; once allowed, Firestore's answers (NOT_FOUND,
 * ALREADY_EXISTS, FAILED_PRECONDITION) stay, without the stored version or size in their messages.
 * Production mode, rules released; raw REST and raw gRPC for what no SDK sends, and the client
 * SDK's own transactions (which verify every document read and not written) for what must work.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { doc, getDoc, runTransaction, setDoc } from 'firebase/firestore';
import { findCloudSdkWithFirestoreEmulator, startGoogleEmulator } from '../helpers/firestore-emulator.js';
import { ProductionFirestore, wireFields, type ProductionUser, type RestAnswer } from '../helpers/production-firestore.js';

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{uid}/notes/{note} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /posts/{post} {
      allow read: if true;
    }
    match /inbox/{id} {
      allow create, update: if request.auth != null;
    }
    match /public/{id} {
      allow read, write: if true;
    }
  }
}
`;

let env: ProductionFirestore;
let alice: ProductionUser;
let bob: ProductionUser;
let noteTime: string;

before(async () => {
  env = await ProductionFirestore.start();
  await env.releaseRules(rules);
  alice = await env.signUp('alice');
  bob = await env.signUp('bob');
  noteTime = await env.adminCommit([{ update: { name: env.name(`users/${alice.uid}/notes/n1`), fields: wireFields({ text: 'private' }) } }]);
  await env.adminCommit([{ update: { name: env.name('posts/p1'), fields: wireFields({ title: 'public post', likes: 0 }) } }]);
});

after(() => env.close());

const verify = (path: string, currentDocument: Record<string, unknown>) => ({ verify: env.name(path), currentDocument });
const commitAs = (authorization: string | undefined, writes: unknown[]) => env.rest('POST', `${env.root()}:commit`, { writes }, authorization);

function assertDenied(answer: RestAnswer, label: string): void {
  assert.equal(answer.status, 403, `${label}: ${JSON.stringify(answer.body)}`);
  assert.deepEqual(answer.body, { error: { code: 403, message: 'Missing or insufficient permissions.', status: 'PERMISSION_DENIED' } }, label);
}

describe('verify writes are reads', () => {
  test('anonymous: a verify of a document it may not read is refused alike, whether the document exists, is missing, or has that update time', async () => {
    const note = `users/${alice.uid}/notes/n1`;
    const missing = `users/${alice.uid}/notes/none`;
    const cases: Array<[string, Record<string, unknown>]> = [
      [note, { exists: true }],
      [note, { exists: false }],
      [note, { updateTime: noteTime }],
      [note, { updateTime: '2001-01-01T00:00:00Z' }],
      [missing, { exists: true }],
      [missing, { exists: false }],
    ];
    for (const [path, precondition] of cases) assertDenied(await commitAs(undefined, [verify(path, precondition)]), `${path} ${JSON.stringify(precondition)}`);
  });

  test('signed in: another user\'s document is refused, even beside an allowed write, which is then not made', async () => {
    const note = `users/${alice.uid}/notes/n1`;
    const allowed = { update: { name: env.name('public/left-behind'), fields: wireFields({ by: 'bob' }) } };
    assertDenied(await commitAs(bob.authorization, [allowed, verify(note, { exists: true })]), 'allowed write + verify');
    assertDenied(await commitAs(bob.authorization, [allowed, verify(note, { exists: false })]), 'allowed write + verify absent');
    const leftBehind = await env.rest('GET', env.name('public/left-behind'), undefined, env.adminAuthorization);
    assert.equal(leftBehind.status, 404, 'a refused commit writes nothing');
    // Its owner verifies it: the precondition's outcome is hers to learn.
    const own = await commitAs(alice.authorization, [verify(note, { exists: true })]);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(own.body.writeResults[0].updateTime, noteTime);
    assert.equal((await commitAs(alice.authorization, [verify(note, { exists: false })])).body.error.status, 'ALREADY_EXISTS');
  });

  test('over gRPC too (Commit with a verify, as bob)', async () => {
    const answer = await env.grpc('Commit', { database: `projects/${env.projectId}/databases/(default)`, writes: [verify(`users/${alice.uid}/notes/n1`, { updateTime: noteTime })] }, bob.authorization);
    assert.deepEqual(answer.ok ? 'committed' : answer.code, grpc.status.PERMISSION_DENIED);
    const own = await env.grpc('Commit', { database: `projects/${env.projectId}/databases/(default)`, writes: [verify(`users/${alice.uid}/notes/n1`, { updateTime: noteTime })] }, alice.authorization);
    assert.ok(own.ok, JSON.stringify(own));
  });

  test('a verify needs a precondition (Google\'s refusal), and the client SDK\'s transactions, which verify what they read, still commit', async () => {
    const bare = await commitAs(bob.authorization, [{ verify: env.name('posts/p1') }]);
    assert.equal(bare.status, 400, JSON.stringify(bare.body));
    assert.equal(bare.body.error.status, 'INVALID_ARGUMENT');
    // Bob reads a public post and writes his own note: the commit verifies the post.
    let attempts = 0;
    const title = await runTransaction(bob.client, async (transaction) => {
      attempts++;
      const post = await transaction.get(doc(bob.client, 'posts', 'p1'));
      // A change between the read and the commit fails the verify: the SDK tries again.
      if (attempts === 1) await env.adminCommit([{ update: { name: env.name('posts/p1'), fields: wireFields({ title: 'public post', likes: 1 }) } }]);
      transaction.set(doc(bob.client, 'users', bob.uid, 'notes', 'seen'), { likes: post.get('likes') });
      return post.get('title') as string;
    });
    assert.equal(title, 'public post');
    assert.equal(attempts, 2);
    assert.equal((await getDoc(doc(bob.client, 'users', bob.uid, 'notes', 'seen'))).get('likes'), 1);
    await setDoc(doc(alice.client, 'users', alice.uid, 'notes', 'n2'), { text: 'mine' });
  });
});

describe('what a write finds stored is told only after the rules allowed it', () => {
  test('a refused merge into a large document is refused, not told the document is too large (nor its size)', async () => {
    await env.adminCommit([{ update: { name: env.name('posts/big'), fields: wireFields({ body: 'x'.repeat(1_000_000) }) } }]);
    const merge = { update: { name: env.name('posts/big'), fields: wireFields({ more: 'y'.repeat(100_000) }) }, updateMask: { fieldPaths: ['more'] } };
    assertDenied(await commitAs(undefined, [merge]), 'anonymous merge');
    assertDenied(await commitAs(bob.authorization, [merge]), 'signed-in merge');
  });

  test('a caller who may write but not read learns the outcome of its write, not the stored version or size', async () => {
    await env.adminCommit([{ update: { name: env.name('inbox/m1'), fields: wireFields({ body: 'x'.repeat(1_000_000) }) } }]);
    const stale = await commitAs(bob.authorization, [{ update: { name: env.name('inbox/m1'), fields: wireFields({ read: true }) }, updateMask: { fieldPaths: ['read'] }, currentDocument: { updateTime: '2001-01-01T00:00:00Z' } }]);
    assert.equal(stale.status, 400, JSON.stringify(stale.body));
    assert.equal(stale.body.error.status, 'FAILED_PRECONDITION');
    assert.doesNotMatch(stale.body.error.message, /\(\d{10,}\) does not match/, 'the stored version is not named');
    const oversized = await commitAs(bob.authorization, [{ update: { name: env.name('inbox/m1'), fields: wireFields({ more: 'y'.repeat(100_000) }) }, updateMask: { fieldPaths: ['more'] } }]);
    assert.equal(oversized.status, 400, JSON.stringify(oversized.body));
    assert.equal(oversized.body.error.status, 'INVALID_ARGUMENT');
    assert.doesNotMatch(oversized.body.error.message, /1,1\d\d,\d{3} bytes/, 'the merged size, which tells the stored one, is not named');
  });
});

describe('Google\'s emulator is the oracle', { skip: findCloudSdkWithFirestoreEmulator() ? false : 'the Firestore emulator is not installed' }, () => {
  const oracleRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /private/{id} { allow read: if false; allow write: if true; }
    match /readable/{id} { allow read: if true; allow write: if false; }
    match /byfield/{id} { allow read: if resource.data.pub == true; allow write: if true; }
    match /createonly/{id} { allow create: if true; }
    match /updateonly/{id} { allow update: if true; }
  }
}`;
  const seed = ['private/a', 'readable/a', 'byfield/hidden', 'byfield/shown', 'createonly/a', 'updateonly/a'];
  type Case = [label: string, writes: (root: string) => unknown[]];
  const set = (root: string, path: string, precondition?: unknown) => ({ update: { name: `${root}/${path}`, fields: wireFields({ v: 2 }) }, ...(precondition ? { currentDocument: precondition } : {}) });
  const check = (root: string, path: string, precondition: unknown) => ({ verify: `${root}/${path}`, currentDocument: precondition });
  const old = { updateTime: '2001-01-01T00:00:00Z' };
  const cases: Case[] = [];
  for (const path of ['private/a', 'private/none', 'readable/a', 'readable/none', 'byfield/hidden', 'byfield/shown', 'byfield/none', 'nomatch/a']) {
    for (const precondition of [{ exists: true }, { exists: false }, old]) cases.push([`verify ${path} ${JSON.stringify(precondition)}`, (root) => [check(root, path, precondition)]]);
  }
  cases.push(['allowed write + denied verify', (root) => [set(root, 'private/x'), check(root, 'readable/none', { exists: true })]]);
  cases.push(['allowed write + verify of an unreadable document', (root) => [set(root, 'private/y'), check(root, 'private/a', { exists: true })]]);
  for (const [path, precondition] of [
    ['private/a', { exists: false }],
    ['private/none', { exists: true }],
    ['private/a', old],
    ['createonly/a', { exists: false }],
    ['createonly/none', { exists: true }],
    ['createonly/a', undefined],
    ['updateonly/none', { exists: true }],
    ['updateonly/a', { exists: false }],
    ['updateonly/a', old],
    ['readable/a', { exists: true }],
  ] as const) {
    cases.push([`set ${path} ${JSON.stringify(precondition)}`, (root) => [set(root, path, precondition)]]);
  }

  test('the same commits get the same statuses on the emulator and on Hearth', async () => {
    const emulator = await startGoogleEmulator();
    try {
      const outcomes = async (url: string, projectId: string, admin: string) => {
        const root = `projects/${projectId}/databases/(default)/documents`;
        const call = async (body: unknown, authorization?: string) => {
          const response = await fetch(`${url}/v1/${root}:commit`, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) }, body: JSON.stringify(body) });
          return { status: response.status, body: (await response.json()) as { error?: { status: string } } };
        };
        const released = await fetch(`${url}/emulator/v1/projects/${projectId}:securityRules`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', authorization: admin },
          body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: oracleRules }] } }),
        });
        assert.equal(released.status, 200);
        const seeded = await call({ writes: seed.map((path) => ({ update: { name: `${root}/${path}`, fields: { pub: { booleanValue: path === 'byfield/shown' } } } })) }, admin);
        assert.equal(seeded.status, 200);
        const seen: string[] = [];
        for (const [label, writes] of cases) {
          const answer = await call({ writes: writes(root) });
          seen.push(`${label}: ${answer.status} ${answer.body.error?.status ?? 'OK'}`);
        }
        return seen;
      };
      const expected = await outcomes(emulator!.url, 'demo-verify-oracle', 'Bearer owner');
      const actual = await outcomes(env.server.url, 'demo-verify-oracle', env.adminAuthorization);
      assert.deepEqual(actual, expected);
    } finally {
      await emulator?.stop();
    }
  });
});
