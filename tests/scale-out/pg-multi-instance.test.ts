/**
 * Several Hearth processes on one PostgreSQL database (issue 15): what one instance acknowledges,
 * the others see, and what must happen once happens once. Also kill -9 on PostgreSQL right after
 * acknowledged sign-ups and mails: nothing is lost. Wrong TOTP codes and captcha challenges
 * spread over both instances meet one limit.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openPgPool } from '../../packages/server/src/storage/postgres/pg-connection.js';
import { PgKeyRing } from '../../packages/server/src/storage/postgres/pg-shared-keys.js';
import { freePort, postJson, spawnHearth, tempDataDir, type SpawnedHearth } from '../helpers/hearth.js';
import { createTestPgDatabase, type TestPgDatabase } from '../helpers/pg-database.js';
import { checkSharedKeyRing } from '../helpers/shared-key-rings.js';
import { MailCatcher } from '../helpers/smtp.js';
import { refreshIdToken } from '../helpers/token-refresh.js';
import { TotpDevice, wrongCode } from '../helpers/totp-device.js';

const adminKey = 'multi-instance-admin-key-0123456789abcdef';
const v1 = (server: SpawnedHearth, name: string, apiKey: string) => `${server.url}/identitytoolkit.googleapis.com/v1/accounts:${name}?key=${apiKey}`;

async function startInstance(database: TestPgDatabase, dataDir: string, extra: string[] = []): Promise<SpawnedHearth> {
  const port = await freePort();
  return spawnHearth(['--port', String(port), '--data', dataDir, '--database-url', database.url, '--log-level', 'warn', ...extra], { HEARTH_ADMIN_KEY: adminKey });
}

/** The default project's browser API key, as every instance reads it from the shared settings row. */
async function apiKeyOf(database: TestPgDatabase): Promise<string> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ config: string }>("SELECT config FROM projects WHERE project_id = 'demo-hearth'");
    return (JSON.parse(rows[0]!.config) as { apiKeys: string[] }).apiKeys[0]!;
  } finally {
    await client.end();
  }
}

async function signUp(server: SpawnedHearth, apiKey: string, email: string): Promise<{ localId: string; idToken: string; refreshToken: string }> {
  const response = await postJson(v1(server, 'signUp', apiKey), { email, password: 'secret12', returnSecureToken: true });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body;
}

