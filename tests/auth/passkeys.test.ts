/**
 * The v2 passkey calls over raw HTTP, with credentials made and used by a real Chromium and its
 * virtual authenticator (DevTools WebAuthn domain): enrolment and discoverable sign-in in both
 * response shapes, passkeyInfo and deletePasskey, and every abuse case refused with Google-style
 * 400s: malformed and oversized responses, forged, replayed, foreign-realm and expired challenges,
 * a foreign origin, an unknown credential, and a signature counter going backwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { launchChromium } from '../helpers/browser.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { createTenant } from '../helpers/tenants.js';
import { TotpDevice } from '../helpers/totp-device.js';
import { createCredential, discoveryShape, getAssertion, VirtualAuthenticator } from '../helpers/virtual-authenticator.js';

let server: TestHearth;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let authenticator: VirtualAuthenticator;

before(async () => {
  server = await startHearth();
  browser = await launchChromium();
  context = await browser.newContext();
  page = await context.newPage();
  // WebAuthn needs a secure context whose host can be a relying party id: localhost, not 127.0.0.1.
  await page.goto(`${server.url.replace('127.0.0.1', 'localhost')}/identitytoolkit.googleapis.com/`);
  authenticator = await VirtualAuthenticator.attach(context, page);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const v1 = (path: string, body: unknown) => postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:${path}?key=${server.apiKey}`, body);
const v2 = (path: string, body: unknown) => postJson(`${server.url}/identitytoolkit.googleapis.com/v2/accounts/${path}?key=${server.apiKey}`, body);

async function refused(answer: Promise<{ status: number; body: any }>, message: string | RegExp, status = 400): Promise<void> {
  const { status: got, body } = await answer;
  assert.equal(got, status, JSON.stringify(body));
  assert.equal(body.error.code, status);
  if (typeof message === 'string') assert.equal(body.error.message.split(' : ')[0], message, JSON.stringify(body));
  else assert.match(body.error.message, message);
}

function claimsOf(idToken: string): any {
  return JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString('utf8'));
}

async function signUp(): Promise<{ localId: string; idToken: string; email: string }> {
  const email = uniqueEmail('passkey');
  const { status, body } = await v1('signUp', { email, password: 'secret-pass-1', returnSecureToken: true });
  assert.equal(status, 200, JSON.stringify(body));
  return { localId: body.localId, idToken: body.idToken, email };
}

async function enroll(idToken: string, name: string, shape: 'w3c' | 'discovery' = 'w3c'): Promise<{ credentialId: string; body: any; response: any }> {
  const start = await v2('passkeyEnrollment:start', { idToken });
  assert.equal(start.status, 200, JSON.stringify(start.body));
  await authenticator.clear();
  const credential = await createCredential(page, start.body.credentialCreationOptions);
  const response = shape === 'w3c' ? credential : discoveryShape(credential, 'registration');
  const finalize = await v2('passkeyEnrollment:finalize', { idToken, name, authenticatorRegistrationResponse: response });
  assert.equal(finalize.status, 200, JSON.stringify(finalize.body));
  return { credentialId: credential.id, body: finalize.body, response };
}

/** An assertion over a fresh challenge, not yet sent to finalize. */
async function assertion(path = 'passkeySignIn:start', body: Record<string, unknown> = {}): Promise<any> {
  const start = await postJson(`${server.url}/identitytoolkit.googleapis.com/v2/accounts/${path}?key=${server.apiKey}`, body);
  assert.equal(start.status, 200, JSON.stringify(start.body));
  return getAssertion(page, start.body.credentialRequestOptions);
}

