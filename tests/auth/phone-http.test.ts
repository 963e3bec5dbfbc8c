/**
 * Phone sign-in over raw HTTP: Google's exact error answers, hostile input (never a 500), guessing
 * and flooding (concurrent guesses get no extra tries; limits per client address survive a
 * restart), codes never stored or logged in clear, the emulator and outbox endpoints, production
 * mode, and an identity call Hearth does not serve as the SDK sees it.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { storedRows } from '../helpers/test-backend.js';
import pino from 'pino';
import { deleteApp, initializeApp } from 'firebase/app';
import { connectAuthEmulator, inMemoryPersistence, initializeAuth, revokeAccessToken, signInAnonymously } from 'firebase/auth';
import { patchProjectConfig } from '../helpers/admin-http.js';
import { newHumanCheckToken } from '../helpers/human-check.js';
import { postJson, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let logText = '';
const v1 = (name: string, target: TestHearth = server) => `${target.url}/identitytoolkit.googleapis.com/v1/accounts:${name}?key=${target.apiKey}`;
const v3 = (name: string, target: TestHearth = server) => `${target.url}/www.googleapis.com/identitytoolkit/v3/relyingparty/${name}?key=${target.apiKey}`;
const generousLimits = { perNumber: { maxFailures: 100, windowMs: 3600_000 }, perAddress: { maxFailures: 10_000, windowMs: 3600_000 } };
const token = 'dev-token-never-logged';

before(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logText += chunk.toString();
      done();
    },
  });
  server = await startHearth({ logLevel: 'debug', smsLimits: generousLimits }, pino({ level: 'debug' }, sink));
});

after(async () => {
  await server.close();
});

let numbers = 0;
function phoneNumber(): string {
  numbers++;
  return `+4477009${String(numbers).padStart(5, '0')}`;
}

function assertAuthError(response: { status: number; body: any }, message: string, status = 400): void {
  assert.deepEqual(response, { status, body: { error: { code: status, message, errors: [{ message, domain: 'global', reason: status === 404 ? 'notFound' : 'invalid' }] } } });
}

async function sendCode(number: string, target: TestHearth = server): Promise<{ sessionInfo: string; code: string }> {
  const sent = await postJson(v1('sendVerificationCode', target), { phoneNumber: number, recaptchaToken: token });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  assert.deepEqual(Object.keys(sent.body), ['sessionInfo']);
  const codes = await (await fetch(`${target.url}/emulator/v1/projects/${target.projectId}/verificationCodes`)).json();
  const entry = codes.verificationCodes.find((c: { sessionInfo: string }) => c.sessionInfo === sent.body.sessionInfo);
  assert.deepEqual(Object.keys(entry).sort(), ['code', 'phoneNumber', 'sessionInfo']);
  assert.equal(entry.phoneNumber, number);
  assert.match(entry.code, /^\d{6}$/);
  return { sessionInfo: sent.body.sessionInfo, code: entry.code };
}

const otherCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('answers in the Identity Toolkit shape', () => {
  test('a sign-up answers the session and the number; v3 names answer the same', async () => {
    const number = phoneNumber();
    const { sessionInfo, code } = await sendCode(number);
    const signedIn = await postJson(v1('signInWithPhoneNumber'), { sessionInfo, code });
    assert.equal(signedIn.status, 200);
    assert.deepEqual(Object.keys(signedIn.body).sort(), ['expiresIn', 'idToken', 'isNewUser', 'localId', 'phoneNumber', 'refreshToken']);
    assert.equal(signedIn.body.isNewUser, true);
    assert.equal(signedIn.body.phoneNumber, number);
    assert.equal(signedIn.body.expiresIn, '3600');

    const v3Sent = await postJson(v3('sendVerificationCode'), { phoneNumber: number, recaptchaToken: token });
    assert.equal(v3Sent.status, 200);
    const v3Code = await (await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/verificationCodes`)).json();
    const again = await postJson(v3('verifyPhoneNumber'), { sessionInfo: v3Sent.body.sessionInfo, code: v3Code.verificationCodes.at(-1).code });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.localId, signedIn.body.localId);
    assert.equal(again.body.isNewUser, false);
  });

  test('INVALID_PHONE_NUMBER : Invalid format. for bad and missing numbers', async () => {
    for (const body of [{ phoneNumber: 'abc' }, { phoneNumber: '' }, {}, { phoneNumber: '+1 650' }, { phoneNumber: '+٦٥٠٥٥٥٣٤٣٤' }, { phoneNumber: `+1${'5'.repeat(100_000)}` }]) {
      assertAuthError(await postJson(v1('sendVerificationCode'), { ...body, recaptchaToken: token }), 'INVALID_PHONE_NUMBER : Invalid format.');
    }
  });

  test('code errors: MISSING_SESSION_INFO, MISSING_CODE, INVALID_SESSION_INFO, INVALID_CODE', async () => {
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), {}), 'MISSING_SESSION_INFO');
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { sessionInfo: 'x' }), 'MISSING_CODE');
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { sessionInfo: 'made-up', code: '123456' }), 'INVALID_SESSION_INFO');
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { sessionInfo: 'x'.repeat(100_000), code: '123456' }), 'INVALID_SESSION_INFO');
    const { sessionInfo, code } = await sendCode(phoneNumber());
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { sessionInfo, code: otherCode(code) }), 'INVALID_CODE');
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { sessionInfo, code: `${code}0` }), 'INVALID_CODE');
    assert.equal((await postJson(v1('signInWithPhoneNumber'), { sessionInfo, code })).status, 200);
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { sessionInfo, code }), 'INVALID_SESSION_INFO', 400);
  });

  test('REAUTH for a number without an account is USER_NOT_FOUND; a temporary proof needs its number', async () => {
    const { sessionInfo, code } = await sendCode(phoneNumber());
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { sessionInfo, code, operation: 'REAUTH' }), 'USER_NOT_FOUND');
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { temporaryProof: 'made-up' }), 'MISSING_PHONE_NUMBER');
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { temporaryProof: 'made-up', phoneNumber: phoneNumber() }), 'INVALID_TEMPORARY_PROOF');
  });

  test('linking a number another account has answers 200 with a temporary proof, which is bound to that number', async () => {
    const number = phoneNumber();
    const first = await sendCode(number);
    const holder = await postJson(v1('signInWithPhoneNumber'), first);
    const anonymous = await postJson(v1('signUp'), { returnSecureToken: true });
    const second = await sendCode(number);
    const link = await postJson(v1('signInWithPhoneNumber'), { ...second, idToken: anonymous.body.idToken });
    assert.equal(link.status, 200);
    assert.deepEqual(Object.keys(link.body).sort(), ['phoneNumber', 'temporaryProof', 'temporaryProofExpiresIn']);
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { temporaryProof: link.body.temporaryProof, phoneNumber: phoneNumber() }), 'INVALID_TEMPORARY_PROOF');
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { temporaryProof: link.body.temporaryProof, phoneNumber: number, idToken: anonymous.body.idToken }), 'PHONE_NUMBER_EXISTS');
    const third = await sendCode(number);
    const again = await postJson(v1('signInWithPhoneNumber'), { ...third, idToken: anonymous.body.idToken });
    const signIn = await postJson(v1('signInWithPhoneNumber'), { temporaryProof: again.body.temporaryProof, phoneNumber: number });
    assert.equal(signIn.body.localId, holder.body.localId);
  });

  test('an identity call Hearth does not serve: 404 OPERATION_NOT_ALLOWED, auth/operation-not-allowed in the SDK', async () => {
    const message = 'OPERATION_NOT_ALLOWED : Hearth does not serve POST /identitytoolkit.googleapis.com/v2/accounts:revokeToken.';
    assert.deepEqual(await postJson(`${server.url}/identitytoolkit.googleapis.com/v2/accounts:revokeToken?key=k`, {}), {
      status: 404,
      body: { error: { code: 404, message, status: 'NOT_FOUND', errors: [{ message, domain: 'global', reason: 'notFound' }] } },
    });
    const app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, 'unserved');
    try {
      const auth = initializeAuth(app, { persistence: inMemoryPersistence });
      connectAuthEmulator(auth, server.url, { disableWarnings: true });
      await signInAnonymously(auth);
      await assert.rejects(revokeAccessToken(auth, 'some-apple-token'), (error: { code?: string }) => error.code === 'auth/operation-not-allowed');
    } finally {
      await deleteApp(app);
    }
  });
});

describe('hostile input', () => {
  test('unknown fields, wrong types, oversized tokens and unknown tenants are refused as Google does', async () => {
    const unknown = await postJson(v1('sendVerificationCode'), { phoneNumber: phoneNumber(), recaptchaToken: token, isAdmin: true });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.message, 'Invalid JSON payload received. Unknown name "isAdmin": Cannot find field.');
    for (const body of [{ phoneNumber: 5551234 }, { phoneNumber: ['+15555550100'] }, { phoneNumber: { n: 1 } }]) {
      const answer = await postJson(v1('sendVerificationCode'), { ...body, recaptchaToken: token });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    }
    assert.equal((await postJson(v1('sendVerificationCode'), { phoneNumber: phoneNumber(), recaptchaToken: 'x'.repeat(20_000) })).body.error.status, 'INVALID_ARGUMENT');
    assert.equal((await postJson(v1('signInWithPhoneNumber'), { sessionInfo: 'x', code: 123456 })).body.error.status, 'INVALID_ARGUMENT');
    assert.equal((await postJson(v1('signInWithPhoneNumber'), { sessionInfo: 'x', code: '1', operation: 'DELETE_EVERYTHING' })).body.error.status, 'INVALID_ARGUMENT');
    assertAuthError(await postJson(v1('sendVerificationCode'), { phoneNumber: phoneNumber(), recaptchaToken: token, tenantId: 't1' }), 'TENANT_NOT_FOUND');
  });

  test('a burst of random bodies: all answered, none with a 500', async () => {
    const values = [null, true, 0, -1, 1e308, '', 'a'.repeat(5000), [], [null], {}, '\u0000', '😀', '+1', '000000', 'REAUTH'];
    const fields = ['phoneNumber', 'recaptchaToken', 'sessionInfo', 'code', 'idToken', 'temporaryProof', 'operation', 'captchaResponse', 'clientType'];
    let seed = 12;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 150; i++) {
      const body: Record<string, unknown> = {};
      for (let f = 0; f < 1 + next(4); f++) body[fields[next(fields.length)]!] = values[next(values.length)];
      const name = i % 2 ? 'sendVerificationCode' : 'signInWithPhoneNumber';
      const answer = await postJson(v1(name), body);
      assert.ok(answer.status >= 200 && answer.status < 500, `${name} ${JSON.stringify(body).slice(0, 200)} -> ${answer.status}`);
    }
  });

  test('the code is stored only as a keyed hash; neither it nor the session or the token is logged', async () => {
    const { sessionInfo, code } = await sendCode(phoneNumber());
    await postJson(v1('signInWithPhoneNumber'), { sessionInfo, code: otherCode(code) });
    const rows = await storedRows(server.dataDir, 'SELECT * FROM phone_verifications');
    assert.ok(rows.length > 0);
    const stored = JSON.stringify(rows);
    assert.ok(!stored.includes(sessionInfo), 'no sessionInfo in clear');
    assert.ok(!stored.includes(`"${code}"`), 'no code in clear');
    assert.ok(logText.includes('sendVerificationCode'), 'requests are logged');
    for (const secret of [sessionInfo, code, token]) assert.ok(!logText.includes(secret), `${secret} is not in the log`);
  });
});

describe('guessing and flooding', () => {
  test('30 concurrent wrong guesses on one session get 5 tries between them; the right code is then refused too', async () => {
    const { sessionInfo, code } = await sendCode(phoneNumber());
    const answers = await Promise.all(Array.from({ length: 30 }, () => postJson(v1('signInWithPhoneNumber'), { sessionInfo, code: otherCode(code) })));
    const messages = answers.map((a) => a.body.error?.message as string);
    assert.equal(messages.filter((m) => m === 'INVALID_CODE').length, 5, messages.join(','));
    assert.ok(messages.every((m) => ['INVALID_CODE', 'SESSION_EXPIRED', 'INVALID_SESSION_INFO'].includes(m)), messages.join(','));
    assertAuthError(await postJson(v1('signInWithPhoneNumber'), { sessionInfo, code }), 'SESSION_EXPIRED');
  });

  test('codes per client address: beyond the limit TOO_MANY_ATTEMPTS_TRY_LATER there (after a restart too), other addresses unaffected', async () => {
    const dataDir = tempDataDir();
    const limits = { perNumber: { maxFailures: 100, windowMs: 3600_000 }, perAddress: { maxFailures: 3, windowMs: 3600_000 } };
    const first = await startHearth({ smsLimits: limits, dataDir });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await sendFrom('127.0.0.2', first, phoneNumber())).status, 200);
      assertAuthError(await sendFrom('127.0.0.2', first, phoneNumber()), 'TOO_MANY_ATTEMPTS_TRY_LATER : We have blocked all requests from this device due to unusual activity. Try again later.');
      assert.equal((await sendFrom('127.0.0.3', first, phoneNumber())).status, 200);
    } finally {
      await first.hearth.close();
    }
    const second = await startHearth({ smsLimits: limits, dataDir });
    try {
      assert.equal((await sendFrom('127.0.0.2', second, phoneNumber())).body.error?.message.split(' : ')[0], 'TOO_MANY_ATTEMPTS_TRY_LATER', 'the count survived the restart');
    } finally {
      await second.close();
    }
  });

  test('codes per number: QUOTA_EXCEEDED, whoever asks', async () => {
    const target = await startHearth({ smsLimits: { perNumber: { maxFailures: 2, windowMs: 3600_000 }, perAddress: { maxFailures: 100, windowMs: 3600_000 } } });
    try {
      const victim = phoneNumber();
      assert.equal((await sendFrom('127.0.0.2', target, victim)).status, 200);
      assert.equal((await sendFrom('127.0.0.3', target, victim)).status, 200);
      assertAuthError(await sendFrom('127.0.0.4', target, victim), 'QUOTA_EXCEEDED : Too many codes were sent to this phone number; try again later.');
    } finally {
      await target.close();
    }
  });
});

describe('developer endpoints', () => {
  test('the SMS outbox needs the admin credential, never from another site; DELETE empties it', async () => {
    const number = phoneNumber();
    await sendCode(number);
    const outbox = `${server.url}/hearth/v1/projects/${server.projectId}/smsOutbox`;
    assert.equal((await fetch(outbox)).status, 400);
    const foreign = await fetch(outbox, { headers: { authorization: 'Bearer owner', origin: 'https://evil.example' } });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    const listed = (await (await fetch(outbox, { headers: { authorization: `Bearer ${server.adminKey}` } })).json()) as { messages: Array<{ phoneNumber: string; body: string; code: string }>; delivery: string };
    assert.equal(listed.delivery, 'outbox');
    const message = listed.messages.at(-1)!;
    assert.equal(message.phoneNumber, number);
    assert.equal(message.body, `${message.code} is your verification code for ${server.projectId}.`);
    assert.equal((await fetch(outbox, { method: 'DELETE', headers: { authorization: `Bearer ${server.adminKey}` } })).status, 200);
    const emptied = await (await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/verificationCodes`)).json();
    assert.deepEqual(emptied, { verificationCodes: [] });
  });
});

describe('production mode', () => {
  let production: TestHearth;
  before(async () => {
    production = await startHearth({ dev: false, smsLimits: generousLimits });
  });
  after(async () => {
    await production.close();
  });

  test('phone sign-in is off until enabled; then without an SMS provider codes are refused', async () => {
    const body = { phoneNumber: phoneNumber(), recaptchaToken: token };
    assertAuthError(await postJson(v1('sendVerificationCode', production), body), 'OPERATION_NOT_ALLOWED');
    await patchProjectConfig(production, { signIn: { phoneNumber: { enabled: true } } }, 'signIn.phoneNumber.enabled');
    assertAuthError(await postJson(v1('sendVerificationCode', production), body), 'OPERATION_NOT_ALLOWED : This server has no SMS provider configured, so it cannot send verification codes.');
  });

  test('the emulator\'s verificationCodes list needs the admin credential', async () => {
    const path = `${production.url}/emulator/v1/projects/${production.projectId}/verificationCodes`;
    const open = await fetch(path);
    assertAuthError({ status: open.status, body: await open.json() }, 'ADMIN_ONLY_OPERATION');
    assert.equal((await fetch(path, { headers: { authorization: `Bearer ${production.adminKey}` } })).status, 200);
  });
});

describe('production mode with --sms-outbox', () => {
  test('a made-up token is CAPTCHA_CHECK_FAILED, none is MISSING_RECAPTCHA_TOKEN; a solved challenge sends a code once', async () => {
    const target = await startHearth({ dev: false, smsOutbox: true, smsLimits: generousLimits });
    try {
      await patchProjectConfig(target, { signIn: { phoneNumber: { enabled: true } } }, 'signIn.phoneNumber.enabled');
      assertAuthError(await postJson(v1('sendVerificationCode', target), { phoneNumber: phoneNumber() }), 'MISSING_RECAPTCHA_TOKEN');
      assertAuthError(
        await postJson(v1('sendVerificationCode', target), { phoneNumber: phoneNumber(), recaptchaToken: 'made-up' }),
        'CAPTCHA_CHECK_FAILED : Recaptcha verification failed - MALFORMED',
      );
      // A token from Hearth's stand-in (as a page's RecaptchaVerifier gets it) buys one code, then it is spent.
      const human = await newHumanCheckToken(target);
      const number = phoneNumber();
      const sent = await postJson(v1('sendVerificationCode', target), { phoneNumber: number, recaptchaToken: human });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      assertAuthError(
        await postJson(v1('sendVerificationCode', target), { phoneNumber: number, recaptchaToken: human }),
        'CAPTCHA_CHECK_FAILED : Recaptcha verification failed - DUPLICATE',
      );
      const codes = await (await fetch(`${target.url}/emulator/v1/projects/${target.projectId}/verificationCodes`, { headers: { authorization: `Bearer ${target.adminKey}` } })).json();
      const entry = codes.verificationCodes.find((c: { sessionInfo: string }) => c.sessionInfo === sent.body.sessionInfo);
      const signedIn = await postJson(v1('signInWithPhoneNumber', target), { sessionInfo: sent.body.sessionInfo, code: entry.code });
      assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
      assert.equal(signedIn.body.phoneNumber, number);
    } finally {
      await target.close();
    }
  });
});

/** A raw sendVerificationCode from a given loopback source address (a flood needs no SDK). */
function sendFrom(localAddress: string, target: TestHearth, number: string): Promise<{ status: number; body: any }> {
  const body = JSON.stringify({ phoneNumber: number, recaptchaToken: token });
  return new Promise((resolve, reject) => {
    const req = request(
      v1('sendVerificationCode', target),
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
