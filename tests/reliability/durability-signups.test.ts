/**
 * The embedded store keeps what it acknowledged: across a clean restart (SIGTERM) and across
 * `kill -9` in the middle of a burst of sign-ups.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { freePort, postJson, spawnHearth, tempDataDir } from '../helpers/hearth.js';

const dataDirs: string[] = [];
after(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function startOn(dataDir: string, port: number) {
  return spawnHearth(['--port', String(port), '--data', dataDir, '--dev', '--log-level', 'warn']);
}

async function signIn(url: string, email: string) {
  return postJson(`${url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=any`, { email, password: 'secret12', returnSecureToken: true });
}

test('a clean shutdown (SIGTERM) exits 0 and keeps accounts and signing keys', async () => {
  const dataDir = tempDataDir();
  dataDirs.push(dataDir);
  const port = await freePort();
  const first = await startOn(dataDir, port);
  const email = `restart-${Date.now()}@example.com`;
  const created = await postJson(`${first.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=any`, { email, password: 'secret12', returnSecureToken: true });
  assert.equal(created.status, 200);
  assert.equal(await first.stop('SIGTERM'), 0, first.output());

  const second = await startOn(dataDir, port);
  try {
    const signedIn = await signIn(second.url, email);
    assert.equal(signedIn.status, 200);
    assert.equal(signedIn.body.localId, created.body.localId);
    // The token issued before the restart still verifies: the keys were kept.
    const lookup = await postJson(`${second.url}/identitytoolkit.googleapis.com/v1/accounts:lookup?key=any`, { idToken: created.body.idToken });
    assert.equal(lookup.status, 200);
  } finally {
    await second.stop();
  }
});

test('kill -9 during a burst of sign-ups loses no acknowledged account', async () => {
  const dataDir = tempDataDir();
  dataDirs.push(dataDir);
  const port = await freePort();
  const server = await startOn(dataDir, port);
  const acknowledged: Array<{ email: string; localId: string }> = [];
  let running = true;
  const worker = async (id: number) => {
    for (let i = 0; running; i++) {
      const email = `burst-${id}-${i}-${Date.now()}@example.com`;
      try {
        const response = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=any`, { email, password: 'secret12' });
        if (response.status === 200) acknowledged.push({ email, localId: response.body.localId });
      } catch {
        return; // the connection died with the server: that request was never acknowledged
      }
    }
  };
  const workers = Array.from({ length: 8 }, (_, id) => worker(id));
  // The kill comes once 40 are acknowledged; the deadline only bounds a hang (each sign-up is a
  // full-cost scrypt hash: on a loaded 2-core machine 40 of them took more than 20 s).
  const deadline = Date.now() + 90_000;
  while (acknowledged.length < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  server.child.kill('SIGKILL');
  running = false;
  await Promise.all(workers);
  await server.stop();
  assert.ok(acknowledged.length >= 40, `only ${acknowledged.length} sign-ups were acknowledged before the kill`);

  const restarted = await startOn(dataDir, port);
  try {
    const lost: string[] = [];
    for (const { email, localId } of acknowledged) {
      const response = await signIn(restarted.url, email);
      if (response.status !== 200 || response.body.localId !== localId) lost.push(email);
    }
    assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged accounts were lost`);
  } finally {
    await restarted.stop();
  }
});
