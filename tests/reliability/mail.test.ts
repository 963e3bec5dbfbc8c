/**
 * A 200 from sendOobCode means the mail is stored: it reaches the SMTP server even when the server
 * refuses it for a while, and even when Hearth is killed (-9) right after answering. Refusals and
 * retries are visible in the outbox; decoys for unknown addresses are never sent.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { freePort, postJson, spawnHearth, startHearth, tempDataDir } from '../helpers/hearth.js';
import { ChoosySmtp } from '../helpers/soak-smtp.js';

const dataDirs: string[] = [];
after(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

interface OutboxEntry {
  to: string;
  delivery: { state: string; attempts: number; lastError?: string };
}

test('an SMTP server that refuses (451) and then accepts gets the mail; the outbox shows the retries meanwhile', async () => {
  const smtp = new ChoosySmtp();
  // At least two refusals, and more until the test has seen the row queued with the first one: on
  // a loaded machine listing the outbox can take longer than the 2 s and 4 s retry delays.
  let queuedSeen = false;
  smtp.answer = () => (smtp.refusals < 2 || !queuedSeen ? 'later' : 'accept');
  await smtp.start();
  const server = await startHearth({ dev: false, smtpUrl: smtp.url });
  try {
    const email = `retry-${Date.now()}@example.com`;
    const url = `${server.url}/identitytoolkit.googleapis.com/v1`;
    assert.equal((await postJson(`${url}/accounts:signUp?key=${server.apiKey}`, { email, password: 'secret12' })).status, 200);
    const sent = await postJson(`${url}/accounts:sendOobCode?key=${server.apiKey}`, { requestType: 'PASSWORD_RESET', email });
    assert.equal(sent.status, 200);
    await smtp.until(() => smtp.refusals >= 1, 'first refusal');
    // The refusal is noted on the row once the SMTP client has the answer: poll for it (bounded).
    let queued: OutboxEntry | undefined;
    for (const deadline = Date.now() + 30_000; !queued?.delivery.lastError && Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
      queued = (await listOutbox(server.url, server.projectId, server.adminKey)).find((m) => m.to === email);
    }
    queuedSeen = true;
    assert.ok(queued, 'the queued mail is listed in the outbox');
    assert.equal(queued.delivery.state, 'queued');
    assert.ok(queued.delivery.attempts >= 1, 'the refused attempt is counted');
    assert.match(queued.delivery.lastError ?? '', /451|Try again later/);
    await smtp.until(() => smtp.to(email).length === 1, 'delivery after the refusals', 90_000);
    assert.ok(smtp.refusals >= 2, `retried after each refusal (${smtp.refusals})`);
    assert.match(smtp.to(email)[0]!.subject, /Reset your password/i);
    // Delivered by SMTP without --dev: the row is gone (no live link stays in the store).
    assert.equal((await listOutbox(server.url, server.projectId, server.adminKey)).filter((m) => m.to === email && m.delivery.state !== 'sent').length, 0);
  } finally {
    await server.close();
    await smtp.stop();
  }
});

test('a permanent refusal (550) is shown as failed in the outbox, not retried', async () => {
  const smtp = new ChoosySmtp();
  smtp.answer = () => 'never';
  await smtp.start();
  const server = await startHearth({ dev: false, smtpUrl: smtp.url });
  try {
    const email = `bounce-${Date.now()}@example.com`;
    const url = `${server.url}/identitytoolkit.googleapis.com/v1`;
    await postJson(`${url}/accounts:signUp?key=${server.apiKey}`, { email, password: 'secret12' });
    assert.equal((await postJson(`${url}/accounts:sendOobCode?key=${server.apiKey}`, { requestType: 'PASSWORD_RESET', email })).status, 200);
    let entry: OutboxEntry | undefined;
    await smtp.until(() => smtp.refusals >= 1, 'the refusal');
    const deadline = Date.now() + 10_000;
    while (entry?.delivery.state !== 'failed' && Date.now() < deadline) {
      entry = (await listOutbox(server.url, server.projectId, server.adminKey)).find((m) => m.to === email);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(entry?.delivery.state, 'failed');
    assert.equal(entry.delivery.attempts, 1);
    assert.match(entry.delivery.lastError ?? '', /550|Mailbox unavailable/);
  } finally {
    await server.close();
    await smtp.stop();
  }
});

test('kill -9 right after ten 200s loses none of the mails; unknown addresses get none', async () => {
  const dataDir = tempDataDir();
  dataDirs.push(dataDir);
  const port = await freePort();
  const smtpPort = await freePort();
  const args = ['--port', String(port), '--data', dataDir, '--dev', '--log-level', 'warn', '--smtp-url', `smtp://127.0.0.1:${smtpPort}`];
  // The SMTP server is down while Hearth answers: every mail is still only in Hearth's store.
  const first = await spawnHearth(args);
  const known = Array.from({ length: 5 }, (_, i) => `known-${i}-${Date.now()}@example.com`);
  const unknown = Array.from({ length: 5 }, (_, i) => `unknown-${i}-${Date.now()}@example.com`);
  const v1 = `${first.url}/identitytoolkit.googleapis.com/v1`;
  // `hearth start --dev` starts with enumeration protection off, as the Auth emulator: on, so unknown addresses get decoys.
  assert.equal((await fetch(`${first.url}/emulator/v1/projects/demo-hearth/config`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ emailPrivacyConfig: { enableImprovedEmailPrivacy: true } }) })).status, 200);
  for (const email of known) assert.equal((await postJson(`${v1}/accounts:signUp?key=any`, { email, password: 'secret12' })).status, 200);
  const answers = await Promise.all([...known, ...unknown].map((email) => postJson(`${v1}/accounts:sendOobCode?key=any`, { requestType: 'PASSWORD_RESET', email })));
  assert.deepEqual(answers.map((a) => a.status), Array(10).fill(200));
  first.child.kill('SIGKILL');
  await first.stop();

  const smtp = new ChoosySmtp();
  await smtp.start(smtpPort);
  const second = await spawnHearth(args);
  try {
    await smtp.until(() => known.every((email) => smtp.to(email).length >= 1), 'every acknowledged mail after the restart');
    for (const email of unknown) assert.equal(smtp.to(email).length, 0, `a decoy was sent to ${email}`);
    const outbox = await listOutbox(second.url, 'demo-hearth', 'owner');
    for (const email of unknown) assert.equal(outbox.filter((m) => m.to === email).length, 0, 'decoys are not listed');
  } finally {
    await second.stop();
    await smtp.stop();
  }
});

async function listOutbox(url: string, projectId: string, adminKey: string): Promise<OutboxEntry[]> {
  const response = await fetch(`${url}/hearth/v1/projects/${projectId}/outbox`, { headers: { authorization: `Bearer ${adminKey}` } });
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { messages: OutboxEntry[] }).messages;
}
