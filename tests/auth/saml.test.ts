/**
 * SAML sign-in through the hosted handler, against a SAML identity provider played by samlify:
 * firebase-admin registers the provider (ids must start with `saml.`), the handler sends an
 * AuthnRequest, the IdP's signed answer comes back by POST, and signInWithIdp verifies it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth } from 'firebase-admin/auth';
import { uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { CookieBrowser, handlerUrl, pageData } from '../helpers/idp-flow.js';
import { TestSamlIdp, newSigningIdentity, type SigningIdentity } from '../helpers/saml-idp.js';

let server: TestHearth;
let adminApp: App;
let idp: TestSamlIdp;
let trusted: SigningIdentity;
const spEntityId = 'urn:hearth:test-sp';

before(async () => {
  server = await startHearth();
  process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
  adminApp = initializeAdminApp({ projectId: server.projectId }, 'saml-admin');
  trusted = await newSigningIdentity('idp.saml.test');
  idp = new TestSamlIdp(trusted);
  await getAdminAuth(adminApp).createProviderConfig({
    providerId: 'saml.test',
    displayName: 'Test SAML',
    enabled: true,
    idpEntityId: idp.entityId,
    ssoURL: idp.ssoUrl,
    x509Certificates: [trusted.certificateBase64],
    rpEntityId: spEntityId,
    callbackURL: `${server.url}/__/auth/handler`,
  });
});

after(async () => {
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await deleteAdminApp(adminApp);
  await server.close();
});

/** Handler start -> the IdP answers (signed by `signer`) -> POST back -> the event the SDK would get. */
async function samlFlow(email: string, signer: TestSamlIdp = idp) {
  const browser = new CookieBrowser();
  const start = await browser.get(handlerUrl(server, 'saml.test'));
  assert.equal(start.status, 302);
  const authnRequest = start.headers.get('location')!;
  assert.ok(authnRequest.startsWith(idp.ssoUrl), authnRequest);
  const answer = await signer.answer(authnRequest, spEntityId, `${server.url}/__/auth/handler`, email);
  const { response } = await browser.follow(`${server.url}/__/auth/handler`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(answer).toString(),
  });
  return pageData(await response.text()).event!;
}

const signInWithIdp = (body: Record<string, unknown>) =>
  postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=${server.apiKey}`, { returnSecureToken: true, ...body });

test('firebase-admin keeps SAML provider configs, and ids must start with saml.', async () => {
  const config = await getAdminAuth(adminApp).getProviderConfig('saml.test');
  assert.equal(config.displayName, 'Test SAML');
  const refused = await postJson(
    `${server.url}/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/inboundSamlConfigs?inboundSamlConfigId=oidc.wrong`,
    { idpConfig: { idpEntityId: 'x', ssoUrl: 'https://x', idpCertificates: [{ x509Certificate: 'x' }] }, spConfig: { spEntityId: 'y' } },
    { authorization: `Bearer ${server.adminKey}` },
  );
  assert.equal(refused.body.error.message.split(' : ')[0], 'INVALID_CONFIG_ID');
});

test('a signed SAML answer signs the user up, then in', async () => {
  const email = uniqueEmail('saml');
  const event = await samlFlow(email);
  assert.equal(event.error, undefined, JSON.stringify(event));
  const created = await signInWithIdp({ requestUri: event.urlResponse, sessionId: event.sessionId });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal(created.body.isNewUser, true);
  assert.equal(created.body.email, email);
  assert.equal(created.body.providerId, 'saml.test');
  const again = await samlFlow(email);
  const signedIn = await signInWithIdp({ requestUri: again.urlResponse, sessionId: again.sessionId });
  assert.equal(signedIn.body.localId, created.body.localId);
  assert.equal(signedIn.body.isNewUser, false);
});

test('an answer signed by another key is refused and creates nothing; a replay is refused', async () => {
  const impostor = new TestSamlIdp(await newSigningIdentity('idp.saml.test'));
  const email = uniqueEmail('saml-forged');
  const event = await samlFlow(email, impostor);
  const forged = await signInWithIdp({ requestUri: event.urlResponse, sessionId: event.sessionId });
  assert.equal(forged.body.error?.message.split(' : ')[0], 'INVALID_IDP_RESPONSE');
  const lookup = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:lookup`, { email: [email] }, { authorization: `Bearer ${server.adminKey}` });
  assert.equal(lookup.body.users, undefined, 'no account was created');

  const good = await samlFlow(uniqueEmail('saml-replay'));
  assert.equal((await signInWithIdp({ requestUri: good.urlResponse, sessionId: good.sessionId })).status, 200);
  const replay = await signInWithIdp({ requestUri: good.urlResponse, sessionId: good.sessionId });
  assert.equal(replay.body.error?.message.split(' : ')[0], 'INVALID_IDP_RESPONSE');
});
