/**
 * Multi-factor authentication with TOTP through the official SDK: enrolment with
 * multiFactor(user) and TotpMultiFactorGenerator (codes computed with otpauth from the secret, as
 * an authenticator app does), every first factor (password, email link, identity provider,
 * reauthentication) answering auth/multi-factor-auth-required (a custom token is not asked, as on
 * Google's servers), MultiFactorResolver
 * finishing the sign-in, wrong, replayed, throttled and expired codes and sessions, withdrawal
 * revoking the other sessions, and the project switch.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import {
  createUserWithEmailAndPassword,
  EmailAuthProvider,
  getIdTokenResult,
  getMultiFactorResolver,
  multiFactor,
  OAuthProvider,
  reauthenticateWithCredential,
  reload,
  sendSignInLinkToEmail,
  signInWithCredential,
  signInWithCustomToken,
  signInWithEmailAndPassword,
  signInWithEmailLink,
  TotpMultiFactorGenerator,
  type Auth,
  type MultiFactorError,
  type MultiFactorResolver,
  type User,
  type UserCredential,
} from 'firebase/auth';
import { URI } from 'otpauth';
import { patchProjectConfig, uniqueEmail } from '../helpers/admin-http.js';
import { errorCodeOf, SdkClients } from '../helpers/client.js';
import { freePort, postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { CookieBrowser, runHandlerFlow } from '../helpers/idp-flow.js';
import { waitForMail } from '../helpers/outbox.js';
import { TotpDevice, wrongCode } from '../helpers/totp-device.js';

let server: TestHearth;
let adminApp: App;
let admin: AdminAuth;
const clients = new SdkClients('mfa-totp');
const newAuth = (target: TestHearth = server): Auth => clients.auth(target);

before(async () => {
  server = await startHearth({ demoIdpPort: await freePort() });
  process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
  adminApp = initializeAdminApp({ projectId: server.projectId }, 'mfa-totp-admin');
  admin = getAdminAuth(adminApp);
});

after(async () => {
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await clients.close();
  await deleteAdminApp(adminApp);
  await server.close();
});

/** A signed-in user with a verified email (the one thing enrolment needs beyond a recent sign-in). */
async function verifiedUser(auth = newAuth(), email = uniqueEmail('mfa')): Promise<User> {
  const { user } = await createUserWithEmailAndPassword(auth, email, 'secret12');
  await setVerified(user.uid, server);
  await reload(user);
  return user;
}

async function setVerified(uid: string, target: TestHearth): Promise<void> {
  const answer = await postJson(`${target.url}/identitytoolkit.googleapis.com/v1/projects/${target.projectId}/accounts:update`, { localId: uid, emailVerified: true }, { authorization: `Bearer ${target.adminKey}` });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
}

/** Enrols a TOTP factor the way an app does; answers the "authenticator app" and the factor's uid. */
async function enrolTotp(user: User, name = 'Phone app', clock: () => number = Date.now): Promise<{ device: TotpDevice; uid: string }> {
  const secret = await TotpMultiFactorGenerator.generateSecret(await multiFactor(user).getSession());
  const device = new TotpDevice(secret.secretKey, { algorithm: secret.hashingAlgorithm, digits: secret.codeLength, period: secret.codeIntervalSeconds }, clock);
  await multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), name);
  const factor = multiFactor(user).enrolledFactors.find((f) => f.displayName === name);
  assert.ok(factor, 'the enrolled factor is listed');
  return { device, uid: factor.uid };
}

const signedInUid = (auth: Auth): string | null => auth.currentUser?.uid ?? null;

/** The MultiFactorResolver of a sign-in that must ask for a second factor. */
async function secondFactorAsked(attempt: Promise<unknown>, auth: Auth): Promise<MultiFactorResolver> {
  const error = await attempt.then(
    (): MultiFactorError => assert.fail('the sign-in completed without a second factor'),
    (e: MultiFactorError) => e,
  );
  assert.equal(error.code, 'auth/multi-factor-auth-required');
  return getMultiFactorResolver(auth, error);
}

async function resolveWithTotp(resolver: MultiFactorResolver, device: TotpDevice): Promise<UserCredential> {
  const hint = resolver.hints.find((h) => h.factorId === TotpMultiFactorGenerator.FACTOR_ID);
  assert.ok(hint, 'a TOTP hint is offered');
  return resolver.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(hint.uid, device.next()));
}

