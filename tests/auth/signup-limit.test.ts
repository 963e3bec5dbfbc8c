/**
 * Account creation per client address and per project: past the limit a client's sign-up answers
 * Google's TOO_MANY_ATTEMPTS_TRY_LATER (the SDK's auth/too-many-requests), creates nothing, and
 * the count survives a restart. Refused sign-ups cost nothing; administrators are never limited.
 * Accounts made by a first sign-in (email link, identity provider, phone number) count too, while
 * existing accounts keep signing in by those ways past the limit.
 *
 * The SDK is its browser build (helpers/phone-sdk.ts): only that build signs in by phone in Node,
 * and one test file cannot load both builds.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import { SignUpLimit } from '../../packages/server/src/auth/core/signup-limit.js';
import type { Caller } from '../../packages/server/src/auth/core/requests.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { waitForMail } from '../helpers/outbox.js';
import { browserAuth, codeFor, TestVerifier, uniquePhoneNumber } from '../helpers/phone-sdk.js';

const {
  connectAuthEmulator,
  createUserWithEmailAndPassword,
  GoogleAuthProvider,
  initializeAuth,
  inMemoryPersistence,
  sendSignInLinkToEmail,
  signInAnonymously,
  signInWithCredential,
  signInWithEmailLink,
  signInWithPhoneNumber,
} = browserAuth;
type Auth = ReturnType<typeof initializeAuth>;

/** The SDK's error code for a call expected to fail. */
async function errorCodeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error: unknown) {
    return (error as { code?: string }).code ?? String(error);
  }
  assert.fail('expected the call to fail');
}

const hour = 3600_000;
const dataDir = tempDataDir();
after(() => rmSync(dataDir, { recursive: true, force: true }));

