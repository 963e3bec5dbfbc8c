/**
 * Issue 14, part A: the console's rules editor and playground. `rules:check` lists a source's
 * issues at their line and column; `rules:simulate` judges a made-up request with the engine the
 * guard uses (released rules or unsaved source) and names the allow statement that decided:
 * its match, condition, line and column. The verdicts are checked against the real guard
 * answering real requests of signed-in users over REST. Raw HTTP, outside --dev.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} {
      allow read: if request.auth != null && request.auth.uid == resource.data.owner;
      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
      allow update: if request.auth.uid == resource.data.owner && request.resource.data.owner == resource.data.owner;
      allow delete: if request.auth.token.admin == true;
    }
    match /public/{doc} {
      allow get;
    }
  }
}
`;
const notesMatch = '/databases/{database}/documents/notes/{id}';

let server: TestHearth;
const admin = () => ({ authorization: `Bearer ${server.adminKey}` });
const base = () => `${server.url}/hearth/v1/console/projects/${server.projectId}/databases/(default)`;
const simulate = (body: unknown, headers: Record<string, string> = admin()) => postJson(`${base()}/rules:simulate`, body, headers);
const check = (body: unknown, headers: Record<string, string> = admin()) => postJson(`${base()}/rules:check`, body, headers);
const documents = () => `${server.url}/v1/projects/${server.projectId}/databases/(default)/documents`;

before(async () => {
  server = await startHearth({ dev: false });
  const released = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}:securityRules`, {
    method: 'PUT',
    headers: { ...admin(), 'content-type': 'application/json' },
    body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: rules }] } }),
  });
  assert.equal(released.status, 200, await released.text());
  const stored = await fetch(`${documents()}/notes/n1`, { method: 'PATCH', headers: { ...admin(), 'content-type': 'application/json' }, body: JSON.stringify({ fields: { owner: { stringValue: 'alice' }, text: { stringValue: 'hi' } } }) });
  assert.equal(stored.status, 200);
});
after(async () => server.close());

describe('rules:check', () => {
  test('a good source has no issues; a syntax error is reported at its line and column as an ERROR', async () => {
    const good = await check({ source: rules });
    assert.equal(good.status, 200);
    assert.deepEqual(good.body, { issues: [] });
    const broken = rules.replace('allow delete: if request.auth.token.admin == true;', 'allow delete: if request.auth.token.admin == ;');
    const answer = await check({ source: broken });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.issues.length, 1, JSON.stringify(answer.body));
    const [issue] = answer.body.issues;
    assert.equal(issue.line, 8);
    assert.equal(issue.severity, 'ERROR');
    assert.ok(issue.column > 40 && issue.column < 60, JSON.stringify(issue));
    assert.equal(typeof issue.message, 'string');
  });

  test('an unknown function is a WARNING at its place, as in Google\'s emulator', async () => {
    const answer = await check({ source: rules.replace('request.auth.token.admin == true', 'isAdmin()') });
    assert.equal(answer.status, 200);
    assert.ok(answer.body.issues.some((issue: any) => issue.severity === 'WARNING' && issue.line === 8), JSON.stringify(answer.body));
  });

  test('an oversized source is an issue, an oversized body 413, bad bodies 400', async () => {
    const big = await check({ source: `// ${'x'.repeat(300 * 1024)}\n${rules}` });
    assert.equal(big.status, 200);
    assert.match(big.body.issues[0].message, /larger than 256 KiB/);
    assert.equal((await check({ source: 'x'.repeat(700 * 1024) })).status, 413);
    for (const body of ['{"source":', '[]', '{"source":42}', '{"source":"x","extra":1}', '{}']) {
      const answer = await check(body);
      assert.equal(answer.status, 400, body);
      assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    }
  });
});

describe('rules:simulate with the released rules', () => {
  const alice = { uid: 'alice', token: {} };
  const bob = { uid: 'bob', token: {} };

  test('an allowed get names the statement that decided: match, condition, line, column', async () => {
    const answer = await simulate({ method: 'get', path: 'notes/n1', auth: alice });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.allowed, true);
    assert.deepEqual(answer.body.decidedBy, { line: 5, column: 7, match: notesMatch, condition: 'request.auth != null && request.auth.uid == resource.data.owner' });
  });

  test('a denied get has no deciding statement and says why', async () => {
    for (const auth of [bob, null]) {
      const answer = await simulate({ method: 'get', path: 'notes/n1', auth });
      assert.equal(answer.body.allowed, false, JSON.stringify(auth));
      assert.equal(answer.body.decidedBy, undefined);
      assert.match(answer.body.reason, /false for 'get' @ L5/);
    }
    const nothing = await simulate({ method: 'get', path: 'other/x', auth: alice });
    assert.equal(nothing.body.allowed, false);
    assert.equal(nothing.body.reason, 'No matching allow statements');
  });

  test('create and update judge the incoming data (update merges it over the stored document)', async () => {
    const create = (auth: unknown, owner: string) => simulate({ method: 'create', path: 'notes/new', auth, data: { owner: { stringValue: owner } } });
    const allowed = await create(bob, 'bob');
    assert.equal(allowed.body.allowed, true);
    assert.equal(allowed.body.decidedBy.line, 6);
    assert.equal((await create(bob, 'alice')).body.allowed, false);
    assert.equal((await create(null, 'bob')).body.allowed, false);
    const keep = await simulate({ method: 'update', path: 'notes/n1', auth: alice, data: { text: { stringValue: 'edited' } } });
    assert.equal(keep.body.allowed, true);
    assert.equal(keep.body.decidedBy.line, 7);
    assert.equal((await simulate({ method: 'update', path: 'notes/n1', auth: alice, data: { owner: { stringValue: 'mallory' } } })).body.allowed, false);
    assert.equal((await simulate({ method: 'update', path: 'notes/n1', auth: bob, data: {} })).body.allowed, false);
  });

  test('chosen claims decide; a delete by a token with admin: true is allowed by line 8', async () => {
    const allowed = await simulate({ method: 'delete', path: 'notes/n1', auth: { uid: 'carol', token: { admin: true } } });
    assert.equal(allowed.body.allowed, true);
    assert.deepEqual(allowed.body.decidedBy, { line: 8, column: 7, match: notesMatch, condition: 'request.auth.token.admin == true' });
    assert.equal((await simulate({ method: 'delete', path: 'notes/n1', auth: { uid: 'carol', token: { admin: 'yes' } } })).body.allowed, false);
  });

  test('existing replaces the stored document; null says it does not exist', async () => {
    const asBob = await simulate({ method: 'get', path: 'notes/n1', auth: bob, existing: { owner: { stringValue: 'bob' } } });
    assert.equal(asBob.body.allowed, true);
    assert.equal((await simulate({ method: 'get', path: 'notes/n1', auth: alice, existing: null })).body.allowed, false);
  });

  test('list is judged on the query constraints: only a query fixed to the caller is allowed', async () => {
    const fixed = await simulate({ method: 'list', path: 'notes', auth: alice, query: { where: [{ fieldPath: 'owner', op: '==', value: { stringValue: 'alice' } }], orderBy: [{ fieldPath: 'owner' }], limit: 10 } });
    assert.equal(fixed.status, 200, JSON.stringify(fixed.body));
    assert.equal(fixed.body.allowed, true);
    assert.equal(fixed.body.decidedBy.line, 5);
    assert.equal((await simulate({ method: 'list', path: 'notes', auth: alice })).body.allowed, false);
    assert.equal((await simulate({ method: 'list', path: 'notes', auth: alice, query: { where: [{ fieldPath: 'owner', op: '==', value: { stringValue: 'bob' } }] } })).body.allowed, false);
  });

  test('an unconditional allow has no condition in its answer', async () => {
    const answer = await simulate({ method: 'get', path: 'public/x', auth: null });
    assert.equal(answer.body.allowed, true);
    assert.deepEqual(answer.body.decidedBy, { line: 11, column: 7, match: '/databases/{database}/documents/public/{doc}' });
  });

  test('simulating writes nothing', async () => {
    assert.equal((await simulate({ method: 'create', path: 'notes/ghost', auth: bob, data: { owner: { stringValue: 'bob' } } })).body.allowed, true);
    assert.equal((await fetch(`${documents()}/notes/ghost`, { headers: admin() })).status, 404);
  });
});

describe('rules:simulate agrees with the guard', () => {
  test('real users reading a real note over REST get the verdicts the playground gives', async () => {
    const users: Record<string, { uid: string; idToken: string }> = {};
    for (const name of ['owner', 'stranger']) {
      const email = uniqueEmail(name);
      const created = await adminPost(server, '/accounts', { email, password: 'secret-123456' });
      const signedIn = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server.apiKey}`, { email, password: 'secret-123456', returnSecureToken: true });
      users[name] = { uid: created.body.localId, idToken: signedIn.body.idToken };
    }
    const put = await fetch(`${documents()}/notes/real`, { method: 'PATCH', headers: { ...admin(), 'content-type': 'application/json' }, body: JSON.stringify({ fields: { owner: { stringValue: users.owner!.uid } } }) });
    assert.equal(put.status, 200);
    const verdicts: Record<string, boolean> = {};
    for (const name of ['owner', 'stranger']) {
      const real = await fetch(`${documents()}/notes/real`, { headers: { authorization: `Bearer ${users[name]!.idToken}` } });
      const simulated = await simulate({ method: 'get', path: 'notes/real', auth: { uid: users[name]!.uid, token: {} } });
      assert.equal(simulated.body.allowed, real.status === 200, `${name}: guard ${real.status}, playground ${JSON.stringify(simulated.body)}`);
      verdicts[name] = simulated.body.allowed;
    }
    assert.deepEqual(verdicts, { owner: true, stranger: false });
  });
});

describe('rules:simulate with unsaved source', () => {
  test('the given source decides instead of the released rules', async () => {
    const closed = rules.replace('request.auth != null && request.auth.uid == resource.data.owner', 'false');
    const answer = await simulate({ source: closed, method: 'get', path: 'notes/n1', auth: { uid: 'alice', token: {} } });
    assert.equal(answer.body.allowed, false);
    const opened = rules.replace('allow get;', 'allow get: if request.auth == null;');
    const open = await simulate({ source: opened, method: 'get', path: 'public/x', auth: null });
    assert.deepEqual(open.body.decidedBy, { line: 11, column: 7, match: '/databases/{database}/documents/public/{doc}', condition: 'request.auth == null' });
  });

  test('a source that does not compile answers denied with its issues at their lines', async () => {
    const answer = await simulate({ source: rules.replace('match /public/{doc} {', 'match /public/{doc} {{'), method: 'get', path: 'public/x' });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.allowed, false);
    assert.equal(answer.body.error, 'The rules do not compile.');
    assert.ok(answer.body.issues.length >= 1 && answer.body.issues[0].line >= 10, JSON.stringify(answer.body.issues));
  });
});

describe('rules:simulate: hostile input and callers', () => {
  test('bad bodies are 400 in Google error JSON, never 500', async () => {
    const cases: unknown[] = [
      '{"method":',
      '[]',
      {},
      { method: 'read', path: 'notes/n1' },
      { method: 'get' },
      { method: 'get', path: 'notes' },
      { method: 'list', path: 'notes/n1' },
      { method: 'get', path: 'notes//n1' },
      { method: 'get', path: '/' },
      { method: 'get', path: 42 },
      { method: 'get', path: 'notes/n1', auth: { uid: 7 } },
      { method: 'get', path: 'notes/n1', auth: { uid: '' } },
      { method: 'get', path: 'notes/n1', auth: { uid: 'a', token: 'x' } },
      { method: 'get', path: 'notes/n1', auth: { uid: 'a', token: { big: 'x'.repeat(20_000) } } },
      { method: 'get', path: 'notes/n1', auth: { uid: 'a', role: 'admin' } },
      { method: 'create', path: 'notes/n1', data: [] },
      { method: 'create', path: 'notes/n1', data: { owner: 'bob' } },
      { method: 'get', path: 'notes/n1', data: {} },
      { method: 'get', path: 'notes/n1', query: {} },
      { method: 'list', path: 'notes', query: { where: [{ fieldPath: 'owner', op: 'like', value: { stringValue: 'a' } }] } },
      { method: 'list', path: 'notes', query: { where: 'owner == a' } },
      { method: 'list', path: 'notes', query: { limit: -1 } },
      { method: 'list', path: 'notes', query: { orderBy: [{ fieldPath: 'a', direction: 'sideways' }] } },
      { method: 'get', path: 'notes/n1', source: 12 },
      { method: 'get', path: 'notes/n1', extra: true },
      { method: 'get', path: 'notes/__x__' },
    ];
    for (const body of cases) {
      const answer = await simulate(body);
      assert.equal(answer.status, 400, JSON.stringify(body).slice(0, 120));
      assert.equal(answer.body.error.status, 'INVALID_ARGUMENT', JSON.stringify(answer.body));
    }
    const badDatabase = await postJson(`${server.url}/hearth/v1/console/projects/${server.projectId}/databases/x/rules:simulate`, { method: 'get', path: 'a/b' }, admin());
    assert.equal(badDatabase.status, 400);
    assert.equal((await simulate({ method: 'get', path: 'notes/n1', source: 'x'.repeat(700 * 1024) })).status, 413);
  });

  test('only operators: no credential 401, another site 403, the console cookie needs its header', async () => {
    const body = { method: 'get', path: 'public/x' };
    assert.equal((await simulate(body, {})).status, 401);
    assert.equal((await simulate(body, { ...admin(), origin: 'http://evil.example' })).status, 403);
    assert.equal((await check({ source: rules }, { ...admin(), 'sec-fetch-site': 'cross-site' })).status, 403);
    const session = await fetch(`${server.url}/hearth/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ adminKey: server.adminKey }) });
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
    assert.equal((await simulate(body, { cookie, 'x-hearth-console': '1' })).status, 200);
    assert.equal((await simulate(body, { cookie })).status, 403);
  });

  test('a flood of simulations with lookups is answered, never a 500', async () => {
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => simulate({ method: i % 2 ? 'get' : 'list', path: i % 2 ? 'notes/n1' : 'notes', auth: { uid: 'alice', token: {} } })));
    assert.ok(answers.every((answer) => answer.status === 200), JSON.stringify(answers.find((answer) => answer.status !== 200)));
  });
});
