/**
 * Phone sign-in through the official SDK (its browser build, in Node, with an ApplicationVerifier
 * standing in for reCAPTCHA as in --dev): sign-in and sign-up, link, reauthenticate and update;
 * wrong, expired and reused codes; invalid numbers; quotas; each error code raised by the SDK.
 * Codes are read where developers read them, the Auth emulator's verificationCodes list.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Auth, User } from 'firebase/auth';
import { adminPost, patchProjectConfig } from '../helpers/admin-http.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { browserAuth as sdk, codeFor, PhoneSdkClients, TestVerifier, uniquePhoneNumber, wrongCode } from '../helpers/phone-sdk.js';

let server: TestHearth;
const clients = new PhoneSdkClients('phone');
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

/** Signs in (or up) with a phone number the way an app does: send, read the SMS, confirm. */
async function phoneSignIn(auth: Auth, phoneNumber: string, target: TestHearth = server) {
  const confirmation = await sdk.signInWithPhoneNumber(auth, phoneNumber, new TestVerifier());
  return confirmation.confirm(await codeFor(target, confirmation.verificationId));
}

async function verificationId(auth: Auth, phoneNumber: string): Promise<string> {
  return new sdk.PhoneAuthProvider(auth).verifyPhoneNumber(phoneNumber, new TestVerifier());
}

describe('sign-in with a phone number', () => {
  test('the first sign-in creates the account; the next one signs in to it', async () => {
    const phoneNumber = uniquePhoneNumber();
    const verifier = new TestVerifier();
    const auth = newAuth();
    const confirmation = await sdk.signInWithPhoneNumber(auth, phoneNumber, verifier);
    assert.equal(verifier.verified, 1, 'the SDK asked its verifier for a token');
    const first = await confirmation.confirm(await codeFor(server, confirmation.verificationId));
    assert.equal(first.user.phoneNumber, phoneNumber);
    assert.equal(first.user.isAnonymous, false);
    assert.equal(sdk.getAdditionalUserInfo(first)?.isNewUser, true);
    assert.deepEqual(first.user.providerData.map((p) => [p.providerId, p.phoneNumber]), [['phone', phoneNumber]]);
    const claims = (await sdk.getIdTokenResult(first.user)).claims as { phone_number?: string; firebase?: { sign_in_provider?: string; identities?: Record<string, string[]> } };
    assert.equal(claims.phone_number, phoneNumber);
    assert.equal(claims.firebase?.sign_in_provider, 'phone');
    assert.deepEqual(claims.firebase?.identities, { phone: [phoneNumber] });

    const again = await phoneSignIn(newAuth(), phoneNumber);
    assert.equal(again.user.uid, first.user.uid);
    assert.equal(sdk.getAdditionalUserInfo(again)?.isNewUser, false);
  });

  test('a number typed with spaces and dashes is the same E.164 number', async () => {
    const compact = uniquePhoneNumber();
    const typed = `${compact.slice(0, 2)} ${compact.slice(2, 5)}-${compact.slice(5, 8)}-${compact.slice(8)}`;
    const first = await phoneSignIn(newAuth(), typed);
    assert.equal(first.user.phoneNumber, compact);
    assert.equal((await phoneSignIn(newAuth(), compact)).user.uid, first.user.uid);
  });

  test('a wrong code is auth/invalid-verification-code, and the right one still works after it', async () => {
    const auth = newAuth();
    const confirmation = await sdk.signInWithPhoneNumber(auth, uniquePhoneNumber(), new TestVerifier());
    const code = await codeFor(server, confirmation.verificationId);
    assert.equal(await errorCode(confirmation.confirm(wrongCode(code))), 'auth/invalid-verification-code');
    assert.equal(await errorCode(confirmation.confirm('12345')), 'auth/invalid-verification-code', 'five digits');
    assert.ok((await confirmation.confirm(code)).user.uid);
  });

  test('a code works once: used again it is auth/invalid-verification-id', async () => {
    const phoneNumber = uniquePhoneNumber();
    const id = await verificationId(newAuth(), phoneNumber);
    const code = await codeFor(server, id);
    const credential = sdk.PhoneAuthProvider.credential(id, code);
    await sdk.signInWithCredential(newAuth(), credential);
    assert.equal(await errorCode(sdk.signInWithCredential(newAuth(), credential)), 'auth/invalid-verification-id');
  });

  test('after five wrong codes the session is spent: even the right code is auth/code-expired', async () => {
    const id = await verificationId(newAuth(), uniquePhoneNumber());
    const code = await codeFor(server, id);
    for (let i = 0; i < 5; i++) {
      assert.equal(await errorCode(sdk.signInWithCredential(newAuth(), sdk.PhoneAuthProvider.credential(id, wrongCode(code)))), 'auth/invalid-verification-code');
    }
    assert.equal(await errorCode(sdk.signInWithCredential(newAuth(), sdk.PhoneAuthProvider.credential(id, code))), 'auth/code-expired');
  });

  test('an unknown verification id is auth/invalid-verification-id', async () => {
    assert.equal(await errorCode(sdk.signInWithCredential(newAuth(), sdk.PhoneAuthProvider.credential('made-up-session', '123456'))), 'auth/invalid-verification-id');
  });

  test('numbers that are not possible international numbers are auth/invalid-phone-number', async () => {
    for (const number of ['abc', '6505553434', '+1 650', '+999 1234567', '+1 650 555 3434 ext 12', `+${'1'.repeat(40)}`]) {
      assert.equal(await errorCode(sdk.signInWithPhoneNumber(newAuth(), number, new TestVerifier())), 'auth/invalid-phone-number', number);
    }
  });

  test('an empty token from the verifier is auth/missing-recaptcha-token', async () => {
    assert.equal(await errorCode(sdk.signInWithPhoneNumber(newAuth(), uniquePhoneNumber(), new TestVerifier(''))), 'auth/missing-recaptcha-token');
  });

  test('with phone sign-in switched off for the project: auth/operation-not-allowed', async () => {
    const target = await startHearth({ smsLimits: generousLimits });
    try {
      await patchProjectConfig(target, { signIn: { phoneNumber: { enabled: false } } }, 'signIn.phoneNumber.enabled');
      assert.equal(await errorCode(sdk.signInWithPhoneNumber(newAuth(target), uniquePhoneNumber(), new TestVerifier())), 'auth/operation-not-allowed');
    } finally {
      await target.close();
    }
  });
});

