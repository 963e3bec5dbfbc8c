/**
 * SMS delivery through a Twilio-style provider, against a local stand-in for the phone network:
 * the request Twilio expects (path, basic auth, form fields), retries of 5xx, refusals of 4xx, and a
 * clear answer when the provider fails; the auth token never in the logs. Also the CLI's checks of
 * the provider flags.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { ApiError } from '../../packages/server/src/http/api-error.js';
import { TwilioSmsSender, type SmsAttemptFailure } from '../../packages/server/src/auth/phone/twilio-sender.js';
import { FakeSmsProvider, invalidToNumber, unavailable } from '../helpers/fake-sms-provider.js';
import { freePort, postJson, repoRoot, spawnHearth, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { hearthCommand } from '../helpers/hearth-command.js';

const authToken = 'tw-secret-token-0123456789abcdef';
const accountSid = 'AC00000000000000000000000000000001';
const message = { projectId: 'p', phoneNumber: '+16505553434', body: '123456 is your verification code for p.', code: '123456', sessionInfo: 's', createdAt: 0 };

let provider: FakeSmsProvider;
before(async () => {
  provider = new FakeSmsProvider();
  await provider.start();
});
after(async () => {
  await provider.stop();
});

function sender(failures: SmsAttemptFailure[] = []): TwilioSmsSender {
  return new TwilioSmsSender({ baseUrl: provider.base, accountSid, authToken, from: '+15005550006', retryDelaysMs: [0, 0] }, (f) => failures.push(f));
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  return promise.then(
    () => assert.fail('expected a refusal'),
    (error: unknown) => {
      assert.ok(error instanceof ApiError, String(error));
      return error;
    },
  );
}

describe('the Twilio-style sender', () => {
  test('posts To, From and Body as a form to Messages.json with basic auth', async () => {
    provider.received.length = 0;
    await sender().send(message);
    assert.equal(provider.received.length, 1);
    const [sent] = provider.received;
    assert.equal(sent!.path, `/2010-04-01/Accounts/${accountSid}/Messages.json`);
    assert.equal(sent!.authorization, `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`);
    assert.equal(sent!.contentType, 'application/x-www-form-urlencoded');
    assert.deepEqual(sent!.form, { To: '+16505553434', From: '+15005550006', Body: '123456 is your verification code for p.' });
  });

  test('a 5xx is tried again, and the message goes through', async () => {
    provider.received.length = 0;
    provider.script = [unavailable, unavailable];
    const failures: SmsAttemptFailure[] = [];
    await sender(failures).send(message);
    assert.equal(provider.received.length, 3);
    assert.deepEqual(failures, [
      { attempt: 1, status: 503, providerCode: 20500, reason: 'refused' },
      { attempt: 2, status: 503, providerCode: 20500, reason: 'refused' },
    ]);
  });

  test('a provider that stays down: 503 INTERNAL_ERROR after three attempts', async () => {
    provider.received.length = 0;
    provider.script = [unavailable, unavailable, unavailable];
    const error = await refusal(sender().send(message));
    assert.equal(provider.received.length, 3);
    assert.equal(error.httpStatus, 503);
    assert.equal(error.wireMessage, 'INTERNAL_ERROR : The text message could not be sent (the SMS provider answered 503); try again later.');
  });

  test('a 4xx is not tried again: a number Twilio cannot text is INVALID_PHONE_NUMBER, bad credentials a 503', async () => {
    provider.received.length = 0;
    provider.script = [invalidToNumber];
    const invalid = await refusal(sender().send(message));
    assert.equal(provider.received.length, 1);
    assert.equal(invalid.wireMessage, 'INVALID_PHONE_NUMBER : The SMS provider cannot send to this number.');
    provider.script = [{ status: 401, body: { code: 20003, message: 'Authenticate', status: 401 } }];
    const unauthorized = await refusal(sender().send(message));
    assert.equal(unauthorized.httpStatus, 503);
    assert.match(unauthorized.wireMessage, /refused the message \(401, code 20003\)/);
  });

  test('an unreachable provider is a 503 too', async () => {
    const closed = new TwilioSmsSender({ baseUrl: `http://127.0.0.1:${await freePort()}`, accountSid, authToken, from: '+15005550006', retryDelaysMs: [0] });
    const error = await refusal(closed.send(message));
    assert.equal(error.wireMessage, 'INTERNAL_ERROR : The text message could not be sent (the SMS provider could not be reached); try again later.');
  });
});

describe('Hearth with a provider', () => {
  let server: TestHearth;
  let logText = '';
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logText += chunk.toString();
        done();
      },
    });
    server = await startHearth(
      { logLevel: 'debug', sms: { baseUrl: provider.base, accountSid, authToken, from: '+15005550006', retryDelaysMs: [0, 0] } },
      pino({ level: 'debug' }, sink),
    );
  });
  after(async () => {
    await server.close();
  });
  const send = (phoneNumber: string) => postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=${server.apiKey}`, { phoneNumber, recaptchaToken: 't' });

  test('in --dev the provider gets the text and the outbox keeps a copy; its code signs in', async () => {
    provider.received.length = 0;
    provider.script = [];
    const sent = await send('+33 6 12 34 56 78');
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.equal(provider.received.length, 1);
    const { form } = provider.received[0]!;
    assert.equal(form.To, '+33612345678');
    const code = /^(\d{6}) is your verification code for demo-test\.$/.exec(form.Body!)?.[1];
    assert.ok(code, form.Body);
    const kept = await (await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/verificationCodes`)).json();
    assert.equal(kept.verificationCodes.at(-1).code, code);
    const outbox = await (await fetch(`${server.url}/hearth/v1/projects/${server.projectId}/smsOutbox`, { headers: { authorization: `Bearer ${server.adminKey}` } })).json();
    assert.equal(outbox.delivery, 'outbox+provider');
    const signedIn = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber?key=${server.apiKey}`, { sessionInfo: sent.body.sessionInfo, code });
    assert.equal(signedIn.body.phoneNumber, '+33612345678');
  });

  test('when the provider fails the request says so (503), the failure is logged, and the token never is', async () => {
    provider.script = [unavailable, unavailable, unavailable];
    const sent = await send('+33612345679');
    assert.equal(sent.status, 503);
    assert.equal(sent.body.error.message.split(' : ')[0], 'INTERNAL_ERROR');
    provider.script = [invalidToNumber];
    assert.equal((await send('+33612345670')).body.error.message, 'INVALID_PHONE_NUMBER : The SMS provider cannot send to this number.');
    assert.match(logText, /SMS provider attempt failed/);
    assert.ok(!logText.includes(authToken), 'the token is not in the log');
    assert.ok(!logText.includes(Buffer.from(`${accountSid}:${authToken}`).toString('base64')), 'nor the Authorization header');
    assert.ok(!logText.includes('is your verification code'), 'nor the text');
  });
});

describe('the CLI', () => {
  test('a provider without its token is refused at start, naming what is missing', async (t) => {
    const port = await freePort();
    const dataDir = tempDataDir();
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const child = spawn(process.execPath, [...hearthCommand(), 'start', '--port', String(port), '--data', dataDir, '--sms-account', accountSid, '--sms-from', '+15005550006'], {
      cwd: repoRoot,
      env: { ...process.env, HEARTH_SMS_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [exitCode] = (await once(child, 'close')) as [number | null];
    assert.equal(exitCode, 1, output);
    assert.match(output, /an SMS provider needs --sms-account, --sms-from and the HEARTH_SMS_TOKEN environment variable/);
  });

  test('with the flags and HEARTH_SMS_TOKEN, sendVerificationCode reaches the provider (banner says so)', async (t) => {
    const port = await freePort();
    const dataDir = tempDataDir();
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const hearth = await spawnHearth(['--port', String(port), '--data', dataDir, '--dev', '--sms-account', accountSid, '--sms-from', '+15005550006', '--sms-url', provider.base], {
      HEARTH_SMS_TOKEN: authToken,
    });
    try {
      // The banner follows the health check's first answer on another pipe: wait for it to arrive.
      for (let i = 0; i < 100 && !hearth.output().includes('connect'); i++) await new Promise((r) => setTimeout(r, 50));
      assert.match(hearth.output(), /sms +codes sent through the SMS provider and kept in the SMS outbox/);
      provider.received.length = 0;
      provider.script = [];
      const sent = await postJson(`${hearth.url}/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=any`, { phoneNumber: '+16505550199', recaptchaToken: 't' });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      assert.equal(provider.received[0]?.authorization, `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`);
      assert.ok(!hearth.output().includes(authToken), 'the token is not printed');
    } finally {
      await hearth.stop();
    }
  });
});
