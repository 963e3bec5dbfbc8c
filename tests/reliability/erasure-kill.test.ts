/**
 * A deleted account's erasure survives `kill -9`: the deletion queues it in its own commit, so an
 * erasure the crash cut short (thousands of notes, erased in batches) is finished after the restart.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { freePort, postJson, spawnHearth, tempDataDir } from '../helpers/hearth.js';

const dataDirs: string[] = [];
after(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

const projectId = 'demo-hearth';
const startOn = (dataDir: string, port: number) => spawnHearth(['--port', String(port), '--data', dataDir, '--dev', '--log-level', 'info']);
const erasedLine = 'erased a deleted account';

test('kill -9 during an erasure: the restart finishes it', { timeout: 300_000 }, async () => {
  const dataDir = tempDataDir();
  dataDirs.push(dataDir);
  const port = await freePort();
  const first = await startOn(dataDir, port);
  const admin = { authorization: `Bearer ${readFileSync(join(dataDir, 'admin-key'), 'utf8').trim()}` };
  const documents = (url: string) => `${url}/v1/projects/${projectId}/databases/(default)/documents`;

  const signedUp = await postJson(`${first.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=any`, { email: `erase-${Date.now()}@example.com`, password: 'secret12', returnSecureToken: true });
  assert.equal(signedUp.status, 200, JSON.stringify(signedUp.body));
  const uid: string = signedUp.body.localId;
  for (let batch = 0; batch < 8; batch++) {
    const writes = Array.from({ length: 500 }, (_, i) => ({
      update: { name: `projects/${projectId}/databases/(default)/documents/users/${uid}/notes/n${batch}-${i}`, fields: { text: { stringValue: `note ${i}` } } },
    }));
    const committed = await postJson(`${documents(first.url)}:commit`, { writes }, admin);
    assert.equal(committed.status, 200, JSON.stringify(committed.body));
  }

  const deleted = await postJson(`${first.url}/identitytoolkit.googleapis.com/v1/projects/${projectId}/accounts:delete`, { localId: uid }, admin);
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
  first.child.kill('SIGKILL');
  await first.stop();
  assert.ok(!first.output().includes(erasedLine), 'the erasure was cut short by the kill (else this test proves nothing)');

  const second = await startOn(dataDir, port);
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const listed = (await (await fetch(`${documents(second.url)}/users/${uid}/notes?pageSize=10`, { headers: admin })).json()) as { documents?: unknown[] };
      if (!listed.documents?.length) break;
      assert.ok(Date.now() < deadline, 'the notes of the deleted account are still there after the restart');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const account = await postJson(`${second.url}/identitytoolkit.googleapis.com/v1/projects/${projectId}/accounts:lookup`, { localId: [uid] }, admin);
    assert.equal(account.body.users, undefined, 'the account stays deleted');
  } finally {
    await second.stop();
  }
});
