/**
 * Issue 14, part A: the operator console's session. Signing in with the admin key or an operator
 * account's ID token sets an HttpOnly, SameSite=Strict cookie; with it (and `X-Hearth-Console: 1`,
 * from Hearth's own origin) the browser is the administrator on every admin API, and never from
 * another site, without the header, or once the session has expired. Raw HTTP, outside --dev.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

const hour = 3600_000;
let server: TestHearth;
let clockShift = 0;

before(async () => {
  server = await startHearth({ dev: false, clock: () => Date.now() + clockShift });
});
after(async () => server.close());

const sessionUrl = () => `${server.url}/hearth/v1/console/session`;
const consoleHeaders = (cookie: string): Record<string, string> => ({ cookie, 'x-hearth-console': '1', 'sec-fetch-site': 'same-origin', origin: server.url });

/** Signs in with the admin key; returns the cookie pair (`hearth_console=...`) and the Set-Cookie line. */
async function signIn(body: Record<string, unknown> = { adminKey: server.adminKey }): Promise<{ status: number; body: any; cookie: string; setCookie: string }> {
  const response = await fetch(sessionUrl(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.url, 'sec-fetch-site': 'same-origin' },
    body: JSON.stringify(body),
  });
  const setCookie = response.headers.get('set-cookie') ?? '';
  return { status: response.status, body: await response.json(), cookie: setCookie.split(';')[0] ?? '', setCookie };
}

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