describe('enrolment and sign-in', () => {
  test('a passkey made in Chromium signs its account in without an email, and lookup lists it', async () => {
    const user = await signUp();
    const start = await v2('passkeyEnrollment:start', { idToken: user.idToken });
    const options = start.body.credentialCreationOptions;
    assert.equal(options.rp.id, 'localhost');
    assert.equal(Buffer.from(options.user.id, 'base64url').toString('utf8'), user.localId);
    assert.equal(options.authenticatorSelection.residentKey, 'required');
    const { credentialId, body } = await enroll(user.idToken, 'Laptop');
    assert.equal(body.localId, user.localId);
    assert.equal(claimsOf(body.idToken).sub, user.localId);

    const looked = await v1('lookup', { idToken: body.idToken });
    assert.deepEqual(
      looked.body.users[0].passkeyInfo.map((p: any) => [p.credentialId, p.name]),
      [[credentialId, 'Laptop']],
    );
    assert.ok(!JSON.stringify(looked.body).includes('publicKey'), 'public keys stay on the server');

    const signedIn = await v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: await assertion() });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    const claims = claimsOf(signedIn.body.idToken);
    assert.equal(claims.sub, user.localId);
    assert.equal(claims.firebase.sign_in_provider, 'passkey');
    assert.ok(Math.abs(claims.auth_time - Date.now() / 1000) < 60, 'a passkey sign-in is a recent sign-in');
    // The refresh token works like any other.
    const refreshed = await postJson(`${server.url}/securetoken.googleapis.com/v1/token?key=${server.apiKey}`, { grant_type: 'refresh_token', refresh_token: signedIn.body.refreshToken });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    // It is a recent sign-in: a sensitive change (a new password) goes through with its token.
    const changed = await v1('update', { idToken: signedIn.body.idToken, password: 'another-pass-2', returnSecureToken: true });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
  });

  test('a passkey sign-in stands for the second step: it withdraws a factor and makes recovery codes', async () => {
    const user = await signUp();
    assert.equal((await adminPost(server, '/accounts:update', { localId: user.localId, emailVerified: true })).status, 200);
    const start = await v2('mfaEnrollment:start', { idToken: user.idToken, totpEnrollmentInfo: {} });
    assert.equal(start.status, 200, JSON.stringify(start.body));
    const info = start.body.totpSessionInfo;
    const totp = await v2('mfaEnrollment:finalize', { idToken: user.idToken, totpVerificationInfo: { sessionInfo: info.sessionInfo, verificationCode: new TotpDevice(info.sharedSecretKey).next() } });
    assert.equal(totp.status, 200, JSON.stringify(totp.body));
    await enroll(totp.body.idToken, 'Strong');
    const signedIn = await v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: await assertion() });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    const claims = claimsOf(signedIn.body.idToken);
    assert.equal(claims.firebase.sign_in_second_factor, undefined, 'no second factor was asked for');
    const codes = await v2('recoveryCodes:generate', { idToken: signedIn.body.idToken });
    assert.equal(codes.status, 200, JSON.stringify(codes.body));
    const enrollmentId = (await v1('lookup', { idToken: signedIn.body.idToken })).body.users[0].mfaInfo[0].mfaEnrollmentId;
    const withdrawn = await v2('mfaEnrollment:withdraw', { idToken: signedIn.body.idToken, mfaEnrollmentId: enrollmentId });
    assert.equal(withdrawn.status, 200, JSON.stringify(withdrawn.body));
    assert.equal((await v1('lookup', { idToken: withdrawn.body.idToken })).body.users[0].mfaInfo, undefined);
  });

  test("the discovery document's field shape works for enrolment and sign-in", async () => {
    const user = await signUp();
    const { credentialId } = await enroll(user.idToken, 'Phone', 'discovery');
    const signedIn = await v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: discoveryShape(await assertion(), 'authentication') });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(claimsOf(signedIn.body.idToken).sub, user.localId);
    const stored = (await authenticator.credentials()).find((c) => Buffer.from(c.credentialId, 'base64').toString('base64url') === credentialId);
    assert.ok(stored?.isResidentCredential, 'the credential is discoverable');
  });

  test('deletePasskey removes it, and the next sign-in with it is refused', async () => {
    const user = await signUp();
    const { credentialId, body } = await enroll(user.idToken, 'To remove');
    await refused(v1('update', { idToken: body.idToken, deletePasskey: ['bm90LWEtcGFzc2tleQ'] }), 'PASSKEY_CREDENTIAL_NOT_FOUND');
    const removed = await v1('update', { idToken: body.idToken, deletePasskey: [credentialId] });
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    const looked = await v1('lookup', { idToken: body.idToken });
    assert.equal(looked.body.users[0].passkeyInfo, undefined);
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: await assertion() }), 'PASSKEY_CREDENTIAL_NOT_FOUND');
  });
});

