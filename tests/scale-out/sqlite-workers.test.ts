/**
 * `hearth start --workers 2` on one data folder (SQLite), in production mode: what the workers
 * share through the SQLite file and the folder holds across them, as it does across instances on
 * PostgreSQL (pg-multi-instance.test.ts). An account made through one worker signs in through the
 * other; one email signed up through both at once makes one account; one client's failed sign-ins
 * spread over both by a proxy meet one limit; each mail queued through either goes out once. The key rings in the
 * folder: two processes due for a rotation at once add one key, and a key one adds verifies on
 * the other. Each worker is reached from a source address it serves (a forwarder per address).
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KeyRingFile } from '../../packages/server/src/storage/key-ring-file.js';
import { SharedSqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-shared-store.js';
import { addressesOfWorkers, forwardFrom, type AddressForwarder } from '../helpers/address-forwarder.js';
import { freePort, postJson, spawnHearth, tempDataDir, type SpawnedHearth } from '../helpers/hearth.js';
import { checkSharedKeyRing } from '../helpers/shared-key-rings.js';
import { MailCatcher } from '../helpers/smtp.js';
import { refreshIdToken } from '../helpers/token-refresh.js';
import { waitFor } from '../helpers/wait-for.js';

const adminKey = 'sqlite-workers-admin-key-0123456789abcdef';
/** The client a proxy forwards for (X-Forwarded-For). */
const proxiedClient = '203.0.113.7';

/** A POST from the proxy (127.0.0.1) for `proxiedClient`, on a connection of its own. */
function postThroughProxy(port: number, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-forwarded-for': proxiedClient } }, (res) => {
      let answer = '';
      res.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(answer || 'null') }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

