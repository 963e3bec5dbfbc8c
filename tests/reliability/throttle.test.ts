/**
 * Failed sign-ins: someone who knows an email can no longer keep its owner out. Wrong passwords from
 * one address slow that address down (free failures, then doubling waits); the owner signs in from
 * another address; an account-wide ceiling ten times higher still stops a distributed guess; and
 * the counts are kept in the store, so a restart does not forgive them.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { initializeApp, deleteApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, getAuth, signInWithEmailAndPassword, type Auth } from 'firebase/auth';
import { signInLimits, SignInThrottle } from '../../packages/server/src/auth/core/throttle.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { freePort, postJson, spawnHearth, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

const minute = 60_000;

describe('the sign-in throttle over a real store', () => {
  const dataDir = tempDataDir();
  const file = join(dataDir, 'hearth.sqlite');
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('one address is slowed with doubling waits; another address, and the owner on it, is not', async () => {
    const store = new SqliteStore(file);
    const throttle = await SignInThrottle.open(store, signInLimits(10));
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    for (let i = 0; i < 10; i++) assert.equal(throttle.admit('p', 'victim@example.com', '203.0.113.9', t0 + i), true, `attempt ${i + 1}`);
    assert.equal(throttle.admit('p', 'victim@example.com', '203.0.113.9', t0 + 10), false, 'the eleventh attempt from that address waits');
    assert.equal(throttle.admit('p', 'victim@example.com', '198.51.100.7', t0 + 10), true, 'the owner, elsewhere, is let through');
    throttle.succeeded('p', 'victim@example.com', '198.51.100.7', t0 + 10);
    // Waits double: 1 minute after the tenth failure, then 2, 4 ...
    assert.equal(throttle.admit('p', 'victim@example.com', '203.0.113.9', t0 + 9 + minute - 1), false);
    assert.equal(throttle.admit('p', 'victim@example.com', '203.0.113.9', t0 + 9 + minute), true);
    const eleventh = t0 + 9 + minute;
    assert.equal(throttle.admit('p', 'victim@example.com', '203.0.113.9', eleventh + 2 * minute - 1), false);
    assert.equal(throttle.admit('p', 'victim@example.com', '203.0.113.9', eleventh + 2 * minute), true);
    const twelfth = eleventh + 2 * minute;
    // The wait is capped at 15 minutes however long it goes on.
    let at = twelfth;
    for (let i = 0; i < 6; i++) {
      const next = at + 15 * minute;
      assert.equal(throttle.admit('p', 'victim@example.com', '203.0.113.9', next), true);
      at = next;
    }
    assert.equal(throttle.admit('p', 'victim@example.com', '203.0.113.9', at + 15 * minute - 1), false);
    await throttle.flushed();
    await store.close();
  });

  test('the counts survive closing and reopening the store (a restart)', async () => {
    const t0 = Date.parse('2026-02-01T00:00:00Z');
    const store = new SqliteStore(file);
    const throttle = await SignInThrottle.open(store, signInLimits(10), t0);
    for (let i = 0; i < 10; i++) throttle.admit('p', 'kept@example.com', '203.0.113.10', t0 + i);
    await throttle.flushed();
    await store.close();

    const reopened = new SqliteStore(file);
    const again = await SignInThrottle.open(reopened, signInLimits(10), t0 + 100);
    assert.equal(again.admit('p', 'kept@example.com', '203.0.113.10', t0 + 100), false, 'still waiting after the restart');
    assert.equal(again.admit('p', 'kept@example.com', '203.0.113.11', t0 + 100), true);
    await again.flushed();
    await reopened.close();
  });

  test('the changes of one turn go to the store in one commit, each row with its last state', async () => {
    const store = new SqliteStore(join(dataDir, 'batched.sqlite'));
    const throttle = await SignInThrottle.open(store, signInLimits(10));
    const commits: string[][] = [];
    const commit = store.commit.bind(store);
    store.commit = (mutations) => {
      commits.push(mutations.map((m) => m.kind));
      return commit(mutations);
    };
    const t0 = Date.now();
    // A sign-in admitted and taken back in one turn (three rows set, then cleared) and a failure beside it.
    assert.equal(throttle.admit('p', 'ok@example.com', '203.0.113.20', t0), true);
    assert.equal(throttle.admit('p', 'bad@example.com', '203.0.113.21', t0), true);
    throttle.succeeded('p', 'ok@example.com', '203.0.113.20', t0);
    await throttle.flushed();
    // Before: one commit per row change (nine here), each a durable transaction on the event loop.
    assert.equal(commits.length, 1, `commits: ${JSON.stringify(commits)}`);
    assert.deepEqual(commits[0]!.slice().sort(), ['deleteThrottleRecord', 'deleteThrottleRecord', 'deleteThrottleRecord', 'putThrottleRecord', 'putThrottleRecord', 'putThrottleRecord']);
    // What reaches the store is what memory holds: the failure's three rows, none of the success's.
    const reopened = await SignInThrottle.open(store, signInLimits(1), t0 + 1);
    assert.equal(reopened.admit('p', 'bad@example.com', '203.0.113.21', t0 + 1), false, 'the failure was kept');
    assert.equal(reopened.admit('p', 'ok@example.com', '203.0.113.20', t0 + 1), true, 'the success left nothing behind');
    await reopened.flushed();
    await store.close();
  });

  test('a guess spread over many addresses meets the account-wide ceiling (ten times higher)', async () => {
    const throttle = SignInThrottle.inMemory(signInLimits(10));
    const t0 = Date.parse('2026-03-01T00:00:00Z');
    let admitted = 0;
    for (let i = 0; i < 150; i++) if (throttle.admit('p', 'target@example.com', `10.0.${i >> 8}.${i & 255}`, t0 + i)) admitted++;
    assert.equal(admitted, 100);
    assert.equal(throttle.admit('p', 'target@example.com', '192.0.2.1', t0 + 200), false);
    assert.equal(throttle.admit('p', 'target@example.com', '192.0.2.1', t0 + 15 * minute + 100), true, 'the ceiling is a 15-minute window');
  });

  test('one address guessing across many accounts meets the per-address ceiling', () => {
    const throttle = SignInThrottle.inMemory(signInLimits(10));
    const t0 = Date.parse('2026-04-01T00:00:00Z');
    let admitted = 0;
    for (let i = 0; i < 150; i++) if (throttle.admit('p', `user${i}@example.com`, '203.0.113.50', t0 + i)) admitted++;
    assert.equal(admitted, 100);
  });
});

describe('through the SDK: the owner is not locked out by someone else', () => {
  let server: TestHearth;
  let app: FirebaseApp;
  let auth: Auth;
  before(async () => {
    server = await startHearth();
    app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, `throttle-${Date.now()}`);
    auth = getAuth(app);
    connectAuthEmulator(auth, server.url, { disableWarnings: true });
  });
  after(async () => {
    await deleteApp(app);
    await server.close();
  });

  test('wrong passwords from 127.0.0.2 get too-many-requests there, and the owner on 127.0.0.1 signs in', async () => {
    const email = `owner-${Date.now()}@example.com`;
    await createUserWithEmailAndPassword(auth, email, 'secret12');
    await auth.signOut();
    const limit = server.hearth.options.accountThrottle.maxFailures;
    const answers: string[] = [];
    for (let i = 0; i < limit + 2; i++) answers.push((await signInFrom('127.0.0.2', server, email, `guess-${i}`)).message);
    assert.deepEqual(answers.slice(0, limit), Array(limit).fill('INVALID_LOGIN_CREDENTIALS'));
    assert.deepEqual(answers.slice(limit), ['TOO_MANY_ATTEMPTS_TRY_LATER', 'TOO_MANY_ATTEMPTS_TRY_LATER']);
    assert.equal((await signInFrom('127.0.0.2', server, email, 'secret12')).message, 'TOO_MANY_ATTEMPTS_TRY_LATER', 'even the right password waits there');
    const { user } = await signInWithEmailAndPassword(auth, email, 'secret12');
    assert.equal(user.email, email);
  });
});

describe('across a crash', () => {
  const dataDir = tempDataDir();
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  // Needs the server to open the throttle over its store: `signInThrottle: await SignInThrottle.open(store, ...)`
  // in server.ts's AuthDeps (see the hardening report); until then the counts are in memory only.
  test('kill -9 does not forgive failed sign-ins', async () => {
    const port = await freePort();
    const args = ['--port', String(port), '--data', dataDir, '--dev', '--log-level', 'warn', '--max-failed-signins', '3'];
    const first = await spawnHearth(args);
    const target = { url: first.url, apiKey: 'any' };
    const email = `crash-${Date.now()}@example.com`;
    // `hearth start --dev` starts with enumeration protection off, as the Auth emulator: on, as in production.
    assert.equal((await fetch(`${first.url}/emulator/v1/projects/demo-hearth/config`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ emailPrivacyConfig: { enableImprovedEmailPrivacy: true } }) })).status, 200);
    assert.equal((await postJson(`${first.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=any`, { email, password: 'secret12' })).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await signInFrom('127.0.0.2', target, email, `guess-${i}`)).message, 'INVALID_LOGIN_CREDENTIALS');
    assert.equal((await signInFrom('127.0.0.2', target, email, 'secret12')).message, 'TOO_MANY_ATTEMPTS_TRY_LATER');
    first.child.kill('SIGKILL');
    await first.stop();
    const second = await spawnHearth(args);
    try {
      const again = { url: second.url, apiKey: 'any' };
      assert.equal((await signInFrom('127.0.0.2', again, email, 'secret12')).message, 'TOO_MANY_ATTEMPTS_TRY_LATER', 'still waiting after the crash');
      assert.equal((await signInFrom('127.0.0.1', again, email, 'secret12')).message, 'OK', 'the owner elsewhere is let in');
    } finally {
      await second.stop();
    }
  });
});

/** A raw signInWithPassword from a given loopback source address (an attacker needs no SDK). */
async function signInFrom(localAddress: string, server: Pick<TestHearth, 'url' | 'apiKey'>, email: string, password: string): Promise<{ status: number; message: string }> {
  const body = JSON.stringify({ email, password, returnSecureToken: true });
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server.apiKey}`,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          const parsed = JSON.parse(text) as { error?: { message: string } };
          // Google's message is the code, sometimes followed by ' : ' and an explanation.
          resolve({ status: res.statusCode ?? 0, message: parsed.error?.message.split(' : ')[0] ?? 'OK' });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
