/**
 * The identity API through the official modular SDK (firebase v12) in Node: every call of the
 * spine issue, and each error code the SDK must raise.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import {
  EmailAuthProvider,
  connectAuthEmulator,
  createUserWithEmailAndPassword,
  deleteUser,
  fetchSignInMethodsForEmail,
  getAuth,
  getIdTokenResult,
  linkWithCredential,
  reauthenticateWithCredential,
  reload,
  signInAnonymously,
  signInWithEmailAndPassword,
  signOut,
  updateEmail,
  updatePassword,
  updateProfile,
  type Auth,
} from 'firebase/auth';
import { adminPost, patchProjectConfig, setEmailPrivacy, uniqueEmail } from '../helpers/admin-http.js';
import { SdkClients } from '../helpers/client.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
const apps: FirebaseApp[] = [];

const clients = new SdkClients('sdk');
const newAuth = (target: TestHearth = server): Auth => clients.auth(target);

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: { code?: string }) => {
    assert.equal(error.code, code);
    return true;
  });
}

before(async () => {
  server = await startHearth();
});

after(async () => {
  await clients.close();
  await Promise.all(apps.map((app) => deleteApp(app)));
  await server.close();
});

describe('email and password', () => {
  test('sign up, sign out, sign in, with an ID token the SDK can read', async () => {
    const auth = newAuth();
    const email = uniqueEmail();
    const created = await createUserWithEmailAndPassword(auth, email, 'correct horse');
    assert.equal(created.user.email, email);
    assert.equal(created.user.isAnonymous, false);
    assert.equal(created.user.providerData[0]?.providerId, 'password');
    const result = await getIdTokenResult(created.user);
    assert.equal(result.signInProvider, 'password');
    assert.equal(result.claims.email, email);
    assert.equal(result.claims.user_id, created.user.uid);
    assert.equal(result.claims.iss, `https://securetoken.google.com/${server.projectId}`);
    assert.equal(result.claims.aud, server.projectId);
    await signOut(auth);
    assert.equal(auth.currentUser, null);
    const signedIn = await signInWithEmailAndPassword(auth, email.toUpperCase(), 'correct horse');
    assert.equal(signedIn.user.uid, created.user.uid);
  });

  test('invalid email, missing and weak passwords, duplicate email', async () => {
    const auth = newAuth();
    await rejectsWith(createUserWithEmailAndPassword(auth, 'not-an-email', 'secret12'), 'auth/invalid-email');
    await rejectsWith(createUserWithEmailAndPassword(auth, uniqueEmail(), '12345'), 'auth/weak-password');
    const email = uniqueEmail();
    await createUserWithEmailAndPassword(auth, email, '123456');
    await rejectsWith(createUserWithEmailAndPassword(newAuth(), email, 'another1'), 'auth/email-already-in-use');
  });

  test('weak-password carries the server text', async () => {
    await assert.rejects(createUserWithEmailAndPassword(newAuth(), uniqueEmail(), 'abc'), (error: Error & { code: string }) => {
      assert.equal(error.code, 'auth/weak-password');
      assert.match(error.message, /at least 6 characters/);
      return true;
    });
  });

  test('wrong password and unknown user: invalid-credential with enumeration protection, precise codes without', async () => {
    const email = uniqueEmail();
    await createUserWithEmailAndPassword(newAuth(), email, 'right-password');
    await rejectsWith(signInWithEmailAndPassword(newAuth(), email, 'wrong-password'), 'auth/invalid-credential');
    await rejectsWith(signInWithEmailAndPassword(newAuth(), uniqueEmail('nobody'), 'whatever1'), 'auth/invalid-credential');
    await setEmailPrivacy(server, false);
    try {
      await rejectsWith(signInWithEmailAndPassword(newAuth(), email, 'wrong-password'), 'auth/wrong-password');
      await rejectsWith(signInWithEmailAndPassword(newAuth(), uniqueEmail('nobody'), 'whatever1'), 'auth/user-not-found');
    } finally {
      await setEmailPrivacy(server, true);
    }
  });

  test('fetchSignInMethodsForEmail (createAuthUri) tells methods only without enumeration protection', async () => {
    const email = uniqueEmail();
    await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    assert.deepEqual(await fetchSignInMethodsForEmail(newAuth(), email), []);
    await setEmailPrivacy(server, false);
    try {
      assert.deepEqual(await fetchSignInMethodsForEmail(newAuth(), email), ['password']);
      assert.deepEqual(await fetchSignInMethodsForEmail(newAuth(), uniqueEmail('none')), []);
      await rejectsWith(fetchSignInMethodsForEmail(newAuth(), 'bad-email'), 'auth/invalid-email');
    } finally {
      await setEmailPrivacy(server, true);
    }
  });

  test('profile update, reload and lookup', async () => {
    const auth = newAuth();
    const { user } = await createUserWithEmailAndPassword(auth, uniqueEmail(), 'secret12');
    await updateProfile(user, { displayName: 'Ada Lovelace', photoURL: 'https://example.com/ada.png' });
    const other = newAuth();
    const again = await signInWithEmailAndPassword(other, user.email!, 'secret12');
    assert.equal(again.user.displayName, 'Ada Lovelace');
    assert.equal(again.user.photoURL, 'https://example.com/ada.png');
    await updateProfile(user, { displayName: null });
    await reload(user);
    assert.equal(user.displayName, null);
    // Any string, as Google's servers (and its emulator) keep it; only an oversized one is refused.
    await updateProfile(user, { photoURL: 'photo-url' });
    await reload(user);
    assert.equal(user.photoURL, 'photo-url');
    await assert.rejects(updateProfile(user, { photoURL: 'x'.repeat(100_000) }), (error: { code?: string }) => error.code !== undefined && error.code.startsWith('auth/'));
  });

  test('password change revokes other sessions (user-token-expired) and the old password', async () => {
    const email = uniqueEmail();
    const first = newAuth();
    const { user } = await createUserWithEmailAndPassword(first, email, 'old-password');
    const second = newAuth();
    const elsewhere = await signInWithEmailAndPassword(second, email, 'old-password');
    await new Promise((r) => setTimeout(r, 1100)); // revocation is at one-second granularity, as in Firebase
    await updatePassword(user, 'new-password');
    await rejectsWith(reload(elsewhere.user), 'auth/user-token-expired');
    await rejectsWith(elsewhere.user.getIdToken(true), 'auth/user-token-expired');
    await rejectsWith(signInWithEmailAndPassword(newAuth(), email, 'old-password'), 'auth/invalid-credential');
    await signInWithEmailAndPassword(newAuth(), email, 'new-password');
    // the changing session got fresh tokens and keeps working
    const refreshed = await user.getIdToken(true);
    assert.ok(refreshed.split('.').length === 3);
  });

  test('direct email change: refused under enumeration protection, allowed without it', async () => {
    const auth = newAuth();
    const { user } = await createUserWithEmailAndPassword(auth, uniqueEmail(), 'secret12');
    const newEmail = uniqueEmail('changed');
    await rejectsWith(updateEmail(user, newEmail), 'auth/operation-not-allowed');
    await setEmailPrivacy(server, false);
    try {
      await updateEmail(user, newEmail);
      assert.equal(user.email, newEmail);
      const again = await signInWithEmailAndPassword(newAuth(), newEmail, 'secret12');
      assert.equal(again.user.uid, user.uid);
      const taken = uniqueEmail('taken');
      await createUserWithEmailAndPassword(newAuth(), taken, 'secret12');
      await rejectsWith(updateEmail(user, taken), 'auth/email-already-in-use');
    } finally {
      await setEmailPrivacy(server, true);
    }
  });

  test('token refresh gives a new ID token for the same user', async () => {
    const auth = newAuth();
    const { user } = await createUserWithEmailAndPassword(auth, uniqueEmail(), 'secret12');
    const first = await user.getIdToken();
    await new Promise((r) => setTimeout(r, 1100));
    const second = await user.getIdToken(true);
    assert.notEqual(first, second);
    const claims = (await getIdTokenResult(user)).claims;
    assert.equal(claims.sub, user.uid);
  });

  test('delete account; the deleted user can no longer sign in or refresh', async () => {
    const email = uniqueEmail();
    const auth = newAuth();
    const { user } = await createUserWithEmailAndPassword(auth, email, 'secret12');
    const elsewhere = await signInWithEmailAndPassword(newAuth(), email, 'secret12');
    await deleteUser(user);
    assert.equal(auth.currentUser, null);
    await rejectsWith(signInWithEmailAndPassword(newAuth(), email, 'secret12'), 'auth/invalid-credential');
    await rejectsWith(elsewhere.user.getIdToken(true), 'auth/user-token-expired');
  });
});

describe('anonymous accounts', () => {
  test('sign in anonymously, then upgrade to email and password', async () => {
    const auth = newAuth();
    const { user } = await signInAnonymously(auth);
    assert.equal(user.isAnonymous, true);
    assert.equal((await getIdTokenResult(user)).signInProvider, 'anonymous');
    const email = uniqueEmail('upgraded');
    const linked = await linkWithCredential(user, EmailAuthProvider.credential(email, 'secret12'));
    assert.equal(linked.user.uid, user.uid);
    assert.equal(linked.user.isAnonymous, false);
    assert.equal(linked.user.email, email);
    const again = await signInWithEmailAndPassword(newAuth(), email, 'secret12');
    assert.equal(again.user.uid, user.uid);
  });
});

describe('project settings and administrator-only operations', () => {
  test('a sign-in method switched off gives operation-not-allowed', async () => {
    const email = uniqueEmail();
    await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    await patchProjectConfig(server, { signIn: { email: { enabled: false }, anonymous: { enabled: false } } }, 'signIn.email.enabled,signIn.anonymous.enabled');
    try {
      await rejectsWith(createUserWithEmailAndPassword(newAuth(), uniqueEmail(), 'secret12'), 'auth/operation-not-allowed');
      await rejectsWith(signInWithEmailAndPassword(newAuth(), email, 'secret12'), 'auth/operation-not-allowed');
      await rejectsWith(signInAnonymously(newAuth()), 'auth/operation-not-allowed');
    } finally {
      await patchProjectConfig(server, { signIn: { email: { enabled: true }, anonymous: { enabled: true } } }, 'signIn.email.enabled,signIn.anonymous.enabled');
    }
    await signInWithEmailAndPassword(newAuth(), email, 'secret12');
  });

  test('a disabled user gets user-disabled on sign-in and refresh', async () => {
    const email = uniqueEmail();
    const { user } = await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    const disabled = await adminPost(server, '/accounts:update', { localId: user.uid, disableUser: true });
    assert.equal(disabled.status, 200);
    await rejectsWith(signInWithEmailAndPassword(newAuth(), email, 'secret12'), 'auth/user-disabled');
    await rejectsWith(user.getIdToken(true), 'auth/user-disabled');
  });

  test('concurrent guesses cannot slip past the failure limit', async () => {
    const email = uniqueEmail('race');
    await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    const limit = server.hearth.options.accountThrottle.maxFailures;
    const codes = await Promise.all(
      Array.from({ length: limit * 3 }, (_, i) => signInWithEmailAndPassword(newAuth(), email, `guess-${i}`).then(() => 'ok', (e: { code: string }) => e.code)),
    );
    assert.equal(codes.filter((c) => c === 'auth/invalid-credential').length, limit);
    assert.equal(codes.filter((c) => c === 'auth/too-many-requests').length, limit * 2);
  });

  test('failed sign-ins are throttled: too-many-requests, even for the right password', async () => {
    const email = uniqueEmail();
    await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    const limit = server.hearth.options.accountThrottle.maxFailures;
    for (let i = 0; i < limit; i++) {
      await rejectsWith(signInWithEmailAndPassword(newAuth(), email, `wrong-${i}`), 'auth/invalid-credential');
    }
    await rejectsWith(signInWithEmailAndPassword(newAuth(), email, 'secret12'), 'auth/too-many-requests');
  });
});

describe('recent login', () => {
  let strict: TestHearth;
  before(async () => {
    strict = await startHearth({ recentLoginSeconds: 1 });
  });
  after(async () => {
    await strict.close();
  });

  test('changing the password long after sign-in needs reauthentication', async () => {
    const auth = newAuth(strict);
    const email = uniqueEmail();
    const { user } = await createUserWithEmailAndPassword(auth, email, 'secret12');
    await new Promise((r) => setTimeout(r, 2100));
    await rejectsWith(updatePassword(user, 'another12'), 'auth/requires-recent-login');
    await rejectsWith(deleteUser(user), 'auth/requires-recent-login');
    await reauthenticateWithCredential(user, EmailAuthProvider.credential(email, 'secret12'));
    await updatePassword(user, 'another12');
  });
});

test('getAuth with the default app also works (smoke)', async () => {
  const app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, `default-like-${Date.now()}`);
  apps.push(app);
  const auth = getAuth(app);
  connectAuthEmulator(auth, server.url, { disableWarnings: true });
  const { user } = await signInAnonymously(auth);
  assert.ok(user.uid.length >= 20);
});
