/**
 * Issue 18, items 1 and 2: the admin credential. A short or empty admin key is refused at start
 * (an empty one matched `Bearer` + a non-breaking space), key files are written whole, and the
 * credential (the admin key, or `Bearer owner` in --dev) is never accepted from a web page on
 * another origin, on any path, the WebChannel handshake's body and URL included. The headers sent
 * here are the ones a browser adds by itself (Origin, Sec-Fetch-Site); firebase-admin sends neither.
 */
import assert from 'node:assert/strict';
import { chmodSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CallerResolver } from '../../packages/server/src/auth/api/caller.js';
import { ProjectDirectory } from '../../packages/server/src/auth/core/project-config.js';
import { defaultOptions } from '../../packages/server/src/config.js';
import { createHearth, createLogger } from '../../packages/server/src/server.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { postJson, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

const evil = 'http://evil.example';

describe('the admin key file', () => {
  for (const [name, contents] of [
    ['empty', ''],
    ['whitespace only', ' \n'],
    ['short', 'abc123\n'],
  ] as const) {
    test(`an admin-key file that is ${name} stops the server from starting`, async () => {
      const dataDir = tempDataDir();
      try {
        writeFileSync(join(dataDir, 'admin-key'), contents, { mode: 0o600 });
        const options = defaultOptions({ port: 0, dataDir, logLevel: 'silent', webRoot: undefined });
        await assert.rejects(createHearth(options, createLogger('silent')), /admin key .* at least 32 characters/);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }

  test('a short HEARTH_ADMIN_KEY is refused too', async () => {
    const dataDir = tempDataDir();
    try {
      const options = defaultOptions({ port: 0, dataDir, logLevel: 'silent', webRoot: undefined, adminKey: 'hunter2' });
      await assert.rejects(createHearth(options, createLogger('silent')), /at least 32 characters/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a first start writes a long key and the signing keys, private, with no temporary file left; the database and its WAL files are private too', async () => {
    const hearth = await startHearth({ dev: false });
    try {
      assert.ok(hearth.adminKey.length >= 32);
      const files = readdirSync(hearth.dataDir);
      assert.ok(files.includes('hearth.sqlite-wal') && files.includes('hearth.sqlite-shm'), files.join());
      // Files are the owner's alone; folders (files/, the Cloud Storage bytes) the owner's to enter.
      for (const file of files) {
        const stat = statSync(join(hearth.dataDir, file));
        assert.equal(stat.mode & 0o777, stat.isDirectory() ? 0o700 : 0o600, file);
      }
      assert.deepEqual(files.filter((file) => file.includes('.tmp')), []);
    } finally {
      await hearth.close();
    }
  });

  test('a database file made readable by others before is made private again', async () => {
    const dataDir = tempDataDir();
    try {
      writeFileSync(join(dataDir, 'hearth.sqlite'), '', { mode: 0o644 });
      chmodSync(join(dataDir, 'hearth.sqlite'), 0o644);
      const hearth = await startHearth({ dataDir });
      await hearth.close();
      for (const file of ['hearth.sqlite', 'hearth.sqlite-wal']) {
        if (readdirSync(dataDir).includes(file)) assert.equal(statSync(join(dataDir, file)).mode & 0o777, 0o600, file);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('an empty or non-ASCII presented credential never matches, even an empty key', async () => {
    const dataDir = tempDataDir();
    const store = new SqliteStore(join(dataDir, 'hearth.sqlite'));
    try {
      const callers = new CallerResolver(new ProjectDirectory(store, 'demo-test', false), { adminKey: '', acceptOwner: false });
      for (const header of ['Bearer \u00a0', 'Bearer ', 'Bearer', 'Bearer \u00a0\u00a0', 'Bearer \u3000']) {
        assert.equal(callers.isAdminAuthorization(header), false, JSON.stringify(header));
      }
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the admin credential from web pages on other origins (--dev)', () => {
  let hearth: TestHearth;
  let commitUrl: string;
  before(async () => {
    hearth = await startHearth({ dev: true });
    commitUrl = `${hearth.url}/v1/projects/${hearth.projectId}/databases/(default)/documents:commit`;
  });
  after(() => hearth.close());

  const commit = (headers: Record<string, string>) =>
    fetch(commitUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ writes: [{ update: { name: `projects/${hearth.projectId}/databases/(default)/documents/notes/n1`, fields: { text: { stringValue: 'x' } } } }] }),
    });

  test('firebase-admin (no Origin) and Hearth\'s own pages may use `Bearer owner`', async () => {
    assert.equal((await commit({ authorization: 'Bearer owner' })).status, 200);
    assert.equal((await commit({ authorization: 'Bearer owner', origin: hearth.url, 'sec-fetch-site': 'same-origin' })).status, 200);
    assert.equal((await commit({ authorization: `Bearer ${hearth.adminKey}`, origin: hearth.url.replace('127.0.0.1', 'localhost') })).status, 200);
  });

  for (const [name, headers] of [
    ['an Origin of another site', { origin: evil }],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['Origin: null (sandboxed frame)', { origin: 'null' }],
  ] as const) {
    test(`:commit with the admin credential and ${name} is refused with PERMISSION_DENIED and no CORS grant`, async () => {
      for (const authorization of ['Bearer owner', `Bearer ${hearth.adminKey}`]) {
        const response = await commit({ authorization, ...headers });
        assert.equal(response.status, 403);
        assert.deepEqual(await response.json(), { error: { code: 403, message: 'The admin credential is not accepted from web pages on other origins.', status: 'PERMISSION_DENIED' } });
        assert.equal(response.headers.get('access-control-allow-origin'), null);
        assert.equal(response.headers.get('access-control-allow-credentials'), null);
      }
    });
  }

  test('reading documents and taking over an account (accounts:update with localId) are refused in the identity shape', async () => {
    const signUp = await postJson(`${hearth.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${hearth.apiKey}`, { email: 'victim@example.com', password: 'secret123', returnSecureToken: true });
    assert.equal(signUp.status, 200);
    const takeOver = await postJson(`${hearth.url}/identitytoolkit.googleapis.com/v1/accounts:update?key=${hearth.apiKey}`, { localId: signUp.body.localId, password: 'attacker1' }, { authorization: 'Bearer owner', origin: evil });
    assert.equal(takeOver.status, 403);
    assert.equal(takeOver.body.error.message, 'INSUFFICIENT_PERMISSION : The admin credential is not accepted from web pages on other origins.');
    assert.equal(takeOver.body.error.errors[0].reason, 'forbidden');
    const stillMine = await postJson(`${hearth.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${hearth.apiKey}`, { email: 'victim@example.com', password: 'secret123' });
    assert.equal(stillMine.status, 200);

    const read = await fetch(`${hearth.url}/v1/projects/${hearth.projectId}/databases/(default)/documents/notes/n1`, { headers: { authorization: 'Bearer owner', origin: evil } });
    assert.equal(read.status, 403);
    const list = await fetch(`${hearth.url}/identitytoolkit.googleapis.com/v1/projects/${hearth.projectId}/accounts:batchGet`, { headers: { authorization: 'Bearer owner', 'sec-fetch-site': 'cross-site' } });
    assert.equal(list.status, 403);
  });

  test('a signed-in user\'s ID token still works from another origin, with CORS credentials echoed', async () => {
    const signUp = await postJson(`${hearth.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${hearth.apiKey}`, { returnSecureToken: true }, { origin: evil });
    assert.equal(signUp.status, 200);
    const response = await commit({ authorization: `Bearer ${signUp.body.idToken}`, origin: evil, 'sec-fetch-site': 'cross-site' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), evil);
    assert.equal(response.headers.get('access-control-allow-credentials'), 'true');
  });

  const handshake = (where: 'body' | 'url', headers: Record<string, string>) => {
    const database = `projects/${hearth.projectId}/databases/(default)`;
    const credential = encodeURIComponent('Authorization:Bearer owner\r\n');
    const query = `database=${encodeURIComponent(database)}&VER=8&RID=1&CVER=22&t=1${where === 'url' ? `&$httpHeaders=${credential}` : ''}`;
    const body = `${where === 'body' ? `headers=${credential}&` : ''}count=1&ofs=0&req0___data__=${encodeURIComponent(JSON.stringify({ database }))}`;
    return fetch(`${hearth.url}/google.firestore.v1.Firestore/Write/channel?${query}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
  };

  test('a WebChannel handshake carrying `Bearer owner` in its body or URL is refused from another origin (a plain form post, no preflight)', async () => {
    for (const where of ['body', 'url'] as const) {
      assert.equal((await handshake(where, {})).status, 200, `${where}, no Origin`);
      const refused = await handshake(where, { origin: evil, 'sec-fetch-site': 'cross-site' });
      assert.equal(refused.status, 403, where);
      assert.equal(((await refused.json()) as { error: { status: string } }).error.status, 'PERMISSION_DENIED');
    }
  });
});
