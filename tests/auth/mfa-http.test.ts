/**
 * The v2 multi-factor endpoints over raw HTTP: Google's exact answers and error messages, hostile
 * and malformed input (never a 500), forged, tampered, foreign, used and revoked pending
 * credentials, and secrets kept out of answers, logs and the database file.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { storedRows, storedSecret, testBackend } from '../helpers/test-backend.js';
import pino from 'pino';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { TotpDevice, wrongCode } from '../helpers/totp-device.js';

let server: TestHearth;
let logs = '';

before(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  server = await startHearth({ logLevel: 'debug' }, pino({ level: 'debug' }, sink));
});
after(() => server.close());

const v1 = (path: string, body: unknown, key = server.apiKey) => postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:${path}?key=${key}`, body);
const v2 = (path: string, body: unknown, key = server.apiKey) => postJson(`${server.url}/identitytoolkit.googleapis.com/v2/accounts/${path}?key=${key}`, body);

async function refused(answer: Promise<{ status: number; body: any }>, message: string | RegExp): Promise<void> {
  const { status, body } = await answer;
  assert.equal(status, 400, JSON.stringify(body));
  if (typeof message === 'string') assert.equal(body.error.message, message);
  else assert.match(body.error.message, message);
}

interface Enrolled {
  email: string;
  localId: string;
  idToken: string;
  refreshToken: string;
  enrollmentId: string;
  device: TotpDevice;
  secret: string;
}

async function verifiedAccount(): Promise<{ email: string; localId: string; idToken: string }> {
  const email = uniqueEmail('mfa-http');
  const created = await v1('signUp', { email, password: 'secret12', returnSecureToken: true });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal((await adminPost(server, '/accounts:update', { localId: created.body.localId, emailVerified: true })).status, 200);
  return { email, localId: created.body.localId, idToken: created.body.idToken };
}

async function enrolled(): Promise<Enrolled> {
  const account = await verifiedAccount();
  const start = await v2('mfaEnrollment:start', { idToken: account.idToken, totpEnrollmentInfo: {} });
  assert.equal(start.status, 200, JSON.stringify(start.body));
  const info = start.body.totpSessionInfo;
  const device = new TotpDevice(info.sharedSecretKey);
  const done = await v2('mfaEnrollment:finalize', { idToken: account.idToken, displayName: 'app', totpVerificationInfo: { sessionInfo: info.sessionInfo, verificationCode: device.next() } });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  const lookup = await v1('lookup', { idToken: done.body.idToken });
  return { ...account, idToken: done.body.idToken, refreshToken: done.body.refreshToken, enrollmentId: lookup.body.users[0].mfaInfo[0].mfaEnrollmentId, device, secret: info.sharedSecretKey };
}

async function pendingFor(email: string): Promise<string> {
  const first = await v1('signInWithPassword', { email, password: 'secret12', returnSecureToken: true });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  return first.body.mfaPendingCredential;
}

function claimsOf(idToken: string): Record<string, any> {
  return JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString());
}

describe('the first factor of an account with second factors', () => {
  test('answers mfaPendingCredential and mfaInfo instead of tokens, on v1 and v3; lastLoginAt waits for the second factor', async () => {
    const account = await enrolled();
    const before = (await adminPost(server, '/accounts:lookup', { localId: [account.localId] })).body.users[0].lastLoginAt;
    for (const url of [`/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword`, `/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyPassword`]) {
      const { status, body } = await postJson(`${server.url}${url}?key=${server.apiKey}`, { email: account.email, password: 'secret12', returnSecureToken: true });
      assert.equal(status, 200);
      assert.equal(body.idToken, undefined);
      assert.equal(body.refreshToken, undefined);
      assert.equal(body.localId, account.localId);
      assert.equal(body.email, account.email);
      assert.match(body.mfaPendingCredential, /^v1\.[A-Za-z0-9_-]{100,}$/);
      assert.deepEqual(body.mfaInfo, [{ mfaEnrollmentId: account.enrollmentId, displayName: 'app', enrolledAt: body.mfaInfo[0].enrolledAt, totpInfo: {} }]);
      assert.ok(!Number.isNaN(Date.parse(body.mfaInfo[0].enrolledAt)));
    }
    assert.equal((await adminPost(server, '/accounts:lookup', { localId: [account.localId] })).body.users[0].lastLoginAt, before);
  });

  test('a phone factor shows its full number to the owner and the administrator, and only the last four digits after a first factor', async () => {
    const account = await verifiedAccount();
    const set = await adminPost(server, '/accounts:update', { localId: account.localId, mfa: { enrollments: [{ phoneInfo: '+16505550101', displayName: 'mobile' }] } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const own = await v1('lookup', { idToken: account.idToken });
    assert.equal(own.body.users[0].mfaInfo[0].phoneInfo, '+16505550101');
    const byAdmin = await adminPost(server, '/accounts:lookup', { localId: [account.localId] });
    assert.equal(byAdmin.body.users[0].mfaInfo[0].phoneInfo, '+16505550101');
    const first = await v1('signInWithPassword', { email: account.email, password: 'secret12', returnSecureToken: true });
    assert.equal(first.body.mfaInfo[0].phoneInfo, '+*******0101');
    assert.equal(first.body.mfaInfo[0].displayName, 'mobile');
  });
});

describe('mfaEnrollment', () => {
  test('start answers totpSessionInfo as the SDK reads it', async () => {
    const account = await verifiedAccount();
    const { status, body } = await v2('mfaEnrollment:start', { idToken: account.idToken, totpEnrollmentInfo: {} });
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body), ['totpSessionInfo']);
    const info = body.totpSessionInfo;
    assert.deepEqual(Object.keys(info).sort(), ['finalizeEnrollmentTime', 'hashingAlgorithm', 'periodSec', 'sessionInfo', 'sharedSecretKey', 'verificationCodeLength']);
    assert.deepEqual([info.hashingAlgorithm, info.verificationCodeLength, info.periodSec], ['SHA1', 6, 30]);
    const deadline = Date.parse(info.finalizeEnrollmentTime);
    assert.ok(deadline > Date.now() + 9 * 60_000 && deadline <= Date.now() + 10 * 60_000, info.finalizeEnrollmentTime);
    assert.ok(!info.sessionInfo.includes(info.sharedSecretKey), 'the session carries the secret sealed, not in the clear');
  });

  test("Google's refusals: missing token, both or neither kind, unverified email, ineligible first factor, bad number", async () => {
    const account = await verifiedAccount();
    await refused(v2('mfaEnrollment:start', { totpEnrollmentInfo: {} }), 'MISSING_ID_TOKEN');
    await refused(v2('mfaEnrollment:start', { idToken: account.idToken }), 'INVALID_ARGUMENT : Exactly one of phoneEnrollmentInfo or totpEnrollmentInfo is required.');
    await refused(
      v2('mfaEnrollment:start', { idToken: account.idToken, totpEnrollmentInfo: {}, phoneEnrollmentInfo: { phoneNumber: '+16505550101' } }),
      'INVALID_ARGUMENT : Exactly one of phoneEnrollmentInfo or totpEnrollmentInfo is required.',
    );
    for (const phoneNumber of ['abc', '6505550101', '+1', '+1 650 555 0101 ext. 7', '', '+' + '1'.repeat(5000)]) {
      await refused(v2('mfaEnrollment:start', { idToken: account.idToken, phoneEnrollmentInfo: { phoneNumber } }), 'INVALID_PHONE_NUMBER : Invalid format.');
    }
    await refused(v2('mfaEnrollment:start', { idToken: account.idToken, phoneEnrollmentInfo: {} }), 'INVALID_PHONE_NUMBER : Invalid format.');
    const unverified = await v1('signUp', { email: uniqueEmail('unverified'), password: 'secret12', returnSecureToken: true });
    await refused(v2('mfaEnrollment:start', { idToken: unverified.body.idToken, totpEnrollmentInfo: {} }), 'UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.');
    const anonymous = await v1('signUp', { returnSecureToken: true });
    await refused(v2('mfaEnrollment:start', { idToken: anonymous.body.idToken, totpEnrollmentInfo: {} }), 'UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor.');
    await refused(v2('mfaEnrollment:start', { idToken: 'not-a-token', totpEnrollmentInfo: {} }), 'INVALID_ID_TOKEN');
    // A tenant the project does not have (tenants are served: auth-tenants*.test.ts).
    await refused(v2('mfaEnrollment:start', { idToken: account.idToken, totpEnrollmentInfo: {}, tenantId: 't1' }), 'TENANT_NOT_FOUND');
  });

  test('malformed bodies: unknown fields (at any depth) and wrong types are refused as Google does', async () => {
    const account = await verifiedAccount();
    await refused(v2('mfaEnrollment:start', { idToken: account.idToken, totpEnrollmentInfo: {}, surprise: 1 }), 'Invalid JSON payload received. Unknown name "surprise": Cannot find field.');
    await refused(v2('mfaEnrollment:start', { idToken: account.idToken, totpEnrollmentInfo: { secret: 'MINE' } }), 'Invalid JSON payload received. Unknown name "totpEnrollmentInfo.secret": Cannot find field.');
    await refused(v2('mfaEnrollment:start', { idToken: 42, totpEnrollmentInfo: {} }), /^Invalid JSON payload received\. Invalid value at 'idToken' \(TYPE_STRING/);
    await refused(v2('mfaEnrollment:finalize', { idToken: account.idToken, totpVerificationInfo: { sessionInfo: ['x'], verificationCode: '1' } }), /TYPE_STRING/);
    await refused(v2('mfaSignIn:finalize', { mfaPendingCredential: {}, mfaEnrollmentId: 'x' }), /TYPE_STRING/);
    const notJson = await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize?key=${server.apiKey}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"mfaPendingCredential":' });
    assert.equal(notJson.status, 400);
  });

  test('finalize: missing, forged, foreign and used sessions; missing, wrong and oversized codes; long names', async () => {
    const account = await verifiedAccount();
    const other = await verifiedAccount();
    const start = (await v2('mfaEnrollment:start', { idToken: account.idToken, totpEnrollmentInfo: {} })).body.totpSessionInfo;
    const othersStart = (await v2('mfaEnrollment:start', { idToken: other.idToken, totpEnrollmentInfo: {} })).body.totpSessionInfo;
    const device = new TotpDevice(start.sharedSecretKey);
    const finalize = (info: Record<string, unknown>, extra: Record<string, unknown> = {}) => v2('mfaEnrollment:finalize', { idToken: account.idToken, totpVerificationInfo: info, ...extra });
    await refused(finalize({ verificationCode: '123456' }), 'MISSING_SESSION_INFO');
    await refused(finalize({ sessionInfo: 'forged', verificationCode: '123456' }), 'INVALID_SESSION_INFO');
    await refused(finalize({ sessionInfo: `${start.sessionInfo.slice(0, -4)}AAAA`, verificationCode: '123456' }), 'INVALID_SESSION_INFO');
    await refused(finalize({ sessionInfo: 'v1.' + 'A'.repeat(100_000), verificationCode: '123456' }), 'INVALID_SESSION_INFO');
    await refused(finalize({ sessionInfo: othersStart.sessionInfo, verificationCode: new TotpDevice(othersStart.sharedSecretKey).codeFromNow(0) }), 'INVALID_SESSION_INFO');
    await refused(finalize({ sessionInfo: start.sessionInfo }), 'MISSING_CODE');
    await refused(finalize({ sessionInfo: start.sessionInfo, verificationCode: '9'.repeat(10_000) }), 'INVALID_CODE');
    await refused(finalize({ sessionInfo: start.sessionInfo, verificationCode: 'abcdef' }), 'INVALID_CODE');
    await refused(finalize({ sessionInfo: start.sessionInfo, verificationCode: device.next() }, { displayName: 'n'.repeat(300) }), 'INVALID_DISPLAY_NAME');
    const done = await finalize({ sessionInfo: start.sessionInfo, verificationCode: device.next() });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.deepEqual(Object.keys(done.body).sort(), ['idToken', 'refreshToken']);
    const claims = claimsOf(done.body.idToken);
    assert.equal(claims.firebase.sign_in_second_factor, 'totp');
    // With the session's new token: enrolling ended the sessions from before it (the old token may
    // be refused as revoked or not, by the second it was issued in).
    await refused(finalize({ sessionInfo: start.sessionInfo, verificationCode: device.next() }, { idToken: done.body.idToken }), 'INVALID_SESSION_INFO : This enrolment is already finished.');
  });

  test('five factors at most: SECOND_FACTOR_LIMIT_EXCEEDED', async () => {
    const account = await verifiedAccount();
    const phones = ['+16505550101', '+16505550102', '+16505550103', '+16505550104', '+16505550105'];
    await adminPost(server, '/accounts:update', { localId: account.localId, mfa: { enrollments: phones.map((phoneInfo) => ({ phoneInfo })) } });
    await refused(v2('mfaEnrollment:start', { idToken: account.idToken, totpEnrollmentInfo: {} }), 'SECOND_FACTOR_LIMIT_EXCEEDED');
    await refused(v2('mfaEnrollment:start', { idToken: account.idToken, phoneEnrollmentInfo: { phoneNumber: '+16505550106' } }), 'SECOND_FACTOR_LIMIT_EXCEEDED');
    const sixth = await adminPost(server, '/accounts:update', { localId: account.localId, mfa: { enrollments: [...phones, '+16505550106'].map((phoneInfo) => ({ phoneInfo })) } });
    assert.equal(sixth.body.error.message, 'SECOND_FACTOR_LIMIT_EXCEEDED');
  });

  test('withdraw: missing and unknown ids; the answer is the session with new tokens, without the withdrawn factor', async () => {
    const account = await enrolled();
    await refused(v2('mfaEnrollment:withdraw', { idToken: account.idToken }), 'MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.');
    await refused(v2('mfaEnrollment:withdraw', { idToken: account.idToken, mfaEnrollmentId: 'nope' }), 'MFA_ENROLLMENT_NOT_FOUND');
    await refused(v2('mfaEnrollment:withdraw', { mfaEnrollmentId: account.enrollmentId }), 'MISSING_ID_TOKEN');
    const { status, body } = await v2('mfaEnrollment:withdraw', { idToken: account.idToken, mfaEnrollmentId: account.enrollmentId });
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(Object.keys(body).sort(), ['idToken', 'refreshToken']);
    assert.equal(claimsOf(body.idToken).firebase.sign_in_second_factor, undefined);
    assert.equal((await v1('lookup', { idToken: body.idToken })).body.users[0].mfaInfo, undefined);
  });
});

describe('mfaSignIn', () => {
  test("finalize with a TOTP code: Google's refusals, then the session; the credential then works no more", async () => {
    const account = await enrolled();
    const pending = await pendingFor(account.email);
    const finalize = (body: Record<string, unknown>) => v2('mfaSignIn:finalize', body);
    await refused(finalize({ mfaEnrollmentId: account.enrollmentId, totpVerificationInfo: { verificationCode: '123456' } }), 'MISSING_CREDENTIAL : Please set MFA Pending Credential.');
    await refused(finalize({ mfaPendingCredential: pending, totpVerificationInfo: { verificationCode: '123456' } }), 'MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.');
    await refused(finalize({ mfaPendingCredential: pending, mfaEnrollmentId: 'unknown', totpVerificationInfo: { verificationCode: '123456' } }), 'MFA_ENROLLMENT_NOT_FOUND');
    await refused(finalize({ mfaPendingCredential: pending, mfaEnrollmentId: account.enrollmentId }), 'INVALID_ARGUMENT : Exactly one of phoneVerificationInfo or totpVerificationInfo is required.');
    await refused(finalize({ mfaPendingCredential: pending, mfaEnrollmentId: account.enrollmentId, totpVerificationInfo: {} }), 'MISSING_CODE');
    await refused(finalize({ mfaPendingCredential: pending, mfaEnrollmentId: account.enrollmentId, totpVerificationInfo: { verificationCode: wrongCode(account.device) } }), 'INVALID_CODE');
    const done = await finalize({ mfaPendingCredential: pending, mfaEnrollmentId: account.enrollmentId, totpVerificationInfo: { verificationCode: account.device.next() } });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.deepEqual(Object.keys(done.body).sort(), ['idToken', 'refreshToken']);
    const claims = claimsOf(done.body.idToken);
    assert.deepEqual([claims.sub, claims.firebase.sign_in_provider, claims.firebase.sign_in_second_factor, claims.firebase.second_factor_identifier], [account.localId, 'password', 'totp', account.enrollmentId]);
    // Refreshed tokens name the second factor too.
    const refreshed = await postJson(`${server.url}/securetoken.googleapis.com/v1/token?key=${server.apiKey}`, { grant_type: 'refresh_token', refresh_token: done.body.refreshToken });
    assert.equal(claimsOf(refreshed.body.id_token).firebase.sign_in_second_factor, 'totp');
    await refused(finalize({ mfaPendingCredential: pending, mfaEnrollmentId: account.enrollmentId, totpVerificationInfo: { verificationCode: account.device.next() } }), 'INVALID_MFA_PENDING_CREDENTIAL : The MFA pending credential was already used.');
  });

  test('forged, tampered, oversized and foreign pending credentials are INVALID_MFA_PENDING_CREDENTIAL', async () => {
    const account = await enrolled();
    const pending = await pendingFor(account.email);
    const attempt = (mfaPendingCredential: string, key?: string) =>
      v2('mfaSignIn:finalize', { mfaPendingCredential, mfaEnrollmentId: account.enrollmentId, totpVerificationInfo: { verificationCode: account.device.codeFromNow(0) } }, key);
    const middle = Math.floor(pending.length / 2);
    const tampered = pending.slice(0, middle) + (pending[middle] === 'A' ? 'B' : 'A') + pending.slice(middle + 1);
    for (const forged of ['abc', 'v1.', 'v1.' + Buffer.from(JSON.stringify({ u: account.localId })).toString('base64url'), tampered, 'v1.' + 'x'.repeat(200_000)]) {
      await refused(attempt(forged), 'INVALID_MFA_PENDING_CREDENTIAL');
    }
    // The same credential at another project (named by its own API key) does not open.
    const otherConfig = await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/projects/mfa-other/config`, { headers: { authorization: `Bearer ${server.adminKey}` } });
    const otherKey = ((await otherConfig.json()) as { apiKeys: string[] }).apiKeys[0]!;
    await refused(attempt(pending, otherKey), 'INVALID_MFA_PENDING_CREDENTIAL');
    await refused(v2('mfaSignIn:start', { mfaPendingCredential: pending, mfaEnrollmentId: account.enrollmentId }, otherKey), 'INVALID_MFA_PENDING_CREDENTIAL');
  });

  test('start: missing credential and factor; a TOTP factor has no code to send', async () => {
    const account = await enrolled();
    const pending = await pendingFor(account.email);
    await refused(v2('mfaSignIn:start', { mfaEnrollmentId: account.enrollmentId }), 'MISSING_MFA_PENDING_CREDENTIAL : Request does not have MFA pending credential.');
    await refused(v2('mfaSignIn:start', { mfaPendingCredential: pending }), 'MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided.');
    await refused(v2('mfaSignIn:start', { mfaPendingCredential: pending, mfaEnrollmentId: 'unknown' }), 'MFA_ENROLLMENT_NOT_FOUND');
    await refused(v2('mfaSignIn:start', { mfaPendingCredential: pending, mfaEnrollmentId: account.enrollmentId, phoneSignInInfo: {} }), 'INVALID_ARGUMENT : This second factor is not an SMS one; it has no code to send.');
  });

  test('a pending credential dies with the sessions (password change), a disabled account and a deleted one', async () => {
    const revoked = await enrolled();
    const pending = await pendingFor(revoked.email);
    await new Promise((r) => setTimeout(r, 1100)); // revocation is at one-second granularity
    assert.equal((await v1('update', { idToken: revoked.idToken, password: 'secret34', returnSecureToken: true })).status, 200);
    const finalize = (account: Enrolled, credential: string) =>
      v2('mfaSignIn:finalize', { mfaPendingCredential: credential, mfaEnrollmentId: account.enrollmentId, totpVerificationInfo: { verificationCode: account.device.next() } });
    await refused(finalize(revoked, pending), "INVALID_MFA_PENDING_CREDENTIAL : The account's sessions were revoked; sign in again.");

    const disabled = await enrolled();
    const disabledPending = await pendingFor(disabled.email);
    await adminPost(server, '/accounts:update', { localId: disabled.localId, disableUser: true });
    await refused(finalize(disabled, disabledPending), 'USER_DISABLED');

    const deleted = await enrolled();
    const deletedPending = await pendingFor(deleted.email);
    await adminPost(server, '/accounts:delete', { localId: deleted.localId });
    await refused(finalize(deleted, deletedPending), 'INVALID_MFA_PENDING_CREDENTIAL : The account is gone.');
  });
});

describe('secrets', () => {
  test('the shared secret is sealed in the database and never logged; codes and pending credentials are not logged', async () => {
    const account = await enrolled();
    const pending = await pendingFor(account.email);
    const code = account.device.next();
    const done = await v2('mfaSignIn:finalize', { mfaPendingCredential: pending, mfaEnrollmentId: account.enrollmentId, totpVerificationInfo: { verificationCode: code } });
    assert.equal(done.status, 200);
    for (const secret of [account.secret, pending, `"${code}"`]) assert.ok(!logs.includes(secret), 'a secret reached the log');
    assert.ok(logs.includes('mfaSignIn'), 'the requests were logged (so the check above looked at something)');

    const [row] = await storedRows(server.dataDir, 'SELECT record FROM users WHERE local_id = ?', [account.localId]);
    const record = String(row!.record);
    assert.ok(record.includes('sealedSecret'));
    assert.ok(!record.includes(account.secret), 'the secret is not stored in the clear');
    if (testBackend === 'sqlite') assert.equal(statSync(join(server.dataDir, 'mfa-key')).mode & 0o777, 0o600);
    assert.equal(Buffer.from(await storedSecret(server.dataDir, 'mfa-key'), 'base64url').length, 32);
  });
});