describe('one credential, one account', () => {
  test("another account's registration, replayed over a fresh challenge, is refused: a credential id names one account", async () => {
    const owner = await signUp();
    const { response, credentialId } = await enroll(owner.idToken, 'Mine');
    // Attestation "none" signs nothing over the client data, so a copy with another challenge verifies.
    const format = JSON.stringify(cborKeys(Buffer.from(response.response.attestationObject, 'base64url')));
    assert.match(format, /none/, 'the virtual authenticator attests with "none"');
    const again = async (idToken: string) => {
      const start = await v2('passkeyEnrollment:start', { idToken });
      const clientData = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'));
      const copy = { ...response, response: { ...response.response, clientDataJSON: Buffer.from(JSON.stringify({ ...clientData, challenge: start.body.credentialCreationOptions.challenge })).toString('base64url') } };
      return v2('passkeyEnrollment:finalize', { idToken, name: 'Copied', authenticatorRegistrationResponse: copy });
    };
    const thief = await signUp();
    await refused(again(thief.idToken), 'CREDENTIAL_ALREADY_IN_USE');
    await refused(again(owner.idToken), 'CREDENTIAL_ALREADY_IN_USE');
    const answer = await again(thief.idToken);
    assert.equal(answer.body.error.message, 'CREDENTIAL_ALREADY_IN_USE : This passkey is already registered to an account of this project.');
    const looked = await v1('lookup', { idToken: thief.idToken });
    assert.equal(looked.body.users[0].passkeyInfo, undefined, 'nothing was enrolled on the other account');
    // Once its owner removes it, the credential is free again (the index row goes with it).
    assert.equal((await v1('update', { idToken: owner.idToken, deletePasskey: [credentialId] })).status, 200);
    const freed = await again(thief.idToken);
    assert.equal(freed.status, 200, JSON.stringify(freed.body));
  });

  test('removing a passkey needs a recent sign-in (auth/requires-recent-login), as a password change does', async () => {
    const stale = await startHearth({ recentLoginSeconds: 2 });
    try {
      const call = (path: string, body: unknown) => postJson(`${stale.url}/identitytoolkit.googleapis.com/v1/accounts:${path}?key=${stale.apiKey}`, body);
      const created = await call('signUp', { email: uniqueEmail('passkey-stale'), password: 'secret-pass-1', returnSecureToken: true });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      await new Promise((resolve) => setTimeout(resolve, 3100));
      await refused(call('update', { idToken: created.body.idToken, deletePasskey: ['c29tZS1wYXNza2V5'] }), 'CREDENTIAL_TOO_OLD_LOGIN_AGAIN');
      // Other changes of the same stale session still go through.
      const renamed = await call('update', { idToken: created.body.idToken, displayName: 'Still me' });
      assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    } finally {
      await stale.close();
    }
  });
});

/** The keys of a CBOR map's text entries, enough to see an attestation's format without a CBOR library. */
function cborKeys(bytes: Buffer): string[] {
  return [...bytes.toString('latin1').matchAll(/[a-zA-Z]{3,}/g)].map((m) => m[0]).slice(0, 4);
}

