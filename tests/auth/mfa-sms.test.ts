/**
 * SMS second factors through the official SDK (its browser build in Node, with an
 * ApplicationVerifier as the page's reCAPTCHA: a made-up token in --dev, a solved stand-in
 * challenge in production): enrolment with PhoneAuthProvider.verifyPhoneNumber({phoneNumber,
 * session}), sign-in through MultiFactorResolver with the masked hint, wrong, expired and reused
 * codes, a number enrolled twice, the human check, and a phone number refused as first factor of
 * an account with second factors. Codes are read from the Auth emulator's verificationCodes list.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Auth, MultiFactorError, MultiFactorResolver, User } from 'firebase/auth';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { newHumanCheckToken } from '../helpers/human-check.js';
import { browserAuth as sdk, codeFor, PhoneSdkClients, TestVerifier, uniquePhoneNumber, wrongCode } from '../helpers/phone-sdk.js';

let server: TestHearth;
const clients = new PhoneSdkClients('mfa-sms');
const newAuth = (target: TestHearth = server): Auth => clients.auth(target);
const generousLimits = { perNumber: { maxFailures: 100, windowMs: 3600_000 }, perAddress: { maxFailures: 10_000, windowMs: 3600_000 } };

before(async () => {
  server = await startHearth({ smsLimits: generousLimits });
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

/** The SDK's User keeps its Auth private; the tests keep it beside. */
const authOf = new WeakMap<User, Auth>();

async function verifiedUser(target: TestHearth = server, email = uniqueEmail('sms-mfa')): Promise<User> {
  const auth = newAuth(target);
  const { user } = await sdk.createUserWithEmailAndPassword(auth, email, 'secret12');
  authOf.set(user, auth);
  const answer = await adminPost(target, '/accounts:update', { localId: user.uid, emailVerified: true });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  await sdk.reload(user);
  return user;
}

/** What an app does: a code to the number, read from the SMS, then enroll. */
async function enrolSms(user: User, phoneNumber: string, name = 'Mobile', target: TestHearth = server): Promise<string> {
  const auth = authOf.get(user)!;
  const session = await sdk.multiFactor(user).getSession();
  const verificationId = await new sdk.PhoneAuthProvider(auth).verifyPhoneNumber({ phoneNumber, session }, new TestVerifier());
  const credential = sdk.PhoneAuthProvider.credential(verificationId, await codeFor(target, verificationId));
  await sdk.multiFactor(user).enroll(sdk.PhoneMultiFactorGenerator.assertion(credential), name);
  const factor = sdk.multiFactor(user).enrolledFactors.find((f) => f.displayName === name);
  assert.ok(factor);
  return factor.uid;
}

async function secondFactorAsked(attempt: Promise<unknown>, auth: Auth): Promise<MultiFactorResolver> {
  const error = await attempt.then(
    (): MultiFactorError => assert.fail('the sign-in completed without a second factor'),
    (e: MultiFactorError) => e,
  );
  assert.equal(error.code, 'auth/multi-factor-auth-required');
  return sdk.getMultiFactorResolver(auth, error);
}

/** Sends the code for the resolver's (first) SMS hint; answers the verificationId. */
async function sendSignInCode(auth: Auth, resolver: MultiFactorResolver, verifier = new TestVerifier()): Promise<string> {
  const hint = resolver.hints.find((h) => h.factorId === sdk.PhoneMultiFactorGenerator.FACTOR_ID);
  assert.ok(hint, 'an SMS hint is offered');
  return new sdk.PhoneAuthProvider(auth).verifyPhoneNumber({ multiFactorHint: hint, session: resolver.session }, verifier);
}

const resolveWith = (resolver: MultiFactorResolver, verificationId: string, code: string) =>
  resolver.resolveSignIn(sdk.PhoneMultiFactorGenerator.assertion(sdk.PhoneAuthProvider.credential(verificationId, code)));

