/**
 * An acknowledged passkey enrolment survives `kill -9`: the process is killed right after
 * passkeyEnrollment:finalize answered, and on restart the passkey signs its account in (with the
 * index that keeps its credential to one account: a copy of the registration is still refused).
 * The authenticator is a software one (helpers/soft-passkey.ts): no browser is needed to sign.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { freePort, postJson, spawnHearth, tempDataDir } from '../helpers/hearth.js';
import { SoftPasskey } from '../helpers/soft-passkey.js';

const dataDirs: string[] = [];
after(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

const startOn = (dataDir: string, port: number) => spawnHearth(['--port', String(port), '--data', dataDir, '--dev', '--log-level', 'warn']);
const v1 = (url: string, name: string) => `${url}/identitytoolkit.googleapis.com/v1/accounts:${name}?key=any`;
const v2 = (url: string, name: string) => `${url}/identitytoolkit.googleapis.com/v2/accounts/${name}?key=any`;

test('kill -9 right after passkeyEnrollment:finalize answered: the passkey signs in after the restart', async () => {
  const dataDir = tempDataDir();
  dataDirs.push(dataDir);
  const port = await freePort();
  const first = await startOn(dataDir, port);
  const origin = first.url.replace('127.0.0.1', 'localhost');

  const signedUp = await postJson(v1(first.url, 'signUp'), { email: `passkey-crash-${Date.now()}@example.com`, password: 'secret-pass-1', returnSecureToken: true });
  assert.equal(signedUp.status, 200, JSON.stringify(signedUp.body));
  const passkey = new SoftPasskey(signedUp.body.localId);
  const start = await postJson(v2(first.url, 'passkeyEnrollment:start'), { idToken: signedUp.body.idToken });
  assert.equal(start.status, 200, JSON.stringify(start.body));
  const registration = passkey.register(start.body.credentialCreationOptions.challenge, origin);
  const enrolled = await postJson(v2(first.url, 'passkeyEnrollment:finalize'), { idToken: signedUp.body.idToken, name: 'Crash', authenticatorRegistrationResponse: registration });
  assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));

  first.child.kill('SIGKILL');
  await first.stop();

  const second = await startOn(dataDir, port);
  try {
    const signInStart = await postJson(v2(second.url, 'passkeySignIn:start'), {});
    assert.equal(signInStart.status, 200, JSON.stringify(signInStart.body));
    const signedIn = await postJson(v2(second.url, 'passkeySignIn:finalize'), { authenticatorAuthenticationResponse: passkey.assert(signInStart.body.credentialRequestOptions.challenge, origin) });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.localId, signedUp.body.localId);
    const looked = await postJson(v1(second.url, 'lookup'), { idToken: signedIn.body.idToken });
    assert.deepEqual(looked.body.users[0].passkeyInfo.map((p: { name: string }) => p.name), ['Crash']);

    // The credential's index row came through the crash too: another account cannot take it.
    const other = await postJson(v1(second.url, 'signUp'), { email: `passkey-crash-other-${Date.now()}@example.com`, password: 'secret-pass-1', returnSecureToken: true });
    const otherStart = await postJson(v2(second.url, 'passkeyEnrollment:start'), { idToken: other.body.idToken });
    const copy = passkey.register(otherStart.body.credentialCreationOptions.challenge, origin);
    const refused = await postJson(v2(second.url, 'passkeyEnrollment:finalize'), { idToken: other.body.idToken, authenticatorRegistrationResponse: copy });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.error.message.split(' : ')[0], 'CREDENTIAL_ALREADY_IN_USE');
  } finally {
    await second.stop();
  }
});
