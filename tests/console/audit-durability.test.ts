/**
 * Issue 14 (left from its note): an audit entry for an acknowledged console change survives kill -9.
 * The entry is written before the operator sees the answer, into the same durable store as the
 * change; this kills the process right after the answers and reads the log after the restart.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { freePort, postJson, spawnHearth, tempDataDir } from '../helpers/hearth.js';

const dataDir = tempDataDir();
after(() => rmSync(dataDir, { recursive: true, force: true }));

const startOn = (port: number) => spawnHearth(['--port', String(port), '--data', dataDir, '--log-level', 'warn']);

interface Entry {
  method: string;
  path: string;
  status: number;
  summary: string;
}

async function consoleCookie(url: string, adminKey: string): Promise<string> {
  const response = await fetch(`${url}/hearth/v1/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ adminKey }),
  });
  assert.equal(response.status, 200);
  return (response.headers.get('set-cookie') ?? '').split(';')[0]!;
}

const consoleHeaders = (url: string, cookie: string) => ({ cookie, 'x-hearth-console': '1', 'sec-fetch-site': 'same-origin', origin: url });

test('kill -9 right after console changes are answered: their audit entries are kept', async () => {
  const port = await freePort();
  const first = await startOn(port);
  const adminKey = readFileSync(join(dataDir, 'admin-key'), 'utf8').trim();
  const cookie = await consoleCookie(first.url, adminKey);
  const headers = consoleHeaders(first.url, cookie);

  const project = 'demo-hearth';
  const uids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const created = await postJson(`${first.url}/identitytoolkit.googleapis.com/v1/projects/${project}/accounts`, { email: `audit-crash-${i}-${Date.now()}@example.com`, password: 'secret12' }, headers);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    uids.push(created.body.localId);
  }
  const disabled = await postJson(`${first.url}/identitytoolkit.googleapis.com/v1/projects/${project}/accounts:update`, { localId: uids[0], disableUser: true }, headers);
  assert.equal(disabled.status, 200, JSON.stringify(disabled.body));

  first.child.kill('SIGKILL');
  await first.stop();

  const second = await startOn(port);
  try {
    const again = await consoleCookie(second.url, adminKey);
    const listed = await fetch(`${second.url}/hearth/v1/console/audit?pageSize=1000`, { headers: consoleHeaders(second.url, again) });
    assert.equal(listed.status, 200);
    const entries = ((await listed.json()) as { entries: Entry[] }).entries;
    const creations = entries.filter((entry) => entry.method === 'POST' && entry.path.endsWith(`/projects/${project}/accounts`) && entry.status === 200);
    assert.equal(creations.length, uids.length, JSON.stringify(entries, null, 1));
    const updates = entries.filter((entry) => entry.path.endsWith('/accounts:update') && entry.status === 200);
    assert.equal(updates.length, 1, JSON.stringify(entries, null, 1));
    // And the changes themselves are there too: the first account is disabled.
    const looked = await postJson(`${second.url}/identitytoolkit.googleapis.com/v1/projects/${project}/accounts:lookup`, { localId: [uids[0]] }, { authorization: `Bearer ${adminKey}` });
    assert.equal(looked.status, 200, JSON.stringify(looked.body));
    assert.equal(looked.body.users[0].disabled, true);
  } finally {
    await second.stop();
  }
});
