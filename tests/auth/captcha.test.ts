/**
 * Hearth's reCAPTCHA stand-in on the server, through raw HTTP and the HumanCheck that identity calls
 * use: the site key getRecaptchaParam / recaptchaParams answer, a challenge solved with altcha-lib's
 * own solver and redeemed for a token, tokens accepted once (also across a restart and under
 * concurrent use) and only for their project, expired ones and forged answers refused with
 * CAPTCHA_CHECK_FAILED, MISSING_RECAPTCHA_TOKEN, floods of challenges cut off per address, hostile
 * input answered in Google's error shape (never a 500), and tokens kept out of the logs.
 */
import assert from 'node:assert/strict';
import { rmSync, statSync } from 'node:fs';
import { storedSecret, testBackend } from '../helpers/test-backend.js';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Script } from 'node:vm';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { defaultHumanCheckOptions, type HumanCheckOptions } from '../../packages/server/src/auth/captcha/human-check.js';
import { ApiError } from '../../packages/server/src/http/api-error.js';
import { postJson, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { challengeFor, challengeUrl, newHumanCheckToken as newToken, redeemUrl, siteKeyOf, solve } from '../helpers/human-check.js';

let server: TestHearth;
let devServer: TestHearth;
let logText = '';

function captcha(overrides: Partial<HumanCheckOptions>): HumanCheckOptions {
  return { ...defaultHumanCheckOptions, ...overrides };
}

before(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logText += chunk.toString();
      done();
    },
  });
  // Outside --dev: tokens are really checked.
  server = await startHearth({ dev: false, logLevel: 'debug' }, pino({ level: 'debug' }, sink));
  devServer = await startHearth();
});

after(async () => {
  await server.close();
  await devServer.close();
});

/** The identity error a HumanCheck call threw, as the wire would carry it. */
async function refusal(call: Promise<void>): Promise<{ status: number; message: string }> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof ApiError, String(error));
    return { status: error.httpStatus, message: error.toBody().error.message };
  }
  assert.fail('the token was accepted');
}

const checkFailed = (reason: string) => ({ status: 400, message: `CAPTCHA_CHECK_FAILED : Recaptcha verification failed - ${reason}` });

function assertGoogleError(response: { status: number; body: any }, status: number, message: string): void {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.equal(response.body.error.code, status);
  assert.equal(response.body.error.message, message);
}

describe('the site key', () => {
  test('recaptchaParams (v1) and getRecaptchaParam (v3) answer the project site key, which gets challenges', async () => {
    const v1 = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/recaptchaParams?key=${server.apiKey}`);
    const v3 = await fetch(`${server.url}/www.googleapis.com/identitytoolkit/v3/relyingparty/getRecaptchaParam?key=${server.apiKey}`);
    const siteKey = server.hearth.humanCheck.siteKey(server.projectId);
    for (const response of [v1, v3]) {
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { kind: 'identitytoolkit#GetRecaptchaParamResponse', recaptchaSiteKey: siteKey });
    }
    assert.notEqual(siteKey, server.hearth.humanCheck.siteKey('another-project'));
    assert.equal((await postJson(challengeUrl(server), { siteKey })).status, 200);
  });

  test('an unknown API key gets INVALID_API_KEY, and a made-up or altered site key no challenge', async () => {
    const unknown = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/recaptchaParams?key=not-a-key`);
    assertGoogleError({ status: unknown.status, body: await unknown.json() }, 400, 'INVALID_API_KEY : API key not valid. Please pass a valid API key.');
    const siteKey = await siteKeyOf(server);
    const [project, mac] = siteKey.split('.');
    const otherProject = `${Buffer.from('someone-else').toString('base64url')}.${mac}`;
    for (const forged of ['hearth', `${project}.${mac![0] === 'A' ? 'B' : 'A'}${mac!.slice(1)}`, otherProject, `${siteKey}.x`, '.', `${project}.`]) {
      assertGoogleError(await postJson(challengeUrl(server), { siteKey: forged }), 400, 'Invalid site key.');
    }
  });
});

