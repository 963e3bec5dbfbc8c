/**
 * Second factors and the sessions around them, on a production server (no --dev), through the
 * official SDK (its browser build in Node, for SMS) and raw HTTP for exact answers:
 * - enrolling a factor ends every other session, as Firebase documents for multiFactor().enroll:
 *   a first-factor session from before (a stolen password's) can neither refresh nor withdraw it,
 *   while the enrolling session goes on with the tokens of the finalize answer;
 * - withdrawing a factor needs a session that passed a second factor: a first-factor session of
 *   an account an administrator gave a factor to is told to sign in again
 *   (auth/requires-recent-login), and reauthenticating through the factor then withdraws it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Auth, MultiFactorError, User } from 'firebase/auth';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { newHumanCheckToken } from '../helpers/human-check.js';
import { browserAuth as sdk, PhoneSdkClients, TestVerifier, uniquePhoneNumber } from '../helpers/phone-sdk.js';
import { TotpDevice } from '../helpers/totp-device.js';

let server: TestHearth;
const clients = new PhoneSdkClients('mfa-sessions');
const newAuth = (): Auth => clients.auth(server);

before(async () => {
  server = await startHearth({ dev: false, smsOutbox: true });
});
after(async () => {
  await clients.close();
  await server.close();
});

async function errorCode(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'no error',
    (error: { code?: string }) => error.code ?? String(error),
  );
}

const v2 = (path: string, body: unknown) => postJson(`${server.url}/identitytoolkit.googleapis.com/v2/accounts/${path}?key=${server.apiKey}`, body);
const refresh = (refreshToken: string) => postJson(`${server.url}/securetoken.googleapis.com/v1/token?key=${server.apiKey}`, { grant_type: 'refresh_token', refresh_token: refreshToken });

/** An account with a verified email (what enrolment needs), signed in on a new client. */
async function verifiedAccount(email = uniqueEmail('mfa-sessions')): Promise<{ auth: Auth; user: User; email: string }> {
  const auth = newAuth();
  const { user } = await sdk.createUserWithEmailAndPassword(auth, email, 'secret12');
  const answer = await adminPost(server, '/accounts:update', { localId: user.uid, emailVerified: true });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  await sdk.reload(user);
  return { auth, user, email };
}

