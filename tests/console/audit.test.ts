/**
 * Issue 14, part A: the audit log. Every change made with a console session (identity admin,
 * Firestore, rules, the session itself) is written with who, what, when and from where, secrets
 * redacted; reads and changes made with other credentials are not. Listed newest first with page
 * tokens, exported as NDJSON, kept across restarts, readable only by operators. Raw HTTP.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
const dataDir = tempDataDir();
let cookie = '';

interface Entry {
  id: string;
  at: number;
  operator: string;
  address: string;
  userAgent: string;
  method: string;
  path: string;
  status: number;
  summary: string;
}

const headers = (): Record<string, string> => ({ cookie, 'x-hearth-console': '1', 'sec-fetch-site': 'same-origin', origin: server.url, 'user-agent': 'audit-test/1.0' });

async function call(method: string, path: string, body?: unknown, extra: Record<string, string> = headers()): Promise<{ status: number; body: any; response: Response }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extra },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.clone().text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // NDJSON or empty
  }
  return { status: response.status, body: parsed, response };
}

async function signIn(): Promise<string> {
  const response = await fetch(`${server.url}/hearth/v1/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'audit-test/1.0' },
    body: JSON.stringify({ adminKey: server.adminKey }),
  });
  assert.equal(response.status, 200);
  return (response.headers.get('set-cookie') ?? '').split(';')[0]!;
}

async function allEntries(): Promise<Entry[]> {
  const answer = await call('GET', '/hearth/v1/console/audit?pageSize=1000');
  assert.equal(answer.status, 200);
  return answer.body.entries as Entry[];
}

before(async () => {
  server = await startHearth({ dev: false, dataDir });
  cookie = await signIn();
});
after(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('console audit log: what is recorded', () => {
  const password = 'audit-secret-password-123';
  const email = uniqueEmail('audited');

  test('the sign-in itself is the first entry: operator, address, user agent, method, path, status', async () => {
    const entries = await allEntries();
    const signIn = entries.at(-1)!;
    assert.equal(signIn.operator, 'admin');
    assert.equal(signIn.method, 'POST');
    assert.equal(signIn.path, '/hearth/v1/console/session');
    assert.equal(signIn.status, 200);
    assert.equal(signIn.address, '127.0.0.1');
    assert.equal(signIn.userAgent, 'audit-test/1.0');
    assert.ok(!JSON.stringify(signIn).includes(server.adminKey), 'the admin key is not in the log');
    assert.match(signIn.summary, /"adminKey":"\[redacted\]"/);
  });

  test('identity and Firestore changes made with the console session are recorded, passwords redacted; reads are not', async () => {
    const countBefore = (await allEntries()).length;
    const created = await call('POST', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts`, { email, password });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const uid = created.body.localId as string;
    assert.equal((await call('POST', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:update`, { localId: uid, disableUser: true })).status, 200);
    assert.equal((await call('PATCH', `/v1/projects/${server.projectId}/databases/(default)/documents/notes/n1`, { fields: { title: { stringValue: 'hello' } } })).status, 200);
    // Reads, including Google's POST queries, are not changes.
    assert.equal((await call('POST', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:lookup`, { localId: [uid] })).status, 200);
    assert.equal((await call('POST', `/v1/projects/${server.projectId}/databases/(default)/documents:runQuery`, { structuredQuery: { from: [{ collectionId: 'notes' }] } })).status, 200);
    assert.equal((await call('GET', `/v1/projects/${server.projectId}/databases/(default)/documents/notes/n1`)).status, 200);

    const entries = await allEntries();
    assert.equal(entries.length, countBefore + 3, entries.map((entry) => entry.summary).join('\n'));
    const [patch, update, create] = entries;
    assert.equal(create!.path, `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts`);
    assert.ok(create!.summary.includes(email), create!.summary);
    assert.ok(!create!.summary.includes(password), 'the password is redacted');
    assert.match(create!.summary, /"password":"\[redacted\]"/);
    assert.match(update!.summary, /accounts:update.*"disableUser":true/);
    assert.equal(patch!.method, 'PATCH');
    assert.match(patch!.summary, /"title"/);
    assert.ok(entries.every((entry) => !JSON.stringify(entry).includes(password)));
    assert.ok(entries[0]!.at >= entries[1]!.at && Number(entries[0]!.id) > Number(entries[1]!.id), 'newest first');
  });

  test('a refused change is recorded with its status; hashes and tokens in nested bodies are redacted', async () => {
    const refused = await call('POST', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:batchCreate`, {
      users: [{ localId: 'u1', email: 'x@example.com', passwordHash: 'aGFzaC1ieXRlcw', salt: 'c2FsdA' }],
      hashAlgorithm: 'NOT_AN_ALGORITHM',
      signerKey: 'c2lnbmVyLWtleQ',
    });
    assert.ok(refused.status >= 400 && refused.status < 500, String(refused.status));
    const [entry] = await allEntries();
    assert.equal(entry!.status, refused.status);
    for (const secret of ['aGFzaC1ieXRlcw', 'c2FsdA', 'c2lnbmVyLWtleQ']) assert.ok(!entry!.summary.includes(secret), `${secret} in ${entry!.summary}`);
  });

  test('a refused console sign-in is recorded (the key it tried redacted); a switch shows its value, never [redacted]', async () => {
    const wrongKey = 'not-the-admin-key-at-all-0123456789';
    const refused = await fetch(`${server.url}/hearth/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'audit-test/1.0' }, body: JSON.stringify({ adminKey: wrongKey }) });
    assert.equal(refused.status, 401);
    const failed = (await allEntries()).find((entry) => entry.operator === '(failed sign-in)');
    assert.ok(failed, 'the failed sign-in is on record');
    assert.equal(failed.status, 401);
    assert.equal(failed.path, '/hearth/v1/console/session');
    assert.ok(!JSON.stringify(failed).includes(wrongKey), 'the key tried is not in the log');

    const patched = await call('PATCH', `/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/config?updateMask=signIn.email.passwordRequired`, { signIn: { email: { passwordRequired: true } } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const change = (await allEntries()).find((entry) => entry.method === 'PATCH' && entry.path.endsWith('/config'));
    assert.match(change!.summary, /"passwordRequired":true/);
    await call('PATCH', `/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/config?updateMask=signIn.email.passwordRequired`, { signIn: { email: { passwordRequired: false } } });
  });

  test('changes made with the admin key (firebase-admin, curl) or refused to a foreign page are not console entries', async () => {
    const countBefore = (await allEntries()).length;
    assert.equal((await adminPost(server, '/accounts', { email: uniqueEmail('by-key') })).status, 200);
    const foreign = await call('PATCH', `/v1/projects/${server.projectId}/databases/(default)/documents/notes/n2`, { fields: {} }, { ...headers(), origin: 'http://evil.example' });
    assert.equal(foreign.status, 403);
    assert.equal((await allEntries()).length, countBefore);
  });
});

describe('console audit log: reading it', () => {
  test('pages newest first with page tokens that cover every entry once', async () => {
    const everything = await allEntries();
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await call('GET', `/hearth/v1/console/audit?pageSize=2${token ? `&pageToken=${token}` : ''}`);
      assert.equal(page.status, 200);
      assert.ok(page.body.entries.length <= 2);
      seen.push(...page.body.entries.map((entry: Entry) => entry.id));
      token = page.body.nextPageToken;
    } while (token);
    assert.deepEqual(seen, everything.map((entry) => entry.id));
  });

  test('export: every entry as NDJSON, oldest first, as a download', async () => {
    const everything = await allEntries();
    const answer = await call('GET', '/hearth/v1/console/audit:export');
    assert.equal(answer.status, 200);
    assert.match(answer.response.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    assert.match(answer.response.headers.get('content-disposition') ?? '', /^attachment; filename="hearth-audit-\d{4}-\d{2}-\d{2}\.ndjson"$/);
    const lines = (await answer.response.text()).trimEnd().split('\n').map((line) => JSON.parse(line) as Entry);
    assert.deepEqual(lines.map((entry) => entry.id), everything.map((entry) => entry.id).reverse());
  });

  test('bad paging parameters are 400 in Google error JSON', async () => {
    for (const query of ['pageSize=0', 'pageSize=1001', 'pageSize=abc', 'pageSize=-1', 'pageSize=1.5', 'pageToken=garbage', 'pageToken=' + 'A'.repeat(500), 'pageSize=1&pageSize=2', 'limit=5']) {
      const answer = await call('GET', `/hearth/v1/console/audit?${query}`);
      assert.equal(answer.status, 400, query);
      assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    }
  });

  test('only operators read it: no session 401, no header 403, another site 403; the admin key works for scripts', async () => {
    const path = '/hearth/v1/console/audit';
    assert.equal((await call('GET', path, undefined, {})).status, 401);
    assert.equal((await call('GET', path, undefined, { cookie })).status, 403);
    assert.equal((await call('GET', path, undefined, { ...headers(), 'sec-fetch-site': 'cross-site' })).status, 403);
    assert.equal((await call('GET', `${path}:export`, undefined, { ...headers(), origin: 'http://evil.example' })).status, 403);
    assert.equal((await call('GET', path, undefined, { authorization: `Bearer ${server.adminKey}` })).status, 200);
    assert.equal((await call('GET', path, undefined, { authorization: 'Bearer wrong' })).status, 401);
  });

  test('a flood of reads from one address gets answers, never a 500, and writes nothing', async () => {
    const countBefore = (await allEntries()).length;
    const answers = await Promise.all(Array.from({ length: 200 }, () => call('GET', '/hearth/v1/console/audit?pageSize=5')));
    assert.ok(answers.every((answer) => answer.status === 200 || answer.status === 429));
    assert.equal((await allEntries()).length, countBefore);
  });

  test('sign-out is recorded, and the log survives a restart', async () => {
    const out = await call('DELETE', '/hearth/v1/console/session');
    assert.equal(out.status, 200);
    await server.close();
    server = await startHearth({ dev: false, dataDir });
    cookie = await signIn();
    const entries = await allEntries();
    assert.equal(entries[1]!.method, 'DELETE');
    assert.equal(entries[1]!.path, '/hearth/v1/console/session');
    assert.equal(entries.length, 10, 'sign-in, three changes, the refused import, the failed sign-in, two settings changes, sign-out, sign-in');
  });
});