describe('tokens', () => {
  test('a solved challenge buys a token that HumanCheck accepts once', async () => {
    const token = await newToken(server);
    await server.hearth.humanCheck.verify(server.projectId, token);
    assert.deepEqual(await refusal(server.hearth.humanCheck.verify(server.projectId, token)), checkFailed('DUPLICATE'));
  });

  test('a challenge buys one token', async () => {
    const challenge = await challengeFor(server, await siteKeyOf(server));
    const solution = await solve(challenge);
    const first = await postJson(redeemUrl(server), { challenge, solution });
    assert.equal(first.status, 200);
    assert.equal(typeof first.body.expiresIn, 'number');
    assertGoogleError(await postJson(redeemUrl(server), { challenge, solution }), 400, 'CAPTCHA_CHECK_FAILED : Recaptcha verification failed - DUPLICATE');
  });

  test('forged answers are refused: a wrong key, altered parameters, another instance\'s challenge', async () => {
    const siteKey = await siteKeyOf(server);
    const challenge = await challengeFor(server, siteKey);
    const solution = await solve(challenge);
    const flipped = `${solution.derivedKey.slice(0, -1)}${solution.derivedKey.endsWith('0') ? '1' : '0'}`;
    const failures = [
      { body: { challenge, solution: { ...solution, derivedKey: flipped } }, reason: 'INVALID_SOLUTION' },
      // Cheaper work, another project, a later expiry: the signature no longer matches.
      { body: { challenge: { ...challenge, parameters: { ...challenge.parameters, cost: 1 } }, solution }, reason: 'MALFORMED' },
      { body: { challenge: { ...challenge, parameters: { ...challenge.parameters, data: { project: 'another-project' } } }, solution }, reason: 'MALFORMED' },
      { body: { challenge: { ...challenge, parameters: { ...challenge.parameters, expiresAt: challenge.parameters.expiresAt! + 3600 } }, solution }, reason: 'MALFORMED' },
      { body: { challenge: { ...challenge, signature: '00'.repeat(32) }, solution }, reason: 'MALFORMED' },
    ];
    for (const { body, reason } of failures) {
      assertGoogleError(await postJson(redeemUrl(server), body), 400, `CAPTCHA_CHECK_FAILED : Recaptcha verification failed - ${reason}`);
    }
    // A challenge from another Hearth (its own key) is answered correctly but was not signed here.
    const foreign = await challengeFor(devServer, await siteKeyOf(devServer));
    assertGoogleError(await postJson(redeemUrl(server), { challenge: foreign, solution: await solve(foreign) }), 400, 'CAPTCHA_CHECK_FAILED : Recaptcha verification failed - MALFORMED');
    // None of the refusals used the challenge up.
    assert.equal((await postJson(redeemUrl(server), { challenge, solution })).status, 200);
  });

  test('MISSING_RECAPTCHA_TOKEN without a token; made-up tokens fail the check', async () => {
    const humanCheck = server.hearth.humanCheck;
    assert.deepEqual(await refusal(humanCheck.verify(server.projectId, undefined)), { status: 400, message: 'MISSING_RECAPTCHA_TOKEN' });
    assert.deepEqual(await refusal(humanCheck.verify(server.projectId, '')), { status: 400, message: 'MISSING_RECAPTCHA_TOKEN' });
    const token = await newToken(server);
    const lookalike = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const madeUp of ['x', 'hearth-no-recaptcha', lookalike, `${token} `, token.repeat(50)]) {
      assert.deepEqual(await refusal(humanCheck.verify(server.projectId, madeUp)), checkFailed('MALFORMED'));
    }
    await humanCheck.verify(server.projectId, token);
  });

  test('a token is good for its own project only', async () => {
    const token = await newToken(server, server.hearth.humanCheck.siteKey('another-project'));
    assert.deepEqual(await refusal(server.hearth.humanCheck.verify(server.projectId, token)), checkFailed('SITE_MISMATCH'));
    await server.hearth.humanCheck.verify('another-project', token);
  });

  test('concurrent uses of one token: exactly one succeeds', async () => {
    const token = await newToken(server);
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => server.hearth.humanCheck.verify(server.projectId, token)));
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') assert.equal((outcome.reason as ApiError).wireMessage, 'CAPTCHA_CHECK_FAILED : Recaptcha verification failed - DUPLICATE');
    }
  });

  test('in --dev any non-empty token passes (the SDK\'s appVerificationDisabledForTesting), an empty one does not', async () => {
    await devServer.hearth.humanCheck.verify(devServer.projectId, 'made-up-by-the-sdk-mock');
    assert.deepEqual(await refusal(devServer.hearth.humanCheck.verify(devServer.projectId, '')), { status: 400, message: 'MISSING_RECAPTCHA_TOKEN' });
    // Real tokens are handed out there too.
    await devServer.hearth.humanCheck.verify(devServer.projectId, await newToken(devServer));
  });
});