describe('two instances on one database', () => {
  let database: TestPgDatabase;
  const dataDirs = [tempDataDir(), tempDataDir()];
  const smtp = new MailCatcher();
  let a: SpawnedHearth;
  let b: SpawnedHearth;
  let apiKey: string;

  before(async () => {
    database = await createTestPgDatabase();
    await smtp.start();
    // Started together: schema steps run once under the advisory lock, whoever comes first.
    [a, b] = await Promise.all(dataDirs.map((dir) => startInstance(database, dir, ['--smtp-url', smtp.url, '--max-failed-signins', '3'])));
    apiKey = await apiKeyOf(database);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await smtp.stop();
    await database?.drop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  test('a sign-up on one is signed in on the other; its ID token and refresh token work there too', async () => {
    const email = `both-${Date.now()}@example.com`;
    const created = await signUp(a, apiKey, email);
    const signedIn = await postJson(v1(b, 'signInWithPassword', apiKey), { email, password: 'secret12', returnSecureToken: true });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.localId, created.localId);

    const lookup = await postJson(v1(b, 'lookup', apiKey), { idToken: created.idToken });
    assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
    assert.equal(lookup.body.users[0].email, email);

    const refreshed = await refreshIdToken(b.url, apiKey, created.refreshToken);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    const tokens = refreshed.body;
    assert.equal(tokens.user_id, created.localId);
    // And back: B's token is good on A.
    assert.equal((await postJson(v1(a, 'lookup', apiKey), { idToken: tokens.id_token })).status, 200);
  });

  test('the same email signed up on both at once: one account, the other EMAIL_EXISTS', async () => {
    const email = `race-${Date.now()}@example.com`;
    const answers = await Promise.all([a, b, a, b].map((server) => postJson(v1(server, 'signUp', apiKey), { email, password: 'secret12', returnSecureToken: true })));
    assert.equal(answers.filter((r) => r.status === 200).length, 1, JSON.stringify(answers.map((r) => r.body)));
    for (const refused of answers.filter((r) => r.status !== 200)) assert.equal(refused.body.error.message, 'EMAIL_EXISTS');
  });

  test('a tenant made through one instance is served by the other within seconds', async () => {
    const admin = { authorization: `Bearer ${adminKey}` };
    const tenant = await postJson(`${a.url}/identitytoolkit.googleapis.com/v2/projects/demo-hearth/tenants`, { displayName: 'Shared', allowPasswordSignup: true }, admin);
    assert.equal(tenant.status, 200, JSON.stringify(tenant.body));
    // The other instance reads settings back every two seconds (docs/DEPLOYMENT.md).
    const deadline = Date.now() + 10_000;
    let signedUp = await postJson(v1(b, 'signUp', apiKey), { email: `tenant-${Date.now()}@example.com`, password: 'secret12', tenantId: tenant.body.tenantId, returnSecureToken: true });
    while (signedUp.status !== 200 && signedUp.body.error?.message === 'TENANT_NOT_FOUND' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      signedUp = await postJson(v1(b, 'signUp', apiKey), { email: `tenant-${Date.now()}@example.com`, password: 'secret12', tenantId: tenant.body.tenantId, returnSecureToken: true });
    }
    assert.equal(signedUp.status, 200, JSON.stringify(signedUp.body));
  });

  test('failed sign-ins counted on one instance hold on the other', async () => {
    const email = `guessed-${Date.now()}@example.com`;
    await signUp(a, apiKey, email);
    for (let i = 0; i < 3; i++) {
      const wrong = await postJson(v1(a, 'signInWithPassword', apiKey), { email, password: `wrong-${i}`, returnSecureToken: true });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.notEqual(wrong.body.error.message, 'TOO_MANY_ATTEMPTS_TRY_LATER');
    }
    // The fourth guess from the same address goes to the other instance: it waits as it would on the first.
    // The first instance writes its counts through right after answering: a moment for the last one to land.
    await new Promise((r) => setTimeout(r, 500));
    const fourth = await postJson(v1(b, 'signInWithPassword', apiKey), { email, password: 'secret12', returnSecureToken: true });
    assert.equal(fourth.status, 400, JSON.stringify(fourth.body));
    assert.match(fourth.body.error.message, /^TOO_MANY_ATTEMPTS_TRY_LATER/);
  });

  test('wrong TOTP codes spread over both instances meet one limit', async () => {
    const email = `totp-${Date.now()}@example.com`;
    const created = await signUp(a, apiKey, email);
    const verified = await postJson(`${a.url}/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:update`, { localId: created.localId, emailVerified: true }, { authorization: `Bearer ${adminKey}` });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    const v2 = (server: SpawnedHearth, name: string) => `${server.url}/identitytoolkit.googleapis.com/v2/accounts/${name}?key=${apiKey}`;
    const started = await postJson(v2(a, 'mfaEnrollment:start'), { idToken: created.idToken, totpEnrollmentInfo: {} });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const device = new TotpDevice(started.body.totpSessionInfo.sharedSecretKey);
    const enrolled = await postJson(v2(a, 'mfaEnrollment:finalize'), { idToken: created.idToken, totpVerificationInfo: { sessionInfo: started.body.totpSessionInfo.sessionInfo, verificationCode: device.next() } });
    assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
    const first = await postJson(v1(a, 'signInWithPassword', apiKey), { email, password: 'secret12', returnSecureToken: true });
    assert.ok(first.body.mfaPendingCredential, JSON.stringify(first.body));
    const finalize = (server: SpawnedHearth, code: string) =>
      postJson(v2(server, 'mfaSignIn:finalize'), { mfaPendingCredential: first.body.mfaPendingCredential, mfaEnrollmentId: first.body.mfaInfo[0].mfaEnrollmentId, totpVerificationInfo: { verificationCode: code } });
    // Five free wrong codes (auth/mfa/totp.ts), alternating: three on one instance, two on the other.
    for (let i = 0; i < 5; i++) {
      const wrong = await finalize(i % 2 === 0 ? a : b, wrongCode(device));
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.equal(wrong.body.error.message, 'INVALID_CODE', `guess ${i}`);
    }
    // Neither instance saw five by itself; together they did: even the right code now waits, on both.
    for (const server of [b, a]) {
      const right = await finalize(server, device.next());
      assert.equal(right.status, 400, JSON.stringify(right.body));
      assert.match(right.body.error.message, /^TOO_MANY_ATTEMPTS_TRY_LATER/);
    }
  });

  test('captcha challenges from one address spread over both instances meet one limit', async () => {
    const keyAnswer = await fetch(`${a.url}/identitytoolkit.googleapis.com/v1/recaptchaParams?key=${apiKey}`);
    const siteKey = ((await keyAnswer.json()) as { recaptchaSiteKey: string }).recaptchaSiteKey;
    const challenge = (server: SpawnedHearth) => postJson(`${server.url}/__/auth/recaptcha/challenge`, { siteKey });
    // 60 per address within ten minutes (auth/captcha/human-check.ts): 30 from each instance.
    for (let i = 0; i < 60; i++) {
      const answer = await challenge(i % 2 === 0 ? a : b);
      assert.equal(answer.status, 200, `challenge ${i}: ${JSON.stringify(answer.body)}`);
    }
    for (const server of [a, b]) {
      const refused = await challenge(server);
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.match(refused.body.error.message, /^TOO_MANY_ATTEMPTS_TRY_LATER/);
    }
  });

  test('mails queued on both instances are each delivered once', async () => {
    const emails = Array.from({ length: 16 }, (_, i) => `mail-${i}-${Date.now()}@example.com`);
    for (const email of emails) await signUp(a, apiKey, email);
    // Each instance wakes its own delivery loop, which lists every due row, the other's too.
    const sent = await Promise.all(
      emails.map((email, i) => postJson(`${(i % 2 ? b : a).url}/identitytoolkit.googleapis.com/v1/accounts:sendOobCode?key=${apiKey}`, { requestType: 'PASSWORD_RESET', email })),
    );
    for (const answer of sent) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    for (const email of emails) await smtp.waitFor(email, /./);
    // Time for a second copy to arrive, were one on its way.
    await new Promise((r) => setTimeout(r, 1500));
    for (const email of emails) assert.equal(smtp.received.filter((m) => m.to.includes(email)).length, 1, `${email} got one mail`);
  });
});

describe('key rings shared through the database', () => {
  let database: TestPgDatabase;
  before(async () => {
    database = await createTestPgDatabase();
  });
  after(async () => {
    await database?.drop();
  });

  test('two instances due for rotation at once add one key; a key one adds verifies on the other', async () => {
    const pools = [openPgPool(database.url), openPgPool(database.url)];
    try {
      const { applyPgMigrations } = await import('../../packages/server/src/storage/postgres/pg-connection.js');
      const { identitySchemaSteps } = await import('../../packages/server/src/storage/postgres/pg-identity-schema.js');
      await applyPgMigrations(pools[0]!, 'identity', identitySchemaSteps);
      await checkSharedKeyRing((process) => new PgKeyRing(pools[process]!, 'signing-keys'));
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
});

test('kill -9 on PostgreSQL right after acknowledged sign-ups and sendOobCode: nothing is lost', async () => {
  const database = await createTestPgDatabase();
  const dataDir = tempDataDir();
  try {
    const first = await startInstance(database, dataDir, ['--dev']);
    const apiKey = await apiKeyOf(database);
    const emails = Array.from({ length: 10 }, (_, i) => `crash-${i}-${Date.now()}@example.com`);
    const accounts = await Promise.all(emails.map((email) => signUp(first, apiKey, email)));
    const mailed = await postJson(v1(first, 'sendOobCode', apiKey), { requestType: 'PASSWORD_RESET', email: emails[0] });
    assert.equal(mailed.status, 200, JSON.stringify(mailed.body));
    first.child.kill('SIGKILL');
    await first.stop();

    const second = await startInstance(database, tempDataDir(), ['--dev']);
    try {
      for (const [i, email] of emails.entries()) {
        const signedIn = await postJson(v1(second, 'signInWithPassword', apiKey), { email, password: 'secret12', returnSecureToken: true });
        assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
        assert.equal(signedIn.body.localId, accounts[i]!.localId);
      }
      const outbox = await (await fetch(`${second.url}/emulator/v1/projects/demo-hearth/oobCodes`)).json();
      const reset = outbox.oobCodes.find((entry: { email: string; requestType: string }) => entry.email === emails[0] && entry.requestType === 'PASSWORD_RESET');
      assert.ok(reset, 'the acknowledged mail is in the outbox after the crash');
      const done = await postJson(v1(second, 'resetPassword', apiKey), { oobCode: reset.oobCode, newPassword: 'secret34' });
      assert.equal(done.status, 200, JSON.stringify(done.body));
    } finally {
      await second.stop();
    }
  } finally {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