describe('SMS second factors', () => {
  test('enrolment: the code goes to the number, the factor is listed in full to its owner, the ID token names it', async () => {
    const user = await verifiedUser();
    const phoneNumber = uniquePhoneNumber();
    const uid = await enrolSms(user, phoneNumber);
    const [factor] = sdk.multiFactor(user).enrolledFactors;
    assert.deepEqual([factor!.factorId, (factor as { phoneNumber?: string }).phoneNumber, factor!.uid], ['phone', phoneNumber, uid]);
    const token = await sdk.getIdTokenResult(user);
    assert.equal(token.signInSecondFactor, 'phone');
    assert.equal((token.claims.firebase as Record<string, unknown>).second_factor_identifier, uid);
  });

  test('sign-in: the hint shows only the last four digits; the resolver sends a code there and finishes', async () => {
    const email = uniqueEmail('sms-sign-in');
    const user = await verifiedUser(server, email);
    const phoneNumber = uniquePhoneNumber();
    const uid = await enrolSms(user, phoneNumber);
    const auth = newAuth();
    const resolver = await secondFactorAsked(sdk.signInWithEmailAndPassword(auth, email, 'secret12'), auth);
    const hint = resolver.hints[0] as { uid: string; phoneNumber?: string };
    assert.equal(hint.uid, uid);
    assert.equal(hint.phoneNumber, `+${'*'.repeat(phoneNumber.length - 5)}${phoneNumber.slice(-4)}`);
    const verificationId = await sendSignInCode(auth, resolver);
    const code = await codeFor(server, verificationId);
    assert.equal(await errorCode(resolveWith(resolver, verificationId, wrongCode(code))), 'auth/invalid-verification-code');
    const result = await resolveWith(resolver, verificationId, code);
    assert.equal(result.user.uid, user.uid);
    const token = await sdk.getIdTokenResult(result.user);
    assert.deepEqual([token.signInProvider, token.signInSecondFactor, (token.claims.firebase as Record<string, unknown>).second_factor_identifier], ['password', 'phone', uid]);

    // The code is spent: a later sign-in cannot reuse it.
    const again = newAuth();
    const second = await secondFactorAsked(sdk.signInWithEmailAndPassword(again, email, 'secret12'), again);
    assert.equal(await errorCode(resolveWith(second, verificationId, code)), 'auth/invalid-verification-id');
  });

  test('a number enrolled twice is auth/second-factor-already-in-use; an empty verifier token is auth/missing-recaptcha-token', async () => {
    const user = await verifiedUser();
    const phoneNumber = uniquePhoneNumber();
    await enrolSms(user, phoneNumber);
    const session = await sdk.multiFactor(user).getSession();
    assert.equal(await errorCode(new sdk.PhoneAuthProvider(authOf.get(user)!).verifyPhoneNumber({ phoneNumber, session }, new TestVerifier())), 'auth/second-factor-already-in-use');
    assert.equal(await errorCode(new sdk.PhoneAuthProvider(authOf.get(user)!).verifyPhoneNumber({ phoneNumber: uniquePhoneNumber(), session }, new TestVerifier(''))), 'auth/missing-recaptcha-token');
    assert.equal(await errorCode(new sdk.PhoneAuthProvider(authOf.get(user)!).verifyPhoneNumber({ phoneNumber: '+1', session }, new TestVerifier())), 'auth/invalid-phone-number');
  });

  test('the phone number of an account with second factors is no first factor: auth/unsupported-first-factor', async () => {
    const user = await verifiedUser();
    const ownNumber = uniquePhoneNumber();
    assert.equal((await adminPost(server, '/accounts:update', { localId: user.uid, phoneNumber: ownNumber })).status, 200);
    await enrolSms(user, uniquePhoneNumber());
    const auth = newAuth();
    const confirmation = await sdk.signInWithPhoneNumber(auth, ownNumber, new TestVerifier());
    assert.equal(await errorCode(confirmation.confirm(await codeFor(server, confirmation.verificationId))), 'auth/unsupported-first-factor');
  });

  test('texts to a factor count against the limits per number: auth/quota-exceeded', async () => {
    const target = await startHearth({ smsLimits: { perNumber: { maxFailures: 2, windowMs: 3600_000 }, perAddress: { maxFailures: 100, windowMs: 3600_000 } } });
    try {
      const email = uniqueEmail('sms-quota');
      const user = await verifiedUser(target, email);
      const phoneNumber = uniquePhoneNumber();
      await enrolSms(user, phoneNumber, 'Mobile', target);
      // One text went to enrol; one more sign-in code fits, the next one is over the limit.
      const auth = newAuth(target);
      const resolver = await secondFactorAsked(sdk.signInWithEmailAndPassword(auth, email, 'secret12'), auth);
      await sendSignInCode(auth, resolver);
      assert.equal(await errorCode(sendSignInCode(auth, resolver)), 'auth/quota-exceeded');
    } finally {
      await target.close();
    }
  });

  test('past its lifetime an enrolment code is auth/code-expired', async () => {
    const target = await startHearth({ smsLimits: generousLimits, smsCodes: { codeLifetimeMs: 0, attemptsPerCode: 5, proofLifetimeMs: 3600_000 } });
    try {
      const user = await verifiedUser(target);
      const session = await sdk.multiFactor(user).getSession();
      const verificationId = await new sdk.PhoneAuthProvider(authOf.get(user)!).verifyPhoneNumber({ phoneNumber: uniquePhoneNumber(), session }, new TestVerifier());
      const credential = sdk.PhoneAuthProvider.credential(verificationId, await codeFor(target, verificationId));
      assert.equal(await errorCode(sdk.multiFactor(user).enroll(sdk.PhoneMultiFactorGenerator.assertion(credential), 'late')), 'auth/code-expired');
    } finally {
      await target.close();
    }
  });
});