describe('expiry', () => {
  test('a token not used within its lifetime is refused', async () => {
    const short = await startHearth({ dev: false, captcha: captcha({ tokenLifetimeMs: 50 }) });
    try {
      const token = await newToken(short);
      await new Promise((resolve) => setTimeout(resolve, 80));
      assert.deepEqual(await refusal(short.hearth.humanCheck.verify(short.projectId, token)), checkFailed('EXPIRED'));
    } finally {
      await short.close();
    }
  });

  test('a challenge answered after its lifetime buys nothing', async () => {
    const short = await startHearth({ dev: false, captcha: captcha({ challengeLifetimeMs: 1 }) });
    try {
      const challenge = await challengeFor(short, await siteKeyOf(short));
      const solution = await solve(challenge);
      // Challenges carry their expiry in whole seconds: wait until it has passed.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, challenge.parameters.expiresAt! * 1000 - Date.now()) + 20));
      assertGoogleError(await postJson(redeemUrl(short), { challenge, solution }), 400, 'CAPTCHA_CHECK_FAILED : Recaptcha verification failed - EXPIRED');
    } finally {
      await short.close();
    }
  });
});

describe('across a restart', () => {
  test('used tokens stay used; unused tokens, answered challenges and the site key stay good', async () => {
    const dataDir = tempDataDir();
    try {
      const first = await startHearth({ dev: false, dataDir });
      const siteKey = await siteKeyOf(first);
      const used = await newToken(first);
      const unused = await newToken(first);
      await first.hearth.humanCheck.verify(first.projectId, used);
      const challenge = await challengeFor(first, siteKey);
      const solution = await solve(challenge);
      await first.close();
      if (testBackend === 'sqlite') assert.equal(statSync(join(dataDir, 'captcha-key')).mode & 0o777, 0o600);

      const second = await startHearth({ dev: false, dataDir });
      try {
        assert.equal(await siteKeyOf(second), siteKey);
        assert.deepEqual(await refusal(second.hearth.humanCheck.verify(second.projectId, used)), checkFailed('DUPLICATE'));
        await second.hearth.humanCheck.verify(second.projectId, unused);
        const redeemed = await postJson(redeemUrl(second), { challenge, solution });
        assert.equal(redeemed.status, 200);
        await second.hearth.humanCheck.verify(second.projectId, redeemed.body.token as string);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('abuse', () => {
  test('a flood of challenge requests from one address is cut off; other addresses are still served', async () => {
    const limited = await startHearth({ dev: false, captcha: captcha({ challengesPerAddress: { maxFailures: 5, windowMs: 60_000 } }) });
    try {
      const siteKey = await siteKeyOf(limited);
      for (let i = 0; i < 5; i++) assert.equal((await postJson(challengeUrl(limited), { siteKey })).status, 200);
      const cut = await postJson(challengeUrl(limited), { siteKey });
      assert.deepEqual(cut, {
        status: 400,
        body: {
          error: {
            code: 400,
            message: 'TOO_MANY_ATTEMPTS_TRY_LATER : Too many verification challenges from this address. Try again later.',
            errors: [{ message: 'TOO_MANY_ATTEMPTS_TRY_LATER : Too many verification challenges from this address. Try again later.', domain: 'global', reason: 'invalid' }],
          },
        },
      });
      const elsewhere = await limited.hearth.app.inject({ method: 'POST', url: '/__/auth/recaptcha/challenge', payload: { siteKey }, remoteAddress: '192.0.2.7' });
      assert.equal(elsewhere.statusCode, 200);
    } finally {
      await limited.close();
    }
  });

  test('malformed requests get Google\'s error JSON', async () => {
    const siteKey = await siteKeyOf(server);
    const challenge = await challengeFor(server, siteKey);
    const solution = await solve(challenge);
    const cases: Array<{ url: string; body: unknown; status: number; message: string }> = [
      { url: challengeUrl(server), body: {}, status: 400, message: "Invalid value at 'body': must have required property 'siteKey'" },
      { url: challengeUrl(server), body: { siteKey: 7 }, status: 400, message: "Invalid JSON payload received. Invalid value at 'siteKey' (TYPE_STRING)" },
      { url: challengeUrl(server), body: { siteKey, extra: 1 }, status: 400, message: 'Invalid JSON payload received. Unknown name "extra": Cannot find field.' },
      { url: challengeUrl(server), body: { siteKey: 'k'.repeat(600) }, status: 400, message: "Invalid value at 'siteKey': must NOT have more than 512 characters" },
      { url: challengeUrl(server), body: '{"siteKey":', status: 400, message: "Invalid JSON payload received. Body is not valid JSON but content-type is set to 'application/json'" },
      { url: challengeUrl(server), body: JSON.stringify({ siteKey: 'x'.repeat(9000) }), status: 413, message: 'Request payload size exceeds the limit: 8192 bytes.' },
      { url: redeemUrl(server), body: { challenge }, status: 400, message: "Invalid value at 'body': must have required property 'solution'" },
      { url: redeemUrl(server), body: { challenge, solution: { ...solution, counter: -1 } }, status: 400, message: "Invalid value at 'solution.counter': must be >= 0" },
      { url: redeemUrl(server), body: { challenge, solution: { ...solution, counter: 2 ** 32 } }, status: 400, message: "Invalid value at 'solution.counter': must be <= 4294967295" },
      { url: redeemUrl(server), body: { challenge, solution: { ...solution, counter: 1.5 } }, status: 400, message: "Invalid JSON payload received. Invalid value at 'solution.counter' (TYPE_INTEGER)" },
      { url: redeemUrl(server), body: { challenge, solution: { ...solution, derivedKey: 'ZZ' } }, status: 400, message: `Invalid value at 'solution.derivedKey': must match pattern "^[0-9a-f]+$"` },
      { url: redeemUrl(server), body: { challenge: { ...challenge, parameters: { ...challenge.parameters, memoryCost: 1 } }, solution }, status: 400, message: 'Invalid JSON payload received. Unknown name "challenge.parameters.memoryCost": Cannot find field.' },
      { url: redeemUrl(server), body: { challenge: { ...challenge, parameters: 'x' }, solution }, status: 400, message: "Invalid JSON payload received. Invalid value at 'challenge.parameters' (TYPE_OBJECT)" },
      { url: redeemUrl(server), body: { challenge: { ...challenge, parameters: { ...challenge.parameters, data: { project: 1 } } }, solution }, status: 400, message: "Invalid JSON payload received. Invalid value at 'challenge.parameters.data.project' (TYPE_STRING)" },
      { url: redeemUrl(server), body: '{"challenge":{"__proto__":{"x":1}},"solution":{}}', status: 400, message: "Invalid JSON payload received. Body is not valid JSON but content-type is set to 'application/json'" },
    ];
    for (const { url, body, status, message } of cases) {
      assertGoogleError(await postJson(url, body), status, message);
    }
    const notFound = await fetch(challengeUrl(server));
    assert.deepEqual({ status: notFound.status, body: await notFound.json() }, { status: 404, body: { error: { code: 404, message: 'No route for GET /__/auth/recaptcha/challenge.', status: 'NOT_FOUND' } } });
  });

  test('random mutations of a real answer never get a 500 or a token', async () => {
    const challenge = await challengeFor(server, await siteKeyOf(server));
    const solution = await solve(challenge);
    const values: unknown[] = [null, true, -1, 0, 1e308, '', 'ff', '0'.repeat(64), 'Ω', [], {}, { a: 1 }, 'x'.repeat(200)];
    const fields = [['challenge'], ['solution'], ['challenge', 'signature'], ['challenge', 'parameters'], ...Object.keys(challenge.parameters).map((k) => ['challenge', 'parameters', k]), ['solution', 'derivedKey']];
    // (Not the counter: the derived key is the proof, checked against its signed HMAC; the counter only led to it.)
    let seed = 12345;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 150; i++) {
      const body = JSON.parse(JSON.stringify({ challenge, solution })) as Record<string, any>;
      const path = fields[next(fields.length)]!;
      let target = body;
      for (const key of path.slice(0, -1)) target = target[key];
      target[path[path.length - 1]!] = values[next(values.length)];
      const response = await postJson(redeemUrl(server), body);
      assert.equal(response.status, 400, `${path.join('.')}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error.code, 400);
    }
  });

  test('tokens, answers and keys never reach the logs', async () => {
    const challenge = await challengeFor(server, await siteKeyOf(server));
    const solution = await solve(challenge);
    const redeemed = await postJson(redeemUrl(server), { challenge, solution });
    const token = redeemed.body.token as string;
    await server.hearth.humanCheck.verify(server.projectId, token);
    const captchaKey = await storedSecret(server.dataDir, 'captcha-key');
    assert.match(logText, /recaptcha\/redeem/); // the request was logged, by route
    for (const secret of [token, solution.derivedKey, challenge.signature!, captchaKey]) assert.ok(!logText.includes(secret));
  });
});

describe('the script', () => {
  test('served as JavaScript with revalidation, from any origin; it compiles', async () => {
    const response = await fetch(`${server.url}/__/auth/recaptcha.js`, { headers: { origin: 'https://app.example' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('cross-origin-resource-policy'), 'cross-origin');
    const source = await response.text();
    assert.doesNotThrow(() => new Script(source));
    assert.match(source, /grecaptcha/);
    const etag = response.headers.get('etag');
    assert.ok(etag);
    const again = await fetch(`${server.url}/__/auth/recaptcha.js`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
  });

  test('pages on other origins may call the challenge and redeem endpoints; no cookie is set', async () => {
    const preflight = await fetch(challengeUrl(server), {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://app.example');
    const siteKey = await siteKeyOf(server);
    const response = await fetch(challengeUrl(server), { method: 'POST', headers: { origin: 'https://app.example', 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' }, body: JSON.stringify({ siteKey }) });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(response.headers.get('set-cookie'), null);
    assert.equal(response.headers.get('cache-control'), 'no-store');
  });
});
