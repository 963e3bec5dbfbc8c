/**
 * Raw HTTP against the identity API: exact Google error shapes, hostile and malformed input
 * (never a 500), forged tokens, API keys and the admin credential outside dev mode, and
 * secrets that must never appear in answers or logs.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { storedSecret } from '../helpers/test-backend.js';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { SignJWT, importJWK, type JWK } from 'jose';
import pino from 'pino';
import { deleteApp, initializeApp } from 'firebase/app';
import { connectAuthEmulator, inMemoryPersistence, initializeAuth, signInAnonymously } from 'firebase/auth';
import { uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let logText = '';
const v1 = () => `${server.url}/identitytoolkit.googleapis.com/v1`;
const signUpUrl = () => `${v1()}/accounts:signUp?key=${server.apiKey}`;

before(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logText += chunk.toString();
      done();
    },
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-open-'));
  chmodSync(dataDir, 0o755);
  server = await startHearth({ logLevel: 'debug', dataDir }, pino({ level: 'debug' }, sink));
});

after(async () => {
  await server.close();
  rmSync(server.dataDir, { recursive: true, force: true });
});

function assertGoogleError(response: { status: number; body: any }, status: number, message: string | RegExp): void {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.equal(response.body.error.code, status);
  if (typeof message === 'string') assert.equal(response.body.error.message, message);
  else assert.match(response.body.error.message, message);
}

describe('error answers in the Identity Toolkit shape', () => {
  test('EMAIL_EXISTS, exactly', async () => {
    const email = uniqueEmail();
    assert.equal((await postJson(signUpUrl(), { email, password: 'secret12' })).status, 200);
    const duplicate = await postJson(signUpUrl(), { email, password: 'secret12' });
    assert.deepEqual(duplicate, {
      status: 400,
      body: { error: { code: 400, message: 'EMAIL_EXISTS', errors: [{ message: 'EMAIL_EXISTS', domain: 'global', reason: 'invalid' }] } },
    });
  });

  test('INVALID_EMAIL, WEAK_PASSWORD with its text, MISSING_PASSWORD', async () => {
    assertGoogleError(await postJson(signUpUrl(), { email: 'no-at-sign', password: 'secret12' }), 400, 'INVALID_EMAIL');
    assertGoogleError(await postJson(signUpUrl(), { email: 'a@', password: 'secret12' }), 400, 'INVALID_EMAIL');
    assertGoogleError(await postJson(signUpUrl(), { email: uniqueEmail(), password: '12345' }), 400, 'WEAK_PASSWORD : Password should be at least 6 characters');
    assertGoogleError(await postJson(signUpUrl(), { email: uniqueEmail() }), 400, 'MISSING_PASSWORD');
  });

  test('the text@text rule: anything with one @ and text on both sides is an email', async () => {
    const response = await postJson(signUpUrl(), { email: `odd+name-${Date.now()}@localhost`, password: 'secret12' });
    assert.equal(response.status, 200);
  });
});

describe('malformed and hostile input: a 4xx Google-style error, never a 500', () => {
  test('malformed JSON, wrong types, unknown fields, prototype pollution', async () => {
    assertGoogleError(await postJson(signUpUrl(), '{"email": '), 400, /^Invalid JSON payload received/);
    assertGoogleError(await postJson(signUpUrl(), { email: 42, password: 'secret12' }), 400, /Invalid value at 'email'/);
    assertGoogleError(await postJson(signUpUrl(), { email: uniqueEmail(), password: 'secret12', isAdmin: true }), 400, 'Invalid JSON payload received. Unknown name "isAdmin": Cannot find field.');
    assertGoogleError(await postJson(signUpUrl(), '[1,2,3]'), 400, /Invalid JSON payload received/);
    assertGoogleError(await postJson(signUpUrl(), '{"__proto__": {"isAdmin": true}}'), 400, /./);
    assert.equal((await postJson(signUpUrl(), '{"__proto__": {"isAdmin": true}}')).body.error.status, 'INVALID_ARGUMENT');
  });

  test('a 10 MB body is refused with 413 before it is processed', async () => {
    const big = JSON.stringify({ email: uniqueEmail(), password: 'x'.repeat(10 * 1024 * 1024) });
    assertGoogleError(await postJson(signUpUrl(), big), 413, /exceeds the limit/);
  });

  test('unsupported content type and unknown routes', async () => {
    const response = await fetch(signUpUrl(), { method: 'POST', headers: { 'content-type': 'text/xml' }, body: '<a/>' });
    assert.equal(response.status, 415);
    assert.equal(((await response.json()) as { error: { status: string } }).error.status, 'INVALID_ARGUMENT');
    // An identity call Hearth lacks names a code the SDK knows (auth/operation-not-allowed), not "No route ...".
    assertGoogleError(await postJson(`${v1()}/accounts:doesNotExist?key=k`, {}), 404, /^OPERATION_NOT_ALLOWED : Hearth does not serve POST \/identitytoolkit\.googleapis\.com\/v1\/accounts:doesNotExist\.$/);
    assertGoogleError(await postJson(`${server.url}/somewhere/else`, {}), 404, /^No route for POST \/somewhere\/else\.$/);
  });

  test('a burst of random bodies to every endpoint: all answered, none with a 500', async () => {
    const paths = ['accounts:signUp', 'accounts:signInWithPassword', 'accounts:lookup', 'accounts:update', 'accounts:delete', 'accounts:createAuthUri'];
    const values = [null, true, 0, -1, 1e308, '', 'a'.repeat(5000), [], [null], {}, { a: { b: [] } }, '\u0000', '😀'];
    const fields = ['email', 'password', 'idToken', 'localId', 'displayName', 'photoUrl', 'deleteAttribute', 'identifier', 'continueUri', 'returnSecureToken', 'tenantId'];
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let i = 0; i < 300; i++) {
      const body: Record<string, unknown> = {};
      for (let f = next(4); f > 0; f--) body[fields[next(fields.length)]!] = values[next(values.length)];
      const response = await postJson(`${v1()}/${paths[next(paths.length)]}?key=${server.apiKey}`, body);
      assert.ok(response.status < 500, `${JSON.stringify(body)} -> ${response.status} ${JSON.stringify(response.body)}`);
      if (response.status >= 400) assert.equal(typeof response.body.error.message, 'string');
    }
  });
});

describe('tokens', () => {
  let idToken: string;
  let refreshToken: string;
  before(async () => {
    const response = await postJson(signUpUrl(), { email: uniqueEmail('tokens'), password: 'secret12', returnSecureToken: true });
    idToken = response.body.idToken;
    refreshToken = response.body.refreshToken;
  });
  const lookup = (token: string) => postJson(`${v1()}/accounts:lookup?key=${server.apiKey}`, { idToken: token });

  test('the genuine token works and the answer carries no secret', async () => {
    const response = await lookup(idToken);
    assert.equal(response.status, 200);
    const text = JSON.stringify(response.body);
    assert.ok(!/passwordHash|salt|scrypt/.test(text), text);
  });

  test('a forged payload, alg none, garbage, and a token for another project: INVALID_ID_TOKEN', async () => {
    const [header, payload, signature] = idToken.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'victim' })).toString('base64url')}.${signature}`;
    assertGoogleError(await lookup(forged), 400, 'INVALID_ID_TOKEN');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    assertGoogleError(await lookup(none), 400, 'INVALID_ID_TOKEN');
    assertGoogleError(await lookup('not.a.token'), 400, 'INVALID_ID_TOKEN');

    // A token genuinely signed by Hearth, but for another project, is refused by this one.
    const other = await postJson(`${v1()}/projects/other-project/accounts?key=x`, { email: uniqueEmail('other'), password: 'secret12', returnSecureToken: true }, { authorization: `Bearer ${server.adminKey}` });
    assert.equal(other.status, 200);
    assertGoogleError(await lookup(other.body.idToken), 400, 'INVALID_ID_TOKEN');
  });

  test('a correctly signed but expired token: TOKEN_EXPIRED', async () => {
    const keys = JSON.parse(await storedSecret(server.dataDir, 'signing-keys')) as Array<{ kid: string; privateJwk: JWK }>;
    const key = keys[keys.length - 1]!;
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const past = Math.floor(Date.now() / 1000) - 7200;
    const expired = await new SignJWT({ ...claims, iat: past, exp: past + 3600 })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .sign(await importJWK(key.privateJwk, 'RS256'));
    assertGoogleError(await lookup(expired), 400, 'TOKEN_EXPIRED');
  });

  test('refresh: form-encoded and JSON; bad grant and unknown token refused', async () => {
    const tokenUrl = `${server.url}/securetoken.googleapis.com/v1/token?key=${server.apiKey}`;
    const form = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(refreshToken)}` });
    assert.equal(form.status, 200);
    const formBody = (await form.json()) as Record<string, string>;
    assert.deepEqual(Object.keys(formBody).sort(), ['access_token', 'expires_in', 'id_token', 'project_id', 'refresh_token', 'token_type', 'user_id']);
    assert.equal(formBody.expires_in, '3600');
    const json = await postJson(tokenUrl, { grant_type: 'refresh_token', refresh_token: refreshToken });
    assert.equal(json.status, 200);
    assertGoogleError(await postJson(tokenUrl, { grant_type: 'password', refresh_token: refreshToken }), 400, 'INVALID_GRANT_TYPE');
    assertGoogleError(await postJson(tokenUrl, { grant_type: 'refresh_token', refresh_token: 'made-up' }), 400, 'INVALID_REFRESH_TOKEN');
    assertGoogleError(await postJson(tokenUrl, { grant_type: 'refresh_token' }), 400, 'MISSING_REFRESH_TOKEN');
  });

  test('published keys: x509 certificates and JWKS with the same kids', async () => {
    const x509 = (await (await fetch(`${server.url}/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com`)).json()) as Record<string, string>;
    const jwks = (await (await fetch(`${server.url}/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com`)).json()) as { keys: Array<Record<string, string>> };
    assert.deepEqual(Object.keys(x509).sort(), jwks.keys.map((k) => k.kid).sort());
    for (const pem of Object.values(x509)) assert.match(pem, /^-----BEGIN CERTIFICATE-----/);
    for (const key of jwks.keys) {
      assert.equal(key.d, undefined, 'no private part is published');
      assert.equal(key.alg, 'RS256');
    }
  });
});

describe('CORS for browser apps on other origins', () => {
  test('preflight echoes the origin with credentials', async () => {
    const response = await fetch(signUpUrl(), {
      method: 'OPTIONS',
      headers: { origin: 'http://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-client-version' },
    });
    assert.ok(response.status === 204 || response.status === 200);
    assert.equal(response.headers.get('access-control-allow-origin'), 'http://app.example');
    assert.equal(response.headers.get('access-control-allow-credentials'), 'true');
  });
});

describe('administration is not reachable from other sites', () => {
  test('no CORS for admin paths, even in dev where `Bearer owner` is an admin', async () => {
    for (const path of [`/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:lookup`, `/emulator/v1/projects/${server.projectId}/oobCodes`]) {
      const response = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
      });
      assert.equal(response.headers.get('access-control-allow-origin'), null, path);
    }
  });

  test('init.json takes its authDomain from the configured address, not the Host header', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const url = new URL(`${server.url}/__/firebase/init.json`);
      const request = http.request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: 'evil.example' } }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve(text));
      });
      request.on('error', reject);
      request.end();
    });
    assert.equal((JSON.parse(body) as { authDomain: string }).authDomain, new URL(server.url).host);
  });

  test('an API key cannot be moved to another project, and a project keeps at least one', async () => {
    const patch = (projectId: string, apiKeys: string[]) =>
      fetch(`${server.url}/identitytoolkit.googleapis.com/v2/projects/${projectId}/config?updateMask=apiKeys`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.adminKey}` },
        body: JSON.stringify({ apiKeys }),
      });
    const stolen = await patch('another-project', [server.apiKey]);
    assert.equal(stolen.status, 400);
    assert.match(((await stolen.json()) as { error: { message: string } }).error.message, /belongs to another project/);
    assert.equal((await patch(server.projectId, [])).status, 400);
  });

  test('the data folder is private to the owner, even when it existed before', () => {
    assert.equal(statSync(server.dataDir).mode & 0o777, 0o700);
  });
});

describe('secrets never reach the logs', () => {
  test('passwords, ID tokens and refresh tokens are absent from the log', async () => {
    const password = `pw-${Date.now()}-secret`;
    const response = await postJson(signUpUrl(), { email: uniqueEmail('logs'), password, returnSecureToken: true });
    await postJson(`${v1()}/accounts:signUp?key=${server.apiKey}`, '{"broken": ');
    assert.ok(logText.length > 0, 'the server logged something');
    assert.ok(!logText.includes(password));
    assert.ok(!logText.includes(response.body.refreshToken));
    assert.ok(!logText.includes(response.body.idToken));
    assert.ok(!logText.includes(server.adminKey));
  });
});

describe('the request log', () => {
  /** The JSON lines logged since `from` (an offset in logText). */
  const linesSince = (from: number) =>
    logText
      .slice(from)
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  test('one line per request with its own id, method, route template and status, never its query; what a request logs itself carries the same id', async () => {
    const from = logText.length;
    const lookup = await postJson(`${v1()}/accounts:lookup?key=${server.apiKey}`, { idToken: 'not-a-token' });
    assert.equal(lookup.status, 400);
    // A call Hearth does not serve logs a line of its own through the request's logger.
    const unserved = await fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents:listen`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unserved.status, 501);
    const lines = linesSince(from);
    const requests = lines.filter((line) => line.msg === 'request');
    assert.equal(requests.length, 2, JSON.stringify(lines));
    const [first, second] = requests as [Record<string, unknown>, Record<string, unknown>];
    assert.deepEqual([first.method, first.route, first.status], ['POST', '/identitytoolkit.googleapis.com/v1/accounts::lookup', 400]);
    assert.deepEqual([second.method, second.route, second.status], ['POST', '/v1/projects/:project/databases/:database/*', 501]);
    assert.equal(typeof first.reqId, 'string');
    assert.notEqual(first.reqId, second.reqId);
    assert.equal(typeof first.ms, 'number');
    assert.ok(!logText.slice(from).includes(server.apiKey), 'the query string is not logged');
    const own = lines.filter((line) => line.msg === 'unimplemented');
    assert.equal(own.length, 1);
    assert.equal(own[0]!.reqId, second.reqId);
    assert.equal(own[0]!.status, 501);
  });
});

describe('outside dev mode', () => {
  let strict: TestHearth;
  before(async () => {
    strict = await startHearth({ dev: false });
  });
  after(async () => {
    await strict.close();
  });

  test('an unknown API key is refused (auth/invalid-api-key); a missing one gets 403', async () => {
    const app = initializeApp({ apiKey: 'not-a-registered-key', projectId: strict.projectId }, `strict-${Date.now()}`);
    try {
      const auth = initializeAuth(app, { persistence: inMemoryPersistence });
      connectAuthEmulator(auth, strict.url, { disableWarnings: true });
      await assert.rejects(signInAnonymously(auth), (error: { code?: string }) => error.code === 'auth/invalid-api-key');
    } finally {
      await deleteApp(app);
    }
    const missing = await postJson(`${strict.url}/identitytoolkit.googleapis.com/v1/accounts:signUp`, {});
    assertGoogleError(missing, 403, 'The request is missing a valid API key.');
    const ok = await postJson(`${strict.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${strict.apiKey}`, {});
    assert.equal(ok.status, 200);
  });

  test('`Bearer owner` is not an admin credential; the admin key is', async () => {
    const url = `${strict.url}/identitytoolkit.googleapis.com/v1/projects/${strict.projectId}/accounts:lookup`;
    assertGoogleError(await postJson(url, { localId: ['x'] }, { authorization: 'Bearer owner' }), 400, 'ADMIN_ONLY_OPERATION');
    const response = await postJson(url, { localId: ['x'] }, { authorization: `Bearer ${strict.adminKey}` });
    assert.equal(response.status, 200);
  });
});