describe('enrolment', () => {
  test('generateSecret, the otpauth:// URI, enroll: the factor is listed and the new ID token names it', async () => {
    const user = await verifiedUser();
    const secret = await TotpMultiFactorGenerator.generateSecret(await multiFactor(user).getSession());
    assert.match(secret.secretKey, /^[A-Z2-7]{32}$/, '160-bit base32 secret');
    assert.equal(secret.hashingAlgorithm, 'SHA1');
    assert.equal(secret.codeLength, 6);
    assert.equal(secret.codeIntervalSeconds, 30);
    assert.ok(Date.parse(secret.enrollmentCompletionDeadline) > Date.now(), 'a deadline in the future');
    const uri = secret.generateQrCodeUrl('ada@example.com', 'Hearth');
    assert.match(uri, /^otpauth:\/\/totp\/Hearth:ada@example\.com\?secret=[A-Z2-7]{32}&issuer=Hearth&algorithm=SHA1&digits=6$/);
    // An authenticator app reading the URI makes the codes the server accepts.
    const app = URI.parse(uri);
    const device = new TotpDevice(secret.secretKey);
    assert.equal(app.generate(), device.codeFromNow(0));
    await multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), 'Work phone');

    const [factor, ...others] = multiFactor(user).enrolledFactors;
    assert.equal(others.length, 0);
    assert.equal(factor!.factorId, 'totp');
    assert.equal(factor!.displayName, 'Work phone');
    assert.ok(Math.abs(Date.parse(factor!.enrollmentTime) - Date.now()) < 60_000, factor!.enrollmentTime);
    const token = await getIdTokenResult(user);
    assert.equal(token.signInSecondFactor, 'totp');
    assert.equal((token.claims.firebase as Record<string, unknown>).second_factor_identifier, factor!.uid);
    assert.equal(token.signInProvider, 'password');

    // What lookup shows: the kind of factor, never its secret.
    const lookup = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:lookup?key=${server.apiKey}`, { idToken: token.token });
    assert.deepEqual(Object.keys(lookup.body.users[0].mfaInfo[0]).sort(), ['displayName', 'enrolledAt', 'mfaEnrollmentId', 'totpInfo']);
    assert.deepEqual(lookup.body.users[0].mfaInfo[0].totpInfo, {});
    assert.ok(!JSON.stringify(lookup.body).includes(secret.secretKey));
    // The second factor survives a refresh.
    await user.getIdToken(true);
    assert.equal((await getIdTokenResult(user)).signInSecondFactor, 'totp');
  });

  test('a wrong enrolment code is auth/invalid-verification-code; an unverified email is auth/unverified-email', async () => {
    const user = await verifiedUser();
    const secret = await TotpMultiFactorGenerator.generateSecret(await multiFactor(user).getSession());
    const device = new TotpDevice(secret.secretKey);
    assert.equal(await errorCodeOf(multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, wrongCode(device)), 'x')), 'auth/invalid-verification-code');
    assert.equal(multiFactor(user).enrolledFactors.length, 0);
    await multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), 'x');
    // The same enrolment session cannot make a second factor.
    assert.equal(await errorCodeOf(multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), 'y')), 'auth/invalid-verification-id');

    const { user: unverified } = await createUserWithEmailAndPassword(newAuth(), uniqueEmail('unverified'), 'secret12');
    assert.equal(await errorCodeOf(multiFactor(unverified).getSession().then((s) => TotpMultiFactorGenerator.generateSecret(s))), 'auth/unverified-email');
  });
});

describe('sign-in with a second factor', () => {
  test('password: auth/multi-factor-auth-required, then the resolver with a TOTP code signs in', async () => {
    const email = uniqueEmail('resolve');
    const user = await verifiedUser(newAuth(), email);
    const { device, uid } = await enrolTotp(user);
    const auth = newAuth();
    const resolver = await secondFactorAsked(signInWithEmailAndPassword(auth, email, 'secret12'), auth);
    assert.equal(signedInUid(auth), null, 'no one is signed in after the first factor alone');
    assert.deepEqual(resolver.hints.map((h) => [h.factorId, h.uid, h.displayName]), [['totp', uid, 'Phone app']]);
    const result = await resolveWithTotp(resolver, device);
    assert.equal(result.user.uid, user.uid);
    assert.equal(signedInUid(auth), user.uid);
    const token = await getIdTokenResult(result.user);
    assert.equal(token.signInProvider, 'password');
    assert.equal(token.signInSecondFactor, 'totp');
    assert.equal((token.claims.firebase as Record<string, unknown>).second_factor_identifier, uid);
    await result.user.getIdToken(true);
    assert.equal((await getIdTokenResult(result.user)).signInSecondFactor, 'totp');
  });

  test('a wrong code is auth/invalid-verification-code; a code already used is refused (replay)', async () => {
    const email = uniqueEmail('replay');
    const { device } = await enrolTotp(await verifiedUser(newAuth(), email));
    const auth = newAuth();
    const resolver = await secondFactorAsked(signInWithEmailAndPassword(auth, email, 'secret12'), auth);
    const hint = resolver.hints[0]!;
    assert.equal(await errorCodeOf(resolver.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(hint.uid, wrongCode(device)))), 'auth/invalid-verification-code');
    await resolveWithTotp(resolver, device);

    const again = newAuth();
    const second = await secondFactorAsked(signInWithEmailAndPassword(again, email, 'secret12'), again);
    assert.equal(await errorCodeOf(second.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(hint.uid, device.lastCode()))), 'auth/invalid-verification-code');
    assert.equal(await errorCodeOf(second.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(hint.uid, device.codeFromNow(-7)))), 'auth/invalid-verification-code', 'outside the window');
    await resolveWithTotp(second, device);
  });

  test('guessing is throttled: after five wrong codes even the right one is auth/too-many-requests', async () => {
    const email = uniqueEmail('guess');
    const { device } = await enrolTotp(await verifiedUser(newAuth(), email));
    const auth = newAuth();
    const resolver = await secondFactorAsked(signInWithEmailAndPassword(auth, email, 'secret12'), auth);
    const hint = resolver.hints[0]!;
    const wrong = wrongCode(device);
    for (let i = 0; i < 5; i++) {
      assert.equal(await errorCodeOf(resolver.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(hint.uid, wrong))), 'auth/invalid-verification-code');
    }
    assert.equal(await errorCodeOf(resolver.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(hint.uid, device.next()))), 'auth/too-many-requests');
    assert.equal(signedInUid(auth), null);
  });

  test('email link: the second factor is asked, and the session names password + totp', async () => {
    const email = uniqueEmail('link');
    const user = await verifiedUser(newAuth(), email);
    const { device } = await enrolTotp(user);
    const auth = newAuth();
    await sendSignInLinkToEmail(auth, email, { url: 'http://localhost/finish', handleCodeInApp: true });
    const mail = await waitForMail(server, email, 'EMAIL_SIGNIN');
    const resolver = await secondFactorAsked(signInWithEmailLink(auth, email, mail.oobLink), auth);
    const result = await resolveWithTotp(resolver, device);
    assert.equal(result.user.uid, user.uid);
    const token = await getIdTokenResult(result.user);
    assert.deepEqual([token.signInProvider, token.signInSecondFactor], ['password', 'totp']);
  });

  test('custom token: the app server vouches for the user, so no second factor is asked (as Google, and the SDK could not resolve one)', async () => {
    const email = uniqueEmail('custom');
    const user = await verifiedUser(newAuth(), email);
    await enrolTotp(user);
    const result = await signInWithCustomToken(newAuth(), await admin.createCustomToken(user.uid, { tier: 'gold' }));
    const token = await getIdTokenResult(result.user);
    assert.deepEqual([result.user.uid, token.signInProvider, token.signInSecondFactor, token.claims.tier], [user.uid, 'custom', null, 'gold']);
  });

  test('identity provider: the second factor is asked after the provider, whose id the session keeps', async () => {
    const email = uniqueEmail('idp');
    const flow = await runHandlerFlow(new CookieBrowser(), server, email);
    const first = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=${server.apiKey}`, {
      requestUri: flow.event!.urlResponse,
      sessionId: flow.event!.sessionId,
      returnIdpCredential: true,
      returnSecureToken: true,
    });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    await setVerified(first.body.localId, server);
    const credential = new OAuthProvider('oidc.demo').credential({ idToken: first.body.oauthIdToken });
    const { user } = await signInWithCredential(newAuth(), credential);
    const { device } = await enrolTotp(user);
    const auth = newAuth();
    const resolver = await secondFactorAsked(signInWithCredential(auth, credential), auth);
    const result = await resolveWithTotp(resolver, device);
    assert.equal(result.user.uid, first.body.localId);
    const token = await getIdTokenResult(result.user);
    assert.deepEqual([token.signInProvider, token.signInSecondFactor], ['oidc.demo', 'totp']);
  });

  test('reauthentication asks for the second factor too', async () => {
    const email = uniqueEmail('reauth');
    const { device } = await enrolTotp(await verifiedUser(newAuth(), email));
    const auth = newAuth();
    const signedIn = await resolveWithTotp(await secondFactorAsked(signInWithEmailAndPassword(auth, email, 'secret12'), auth), device);
    const attempt = reauthenticateWithCredential(signedIn.user, EmailAuthProvider.credential(email, 'secret12'));
    const resolver = await secondFactorAsked(attempt, auth);
    const again = await resolveWithTotp(resolver, device);
    assert.equal(again.operationType, 'reauthenticate');
    assert.equal(again.user.uid, signedIn.user.uid);
  });
});