describe('production mode: the human check guards every text', () => {
  test('a made-up token is auth/captcha-check-failed; a solved stand-in challenge buys the code', async () => {
    const target = await startHearth({ dev: false, smsOutbox: true, smsLimits: generousLimits });
    try {
      const email = uniqueEmail('sms-production');
      const user = await verifiedUser(target, email);
      const session = await sdk.multiFactor(user).getSession();
      const provider = new sdk.PhoneAuthProvider(authOf.get(user)!);
      const phoneNumber = uniquePhoneNumber();
      assert.equal(await errorCode(provider.verifyPhoneNumber({ phoneNumber, session }, new TestVerifier('made-up'))), 'auth/captcha-check-failed');
      const verificationId = await provider.verifyPhoneNumber({ phoneNumber, session }, new TestVerifier(await newHumanCheckToken(target)));
      const code = await adminCodeFor(target, verificationId);
      await sdk.multiFactor(user).enroll(sdk.PhoneMultiFactorGenerator.assertion(sdk.PhoneAuthProvider.credential(verificationId, code)), 'Mobile');

      const auth = newAuth(target);
      const resolver = await secondFactorAsked(sdk.signInWithEmailAndPassword(auth, email, 'secret12'), auth);
      assert.equal(await errorCode(sendSignInCode(auth, resolver, new TestVerifier('made-up'))), 'auth/captcha-check-failed');
      const signInId = await sendSignInCode(auth, resolver, new TestVerifier(await newHumanCheckToken(target)));
      const result = await resolveWith(resolver, signInId, await adminCodeFor(target, signInId));
      assert.equal(result.user.uid, user.uid);
    } finally {
      await target.close();
    }
  });
});

/** Outside --dev the emulator's code list needs the admin credential. */
async function adminCodeFor(target: TestHearth, sessionInfo: string): Promise<string> {
  const response = await fetch(`${target.url}/emulator/v1/projects/${target.projectId}/verificationCodes`, { headers: { authorization: `Bearer ${target.adminKey}` } });
  const { verificationCodes } = (await response.json()) as { verificationCodes: Array<{ sessionInfo: string; code: string }> };
  const found = verificationCodes.find((entry) => entry.sessionInfo === sessionInfo);
  assert.ok(found, 'the code is in the outbox');
  return found.code;
}
