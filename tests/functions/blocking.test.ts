/**
 * Auth blocking functions of an unmodified code base, as the web SDK sees them: beforeUserCreated
 * refuses sign-ups from one domain (auth/internal-error carrying the function's message, Google's
 * BLOCKING_FUNCTION_ERROR_RESPONSE on the wire, no account made) and gives the others a custom
 * claim, a display name and a photo; beforeUserSignedIn adds session claims to each sign-in's token,
 * can disable the account, and can refuse; accounts the administrator makes are not asked about;
 * beforeEmailSent refuses or blocks password-reset and sign-in-link mails, beforeSmsSent an SMS code;
 * anonymous and custom-token sessions are not vetted (Google: they do not support blocking functions).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth } from 'firebase-admin/auth';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import {
  connectAuthEmulator,
  createUserWithEmailAndPassword,
  inMemoryPersistence,
  initializeAuth,
  sendPasswordResetEmail,
  sendSignInLinkToEmail,
  signInAnonymously,
  signInWithCustomToken,
  signInWithEmailAndPassword,
  signOut,
  type Auth,
} from 'firebase/auth';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');

describe('blocking functions', () => {
  let server: TestHearth;
  let app: FirebaseApp;
  let auth: Auth;
  let admin: App;

  before(async () => {
    server = await startHearth({ functionsDir: fixture });
    app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, 'blocking-test');
    auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, server.url, { disableWarnings: true });
    process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
    admin = initializeAdminApp({ projectId: server.projectId }, 'blocking-admin');
  });
  after(async () => {
    await deleteApp(app);
    await deleteAdminApp(admin);
    delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
    await server?.close();
  });

  test('a sign-up from the refused domain fails with the function\'s message, and no account is made', async () => {
    await assert.rejects(createUserWithEmailAndPassword(auth, 'eve@blocked.example', 'secret123'), (error: { code?: string; message?: string }) => {
      assert.equal(error.code, 'auth/internal-error');
      assert.match(error.message ?? '', /Sign-ups from blocked\.example are not allowed \(eve@blocked\.example\)/);
      return true;
    });
    await assert.rejects(getAdminAuth(admin).getUserByEmail('eve@blocked.example'), (error: { code?: string }) => error.code === 'auth/user-not-found');
  });

  test('the wire answer is Google\'s BLOCKING_FUNCTION_ERROR_RESPONSE', async () => {
    const answer = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server.apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'mallory@blocked.example', password: 'secret123', returnSecureToken: true }),
    });
    assert.equal(answer.status, 400);
    const body = (await answer.json()) as { error: { message: string } };
    assert.match(body.error.message, /^BLOCKING_FUNCTION_ERROR_RESPONSE : \(\(Sign-ups from blocked\.example are not allowed/);
  });

  test('an accepted sign-up carries the claim, name and photo the function gave, and session claims', async () => {
    const { user } = await createUserWithEmailAndPassword(auth, 'ann@fine.example', 'secret123');
    assert.equal(user.displayName, 'ann');
    assert.equal(user.photoURL, 'https://example.com/p.png');
    const { claims } = await user.getIdTokenResult();
    assert.equal(claims.role, 'member');
    assert.match(String(claims.via), /beforeCreate/);
    assert.ok(claims.signInIp, 'the beforeSignIn session claim');
    const stored = await getAdminAuth(admin).getUser(user.uid);
    assert.deepEqual({ role: stored.customClaims?.role }, { role: 'member' });
    assert.equal(stored.customClaims?.signInIp, undefined, 'session claims are not kept on the account');
    await signOut(auth);
    const again = await signInWithEmailAndPassword(auth, 'ann@fine.example', 'secret123');
    const later = await again.user.getIdTokenResult();
    assert.equal(later.claims.role, 'member');
    assert.ok(later.claims.signInIp);
    await signOut(auth);
  });

  test('beforeUserSignedIn can disable the account or refuse the sign-in', async () => {
    await assert.rejects(createUserWithEmailAndPassword(auth, 'banned@fine.example', 'secret123'), (error: { code?: string }) => error.code === 'auth/user-disabled');
    assert.equal((await getAdminAuth(admin).getUserByEmail('banned@fine.example')).disabled, true);
    await assert.rejects(createUserWithEmailAndPassword(auth, 'refused@fine.example', 'secret123'), (error: { code?: string; message?: string }) => error.code === 'auth/internal-error' && /not today/.test(error.message ?? ''));
  });

  test('a first phone sign-in is vetted too: the new account\'s first token carries the session claims', async () => {
    const v1 = (method: string) => `${server.url}/identitytoolkit.googleapis.com/v1/accounts:${method}?key=${server.apiKey}`;
    const post = async (url: string, body: unknown) => {
      const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: answer.status, body: (await answer.json()) as Record<string, string> };
    };
    const sent = await post(v1('sendVerificationCode'), { phoneNumber: '+447700900123', recaptchaToken: 'dev-token' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const codes = (await (await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/verificationCodes`)).json()) as { verificationCodes: Array<{ sessionInfo: string; code: string }> };
    const code = codes.verificationCodes.find((entry) => entry.sessionInfo === sent.body.sessionInfo)!.code;
    const signedIn = await post(v1('signInWithPhoneNumber'), { sessionInfo: sent.body.sessionInfo, code });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.isNewUser, true);
    const claims = JSON.parse(Buffer.from(signedIn.body.idToken!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    assert.ok(claims.signInIp, 'the beforeSignIn session claim on a new phone account');
  });

  test('the administrator\'s accounts are not vetted', async () => {
    const made = await getAdminAuth(admin).createUser({ email: 'ops@blocked.example', password: 'secret123' });
    assert.equal(made.customClaims, undefined);
  });

  const mailsTo = async (email: string) => {
    const listed = (await (await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/oobCodes`)).json()) as { oobCodes: Array<{ email: string; requestType: string }> };
    return listed.oobCodes.filter((entry) => entry.email === email).map((entry) => entry.requestType);
  };

  test('beforeEmailSent refuses a password-reset or sign-in-link mail (or blocks it), and then nothing is sent', async () => {
    await createUserWithEmailAndPassword(auth, 'nomail@fine.example', 'secret123');
    await signOut(auth);
    const refused = (kind: string) => (error: { code?: string; message?: string }) => {
      assert.equal(error.code, 'auth/internal-error');
      assert.match(error.message ?? '', new RegExp(`no ${kind} mail to nomail@fine\\.example`));
      return true;
    };
    await assert.rejects(sendPasswordResetEmail(auth, 'nomail@fine.example'), refused('PASSWORD_RESET'));
    await assert.rejects(sendSignInLinkToEmail(auth, 'nomail@fine.example', { url: `${server.url}/finish`, handleCodeInApp: true }), refused('EMAIL_SIGN_IN'));
    await assert.rejects(sendPasswordResetEmail(auth, 'blockmail@fine.example'), (error: { code?: string; message?: string }) => error.code === 'auth/internal-error' && /blocked this request/.test(error.message ?? ''));
    assert.deepEqual(await mailsTo('nomail@fine.example'), []);
    assert.deepEqual(await mailsTo('blockmail@fine.example'), []);
    // Others get their mail.
    await sendPasswordResetEmail(auth, 'ann@fine.example');
    assert.deepEqual(await mailsTo('ann@fine.example'), ['PASSWORD_RESET']);
  });

  test('beforeSmsSent refuses an SMS code with Google\'s error, and no code is sent', async () => {
    const answer = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=${server.apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumber: '+15555550199', recaptchaToken: 'dev-token' }),
    });
    assert.equal(answer.status, 400);
    const body = (await answer.json()) as { error: { message: string } };
    assert.equal(body.error.message, 'BLOCKING_FUNCTION_ERROR_RESPONSE : ((no SIGN_IN_OR_SIGN_UP text to +15555550199))');
    const codes = (await (await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/verificationCodes`)).json()) as { verificationCodes: Array<{ phoneNumber: string }> };
    assert.equal(codes.verificationCodes.filter((entry) => entry.phoneNumber === '+15555550199').length, 0);
  });

  test('anonymous and custom-token sign-ins are not vetted, as on Google\'s servers', async () => {
    // vetSignIn adds signInIp to every session it vets.
    const anonymous = await signInAnonymously(auth);
    assert.equal((await anonymous.user.getIdTokenResult()).claims.signInIp, undefined);
    await signOut(auth);
    for (const round of ['first, making the account', 'again']) {
      const custom = await signInWithCustomToken(auth, JSON.stringify({ uid: 'custom-blocking' }));
      assert.equal((await custom.user.getIdTokenResult()).claims.signInIp, undefined, round);
      await signOut(auth);
    }
  });
});