function signUp(server: TestHearth, body: Record<string, unknown>) {
  return postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server.apiKey}`, body);
}

async function withSdk<T>(server: TestHearth, use: (auth: Auth) => Promise<T>): Promise<T> {
  const app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId, authDomain: server.hostPort }, `signup-limit-${Math.random()}`);
  try {
    const auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, server.url, { disableWarnings: true });
    return await use(auth);
  } finally {
    await deleteApp(app);
  }
}

const limits = { perAddress: { maxFailures: 3, windowMs: hour }, perProject: { maxFailures: 1000, windowMs: hour } };

describe('sign-ups from one address, over HTTP and through the SDK', () => {
  let server: TestHearth;
  const refusedEmail = uniqueEmail('over-the-limit');
  after(async () => server?.close());

  test('refused sign-ups do not count; three accounts are created, the fourth is refused in Google\'s shape', async () => {
    server = await startHearth({ dataDir, signUpLimits: limits });
    const taken = uniqueEmail('taken');
    assert.equal((await signUp(server, { email: taken, password: 'secret12', returnSecureToken: true })).status, 200);
    // A taken email and a short password are refused for what they are, not counted.
    for (let i = 0; i < 5; i++) assert.equal((await signUp(server, { email: taken, password: 'secret12' })).body.error.message, 'EMAIL_EXISTS');
    for (let i = 0; i < 5; i++) assert.match((await signUp(server, { email: uniqueEmail('weak'), password: '123' })).body.error.message, /^WEAK_PASSWORD/);
    assert.equal((await signUp(server, { returnSecureToken: true })).status, 200);
    assert.equal((await signUp(server, { email: uniqueEmail('third'), password: 'secret12', returnSecureToken: true })).status, 200);

    const refused = await signUp(server, { email: refusedEmail, password: 'secret12', returnSecureToken: true });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 400);
    assert.match(refused.body.error.message, /^TOO_MANY_ATTEMPTS_TRY_LATER : /);
    assert.equal(refused.body.error.errors[0].message, refused.body.error.message);
    assert.equal(refused.body.error.errors[0].reason, 'invalid');
    assert.equal(refused.body.idToken, undefined);
    const lookup = await adminPost(server, '/accounts:lookup', { email: [refusedEmail] });
    assert.equal(lookup.status, 200);
    assert.equal(lookup.body.users, undefined, 'the refused sign-up created no account');
  });

  test('the SDK raises auth/too-many-requests for a password sign-up and a guest', async () => {
    await withSdk(server, async (auth) => {
      assert.equal(await errorCodeOf(createUserWithEmailAndPassword(auth, uniqueEmail('sdk'), 'secret12')), 'auth/too-many-requests');
      assert.equal(await errorCodeOf(signInAnonymously(auth)), 'auth/too-many-requests');
    });
  });

  test('the administrator is not limited, and existing accounts still sign in', async () => {
    const created = await adminPost(server, '/accounts', { email: uniqueEmail('by-admin'), password: 'secret12' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.ok(created.body.localId);
  });

  test('the count survives a restart', async () => {
    await server.close();
    server = await startHearth({ dataDir, signUpLimits: limits });
    const again = await signUp(server, { returnSecureToken: true });
    assert.equal(again.status, 400);
    assert.match(again.body.error.message, /^TOO_MANY_ATTEMPTS_TRY_LATER/);
  });
});

/** Signs in by a link mailed to `email` (creating the account the first time). */
async function signInByLink(server: TestHearth, auth: Auth, email: string, mailsBefore: number) {
  await sendSignInLinkToEmail(auth, email, { url: `${server.url}/finish`, handleCodeInApp: true });
  const mail = await waitForMail(server, email, 'EMAIL_SIGNIN', mailsBefore);
  return signInWithEmailLink(auth, email, mail.oobLink);
}

/** Signs in with a made-up Google identity (--dev takes them, as Google's emulator does). */
function signInWithGoogle(auth: Auth, sub: string) {
  return signInWithCredential(auth, GoogleAuthProvider.credential(JSON.stringify({ sub, email: `${sub}@example.com`, email_verified: true })));
}

async function signInByPhone(server: TestHearth, auth: Auth, phoneNumber: string) {
  const confirmation = await signInWithPhoneNumber(auth, phoneNumber, new TestVerifier());
  return confirmation.confirm(await codeFor(server, confirmation.verificationId));
}

describe('accounts made by signing in by email link, provider or phone count toward the limit', () => {
  let server: TestHearth;
  after(async () => server?.close());
  const linkEmail = uniqueEmail('by-link');
  const googleSub = `google-limit-${process.pid}-${Date.now()}`;
  const phoneNumber = uniquePhoneNumber();

  test('three accounts by link, provider and phone fill the limit; a fourth by each way, and a guest, is refused', async () => {
    server = await startHearth({ signUpLimits: limits });
    await withSdk(server, async (auth) => {
      assert.equal((await signInByLink(server, auth, linkEmail, 0)).operationType, 'signIn');
      assert.ok((await signInWithGoogle(auth, googleSub)).user.uid);
      assert.equal((await signInByPhone(server, auth, phoneNumber)).user.phoneNumber, phoneNumber);

      const refusedEmail = uniqueEmail('link-refused');
      assert.equal(await errorCodeOf(signInByLink(server, auth, refusedEmail, 0)), 'auth/too-many-requests');
      assert.equal(await errorCodeOf(signInWithGoogle(auth, `${googleSub}-2`)), 'auth/too-many-requests');
      assert.equal(await errorCodeOf(signInByPhone(server, auth, uniquePhoneNumber())), 'auth/too-many-requests');
      assert.equal(await errorCodeOf(signInAnonymously(auth)), 'auth/too-many-requests');
      const lookup = await adminPost(server, '/accounts:lookup', { email: [refusedEmail, `${googleSub}-2@example.com`] });
      assert.equal(lookup.body.users, undefined, 'the refused sign-ins created no account');
    });
  });

  test('the accounts that exist still sign in by their own way past the limit', async () => {
    await withSdk(server, async (auth) => {
      assert.equal((await signInByLink(server, auth, linkEmail, 1)).user.email, linkEmail);
      assert.equal((await signInWithGoogle(auth, googleSub)).user.email, `${googleSub}@example.com`);
      assert.equal((await signInByPhone(server, auth, phoneNumber)).user.phoneNumber, phoneNumber);
    });
  });
});

describe('the limit per project, across addresses', () => {
  const file = join(tempDataDir(), 'hearth.sqlite');
  const caller = (project: string, clientIp: string): Caller => ({ realm: project, isAdmin: false, clientIp });

  test('a project fills up from many addresses; another project and the admin are untouched', async () => {
    const store = new SqliteStore(file);
    try {
      const limit = await SignUpLimit.open(store, { perAddress: { maxFailures: 2, windowMs: hour }, perProject: { maxFailures: 5, windowMs: hour } });
      let created = 0;
      const create = async () => ++created;
      for (let i = 0; i < 5; i++) await limit.admit(caller('busy', `203.0.113.${i}`), create);
      await assert.rejects(limit.admit(caller('busy', '198.51.100.1'), create), /TOO_MANY_ATTEMPTS_TRY_LATER/);
      await limit.admit(caller('quiet', '203.0.113.0'), create);
      await limit.admit({ ...caller('busy', '203.0.113.0'), isAdmin: true }, create);
      assert.equal(created, 7);
      // Two from one address in the quiet project, then that address waits there only.
      await limit.admit(caller('quiet', '203.0.113.0'), create);
      await assert.rejects(limit.admit(caller('quiet', '203.0.113.0'), create), /TOO_MANY_ATTEMPTS_TRY_LATER/);
      await limit.admit(caller('quiet', '203.0.113.1'), create);
      // A creation that fails is not counted.
      await assert.rejects(limit.admit(caller('third', '203.0.113.0'), () => Promise.reject(new Error('taken'))), /taken/);
      await limit.admit(caller('third', '203.0.113.0'), create);
      await limit.admit(caller('third', '203.0.113.0'), create);
      await limit.flushed();
    } finally {
      await store.close();
    }
  });
});
