/**
 * Recovery codes over raw HTTP (Hearth's v2 accounts/recoveryCodes:generate|lookup and
 * mfaSignIn:finalize with recoveryCodeVerificationInfo): made only by a recent sign-in that passed
 * the second step, shown once, stored as keyed hashes only, each good for one sign-in; hostile
 * input (wrong, used, malformed, oversized codes, another account's pending credential, an expired
 * one, accounts without a second factor) answered as error JSON, never a 500; wrong codes
 * throttled; uses recorded in the audit log; codes dropped with the last second factor.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { storedRows, testBackend } from '../helpers/test-backend.js';
import { TotpDevice } from '../helpers/totp-device.js';

let server: TestHearth;
/** The server's MFA clock runs this far ahead of the wall clock (pending credentials expire by it). */
let skewMs = 0;

before(async () => {
  server = await startHearth({ clock: () => Date.now() + skewMs });
});
after(() => server.close());

const v1 = (path: string, body: unknown) => postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:${path}?key=${server.apiKey}`, body);
const v2 = (path: string, body: unknown) => postJson(`${server.url}/identitytoolkit.googleapis.com/v2/accounts/${path}?key=${server.apiKey}`, body);

async function refused(answer: Promise<{ status: number; body: any }>, message: string | RegExp, status = 400): Promise<void> {
  const { status: got, body } = await answer;
  assert.equal(got, status, JSON.stringify(body));
  assert.equal(typeof body.error?.message, 'string', JSON.stringify(body));
  if (typeof message === 'string') assert.equal(body.error.message.split(' : ')[0], message, JSON.stringify(body));
  else assert.match(body.error.message, message);
}

interface Account {
  email: string;
  localId: string;
  idToken: string;
  enrollmentId: string;
  device: TotpDevice;
}

async function verifiedAccount(): Promise<{ email: string; localId: string; idToken: string }> {
  const email = uniqueEmail('recovery');
  const created = await v1('signUp', { email, password: 'secret12', returnSecureToken: true });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal((await adminPost(server, '/accounts:update', { localId: created.body.localId, emailVerified: true })).status, 200);
  return { email, localId: created.body.localId, idToken: created.body.idToken };
}

/** An account with a TOTP factor; its idToken is the enrolling session's (it passed the factor). */
async function enrolled(): Promise<Account> {
  const account = await verifiedAccount();
  const start = await v2('mfaEnrollment:start', { idToken: account.idToken, totpEnrollmentInfo: {} });
  assert.equal(start.status, 200, JSON.stringify(start.body));
  const device = new TotpDevice(start.body.totpSessionInfo.sharedSecretKey);
  const done = await v2('mfaEnrollment:finalize', { idToken: account.idToken, displayName: 'app', totpVerificationInfo: { sessionInfo: start.body.totpSessionInfo.sessionInfo, verificationCode: device.next() } });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  const lookup = await v1('lookup', { idToken: done.body.idToken });
  return { ...account, idToken: done.body.idToken, enrollmentId: lookup.body.users[0].mfaInfo[0].mfaEnrollmentId, device };
}

async function generate(account: Account): Promise<string[]> {
  const answer = await v2('recoveryCodes:generate', { idToken: account.idToken });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.recoveryCodes;
}

async function pendingFor(email: string): Promise<string> {
  const first = await v1('signInWithPassword', { email, password: 'secret12', returnSecureToken: true });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.ok(first.body.mfaPendingCredential, 'the second step is asked for');
  return first.body.mfaPendingCredential;
}

const withCode = (mfaPendingCredential: string, recoveryCode: unknown) => v2('mfaSignIn:finalize', { mfaPendingCredential, recoveryCodeVerificationInfo: { recoveryCode } });

function claimsOf(idToken: string): Record<string, any> {
  return JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString());
}

describe('making codes', () => {
  test('ten readable codes, shown once; lookup and accounts:lookup tell only how many remain', async () => {
    const account = await enrolled();
    const codes = await generate(account);
    assert.equal(codes.length, 10);
    for (const code of codes) assert.match(code, /^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/);
    assert.equal(new Set(codes).size, 10);
    const status = await v2('recoveryCodes:lookup', { idToken: account.idToken });
    assert.equal(status.status, 200, JSON.stringify(status.body));
    assert.equal(status.body.remainingCount, 10);
    assert.ok(Date.parse(status.body.generateTime) > 0);
    assert.equal(status.body.recoveryCodes, undefined, 'the codes are never shown again');
    const own = await v1('lookup', { idToken: account.idToken });
    assert.equal(own.body.users[0].recoveryCodesRemaining, 10);
    const admin = await adminPost(server, '/accounts:lookup', { localId: [account.localId] });
    assert.equal(admin.body.users[0].recoveryCodesRemaining, 10);
    for (const code of codes) assert.ok(!JSON.stringify(admin.body).includes(code));
  });

  test('a new set replaces the old one', async () => {
    const account = await enrolled();
    const first = await generate(account);
    const second = await generate(account);
    assert.equal(first.filter((code) => second.includes(code)).length, 0);
    await refused(withCode(await pendingFor(account.email), first[0]), 'INVALID_CODE');
    const done = await withCode(await pendingFor(account.email), second[0]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
  });

  test('only for an account with a second factor, a recent sign-in that passed it, and a valid ID token', async () => {
    const plain = await verifiedAccount();
    await refused(v2('recoveryCodes:generate', { idToken: plain.idToken }), 'MFA_ENROLLMENT_NOT_FOUND');
    assert.equal((await v2('recoveryCodes:lookup', { idToken: plain.idToken })).body.remainingCount, 0);
    await refused(v2('recoveryCodes:generate', {}), 'MISSING_ID_TOKEN');
    await refused(v2('recoveryCodes:generate', { idToken: 'not.a.token' }), /^INVALID_ID_TOKEN/);
    await refused(v2('recoveryCodes:generate', { idToken: 'x'.repeat(100_000) }), /^INVALID_ID_TOKEN/);
    await refused(v2('recoveryCodes:generate', { idToken: 7 }), /./);
    await refused(v2('recoveryCodes:generate', { idToken: plain.idToken, extra: true }), /./);

    // An administrator gives factors: a password-only session has not passed the second step.
    const given = await verifiedAccount();
    const set = await adminPost(server, '/accounts:update', { localId: given.localId, mfa: { enrollments: [{ phoneInfo: '+15555550100', displayName: 'phone' }] } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const fresh = await v1('lookup', { idToken: given.idToken });
    assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
    await refused(v2('recoveryCodes:generate', { idToken: given.idToken }), 'CREDENTIAL_TOO_OLD_LOGIN_AGAIN');
  });

  test('a sign-in long ago is refused as stale (auth/requires-recent-login)', async () => {
    const stale = await startHearth({ recentLoginSeconds: 2 });
    const call = (path: string, body: unknown) => postJson(`${stale.url}/identitytoolkit.googleapis.com/${path}?key=${stale.apiKey}`, body);
    try {
      const email = uniqueEmail('recovery-stale');
      const created = await call('v1/accounts:signUp', { email, password: 'secret12', returnSecureToken: true });
      assert.equal((await adminPost(stale, '/accounts:update', { localId: created.body.localId, emailVerified: true })).status, 200);
      const start = await call('v2/accounts/mfaEnrollment:start', { idToken: created.body.idToken, totpEnrollmentInfo: {} });
      const device = new TotpDevice(start.body.totpSessionInfo.sharedSecretKey);
      const done = await call('v2/accounts/mfaEnrollment:finalize', { idToken: created.body.idToken, totpVerificationInfo: { sessionInfo: start.body.totpSessionInfo.sessionInfo, verificationCode: device.next() } });
      assert.equal(done.status, 200, JSON.stringify(done.body));
      await new Promise((resolve) => setTimeout(resolve, 3100));
      const answer = await call('v2/accounts/recoveryCodes:generate', { idToken: done.body.idToken });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.error.message, 'CREDENTIAL_TOO_OLD_LOGIN_AGAIN');
    } finally {
      await stale.close();
    }
  });
});

describe('signing in with a code', () => {
  test('a code finishes the second step once; the ID token names it; the hash leaves the account', async () => {
    const account = await enrolled();
    const codes = await generate(account);
    const pending = await pendingFor(account.email);
    // Upper case, spaces instead of dashes: read off paper, typed as it comes.
    const done = await withCode(pending, codes[3]!.toUpperCase().replace(/-/g, ' '));
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(done.body.idToken && done.body.refreshToken);
    const claims = claimsOf(done.body.idToken);
    assert.equal(claims.sub, account.localId);
    assert.equal(claims.firebase.sign_in_provider, 'password');
    assert.equal(claims.firebase.sign_in_second_factor, 'recovery_code');
    // The pending credential was spent.
    await refused(withCode(pending, codes[4]), 'INVALID_MFA_PENDING_CREDENTIAL');
    // The same code again, on a new first step: used.
    await refused(withCode(await pendingFor(account.email), codes[3]), 'INVALID_CODE');
    assert.equal((await v2('recoveryCodes:lookup', { idToken: done.body.idToken })).body.remainingCount, 9);
    // The session refreshes and can remove the lost factor (it passed the second step).
    const refreshed = await postJson(`${server.url}/securetoken.googleapis.com/v1/token?key=${server.apiKey}`, { grant_type: 'refresh_token', refresh_token: done.body.refreshToken });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal(claimsOf(refreshed.body.id_token).firebase.sign_in_second_factor, 'recovery_code');
    const withdrawn = await v2('mfaEnrollment:withdraw', { idToken: done.body.idToken, mfaEnrollmentId: account.enrollmentId });
    assert.equal(withdrawn.status, 200, JSON.stringify(withdrawn.body));
  });

  test('every code works once: all ten, then none', async () => {
    const account = await enrolled();
    const codes = await generate(account);
    for (const code of codes) {
      const done = await withCode(await pendingFor(account.email), code);
      assert.equal(done.status, 200, JSON.stringify(done.body));
    }
    const lookup = await adminPost(server, '/accounts:lookup', { localId: [account.localId] });
    assert.equal(lookup.body.users[0].recoveryCodesRemaining, 0);
    await refused(withCode(await pendingFor(account.email), codes[0]), 'INVALID_CODE');
  });

  test('two concurrent uses of one code: one session', async () => {
    const account = await enrolled();
    const [code] = await generate(account);
    const [a, b] = await Promise.all([pendingFor(account.email), pendingFor(account.email)]);
    const answers = await Promise.all([withCode(a, code), withCode(b, code)]);
    assert.deepEqual(answers.map((x) => x.status).sort(), [200, 400], JSON.stringify(answers.map((x) => x.body)));
  });

  test('hostile input: wrong, malformed, oversized, typed wrong, mixed with a factor; never a 500', async () => {
    const account = await enrolled();
    const codes = await generate(account);
    const pending = await pendingFor(account.email);
    await refused(withCode(pending, 'abcd-efgh-jkmn'), 'INVALID_CODE');
    await refused(withCode(pending, ''), 'MISSING_CODE');
    await refused(withCode(pending, 'x'.repeat(200_000)), 'INVALID_CODE');
    await refused(withCode(pending, '💥'.repeat(12)), 'INVALID_CODE');
    await refused(withCode(pending, 12345678), /./);
    await refused(withCode(pending, { $ne: '' }), /./);
    await refused(withCode(pending, null), 'MISSING_CODE');
    await refused(v2('mfaSignIn:finalize', { mfaPendingCredential: pending, recoveryCodeVerificationInfo: 'abc' }), /./);
    await refused(v2('mfaSignIn:finalize', { mfaPendingCredential: pending, recoveryCodeVerificationInfo: { recoveryCode: codes[0], other: 1 } }), /./);
    await refused(v2('mfaSignIn:finalize', { mfaPendingCredential: pending, mfaEnrollmentId: account.enrollmentId, totpVerificationInfo: { verificationCode: account.device.next() }, recoveryCodeVerificationInfo: { recoveryCode: codes[0] } }), 'INVALID_ARGUMENT');
    await refused(v2('mfaSignIn:finalize', { recoveryCodeVerificationInfo: { recoveryCode: codes[0] } }), 'MISSING_CREDENTIAL');
    await refused(v2('mfaSignIn:finalize', { mfaPendingCredential: 'forged', recoveryCodeVerificationInfo: { recoveryCode: codes[0] } }), 'INVALID_MFA_PENDING_CREDENTIAL');
    // Wrong guesses did not use anything up: the right code still works (the address had four wrong ones, under the five free).
    const done = await withCode(pending, codes[0]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
  });

  test('another account\'s pending credential does not take this account\'s code', async () => {
    const victim = await enrolled();
    const victimCodes = await generate(victim);
    const attacker = await enrolled();
    await generate(attacker);
    await refused(withCode(await pendingFor(attacker.email), victimCodes[0]), 'INVALID_CODE');
    // Nor does a pending credential of another project's server (or a tampered one).
    const pending = await pendingFor(victim.email);
    await refused(withCode(`${pending.slice(0, -4)}AAAA`, victimCodes[0]), 'INVALID_MFA_PENDING_CREDENTIAL');
    const done = await withCode(pending, victimCodes[0]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(claimsOf(done.body.idToken).sub, victim.localId);
  });

  test('an expired pending credential is refused and the code kept', async () => {
    const account = await enrolled();
    const [code] = await generate(account);
    const pending = await pendingFor(account.email);
    skewMs = 6 * 60_000;
    try {
      await refused(withCode(pending, code), 'INVALID_MFA_PENDING_CREDENTIAL');
    } finally {
      skewMs = 0;
    }
    const done = await withCode(await pendingFor(account.email), code);
    assert.equal(done.status, 200, JSON.stringify(done.body));
  });

  test('wrong codes are throttled per account and address: five, then TOO_MANY_ATTEMPTS_TRY_LATER even for a right one', async () => {
    const account = await enrolled();
    const codes = await generate(account);
    const pending = await pendingFor(account.email);
    for (let i = 0; i < 5; i++) await refused(withCode(pending, `zzzz-zzzz-zzz${i}`), 'INVALID_CODE');
    await refused(withCode(pending, codes[0]), 'TOO_MANY_ATTEMPTS_TRY_LATER');
  });

  test('an account without a second factor never gets a pending credential; codes are dropped with the last factor', async () => {
    const plain = await verifiedAccount();
    const first = await v1('signInWithPassword', { email: plain.email, password: 'secret12', returnSecureToken: true });
    assert.ok(first.body.idToken && !first.body.mfaPendingCredential);

    const account = await enrolled();
    const codes = await generate(account);
    const withdrawn = await v2('mfaEnrollment:withdraw', { idToken: account.idToken, mfaEnrollmentId: account.enrollmentId });
    assert.equal(withdrawn.status, 200, JSON.stringify(withdrawn.body));
    const [row] = await storedRows(server.dataDir, 'SELECT record FROM users WHERE local_id = ?', [account.localId]);
    assert.equal(JSON.parse(String(row!.record)).recoveryCodes, undefined, 'the hashes are gone');
    assert.equal((await v2('recoveryCodes:lookup', { idToken: withdrawn.body.idToken })).body.remainingCount, 0);
    // A new factor: the old codes stay dead.
    const start = await v2('mfaEnrollment:start', { idToken: withdrawn.body.idToken, totpEnrollmentInfo: {} });
    const device = new TotpDevice(start.body.totpSessionInfo.sharedSecretKey);
    const again = await v2('mfaEnrollment:finalize', { idToken: withdrawn.body.idToken, totpVerificationInfo: { sessionInfo: start.body.totpSessionInfo.sessionInfo, verificationCode: device.next() } });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    await refused(withCode(await pendingFor(account.email), codes[1]), 'INVALID_CODE');

    // An administrator removing the last factor drops them too.
    const other = await enrolled();
    await generate(other);
    assert.equal((await adminPost(server, '/accounts:update', { localId: other.localId, mfa: {} })).status, 200);
    const [otherRow] = await storedRows(server.dataDir, 'SELECT record FROM users WHERE local_id = ?', [other.localId]);
    assert.equal(JSON.parse(String(otherRow!.record)).recoveryCodes, undefined);
  });
});

describe('what is kept', () => {
  test('only keyed hashes are stored: no code in the users row nor anywhere in the database file', async () => {
    const account = await enrolled();
    const codes = await generate(account);
    const done = await withCode(await pendingFor(account.email), codes[0]);
    assert.equal(done.status, 200);
    const [row] = await storedRows(server.dataDir, 'SELECT record FROM users WHERE local_id = ?', [account.localId]);
    const record = JSON.parse(String(row!.record));
    assert.equal(record.recoveryCodes.hashes.length, 9);
    for (const hash of record.recoveryCodes.hashes) assert.match(hash, /^[A-Za-z0-9_-]{43}$/, 'HMAC-SHA-256, base64url');
    const forms = codes.flatMap((code) => [code, code.replace(/-/g, ''), code.toUpperCase()]);
    for (const form of forms) assert.ok(!String(row!.record).includes(form), 'a code is stored in the clear');
    if (testBackend === 'sqlite') {
      for (const file of ['hearth.sqlite', 'hearth.sqlite-wal']) {
        const path = join(server.dataDir, file);
        if (!existsSync(path)) continue;
        const bytes = readFileSync(path).toString('latin1');
        for (const form of forms) assert.ok(!bytes.includes(form), `${file} holds a code`);
      }
    }
  });

  test('using a code and making codes are recorded in the audit log', async () => {
    const account = await enrolled();
    const codes = await generate(account);
    assert.equal((await withCode(await pendingFor(account.email), codes[0])).status, 200);
    const rows = await storedRows(server.dataDir, 'SELECT operator, summary FROM audit_log ORDER BY id');
    const mine = rows.filter((r) => String(r.summary).includes(account.localId));
    assert.ok(mine.some((r) => /^New recovery codes made/.test(String(r.summary))), JSON.stringify(mine));
    const used = mine.find((r) => /^Signed in with a recovery code/.test(String(r.summary)));
    assert.ok(used, JSON.stringify(mine));
    assert.match(String(used.summary), /9 recovery codes left/);
    assert.equal(used.operator, `user ${account.email}`);
    const [entry] = await storedRows(server.dataDir, 'SELECT path, status FROM audit_log WHERE summary = ?', [used.summary]);
    assert.deepEqual([entry!.path, Number(entry!.status)], ['/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize', 200]);
    for (const code of codes) assert.ok(!JSON.stringify(rows).includes(code));
  });
});