describe('codes expire', () => {
  test('past its lifetime a code is auth/code-expired', async () => {
    const target = await startHearth({ smsLimits: generousLimits, smsCodes: { codeLifetimeMs: 0, attemptsPerCode: 5, proofLifetimeMs: 3600_000 } });
    try {
      const confirmation = await sdk.signInWithPhoneNumber(newAuth(target), uniquePhoneNumber(), new TestVerifier());
      assert.equal(await errorCode(confirmation.confirm(await codeFor(target, confirmation.verificationId))), 'auth/code-expired');
    } finally {
      await target.close();
    }
  });
});

describe('linking, reauthentication and updating the number', () => {
  async function signedInAnonymously(): Promise<User> {
    return (await sdk.signInAnonymously(newAuth())).user;
  }

  test('linkWithPhoneNumber turns an anonymous account into a phone account', async () => {
    const user = await signedInAnonymously();
    const phoneNumber = uniquePhoneNumber();
    const confirmation = await sdk.linkWithPhoneNumber(user, phoneNumber, new TestVerifier());
    const linked = await confirmation.confirm(await codeFor(server, confirmation.verificationId));
    assert.equal(linked.user.uid, user.uid);
    assert.equal(linked.user.phoneNumber, phoneNumber);
    assert.equal(linked.user.isAnonymous, false);
    assert.deepEqual(linked.user.providerData.map((p) => p.providerId), ['phone']);
    assert.equal((await phoneSignIn(newAuth(), phoneNumber)).user.uid, user.uid, 'the number now signs in to that account');
  });

  test('linking a number another account has: auth/account-exists-with-different-credential, whose credential signs in there', async () => {
    const phoneNumber = uniquePhoneNumber();
    const holder = await phoneSignIn(newAuth(), phoneNumber);
    const user = await signedInAnonymously();
    const confirmation = await sdk.linkWithPhoneNumber(user, phoneNumber, new TestVerifier());
    const error = await confirmation.confirm(await codeFor(server, confirmation.verificationId)).then(
      () => assert.fail('linking must be refused'),
      (e: Error & { code?: string }) => e,
    );
    assert.equal(error.code, 'auth/account-exists-with-different-credential');
    assert.equal(user.phoneNumber, null, 'nothing was linked');
    const credential = sdk.PhoneAuthProvider.credentialFromError(error as Parameters<typeof sdk.PhoneAuthProvider.credentialFromError>[0]);
    assert.ok(credential, 'the error carries a credential');
    const there = await sdk.signInWithCredential(newAuth(), credential);
    assert.equal(there.user.uid, holder.user.uid);
    assert.equal(await errorCode(sdk.signInWithCredential(newAuth(), credential)), 'auth/invalid-credential', 'the proof works once');
  });

  test('reauthenticateWithPhoneNumber refreshes the sign-in time of the number\'s own account', async () => {
    const phoneNumber = uniquePhoneNumber();
    const { user } = await phoneSignIn(newAuth(), phoneNumber);
    const confirmation = await sdk.reauthenticateWithPhoneNumber(user, phoneNumber, new TestVerifier());
    const result = await confirmation.confirm(await codeFor(server, confirmation.verificationId));
    assert.equal(result.user.uid, user.uid);
    assert.equal(result.operationType, 'reauthenticate');
  });

  test('reauthentication with a number no account has creates none; with it or another account\'s number the SDK says auth/user-mismatch', async () => {
    const user = await signedInAnonymously();
    const unknown = uniquePhoneNumber();
    const confirmation = await sdk.reauthenticateWithPhoneNumber(user, unknown, new TestVerifier());
    // The server answers USER_NOT_FOUND (tests/auth/phone-http.test.ts); the SDK's reauthenticate turns that into user-mismatch.
    assert.equal(await errorCode(confirmation.confirm(await codeFor(server, confirmation.verificationId))), 'auth/user-mismatch');
    const lookup = await adminPost(server, '/accounts:lookup', { phoneNumber: [unknown] });
    assert.equal(lookup.body.users, undefined, 'no account was made');

    const otherNumber = uniquePhoneNumber();
    await phoneSignIn(newAuth(), otherNumber);
    const { user: phoneUser } = await phoneSignIn(newAuth(), uniquePhoneNumber());
    const mismatch = await sdk.reauthenticateWithPhoneNumber(phoneUser, otherNumber, new TestVerifier());
    assert.equal(await errorCode(mismatch.confirm(await codeFor(server, mismatch.verificationId))), 'auth/user-mismatch');
  });

  test('updatePhoneNumber moves the account to a new number; the old one is free again', async () => {
    const oldNumber = uniquePhoneNumber();
    const auth = newAuth();
    const { user } = await phoneSignIn(auth, oldNumber);
    const newNumber = uniquePhoneNumber();
    const id = await verificationId(auth, newNumber);
    await sdk.updatePhoneNumber(user, sdk.PhoneAuthProvider.credential(id, await codeFor(server, id)));
    assert.equal(user.phoneNumber, newNumber);
    assert.equal((await phoneSignIn(newAuth(), newNumber)).user.uid, user.uid);
    const fresh = await phoneSignIn(newAuth(), oldNumber);
    assert.notEqual(fresh.user.uid, user.uid);
    assert.equal(sdk.getAdditionalUserInfo(fresh)?.isNewUser, true);
  });

  test('unlinking the phone provider frees the number', async () => {
    const phoneNumber = uniquePhoneNumber();
    const anonymous = await signedInAnonymously();
    const confirmation = await sdk.linkWithPhoneNumber(anonymous, phoneNumber, new TestVerifier());
    const { user } = await confirmation.confirm(await codeFor(server, confirmation.verificationId));
    await sdk.unlink(user, 'phone');
    assert.equal(user.phoneNumber, null);
    assert.notEqual((await phoneSignIn(newAuth(), phoneNumber)).user.uid, user.uid);
  });
});