describe('abuse', () => {
  let user: { localId: string; idToken: string };
  let credentialId: string;
  before(async () => {
    user = await signUp();
    const enrolled = await enroll(user.idToken, 'Target');
    credentialId = enrolled.credentialId;
    user.idToken = enrolled.body.idToken;
  });

  test('malformed responses and bodies', async () => {
    await refused(v2('passkeySignIn:finalize', {}), 'MISSING_AUTHENTICATOR_RESPONSE');
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: { id: 'abc' } }), 'MISSING_AUTHENTICATOR_RESPONSE');
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: 'nope' }), /Invalid JSON payload received. Invalid value at 'authenticatorAuthenticationResponse'/);
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: { id: 'abc', response: { clientDataJSON: '!!', authenticatorData: 'AA', signature: 'AA' } } }), 'INVALID_AUTHENTICATOR_RESPONSE');
    const notJson = Buffer.from('not json').toString('base64url');
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: { id: 'abc', response: { clientDataJSON: notJson, authenticatorData: 'AA', signature: 'AA' } } }), 'INVALID_AUTHENTICATOR_RESPONSE');
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: { response: { clientDataJSON: notJson } } }), 'INVALID_CREDENTIAL_ID');
    await refused(v2('passkeyEnrollment:finalize', { idToken: user.idToken, authenticatorRegistrationResponse: { id: 'abc', response: { clientDataJSON: 'A'.repeat(20_000), attestationObject: 'AA' } } }), 'INVALID_AUTHENTICATOR_RESPONSE');
    await refused(v2('passkeyEnrollment:finalize', { authenticatorRegistrationResponse: {} }), 'MISSING_ID_TOKEN');
    await refused(v2('passkeyEnrollment:start', {}), 'MISSING_ID_TOKEN');
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: { id: 'x'.repeat(100_000) } }), /INVALID_ARGUMENT|payload/i, 413);
    await refused(v2('passkeySignIn:start', { unknownField: 1 }), /INVALID_ARGUMENT|Invalid JSON payload/);
  });

  test('a challenge Hearth did not issue, one answered twice, and one of another tenant', async () => {
    // A challenge of the page's own making: it verifies nowhere.
    const forged = await getAssertion(page, { challenge: Buffer.from('a challenge nobody issued').toString('base64url'), rpId: 'localhost', userVerification: 'required' });
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: forged }), 'INVALID_CHALLENGE');

    const once = await assertion();
    const first = await v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: once });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: once }), 'INVALID_CHALLENGE');

    const tenant = await createTenant(server);
    const tenantId = (tenant as any).name.split('/').pop();
    const foreign = await assertion('passkeySignIn:start', { tenantId });
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: foreign }), 'INVALID_CHALLENGE');
    // An enrolment challenge is not a sign-in one.
    const start = await v2('passkeyEnrollment:start', { idToken: user.idToken });
    const enrolChallenge = await getAssertion(page, { challenge: start.body.credentialCreationOptions.challenge, rpId: 'localhost', userVerification: 'required' });
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: enrolChallenge }), 'INVALID_CHALLENGE');
  });

  test('an assertion made for another origin, and an unknown credential', async () => {
    const good = await assertion();
    const clientData = JSON.parse(Buffer.from(good.response.clientDataJSON, 'base64url').toString('utf8'));
    const elsewhere = { ...good, response: { ...good.response, clientDataJSON: Buffer.from(JSON.stringify({ ...clientData, origin: 'https://evil.example' })).toString('base64url') } };
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: elsewhere }), 'INVALID_ORIGIN');
    const unknown = { ...good, id: 'dW5rbm93bi1jcmVkZW50aWFs', rawId: 'dW5rbm93bi1jcmVkZW50aWFs' };
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: unknown }), 'PASSKEY_CREDENTIAL_NOT_FOUND');
    // A tampered signature, with everything else right.
    const signature = Buffer.from(good.response.signature, 'base64url');
    signature[signature.length - 1]! ^= 1;
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: { ...good, response: { ...good.response, signature: signature.toString('base64url') } } }), 'INVALID_AUTHENTICATOR_RESPONSE');
    // The untampered one still works: nothing above used its challenge.
    const ok = await v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: good });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  test('a signature counter that goes backwards is refused', async () => {
    const earlier = await assertion();
    const later = await assertion();
    const count = (a: any) => Buffer.from(a.response.authenticatorData, 'base64url').readUInt32BE(33);
    assert.ok(count(later) > count(earlier), `the virtual authenticator counts (${count(earlier)}, ${count(later)})`);
    const first = await v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: later });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: earlier }), /INVALID_AUTHENTICATOR_RESPONSE.*counter/);
  });

  test('another account cannot remove the passkey, and a disabled account cannot use it', async () => {
    const other = await signUp();
    await refused(v1('update', { idToken: other.idToken, deletePasskey: [credentialId] }), 'PASSKEY_CREDENTIAL_NOT_FOUND');
    const disabled = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:update`, { localId: user.localId, disableUser: true }, { authorization: `Bearer ${server.adminKey}` });
    assert.equal(disabled.status, 200, JSON.stringify(disabled.body));
    await refused(v2('passkeySignIn:finalize', { authenticatorAuthenticationResponse: await assertion() }), 'USER_DISABLED');
  });
});

test('a flood of start calls from one address is throttled', async () => {
  const own = await startHearth();
  try {
    const start = () => postJson(`${own.url}/identitytoolkit.googleapis.com/v2/accounts/passkeySignIn:start?key=${own.apiKey}`, {});
    for (let i = 0; i < 60; i++) assert.equal((await start()).status, 200, `start ${i + 1} of 60 goes through`);
    await refused(start(), 'TOO_MANY_ATTEMPTS_TRY_LATER');
  } finally {
    await own.close();
  }
});