describe('two workers on one data folder (SQLite)', { timeout: 120_000 }, () => {
  const dataDir = tempDataDir();
  const smtp = new MailCatcher();
  let hearth: SpawnedHearth;
  /** The origin each worker is reached at: [worker 0, worker 1]. */
  let origins: string[] = [];
  const forwarders: AddressForwarder[] = [];
  let apiKey: string;
  let proxyPort: number;
  const v1 = (worker: number, name: string) => `${origins[worker]}/identitytoolkit.googleapis.com/v1/accounts:${name}?key=${apiKey}`;

  async function signUp(worker: number, email: string): Promise<{ localId: string; idToken: string; refreshToken: string }> {
    const response = await postJson(v1(worker, 'signUp'), { email, password: 'secret12', returnSecureToken: true });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body;
  }

  before(async () => {
    await smtp.start();
    const port = await freePort();
    // 127.0.0.1 plays a reverse proxy (its connections go to the workers in turn); the forwarders' addresses are clients.
    hearth = await spawnHearth(['--port', String(port), '--data', dataDir, '--log-level', 'info', '--smtp-url', smtp.url, '--max-failed-signins', '3', '--workers', '2', '--trust-proxy', '127.0.0.1'], { HEARTH_ADMIN_KEY: adminKey });
    proxyPort = port;
    await waitFor('both workers serving', async () => ((hearth.output().match(/"worker serving"/g) ?? []).length === 2 ? true : undefined), 30_000);
    for (const address of addressesOfWorkers([0, 1])) forwarders.push(await forwardFrom(address, port));
    origins = forwarders.map((forwarder) => `http://127.0.0.1:${forwarder.port}`);
    apiKey = /API key (\S+)/.exec(hearth.output())![1]!;
  });

  after(async () => {
    for (const forwarder of forwarders) await forwarder.close();
    await hearth?.stop();
    await smtp.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('an account made through one worker signs in through the other; its ID token and refresh token work there too', async () => {
    const email = `both-${Date.now()}@example.com`;
    const created = await signUp(0, email);
    const signedIn = await postJson(v1(1, 'signInWithPassword'), { email, password: 'secret12', returnSecureToken: true });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.localId, created.localId);
    const lookup = await postJson(v1(1, 'lookup'), { idToken: created.idToken });
    assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
    assert.equal(lookup.body.users[0].email, email);
    const refreshed = await refreshIdToken(origins[1]!, apiKey, created.refreshToken);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    const tokens = refreshed.body;
    assert.equal(tokens.user_id, created.localId);
    assert.equal((await postJson(v1(0, 'lookup'), { idToken: tokens.id_token })).status, 200, "the other worker's token is good on the first");
  });

  test('the same email signed up through both at once: one account, the others EMAIL_EXISTS', async () => {
    const email = `race-${Date.now()}@example.com`;
    const answers = await Promise.all([0, 1, 0, 1].map((worker) => postJson(v1(worker, 'signUp'), { email, password: 'secret12', returnSecureToken: true })));
    assert.equal(answers.filter((r) => r.status === 200).length, 1, JSON.stringify(answers.map((r) => r.body)));
    for (const refused of answers.filter((r) => r.status !== 200)) assert.equal(refused.body.error.message, 'EMAIL_EXISTS');
  });

  test('failed sign-ins of one client, spread over both workers by a proxy, meet one limit', async () => {
    const email = `guessed-${Date.now()}@example.com`;
    await signUp(0, email);
    // Each guess on a new connection through the proxy, which the primary hands to the workers in
    // turn: neither worker sees three of them by itself.
    const guess = (password: string) => postThroughProxy(proxyPort, `/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${apiKey}`, { email, password, returnSecureToken: true });
    for (let i = 0; i < 3; i++) {
      const wrong = await guess(`wrong-${i}`);
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.notEqual(wrong.body.error.message, 'TOO_MANY_ATTEMPTS_TRY_LATER');
      // The counts are written through right after the answer: a moment for each to land.
      await new Promise((r) => setTimeout(r, 200));
    }
    // The right password, once on each worker: both wait, as one process would.
    for (let i = 0; i < 2; i++) {
      const right = await guess('secret12');
      assert.equal(right.status, 400, JSON.stringify(right.body));
      assert.match(right.body.error.message, /^TOO_MANY_ATTEMPTS_TRY_LATER/);
    }
  });

  test('mails queued through both workers each go out once', async () => {
    const emails = Array.from({ length: 16 }, (_, i) => `mail-${i}-${Date.now()}@example.com`);
    for (const email of emails) await signUp(0, email);
    // Each worker wakes its own delivery loop, which lists every due mail, the other's too.
    const sent = await Promise.all(emails.map((email, i) => postJson(v1(i % 2, 'sendOobCode'), { requestType: 'PASSWORD_RESET', email })));
    for (const answer of sent) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    for (const email of emails) await smtp.waitFor(email, /./);
    // Time for a second copy to arrive, were one on its way.
    await new Promise((r) => setTimeout(r, 1500));
    for (const email of emails) assert.equal(smtp.received.filter((m) => m.to.includes(email)).length, 1, `${email} got one mail`);
  });

  test('a read takes its read time only once a commit in flight in another process is done', async () => {
    const documents = `${origins[1]}/v1/projects/demo-hearth/databases/(default)/documents`;
    const admin = { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` };
    assert.equal((await fetch(`${documents}/fence/f1`, { method: 'PATCH', headers: admin, body: JSON.stringify({ fields: { n: { integerValue: '1' } } }) })).status, 200);
    // The test's own connection holds the file's write lock, as a worker's commit does from its decision to its COMMIT.
    const holder = new Database(join(dataDir, 'hearth.sqlite'));
    holder.exec('BEGIN IMMEDIATE');
    let answered = false;
    const query = fetch(`${documents}:runQuery`, { method: 'POST', headers: admin, body: JSON.stringify({ structuredQuery: { from: [{ collectionId: 'fence' }] } }) }).then(async (response) => {
      answered = true;
      return { status: response.status, body: (await response.json()) as Array<{ readTime: string }> };
    });
    await new Promise((r) => setTimeout(r, 400));
    const answeredWhileHeld = answered;
    holder.exec('COMMIT');
    holder.close();
    assert.equal(answeredWhileHeld, false, 'the query waited for the write lock before it took its read time');
    const { status, body } = await query;
    assert.equal(status, 200, JSON.stringify(body));
    assert.ok(body[0]?.readTime, JSON.stringify(body));
  });

  test('a write that cannot have the file within five seconds fails UNAVAILABLE, nothing stored, and the worker serves meanwhile', async () => {
    const documents = `${origins[0]}/v1/projects/demo-hearth/databases/(default)/documents`;
    const admin = { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` };
    const email = `held-${Date.now()}@example.com`;
    const holder = new Database(join(dataDir, 'hearth.sqlite'));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const commit = fetch(`${documents}/held/h1`, { method: 'PATCH', headers: admin, body: JSON.stringify({ fields: { n: { integerValue: '1' } } }) });
      const signUp = postJson(v1(0, 'signUp'), { email, password: 'secret12', returnSecureToken: true });
      // Meanwhile the same worker answers what needs no write lock.
      const started = Date.now();
      const health = await fetch(`${origins[0]}/healthz`);
      assert.equal(health.status, 200);
      assert.ok(Date.now() - started < 2_000, 'the worker kept serving while its writes waited');
      const refused = await commit;
      assert.equal(refused.status, 503, await refused.clone().text());
      assert.equal(((await refused.json()) as { error: { status: string } }).error.status, 'UNAVAILABLE');
      const refusedSignUp = await signUp;
      assert.equal(refusedSignUp.status, 503, JSON.stringify(refusedSignUp.body));
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    assert.equal((await fetch(`${documents}/held/h1`, { headers: admin })).status, 404, 'nothing of the refused commit was stored');
    const lookup = await postJson(`${origins[1]}/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:lookup`, { email: [email] }, { authorization: `Bearer ${adminKey}` });
    assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
    assert.equal(lookup.body.users, undefined, 'nor of the refused sign-up');
    // And the file is theirs again: the next write goes through.
    assert.equal((await fetch(`${documents}/held/h1`, { method: 'PATCH', headers: admin, body: JSON.stringify({ fields: { n: { integerValue: '2' } } }) })).status, 200);
  });

  test('a worker started again sweeps only old unreferenced bytes and temporary files: what another worker is writing or about to commit stays', async () => {
    const blobs = join(dataDir, 'files', 'blobs', 'ab');
    mkdirSync(blobs, { recursive: true });
    const fresh = join(blobs, `ab${'1'.repeat(30)}`);
    const old = join(blobs, `ab${'2'.repeat(30)}`);
    const writing = join(dataDir, 'files', 'tmp', `cd${'3'.repeat(30)}`);
    const abandoned = join(dataDir, 'files', 'tmp', `cd${'4'.repeat(30)}`);
    writeFileSync(fresh, 'bytes whose metadata another worker is about to commit');
    writeFileSync(old, 'bytes of an upload cut short an hour ago');
    writeFileSync(writing, 'an upload another worker is writing');
    writeFileSync(abandoned, 'an upload cut short an hour ago');
    const anHourAgo = new Date(Date.now() - 3600_000);
    for (const path of [old, abandoned]) utimesSync(path, anHourAgo, anHourAgo);
    // Worker 2 is killed and started again by the primary; at its start it sweeps.
    const servingLines = () => hearth.output().split('\n').filter((line) => line.includes('"worker serving"')).map((line) => JSON.parse(line) as { worker: number; workerPid: number });
    const victim = servingLines().filter((line) => line.worker === 2).at(-1)!.workerPid;
    process.kill(victim, 'SIGKILL');
    await waitFor('worker 2 serving again', async () => (servingLines().some((line) => line.worker === 2 && line.workerPid !== victim) ? true : undefined), 30_000);
    await waitFor('the old orphan swept', async () => (existsSync(old) ? undefined : true), 10_000);
    assert.ok(existsSync(fresh), 'a young blob no object points at yet is left for its commit');
    assert.ok(!existsSync(abandoned), 'an old temporary file went at the start');
    assert.ok(existsSync(writing), 'a temporary file written lately is left to its writer');
  });

  test('the signing keys are the folder’s: one ring for both workers', async () => {
    const ring = JSON.parse(readFileSync(join(dataDir, 'signing-keys.json'), 'utf8')) as Array<{ kid: string }>;
    const published = await Promise.all(origins.map(async (origin) => ((await (await fetch(`${origin}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid)));
    assert.deepEqual(published[0], ring.map((key) => key.kid));
    assert.deepEqual(published[1], published[0]);
  });
});

describe('key rings in a data folder that several processes share', () => {
  const dataDir = tempDataDir();
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('two processes due for rotation at once add one key; a key one adds verifies on the other', async () => {
    // Two stores on one file stand for two workers: each ring takes the file's write lock through its own connection.
    const stores = [new SharedSqliteStore(join(dataDir, 'hearth.sqlite'), () => undefined), new SharedSqliteStore(join(dataDir, 'hearth.sqlite'), () => undefined)];
    try {
      const file = join(dataDir, 'signing-keys.json');
      await checkSharedKeyRing((process) => new KeyRingFile(file, (run) => stores[process]!.exclusive(run)));
    } finally {
      for (const store of stores) await store.close();
    }
  });
});
