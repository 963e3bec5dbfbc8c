/**
 * What the new identity calls acknowledge survives `kill -9`: an SMS code answered by
 * sendVerificationCode still signs in after the crash, and a tenant created by the admin API and an
 * account signed up in it are both there.
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

const startOn = (dataDir: string, port: number) => spawnHearth(['--port', String(port), '--data', dataDir, '--dev', '--log-level', 'warn']);
const v1 = (url: string, name: string) => `${url}/identitytoolkit.googleapis.com/v1/accounts:${name}?key=any`;

test('kill -9 right after the answers: the SMS code, the tenant and its account are kept', async () => {
  const dataDir = tempDataDir();
  dataDirs.push(dataDir);
  const port = await freePort();
  const first = await startOn(dataDir, port);
  const adminKey = readFileSync(join(dataDir, 'admin-key'), 'utf8').trim();
  const admin = { authorization: `Bearer ${adminKey}` };

  const phoneNumber = '+16502530077';
  const sent = await postJson(v1(first.url, 'sendVerificationCode'), { phoneNumber, recaptchaToken: 'dev-token' });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  const codes = await (await fetch(`${first.url}/emulator/v1/projects/demo-hearth/verificationCodes`)).json();
  const { code } = codes.verificationCodes.find((entry: { sessionInfo: string }) => entry.sessionInfo === sent.body.sessionInfo);

  const tenant = await postJson(`${first.url}/identitytoolkit.googleapis.com/v2/projects/demo-hearth/tenants`, { displayName: 'Crash', allowPasswordSignup: true }, admin);
  assert.equal(tenant.status, 200, JSON.stringify(tenant.body));
  const email = `crash-${Date.now()}@example.com`;
  const signedUp = await postJson(v1(first.url, 'signUp'), { email, password: 'secret12', tenantId: tenant.body.tenantId, returnSecureToken: true });
  assert.equal(signedUp.status, 200, JSON.stringify(signedUp.body));

  first.child.kill('SIGKILL');
  await first.stop();

  const second = await startOn(dataDir, port);
  try {
    const phone = await postJson(v1(second.url, 'signInWithPhoneNumber'), { sessionInfo: sent.body.sessionInfo, code });
    assert.equal(phone.status, 200, JSON.stringify(phone.body));
    assert.equal(phone.body.phoneNumber, phoneNumber);
    const signedIn = await postJson(v1(second.url, 'signInWithPassword'), { email, password: 'secret12', tenantId: tenant.body.tenantId, returnSecureToken: true });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.localId, signedUp.body.localId);
  } finally {
    await second.stop();
  }
});
