/**
 * `hearth start --dev` starts with the Auth emulator's defaults, so an app's emulator-based test
 * suite is not stopped by production's protections: email enumeration protection off, no limit
 * per address, per phone number, per mail recipient or per account, and mailed links at the
 * emulator's /emulator/action. A limit's flag given on the command line still applies. Outside
 * --dev the defaults are production's: protection on, 100 sign-ups an hour per address, 5 texts
 * per number, links at the hosted action page.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { freePort, postJson, spawnHearth, startHearth, tempDataDir, type SpawnedHearth, type TestHearth } from '../helpers/hearth.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { newHumanCheckToken } from '../helpers/human-check.js';

const project = 'demo-dev-defaults';
const folders: string[] = [];

/** `hearth start --dev` as a user runs it, with `extra` flags. */
async function startCli(extra: string[] = []): Promise<SpawnedHearth> {
  const data = tempDataDir();
  folders.push(data);
  return spawnHearth(['--dev', '--project', project, '--port', String(await freePort()), '--data', data, '--log-level', 'warn', ...extra]);
}

const call = (url: string, name: string, body: Record<string, unknown>) => postJson(`${url}/identitytoolkit.googleapis.com/v1/accounts:${name}?key=any-key`, body);
const message = (answer: { body: { error?: { message?: string } } }) => String(answer.body.error?.message ?? '').split(' : ')[0];

after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('hearth start --dev', () => {
  let hearth: SpawnedHearth;
  before(async () => {
    hearth = await startCli();
  });
  after(async () => {
    await hearth.stop();
  });

  test('email enumeration protection starts off: registered emails are told apart, as by the emulator', async () => {
    const config = await fetch(`${hearth.url}/emulator/v1/projects/${project}/config`);
    assert.equal(((await config.json()) as { emailPrivacyConfig: { enableImprovedEmailPrivacy: boolean } }).emailPrivacyConfig.enableImprovedEmailPrivacy, false);
    const email = uniqueEmail('known');
    assert.equal((await call(hearth.url, 'signUp', { email, password: 'secret12' })).status, 200);
    const known = await call(hearth.url, 'createAuthUri', { identifier: email, continueUri: 'http://localhost/' });
    assert.equal(known.body.registered, true);
    assert.deepEqual(known.body.signinMethods, ['password']);
    const wrong = await call(hearth.url, 'signInWithPassword', { email: uniqueEmail('nobody'), password: 'secret12' });
    assert.equal(message(wrong), 'EMAIL_NOT_FOUND');
  });

  test('no per-address limit on sign-ups: 120 accounts from one address in a minute', async () => {
    for (let i = 0; i < 120; i++) {
      const answer = await call(hearth.url, 'signUp', { returnSecureToken: true });
      assert.equal(answer.status, 200, `sign-up ${i + 1}: ${JSON.stringify(answer.body)}`);
    }
  });

  test('no per-number limit on texts: one test number gets 8 codes in a row', async () => {
    for (let i = 0; i < 8; i++) {
      const answer = await call(hearth.url, 'sendVerificationCode', { phoneNumber: '+15555551000', recaptchaToken: 'emulated' });
      assert.equal(answer.status, 200, `text ${i + 1}: ${JSON.stringify(answer.body)}`);
    }
  });

  test('no per-recipient limit on mails, and their links point at /emulator/action', async () => {
    const email = uniqueEmail('mailed');
    assert.equal((await call(hearth.url, 'signUp', { email, password: 'secret12' })).status, 200);
    for (let i = 0; i < 12; i++) {
      const answer = await call(hearth.url, 'sendOobCode', { requestType: 'PASSWORD_RESET', email });
      assert.equal(answer.status, 200, `mail ${i + 1}: ${JSON.stringify(answer.body)}`);
    }
    const codes = (await (await fetch(`${hearth.url}/emulator/v1/projects/${project}/oobCodes`)).json()) as { oobCodes: Array<{ email: string; oobLink: string }> };
    const mine = codes.oobCodes.filter((code) => code.email === email);
    assert.equal(mine.length, 12);
    const link = new URL(mine[0]!.oobLink);
    assert.equal(link.pathname, '/emulator/action');
    assert.equal(link.searchParams.get('mode'), 'resetPassword');
    assert.ok(link.searchParams.get('oobCode'));
  });

  test('no per-account limit on wrong passwords: the twelfth wrong guess is still told apart from a block', async () => {
    const email = uniqueEmail('guessed');
    assert.equal((await call(hearth.url, 'signUp', { email, password: 'secret12' })).status, 200);
    for (let i = 0; i < 12; i++) assert.equal(message(await call(hearth.url, 'signInWithPassword', { email, password: `wrong-${i}` })), 'INVALID_PASSWORD');
    assert.equal((await call(hearth.url, 'signInWithPassword', { email, password: 'secret12' })).status, 200);
  });
});