describe('withdrawal and the project switch', () => {
  test('unenroll ends the other sessions (user-token-expired) and sign-in no longer asks', async () => {
    const email = uniqueEmail('withdraw');
    const user = await verifiedUser(newAuth(), email);
    const { device, uid } = await enrolTotp(user);
    const other = newAuth();
    const elsewhere = await resolveWithTotp(await secondFactorAsked(signInWithEmailAndPassword(other, email, 'secret12'), other), device);
    await new Promise((r) => setTimeout(r, 1100)); // revocation is at one-second granularity, as in Firebase
    await multiFactor(user).unenroll(uid);
    assert.equal(multiFactor(user).enrolledFactors.length, 0);
    // The withdrawing session goes on, without a second factor; the other one is over.
    await user.getIdToken(true);
    assert.equal((await getIdTokenResult(user)).signInSecondFactor, null);
    assert.equal(await errorCodeOf(elsewhere.user.getIdToken(true)), 'auth/user-token-expired');
    const plain = await signInWithEmailAndPassword(newAuth(), email, 'secret12');
    assert.equal(plain.user.uid, user.uid);
    assert.equal(await errorCodeOf(multiFactor(user).unenroll(uid)), 'auth/multi-factor-info-not-found');
  });

  test('with MFA switched off for the project, factors are kept but not asked; enrolment is refused', async () => {
    const email = uniqueEmail('switch');
    const user = await verifiedUser(newAuth(), email);
    await enrolTotp(user);
    await patchProjectConfig(server, { mfa: { state: 'DISABLED' } }, 'mfa.state');
    try {
      const plain = await signInWithEmailAndPassword(newAuth(), email, 'secret12');
      assert.equal(plain.user.uid, user.uid);
      assert.equal(await errorCodeOf(multiFactor(plain.user).getSession().then((s) => TotpMultiFactorGenerator.generateSecret(s))), 'auth/operation-not-allowed');
      assert.equal(multiFactor(plain.user).enrolledFactors.length, 1);
    } finally {
      await patchProjectConfig(server, { mfa: { state: 'ENABLED' } }, 'mfa.state');
    }
    const auth = newAuth();
    await secondFactorAsked(signInWithEmailAndPassword(auth, email, 'secret12'), auth);
  });
});