describe('limits', () => {
  test('codes to one number: beyond the limit auth/quota-exceeded; other numbers still get theirs', async () => {
    const target = await startHearth({ smsLimits: { perNumber: { maxFailures: 3, windowMs: 3600_000 }, perAddress: { maxFailures: 1000, windowMs: 3600_000 } } });
    try {
      const phoneNumber = uniquePhoneNumber();
      for (let i = 0; i < 3; i++) assert.ok(await verificationId(newAuth(target), phoneNumber));
      assert.equal(await errorCode(verificationId(newAuth(target), phoneNumber)), 'auth/quota-exceeded');
      assert.ok(await verificationId(newAuth(target), uniquePhoneNumber()));
    } finally {
      await target.close();
    }
  });

  test('a code survives a restart of the server (it was on disk before the answer)', async () => {
    const first = await startHearth({ smsLimits: generousLimits });
    const dataDir = first.dataDir;
    const phoneNumber = uniquePhoneNumber();
    let id: string;
    let code: string;
    try {
      id = await verificationId(newAuth(first), phoneNumber);
      code = await codeFor(first, id);
    } finally {
      await first.hearth.close();
    }
    const second = await startHearth({ smsLimits: generousLimits, dataDir });
    try {
      const result = await sdk.signInWithCredential(newAuth(second), sdk.PhoneAuthProvider.credential(id, code));
      assert.equal(result.user.phoneNumber, phoneNumber);
    } finally {
      await second.close();
    }
  });
});