describe('console session: sign-in', () => {
  test('the admin key signs in: operator "admin", an expiry, and an HttpOnly SameSite=Strict cookie for the whole origin, not Secure over http', async () => {
    const before = Date.now();
    const { status, body, setCookie } = await signIn();
    assert.equal(status, 200);
    assert.equal(body.operator, 'admin');
    assert.ok(body.expiresAt > before + hour && body.expiresAt < before + 24 * hour, String(body.expiresAt));
    assert.match(setCookie, /^hearth_console=[A-Za-z0-9_-]{40,};/);
    assert.match(setCookie, /; HttpOnly/);
    assert.match(setCookie, /; SameSite=Strict/);
    assert.match(setCookie, /; Path=\//);
    assert.doesNotMatch(setCookie, /Secure/);
    assert.ok(!setCookie.includes(server.adminKey), 'the cookie never carries the admin key');
  });

  test('a wrong admin key is 401 in Google error JSON, with no cookie', async () => {
    const { status, body, setCookie } = await signIn({ adminKey: 'x'.repeat(43) });
    assert.equal(status, 401);
    assert.equal(body.error.code, 401);
    assert.equal(body.error.status, 'UNAUTHENTICATED');
    assert.equal(setCookie, '');
  });

  test("--dev's well-known `owner` is not an admin key for the console", async () => {
    assert.equal((await signIn({ adminKey: 'owner' })).status, 401);
  });

  test('hostile bodies: malformed JSON, wrong types, unknown fields, both or neither credential, oversized: 4xx Google JSON, never 500', async () => {
    const raw = async (body: string, contentType = 'application/json') => {
      const response = await fetch(sessionUrl(), { method: 'POST', headers: { 'content-type': contentType }, body });
      return { status: response.status, body: (await response.json()) as any };
    };
    for (const [body, status] of [
      ['{"adminKey":', 400],
      ['[]', 400],
      ['{"adminKey":42}', 400],
      ['{"idToken":{"a":1}}', 400],
      ['{"adminKey":"a","password":"b"}', 400],
      ['{}', 400],
      [JSON.stringify({ adminKey: server.adminKey, idToken: 'x' }), 400],
      [JSON.stringify({ adminKey: 'k'.repeat(20_000) }), 413],
      ['{"__proto__":{"x":1}}', 400],
    ] as const) {
      const answer = await raw(body);
      assert.equal(answer.status, status, body.slice(0, 60));
      assert.equal(answer.body.error.code, status);
      assert.equal(typeof answer.body.error.message, 'string');
    }
    assert.equal((await raw('{"adminKey":"x"}', 'text/plain')).status, 400);
  });

  test('a page on another site cannot sign in, even with the right key', async () => {
    const foreignHeaders: Record<string, string>[] = [{ origin: 'http://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { origin: 'null' }];
    for (const headers of foreignHeaders) {
      const answer = await postJson(sessionUrl(), { adminKey: server.adminKey }, headers);
      assert.equal(answer.status, 403, JSON.stringify(headers));
      assert.equal(answer.body.error.status, 'PERMISSION_DENIED');
    }
  });
});

describe('console session: operator accounts', () => {
  async function accountWithPassword(claims?: Record<string, unknown>): Promise<{ uid: string; email: string; idToken: () => Promise<string> }> {
    const email = uniqueEmail('operator');
    const password = 'correct horse battery';
    const created = await adminPost(server, '/accounts', { email, password });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const uid = created.body.localId as string;
    if (claims) assert.equal((await adminPost(server, '/accounts:update', { localId: uid, customAttributes: JSON.stringify(claims) })).status, 200);
    const idToken = async () => {
      const signedIn = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server.apiKey}`, { email, password, returnSecureToken: true });
      assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
      return signedIn.body.idToken as string;
    };
    return { uid, email, idToken };
  }

  test('an account with hearthOperator: true signs in with its ID token, named by its email', async () => {
    const operator = await accountWithPassword({ hearthOperator: true });
    const answer = await signIn({ idToken: await operator.idToken() });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.operator, operator.email);
    const session = await call('GET', '/hearth/v1/console/session', consoleHeaders(answer.cookie));
    assert.equal(session.status, 200);
    assert.equal(session.body.operator, operator.email);
  });

  test('an ordinary account, a claim that is only truthy, a disabled operator and a garbage token are refused (401)', async () => {
    const ordinary = await accountWithPassword();
    assert.equal((await signIn({ idToken: await ordinary.idToken() })).status, 401);
    const truthy = await accountWithPassword({ hearthOperator: 'yes' });
    assert.equal((await signIn({ idToken: await truthy.idToken() })).status, 401);
    const disabled = await accountWithPassword({ hearthOperator: true });
    const token = await disabled.idToken();
    assert.equal((await adminPost(server, '/accounts:update', { localId: disabled.uid, disableUser: true })).status, 200);
    assert.equal((await signIn({ idToken: token })).status, 401);
    assert.equal((await signIn({ idToken: 'not.a.jwt' })).status, 401);
  });

  test('a token minted before the claim was taken away no longer signs in', async () => {
    const operator = await accountWithPassword({ hearthOperator: true });
    const token = await operator.idToken();
    assert.equal((await adminPost(server, '/accounts:update', { localId: operator.uid, customAttributes: '{}' })).status, 200);
    assert.equal((await signIn({ idToken: token })).status, 401);
  });
});

describe('console session: what it opens', () => {
  let cookie = '';
  before(async () => {
    cookie = (await signIn()).cookie;
  });

  const identityAdmin = () => `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:query`;
  const firestoreDoc = (id: string) => `/v1/projects/${server.projectId}/databases/(default)/documents/console-tests/${id}`;

  test('GET session answers the operator and the same expiry', async () => {
    const answer = await call('GET', '/hearth/v1/console/session', consoleHeaders(cookie));
    assert.equal(answer.status, 200);
    assert.equal(answer.body.operator, 'admin');
  });

  test('with the cookie and X-Hearth-Console: identity admin, project config, Firestore REST (closed to others outside --dev), the Rules API and both outboxes', async () => {
    const headers = consoleHeaders(cookie);
    assert.equal((await call('POST', identityAdmin(), headers, { returnUserInfo: true })).status, 200);
    assert.equal((await call('GET', `/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/config`, headers)).status, 200);
    const written = await call('PATCH', firestoreDoc('a'), headers, { fields: { n: { integerValue: '1' } } });
    assert.equal(written.status, 200, JSON.stringify(written.body));
    assert.equal((await call('GET', firestoreDoc('a'), headers)).body.fields.n.integerValue, '1');
    assert.equal((await call('GET', `/firebaserules.googleapis.com/v1/projects/${server.projectId}/rulesets`, headers)).status, 200);
    assert.equal((await call('GET', `/hearth/v1/projects/${server.projectId}/outbox`, headers)).status, 200);
    assert.equal((await call('GET', `/hearth/v1/projects/${server.projectId}/smsOutbox`, headers)).status, 200);
  });

  test('without X-Hearth-Console the cookie alone is nobody: every admin API refuses', async () => {
    const headers = { cookie, 'sec-fetch-site': 'same-origin', origin: server.url };
    assert.equal((await call('POST', identityAdmin(), headers, { returnUserInfo: true })).status, 400);
    assert.equal((await call('PATCH', firestoreDoc('b'), headers, { fields: {} })).status, 403);
    assert.equal((await call('GET', `/firebaserules.googleapis.com/v1/projects/${server.projectId}/rulesets`, headers)).status, 403);
    assert.equal((await call('GET', `/hearth/v1/projects/${server.projectId}/outbox`, headers)).status, 400);
    const session = await call('GET', '/hearth/v1/console/session', headers);
    assert.equal(session.status, 403);
    assert.equal(session.body.error.status, 'PERMISSION_DENIED');
  });

  test('from another site (Origin or Sec-Fetch-Site says so) the cookie and header count for nothing', async () => {
    const foreignHeaders: Record<string, string>[] = [{ origin: 'http://evil.example' }, { 'sec-fetch-site': 'cross-site', origin: server.url }, { 'sec-fetch-site': 'same-site' }];
    for (const foreign of foreignHeaders) {
      const headers = { ...consoleHeaders(cookie), ...foreign };
      assert.equal((await call('POST', identityAdmin(), headers, { returnUserInfo: true })).status, 400, JSON.stringify(foreign));
      assert.equal((await call('PATCH', firestoreDoc('c'), headers, { fields: {} })).status, 403, JSON.stringify(foreign));
      assert.equal((await call('GET', '/hearth/v1/console/session', headers)).status, 403, JSON.stringify(foreign));
    }
    const absent = await call('GET', firestoreDoc('c'), consoleHeaders(cookie));
    assert.equal(absent.status, 404, 'nothing was written by the refused calls');
  });

  test('a request naming its own credential is judged by it, not by the cookie', async () => {
    const headers = { ...consoleHeaders(cookie), authorization: 'Bearer not-a-token' };
    assert.equal((await call('PATCH', firestoreDoc('d'), headers, { fields: {} })).status, 401);
  });

  test('a made-up or tampered cookie is nobody', async () => {
    for (const forged of ['hearth_console=abc', `${cookie}x`, 'hearth_console=']) {
      assert.equal((await call('GET', '/hearth/v1/console/session', consoleHeaders(forged))).status, 401, forged);
      assert.equal((await call('PATCH', firestoreDoc('e'), consoleHeaders(forged), { fields: {} })).status, 403, forged);
    }
  });

  test('DELETE ends the session: the cookie is cleared and no longer works', async () => {
    const own = (await signIn()).cookie;
    const response = await fetch(sessionUrl(), { method: 'DELETE', headers: consoleHeaders(own) });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('set-cookie') ?? '', /^hearth_console=;.*Max-Age=0/);
    assert.equal((await call('GET', '/hearth/v1/console/session', consoleHeaders(own))).status, 401);
    assert.equal((await call('POST', identityAdmin(), consoleHeaders(own), {})).status, 400);
  });
});

describe('console session: expiry and floods', () => {
  test('an expired session is refused everywhere (the server clock moved past its expiry)', async () => {
    const { cookie, body } = await signIn();
    clockShift = body.expiresAt - Date.now() + 1000;
    try {
      assert.equal((await call('GET', '/hearth/v1/console/session', consoleHeaders(cookie))).status, 401);
      assert.equal((await call('GET', `/firebaserules.googleapis.com/v1/projects/${server.projectId}/rulesets`, consoleHeaders(cookie))).status, 403);
    } finally {
      clockShift = 0;
    }
    assert.equal((await call('GET', '/hearth/v1/console/session', consoleHeaders(cookie))).status, 401, 'an expired session stays dead');
  });

  test('ten wrong keys from one address, then 429 even for the right key; the answer names no key', async () => {
    const flood = await startHearth({ dev: false });
    try {
      const attempt = (adminKey: string) => postJson(`${flood.url}/hearth/v1/console/session`, { adminKey });
      for (let i = 0; i < 10; i++) assert.equal((await attempt(`wrong-${i}`.padEnd(43, 'x'))).status, 401);
      const refused = await attempt(flood.adminKey);
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error.status, 'RESOURCE_EXHAUSTED');
      assert.ok(!JSON.stringify(refused.body).includes(flood.adminKey));
      const concurrent = await Promise.all(Array.from({ length: 50 }, (_, i) => attempt(`again-${i}`)));
      assert.ok(concurrent.every((answer) => answer.status === 429));
    } finally {
      await flood.close();
    }
  });

  test('the failures are counted in the store: a restart does not forgive them', async () => {
    const first = await startHearth({ dev: false });
    const dataDir = first.dataDir;
    const attempt = (url: string, adminKey: string) => postJson(`${url}/hearth/v1/console/session`, { adminKey });
    for (let i = 0; i < 10; i++) assert.equal((await attempt(first.url, `wrong-${i}`.padEnd(43, 'x'))).status, 401);
    await first.hearth.close(); // keeps the data folder (and its database)
    const restarted = await startHearth({ dev: false, dataDir });
    try {
      assert.equal(restarted.adminKey, first.adminKey);
      assert.equal((await attempt(restarted.url, restarted.adminKey)).status, 429);
    } finally {
      await restarted.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
