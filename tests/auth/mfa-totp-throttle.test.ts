/**
 * Wrong TOTP codes are counted per factor and client address, on a production server (no --dev):
 * whoever has the password, guessing codes from one address, is throttled there, while the owner
 * signs in through the SDK from another address; guesses spread over many addresses meet the
 * factor's own ceiling. Callers at different addresses are loopback sources 127.0.0.x; the SDK
 * (the owner) connects from 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  createUserWithEmailAndPassword,
  getIdTokenResult,
  getMultiFactorResolver,
  multiFactor,
  reload,
  signInWithEmailAndPassword,
  TotpMultiFactorGenerator,
  type MultiFactorError,
} from 'firebase/auth';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { errorCodeOf, SdkClients } from '../helpers/client.js';
import { postJsonFrom } from '../helpers/from-address.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { TotpDevice, wrongCode } from '../helpers/totp-device.js';

let server: TestHearth;
const clients = new SdkClients('totp-throttle');

before(async () => {
  server = await startHearth({ dev: false });
});
after(async () => {
  await clients.close();
  await server.close();
});

/** An account with a TOTP factor enrolled through the SDK: its email, the factor's uid and the owner's authenticator app. */
async function ownerWithTotp(): Promise<{ email: string; uid: string; device: TotpDevice }> {
  const email = uniqueEmail('totp-throttle');
  const { user } = await createUserWithEmailAndPassword(clients.auth(server), email, 'secret12');
  assert.equal((await adminPost(server, '/accounts:update', { localId: user.uid, emailVerified: true })).status, 200);
  await reload(user);
  const secret = await TotpMultiFactorGenerator.generateSecret(await multiFactor(user).getSession());
  const device = new TotpDevice(secret.secretKey);
  await multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), 'App');
  return { email, uid: multiFactor(user).enrolledFactors[0]!.uid, device };
}

/** What an attacker with the password does from `address`: the first factor, then a code for the factor. */
async function guessFrom(address: string, email: string, factorUid: string, code: string): Promise<string> {
  const first = await postJsonFrom(address, `${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server.apiKey}`, { email, password: 'secret12', returnSecureToken: true });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.ok(first.body.mfaPendingCredential, 'the password alone asks for the second factor');
  const second = await postJsonFrom(address, `${server.url}/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize?key=${server.apiKey}`, {
    mfaPendingCredential: first.body.mfaPendingCredential,
    mfaEnrollmentId: factorUid,
    totpVerificationInfo: { verificationCode: code },
  });
  return second.status === 200 ? 'signed in' : String(second.body.error?.message).split(' : ')[0];
}

/** The owner's own sign-in through the SDK (from 127.0.0.1): password, then the app's code. */
async function ownerSignsIn(email: string, device: TotpDevice): Promise<string> {
  const auth = clients.auth(server);
  const error = await signInWithEmailAndPassword(auth, email, 'secret12').then(
    (): MultiFactorError => assert.fail('signed in without the second factor'),
    (e: MultiFactorError) => e,
  );
  const resolver = getMultiFactorResolver(auth, error);
  const outcome = await errorCodeOf(resolver.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(resolver.hints[0]!.uid, device.next())));
  if (outcome === 'no error') assert.equal((await getIdTokenResult(auth.currentUser!)).signInSecondFactor, 'totp');
  return outcome;
}

test("wrong codes from the attacker's address throttle that address only: the owner signs in from another", async () => {
  const { email, uid, device } = await ownerWithTotp();
  const wrong = wrongCode(device);
  for (let i = 0; i < 5; i++) assert.equal(await guessFrom('127.0.0.2', email, uid, wrong), 'INVALID_CODE');
  assert.equal(await guessFrom('127.0.0.2', email, uid, wrong), 'TOO_MANY_ATTEMPTS_TRY_LATER');
  // Even the right code is refused there now: the address is waiting.
  assert.equal(await guessFrom('127.0.0.2', email, uid, device.next()), 'TOO_MANY_ATTEMPTS_TRY_LATER');
  // The owner, elsewhere, is not kept out.
  assert.equal(await ownerSignsIn(email, device), 'no error');
  assert.equal(await guessFrom('127.0.0.2', email, uid, wrong), 'TOO_MANY_ATTEMPTS_TRY_LATER', 'the attacker is still waiting');
});

test('guesses spread over many addresses meet the factor’s own ceiling (25 wrong codes), then every address waits', async () => {
  const { email, uid, device } = await ownerWithTotp();
  const wrong = wrongCode(device);
  for (let host = 10; host < 15; host++) {
    for (let i = 0; i < 5; i++) assert.equal(await guessFrom(`127.0.0.${host}`, email, uid, wrong), 'INVALID_CODE');
  }
  assert.equal(await guessFrom('127.0.0.20', email, uid, wrong), 'TOO_MANY_ATTEMPTS_TRY_LATER', 'a fresh address gets no new allowance');
  assert.equal(await ownerSignsIn(email, device), 'auth/too-many-requests');
});