test('hearth start --dev with --max-signups-per-address: the flag given still applies', async () => {
  const hearth = await startCli(['--max-signups-per-address', '3']);
  try {
    for (let i = 0; i < 3; i++) assert.equal((await call(hearth.url, 'signUp', { returnSecureToken: true })).status, 200);
    const fourth = await call(hearth.url, 'signUp', { returnSecureToken: true });
    assert.equal(fourth.status, 400);
    assert.equal(message(fourth), 'TOO_MANY_ATTEMPTS_TRY_LATER');
  } finally {
    await hearth.stop();
  }
});

describe("outside --dev, production's defaults", () => {
  let production: TestHearth;
  before(async () => {
    production = await startHearth({ dev: false, smsOutbox: true });
  });
  after(async () => production.close());
  const admin = () => ({ authorization: `Bearer ${production.adminKey}` });
  const prodCall = (name: string, body: Record<string, unknown>) => postJson(`${production.url}/identitytoolkit.googleapis.com/v1/accounts:${name}?key=${production.apiKey}`, body);

  test('enumeration protection on; links at the hosted action page', async () => {
    const config = await fetch(`${production.url}/identitytoolkit.googleapis.com/v2/projects/${production.projectId}/config`, { headers: admin() });
    assert.equal(((await config.json()) as { emailPrivacyConfig: { enableImprovedEmailPrivacy: boolean } }).emailPrivacyConfig.enableImprovedEmailPrivacy, true);
    const email = uniqueEmail('prod-link');
    assert.equal((await prodCall('signUp', { email, password: 'secret12' })).status, 200);
    const link = await postJson(`${production.url}/identitytoolkit.googleapis.com/v1/accounts:sendOobCode`, { requestType: 'PASSWORD_RESET', email, returnOobLink: true }, admin());
    assert.equal(link.status, 200, JSON.stringify(link.body));
    assert.equal(new URL(link.body.oobLink as string).pathname, '/__/auth/action');
  });

  test('the sixth text to one number in an hour is refused', async () => {
    const enabled = await fetch(`${production.url}/identitytoolkit.googleapis.com/v2/projects/${production.projectId}/config?updateMask=signIn.phoneNumber.enabled`, {
      method: 'PATCH',
      headers: { ...admin(), 'content-type': 'application/json' },
      body: JSON.stringify({ signIn: { phoneNumber: { enabled: true } } }),
    });
    assert.equal(enabled.status, 200, await enabled.text());
    // Texts need a reCAPTCHA proof outside --dev (the stand-in's proof of work, solved here).
    const text = async () => prodCall('sendVerificationCode', { phoneNumber: '+15555552000', recaptchaToken: await newHumanCheckToken(production) });
    for (let i = 0; i < 5; i++) {
      const answer = await text();
      assert.equal(answer.status, 200, `text ${i + 1}: ${JSON.stringify(answer.body)}`);
    }
    const sixth = await text();
    assert.equal(sixth.status, 400);
    assert.equal(message(sixth), 'QUOTA_EXCEEDED');
  });
});