/** Outside --dev the emulator's code list needs the admin credential. */
async function sentCode(sessionInfo: string): Promise<string> {
  const response = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/verificationCodes`, { headers: { authorization: `Bearer ${server.adminKey}` } });
  const { verificationCodes } = (await response.json()) as { verificationCodes: Array<{ sessionInfo: string; code: string }> };
  const found = verificationCodes.find((entry) => entry.sessionInfo === sessionInfo);
  assert.ok(found, 'the code is in the outbox');
  return found.code;
}

describe('enrolment ends the other sessions', () => {
  test('a first-factor session from before can neither refresh nor withdraw the new factor; the enrolling one goes on with it', async () => {
    const { user, email } = await verifiedAccount();
    // The same account signed in elsewhere with the password alone: what a stolen password gives.
    const elsewhere = (await sdk.signInWithEmailAndPassword(newAuth(), email, 'secret12')).user;
    const staleIdToken = await elsewhere.getIdToken();
    const staleRefreshToken = elsewhere.refreshToken;
    await new Promise((r) => setTimeout(r, 1100)); // revocation is at one-second granularity, as in Firebase

    const secret = await sdk.TotpMultiFactorGenerator.generateSecret(await sdk.multiFactor(user).getSession());
    const device = new TotpDevice(secret.secretKey);
    await sdk.multiFactor(user).enroll(sdk.TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), 'App');
    const [factor] = sdk.multiFactor(user).enrolledFactors;
    assert.ok(factor);

    // The enrolling session goes on, with tokens naming the factor it just passed.
    await user.getIdToken(true);
    assert.equal((await sdk.getIdTokenResult(user)).signInSecondFactor, 'totp');

    // The other session is over: its ID token withdraws nothing, its refresh token mints nothing.
    const withdraw = await v2('mfaEnrollment:withdraw', { idToken: staleIdToken, mfaEnrollmentId: factor.uid });
    assert.deepEqual([withdraw.status, withdraw.body.error?.message], [400, 'TOKEN_EXPIRED']);
    assert.equal(await errorCode(elsewhere.getIdToken(true)), 'auth/user-token-expired');
    // (A dead refresh token answers its reason once, then is forgotten.)
    const minted = await refresh(staleRefreshToken);
    assert.deepEqual([minted.status, minted.body.error?.message], [400, 'INVALID_REFRESH_TOKEN']);

    // The factor is still there, and a new sign-in must pass it.
    await sdk.reload(user);
    assert.deepEqual(sdk.multiFactor(user).enrolledFactors.map((f) => f.uid), [factor.uid]);
    const again = newAuth();
    const error = await sdk.signInWithEmailAndPassword(again, email, 'secret12').then(
      (): MultiFactorError => assert.fail('signed in without the second factor'),
      (e: MultiFactorError) => e,
    );
    assert.equal(error.code, 'auth/multi-factor-auth-required');
  });
});

describe('withdrawing needs a session that passed a second factor', () => {
  test("an administrator's factor: the first-factor session must sign in again, through the factor, to withdraw it", async () => {
    const { auth, user, email } = await verifiedAccount();
    const phoneNumber = uniquePhoneNumber();
    // An administrator gives the account a factor (firebase-admin's updateUser multiFactor): the
    // session signed in before has passed no second factor.
    const given = await adminPost(server, '/accounts:update', { localId: user.uid, mfa: { enrollments: [{ phoneInfo: phoneNumber, displayName: 'Desk phone' }] } });
    assert.equal(given.status, 200, JSON.stringify(given.body));
    await sdk.reload(user);
    const [factor] = sdk.multiFactor(user).enrolledFactors;
    assert.ok(factor);

    const raw = await v2('mfaEnrollment:withdraw', { idToken: await user.getIdToken(), mfaEnrollmentId: factor.uid });
    assert.equal(raw.status, 400, JSON.stringify(raw.body));
    assert.equal(raw.body.error.message, 'CREDENTIAL_TOO_OLD_LOGIN_AGAIN : Withdrawing a second factor needs a sign-in that passed one: sign in again.');
    assert.equal(await errorCode(sdk.multiFactor(user).unenroll(factor.uid)), 'auth/requires-recent-login');
    await sdk.reload(user);
    assert.equal(sdk.multiFactor(user).enrolledFactors.length, 1, 'the factor is kept');

    // What an app does on auth/requires-recent-login: reauthenticate, which asks for the factor.
    const attempt = await sdk.reauthenticateWithCredential(user, sdk.EmailAuthProvider.credential(email, 'secret12')).then(
      (): MultiFactorError => assert.fail('reauthenticated without the second factor'),
      (e: MultiFactorError) => e,
    );
    assert.equal(attempt.code, 'auth/multi-factor-auth-required');
    const resolver = sdk.getMultiFactorResolver(auth, attempt);
    const verificationId = await new sdk.PhoneAuthProvider(auth).verifyPhoneNumber(
      { multiFactorHint: resolver.hints[0]!, session: resolver.session },
      new TestVerifier(await newHumanCheckToken(server)),
    );
    const credential = sdk.PhoneAuthProvider.credential(verificationId, await sentCode(verificationId));
    await resolver.resolveSignIn(sdk.PhoneMultiFactorGenerator.assertion(credential));
    assert.equal((await sdk.getIdTokenResult(user)).signInSecondFactor, 'phone');

    await sdk.multiFactor(user).unenroll(factor.uid);
    assert.equal(sdk.multiFactor(user).enrolledFactors.length, 0);
    // Without factors, a password sign-in completes again.
    assert.equal((await sdk.signInWithEmailAndPassword(newAuth(), email, 'secret12')).user.uid, user.uid);
  });
});
