/**
 * The Auth emulator's config call, `/emulator/v1/projects/{p}/config`, as emulator-based test
 * setups use it: open in --dev (not to web pages of other sites), the admin credential outside it;
 * email privacy switches the project's setting; duplicate emails cannot be turned on in Hearth.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let dev: TestHearth;
let production: TestHearth;

before(async () => {
  dev = await startHearth();
  production = await startHearth({ dev: false });
});

after(async () => {
  await dev.close();
  await production.close();
});

const configUrl = (server: TestHearth) => `${server.url}/emulator/v1/projects/${server.projectId}/config`;

async function call(server: TestHearth, method: 'GET' | 'PATCH', body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(configUrl(server), {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function v2Privacy(server: TestHearth): Promise<boolean> {
  const response = await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/config`, { headers: { authorization: `Bearer ${server.adminKey}` } });
  assert.equal(response.status, 200);
  return ((await response.json()) as { emailPrivacyConfig: { enableImprovedEmailPrivacy: boolean } }).emailPrivacyConfig.enableImprovedEmailPrivacy;
}

test('--dev: read and switch email privacy without a credential; the project setting follows', async () => {
  const initial = await call(dev, 'GET');
  assert.equal(initial.status, 200);
  assert.deepEqual(initial.body.signIn, { allowDuplicateEmails: false });
  const wanted = !initial.body.emailPrivacyConfig.enableImprovedEmailPrivacy;
  const patched = await call(dev, 'PATCH', { emailPrivacyConfig: { enableImprovedEmailPrivacy: wanted } });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.emailPrivacyConfig.enableImprovedEmailPrivacy, wanted);
  assert.equal(await v2Privacy(dev), wanted);
  assert.equal((await call(dev, 'GET')).body.emailPrivacyConfig.enableImprovedEmailPrivacy, wanted);
});

test('--dev: duplicate emails cannot be turned on, unknown fields are refused, nothing changes', async () => {
  const before = await v2Privacy(dev);
  const duplicates = await call(dev, 'PATCH', { signIn: { allowDuplicateEmails: true }, emailPrivacyConfig: { enableImprovedEmailPrivacy: !before } });
  assert.equal(duplicates.status, 400);
  assert.match(duplicates.body.error.message, /allowDuplicateEmails/);
  assert.equal((await call(dev, 'PATCH', { surprise: 1 })).status, 400);
  assert.equal((await call(dev, 'PATCH', { emailPrivacyConfig: { enableImprovedEmailPrivacy: 'yes' } })).status, 400);
  assert.equal(await v2Privacy(dev), before);
});

test('--dev: a web page of another site cannot change it without the admin credential', async () => {
  const before = await v2Privacy(dev);
  const refused = await call(dev, 'PATCH', { emailPrivacyConfig: { enableImprovedEmailPrivacy: !before } }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
  assert.deepEqual([refused.status, refused.body.error?.message], [400, 'ADMIN_ONLY_OPERATION']);
  assert.equal(await v2Privacy(dev), before);
});

test('outside --dev: refused without the admin credential, served with it', async () => {
  const before = await v2Privacy(production);
  const anonymous = await call(production, 'PATCH', { emailPrivacyConfig: { enableImprovedEmailPrivacy: !before } });
  // Google's answer to a caller that is not an administrator, as the other admin calls give it.
  assert.deepEqual([anonymous.status, anonymous.body.error?.message], [400, 'ADMIN_ONLY_OPERATION']);
  assert.equal((await call(production, 'GET')).status, 400);
  assert.equal(await v2Privacy(production), before);
  const admin = await call(production, 'PATCH', { emailPrivacyConfig: { enableImprovedEmailPrivacy: !before } }, { authorization: `Bearer ${production.adminKey}` });
  assert.equal(admin.status, 200);
  assert.equal(await v2Privacy(production), !before);
});
