/**
 * firebase-admin in the worker outside --dev: the worker presents a credential of its own, minted
 * at each of its starts, which Hearth takes as the administrator of the functions' project only from
 * a direct loopback connection; never the admin key, never in logs, answers or the worker's environment.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { waitFor } from '../helpers/wait-for.js';

const fixture = join(import.meta.dirname, 'fixtures/admin');

describe('the functions credential (production Hearth)', () => {
  let server: TestHearth;
  const logLines: string[] = [];
  const answers: string[] = [];
  const secrets = new Set<string>();

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    server = await startHearth({ functionsDir: fixture, dev: false }, pino({ level: 'debug' }, sink));
  });
  after(async () => {
    await server?.close();
  });

  const credential = () => {
    const secret = server.hearth.functions.worker?.credential;
    assert.ok(secret, 'the worker runs with a credential');
    secrets.add(secret);
    return secret;
  };
  const call = async (path: string, init: RequestInit = {}) => {
    const answer = await fetch(`${server.url}${path}`, init);
    const text = await answer.text();
    answers.push(text);
    return { status: answer.status, text };
  };
  const signUp = async (email: string) => {
    const { text } = await call(`/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server.apiKey}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'secret123', returnSecureToken: true }) });
    return (JSON.parse(text) as { localId: string }).localId;
  };
  const readDocument = (path: string, authorization: string, headers: Record<string, string> = {}) =>
    call(`/v1/projects/${server.projectId}/databases/(default)/documents/${path}`, { headers: { authorization, ...headers } });

  test("a function's firebase-admin reads an account and writes a document no rule opens", async () => {
    const uid = await signUp('fn@fine.example');
    const { status, text } = await call(`/${server.projectId}/us-central1/profile?uid=${uid}`);
    assert.equal(status, 200, text);
    assert.deepEqual(JSON.parse(text), { email: 'fn@fine.example', stored: 'fn@fine.example' });
    const stored = await readDocument(`seen/${uid}`, `Bearer ${server.adminKey}`);
    assert.equal(stored.status, 200);
    assert.equal((JSON.parse(stored.text) as { fields: { email: { stringValue: string } } }).fields.email.stringValue, 'fn@fine.example');
    // The emulator credential itself stays refused outside --dev.
    assert.equal((await readDocument(`seen/${uid}`, 'Bearer owner')).status, 401);
  });

  test('the credential counts only as itself, for its project, from a direct loopback connection', async () => {
    const uid = await signUp('probe@fine.example');
    const secret = credential();
    assert.notEqual(secret, server.adminKey);
    assert.equal((await readDocument(`seen/${uid}`, `Bearer ${secret}`)).status, 404, 'from loopback it is the administrator (no such document, not refused)');
    const proxied: Array<Record<string, string>> = [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }, { 'x-real-ip': '203.0.113.9' }];
    for (const forwarded of proxied) {
      assert.equal((await readDocument(`seen/${uid}`, `Bearer ${secret}`, forwarded)).status, 401, JSON.stringify(forwarded));
    }
    for (const wrong of [`Bearer ${secret}x`, `Bearer ${secret.slice(1)}`, `Bearer ${secret.toUpperCase()}`, `Basic ${secret}`, `Bearer ${secret},x`]) {
      assert.equal((await readDocument(`seen/${uid}`, wrong)).status, 401, wrong);
    }
    const lookup = (authorization: string, project = server.projectId, headers: Record<string, string> = {}) =>
      call(`/identitytoolkit.googleapis.com/v1/projects/${project}/accounts:lookup`, { method: 'POST', headers: { authorization, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ localId: [uid] }) });
    assert.equal((await lookup(`Bearer ${secret}`)).status, 200);
    assert.notEqual((await lookup(`Bearer ${secret}`, 'another-project')).status, 200, 'another project');
    assert.notEqual((await lookup(`Bearer ${secret}`, server.projectId, { 'x-forwarded-for': '203.0.113.9' })).status, 200, 'through a proxy');
    // Not the owner: a project's outbox (mails' links sign in) stays the admin key's.
    assert.notEqual((await call(`/emulator/v1/projects/${server.projectId}/oobCodes`, { headers: { authorization: `Bearer ${secret}` } })).status, 200);
  });

  test("a restarted worker has a new credential; the old one is refused; functions keep working", async () => {
    const uid = await signUp('again@fine.example');
    const old = credential();
    server.hearth.functions.worker!.kill();
    const fresh = await waitFor('a new worker', async () => {
      const now = server.hearth.functions.worker?.credential;
      return now && now !== old ? now : undefined;
    });
    assert.equal((await readDocument(`seen/${uid}`, `Bearer ${old}`)).status, 401);
    const { status, text } = await call(`/${server.projectId}/us-central1/profile?uid=${uid}`);
    assert.equal(status, 200, text);
    assert.equal((await readDocument(`seen/${uid}`, `Bearer ${fresh}`)).status, 200);
  });

  test('the credential is in no log line, no answer and not in the worker environment', async () => {
    credential();
    const { status, text } = await call(`/${server.projectId}/us-central1/environment`);
    assert.equal(status, 200);
    for (const secret of secrets) assert.ok(!text.includes(secret));
    assert.ok(!text.includes(server.adminKey), 'nor the admin key');
    const printed = server.hearth.functions.worker!.lines.map((line) => line.text);
    for (const secret of secrets) {
      for (const seen of [...logLines, ...answers, ...printed]) assert.ok(!seen.includes(secret), seen.slice(0, 200));
    }
    assert.ok(logLines.length > 0, 'the log was captured');
  });
});