describe('time limits (a server with a shifted clock)', () => {
  let shifted: TestHearth;
  let shiftMs = 0;
  const clock = () => Date.now() + shiftMs;
  before(async () => {
    shifted = await startHearth({ clock, recentLoginSeconds: 3600 });
  });
  after(() => shifted.close());

  test('an enrolment not finished in time is auth/code-expired', async () => {
    const user = await verifiedUserOn(shifted);
    const secret = await TotpMultiFactorGenerator.generateSecret(await multiFactor(user).getSession());
    const device = new TotpDevice(secret.secretKey, undefined, clock);
    shiftMs += 10 * 60_000 + 1000;
    assert.equal(await errorCodeOf(multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), 'late')), 'auth/code-expired');
  });

  test('a pending credential used too late is auth/invalid-multi-factor-session', async () => {
    const email = uniqueEmail('late');
    const { device } = await enrolTotp(await verifiedUserOn(shifted, email), 'app', clock);
    const auth = newAuth(shifted);
    const resolver = await secondFactorAsked(signInWithEmailAndPassword(auth, email, 'secret12'), auth);
    shiftMs += 5 * 60_000 + 1000;
    assert.equal(await errorCodeOf(resolveWithTotp(resolver, device)), 'auth/invalid-multi-factor-session');
    const fresh = newAuth(shifted);
    await resolveWithTotp(await secondFactorAsked(signInWithEmailAndPassword(fresh, email, 'secret12'), fresh), device);
  });

  async function verifiedUserOn(target: TestHearth, email = uniqueEmail('clock')): Promise<User> {
    const { user } = await createUserWithEmailAndPassword(newAuth(target), email, 'secret12');
    await setVerified(user.uid, target);
    await reload(user);
    return user;
  }
});

test('enrolment needs a recent sign-in: auth/requires-recent-login', async () => {
  const strict = await startHearth({ recentLoginSeconds: 0 });
  try {
    const { user } = await createUserWithEmailAndPassword(newAuth(strict), uniqueEmail('stale'), 'secret12');
    await setVerified(user.uid, strict);
    await new Promise((r) => setTimeout(r, 1100)); // older than the (zero-second) recent-login limit
    assert.equal(await errorCodeOf(multiFactor(user).getSession().then((s) => TotpMultiFactorGenerator.generateSecret(s))), 'auth/requires-recent-login');
  } finally {
    await strict.close();
  }
});
