/**
 * Federated sign-in against a real OpenID provider (oidc-provider, started with Hearth as its demo
 * provider): the hosted handler's flow over HTTP, signInWithIdp, account creation and linking,
 * and every way a forged or replayed answer must be refused.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { SignJWT, generateKeyPair } from 'jose';
import { GithubAuthProvider, OAuthProvider, createUserWithEmailAndPassword, getAdditionalUserInfo, signInWithCredential, type Auth } from 'firebase/auth';
import { patchProjectConfig, uniqueEmail } from '../helpers/admin-http.js';
import { SdkClients } from '../helpers/client.js';
import { FakeGithub } from '../helpers/fake-github.js';
import { freePort, postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { CookieBrowser, handlerUrl, pageData, runHandlerFlow } from '../helpers/idp-flow.js';

let server: TestHearth;

const clients = new SdkClients('federation');
const newAuth = (): Auth => clients.auth(server);

const signInWithIdp = (body: Record<string, unknown>) =>
  postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=${server.apiKey}`, { returnSecureToken: true, ...body });

async function countUsers(): Promise<number> {
  const response = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:batchGet?maxResults=1000`, {
    headers: { authorization: `Bearer ${server.adminKey}` },
  });
  return (((await response.json()) as { users?: unknown[] }).users ?? []).length;
}

before(async () => {
  server = await startHearth({ demoIdpPort: await freePort() });
});
after(async () => {
  await clients.close();
  await server.close();
});

describe('the handler flow', () => {
  test('sign-up then sign-in through the provider: code with PKCE, state, nonce, exchanged on the server', async () => {
    const email = uniqueEmail('idp');
    const first = await runHandlerFlow(new CookieBrowser(), server, email);
    assert.equal(first.event?.error, undefined, JSON.stringify(first.event));
    assert.equal(first.event?.type, 'signInViaPopup');
    assert.equal(first.event?.eventId, '1234567890');
    const created = await signInWithIdp({ requestUri: first.event!.urlResponse, sessionId: first.event!.sessionId, returnIdpCredential: true });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.isNewUser, true);
    assert.equal(created.body.email, email);
    assert.equal(created.body.providerId, 'oidc.demo');
    assert.ok(created.body.oauthIdToken, 'returnIdpCredential gives the provider ID token');
    assert.equal(JSON.parse(created.body.rawUserInfo).email, email);
    const claims = JSON.parse(Buffer.from(created.body.idToken.split('.')[1], 'base64url').toString());
    assert.equal(claims.firebase.sign_in_provider, 'oidc.demo');

    const again = await runHandlerFlow(new CookieBrowser(), server, email);
    const signedIn = await signInWithIdp({ requestUri: again.event!.urlResponse, sessionId: again.event!.sessionId });
    assert.equal(signedIn.body.isNewUser, false);
    assert.equal(signedIn.body.localId, created.body.localId);
  });

  test('a replayed answer (same code and session) is refused', async () => {
    const flow = await runHandlerFlow(new CookieBrowser(), server, uniqueEmail('replay'));
    const body = { requestUri: flow.event!.urlResponse, sessionId: flow.event!.sessionId };
    assert.equal((await signInWithIdp(body)).status, 200);
    const users = await countUsers();
    const replay = await signInWithIdp(body);
    assert.equal(replay.body.error.message.split(' : ')[0], 'INVALID_IDP_RESPONSE');
    assert.equal(await countUsers(), users);
  });

  test('a forged state never becomes an event; another browser cannot finish the flow', async () => {
    const browser = new CookieBrowser();
    const { response } = await browser.follow(`${server.url}/__/auth/handler?state=forged-state&code=abc`);
    assert.equal(response.status, 400);
    assert.ok(pageData(await response.text()).refuse);

    // Start in one browser, let a second one (no flow cookie) bring the provider's answer back.
    const victim = new CookieBrowser();
    const start = await victim.get(handlerUrl(server, 'oidc.demo'));
    assert.equal(start.status, 302);
    const attacker = new CookieBrowser();
    const { response: login, url: loginUrl } = await attacker.follow(start.headers.get('location')!);
    const action = /action="([^"]+)"/.exec(await login.text())![1]!;
    const { response: back } = await attacker.follow(new URL(action, loginUrl).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: uniqueEmail('attacker') }).toString(),
    });
    assert.equal(back.status, 400);
    assert.match(pageData(await back.text()).refuse!, /another browser/);
  });

  test('a session id that does not match the answer is refused, and no account is created', async () => {
    const flow = await runHandlerFlow(new CookieBrowser(), server, uniqueEmail('mismatch'));
    const users = await countUsers();
    const wrong = await signInWithIdp({ requestUri: flow.event!.urlResponse, sessionId: 'some-other-session' });
    assert.equal(wrong.body.error.message.split(' : ')[0], 'INVALID_IDP_RESPONSE');
    assert.equal(await countUsers(), users);
  });

  test('a disabled provider, an unauthorized redirect URL and a user who cancels become error events', async () => {
    await patchProjectConfig(server, { authorizedDomains: ['localhost'] }, 'authorizedDomains');
    try {
      const foreign = await runHandlerFlow(new CookieBrowser(), server, 'x@example.com', 'oidc.demo', { redirectUrl: 'https://evil.example/app' });
      assert.equal(foreign.event?.error?.code, 'auth/unauthorized-domain');
    } finally {
      await patchProjectConfig(server, { authorizedDomains: ['localhost', '127.0.0.1'] }, 'authorizedDomains');
    }
    // In --dev a provider without settings gets the Auth emulator's sign-in widget (tests/web/dev-idp-widget.test.ts);
    // one that has settings but is switched off is refused.
    const missing = await runHandlerFlow(new CookieBrowser(), server, 'x@example.com', 'oidc.nope');
    assert.match(missing.callbackHtml, /<title>Auth Emulator IDP Login Widget<\/title>/);
    const off = await postJson(
      `${server.url}/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/oauthIdpConfigs?oauthIdpConfigId=oidc.off`,
      { issuer: 'https://issuer.invalid', clientId: 'off', clientSecret: 'off', enabled: false, responseType: { code: true } },
      { authorization: `Bearer ${server.adminKey}` },
    );
    assert.equal(off.status, 200, JSON.stringify(off.body));
    const disabled = await runHandlerFlow(new CookieBrowser(), server, 'x@example.com', 'oidc.off');
    assert.equal(disabled.event?.error?.code, 'auth/operation-not-allowed');

    const browser = new CookieBrowser();
    const { response: login, url: loginUrl } = await browser.follow(handlerUrl(server, 'oidc.demo'));
    const action = /action="([^"]+)"/.exec(await login.text())![1]!;
    const { response: back } = await browser.follow(new URL(action, loginUrl).toString(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=&cancel=1',
    });
    assert.equal(pageData(await back.text()).event?.error?.code, 'auth/user-cancelled');
  });
});

describe('accounts', () => {
  test('a provider vouching for the email of an unverified password account takes it over, as Firebase does: password gone, sessions revoked', async () => {
    const email = uniqueEmail('taken');
    const { user } = await createUserWithEmailAndPassword(newAuth(), email, 'secret12');
    // The demo provider vouches for its emails (email_verified: true).
    const flow = await runHandlerFlow(new CookieBrowser(), server, email);
    const response = await signInWithIdp({ requestUri: flow.event!.urlResponse, sessionId: flow.event!.sessionId });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.needConfirmation, undefined);
    assert.equal(response.body.localId, user.uid);
    assert.equal(response.body.isNewUser, false);
    const account = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:lookup`, { localId: [user.uid] }, { authorization: `Bearer ${server.adminKey}` });
    assert.equal(account.body.users[0].emailVerified, true);
    assert.deepEqual(account.body.users[0].providerUserInfo.map((p: { providerId: string }) => p.providerId), ['oidc.demo']);
    assert.equal(account.body.users[0].passwordHash, undefined);
    const password = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server.apiKey}`, { email, password: 'secret12', returnSecureToken: true });
    assert.equal(password.status, 400, 'whoever set the password proved nothing: it no longer signs in');
  });

  test('linking: the provider joins a signed-in account; linked elsewhere, it is credential-already-in-use', async () => {
    const { user } = await createUserWithEmailAndPassword(newAuth(), uniqueEmail('linker'), 'secret12');
    const identity = uniqueEmail('identity');
    const flow = await runHandlerFlow(new CookieBrowser(), server, identity, 'oidc.demo', { authType: 'linkViaPopup' });
    const linked = await signInWithIdp({ requestUri: flow.event!.urlResponse, sessionId: flow.event!.sessionId, idToken: await user.getIdToken() });
    assert.equal(linked.status, 200, JSON.stringify(linked.body));
    assert.equal(linked.body.localId, user.uid);

    const { user: other } = await createUserWithEmailAndPassword(newAuth(), uniqueEmail('other'), 'secret12');
    const second = await runHandlerFlow(new CookieBrowser(), server, identity, 'oidc.demo', { authType: 'linkViaPopup' });
    const refused = await signInWithIdp({ requestUri: second.event!.urlResponse, sessionId: second.event!.sessionId, idToken: await other.getIdToken() });
    // As Google answers: 200 with errorMessage and the credential, for the SDK's credentialFromError.
    assert.equal(refused.status, 200);
    assert.equal(refused.body.errorMessage, 'FEDERATED_USER_ID_ALREADY_LINKED');
    assert.ok(refused.body.oauthIdToken);
    assert.equal(refused.body.idToken, undefined);
  });

  test('reauthentication never creates an account', async () => {
    const users = await countUsers();
    const flow = await runHandlerFlow(new CookieBrowser(), server, uniqueEmail('reauth-stranger'), 'oidc.demo', { authType: 'reauthViaPopup' });
    const refused = await signInWithIdp({ requestUri: flow.event!.urlResponse, sessionId: flow.event!.sessionId });
    assert.equal(refused.body.error.message.split(' : ')[0], 'EMAIL_NOT_FOUND');
    assert.equal(await countUsers(), users);
  });

  test('hostile handler queries get a 4xx, never a 500', async () => {
    for (const query of ['state=a&state=b', 'scopes=a&scopes=b&apiKey=k&providerId=oidc.demo', `redirectUrl=${'x'.repeat(5000)}`]) {
      const response = await fetch(`${server.url}/__/auth/handler?${query}`, { redirect: 'manual' });
      assert.ok(response.status >= 400 && response.status < 500, `${query.slice(0, 40)} -> ${response.status}`);
    }
  });
});

describe('plain OAuth 2 providers (GitHub preset)', () => {
  const octocat = { id: 583231, login: 'octocat', name: 'The Octocat', email: `octocat-${Date.now()}@github.example` };
  const github = new FakeGithub(octocat);
  before(async () => {
    await github.start();
    const created = await postJson(
      `${server.url}/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/defaultSupportedIdpConfigs?idpId=github.com`,
      {
        enabled: true,
        clientId: github.clientId,
        clientSecret: github.clientSecret,
        authorizationEndpoint: `${github.base}/login/oauth/authorize`,
        tokenEndpoint: `${github.base}/login/oauth/access_token`,
        userinfoEndpoint: `${github.base}/user`,
        tokenCheckEndpoint: `${github.base}/applications/{client_id}/token`,
      },
      { authorization: `Bearer ${server.adminKey}` },
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.name, `projects/${server.projectId}/defaultSupportedIdpConfigs/github.com`);
  });
  after(() => github.stop());

  test('the handler flow signs up with the profile and username; an access token from the app signs in', async () => {
    const browser = new CookieBrowser();
    const { response } = await browser.follow(handlerUrl(server, 'github.com'));
    const event = pageData(await response.text()).event!;
    assert.equal(event.error, undefined, JSON.stringify(event));
    const created = await signInWithIdp({ requestUri: event.urlResponse, sessionId: event.sessionId });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.isNewUser, true);
    assert.equal(created.body.email, octocat.email);
    assert.equal(created.body.screenName, 'octocat');
    // GitHub does not vouch for the address here, so it does not become the account's email.
    const account = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:lookup`, { localId: [created.body.localId] }, { authorization: `Bearer ${server.adminKey}` });
    assert.equal(account.body.users[0].email, undefined);

    const auth = newAuth();
    const result = await signInWithCredential(auth, GithubAuthProvider.credential(github.issueToken()));
    assert.equal(result.user.uid, created.body.localId);
    assert.equal(getAdditionalUserInfo(result)?.username, 'octocat');
    await assert.rejects(signInWithCredential(newAuth(), GithubAuthProvider.credential('not-a-token')), (error: { code?: string }) => error.code === 'auth/invalid-credential');
    // A genuine token the user gave to some other GitHub app must not sign them in here.
    const users = await countUsers();
    await assert.rejects(signInWithCredential(newAuth(), GithubAuthProvider.credential(github.issueToken('another-app'))), (error: { code?: string }) => error.code === 'auth/invalid-credential');
    assert.equal(await countUsers(), users);
  });
});

describe('ID tokens the app got itself (signInWithCredential)', () => {
  test('a token with a wrong signature, audience or nonce is refused; no account is created', async () => {
    const config = (await (await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/config`, { headers: { authorization: `Bearer ${server.adminKey}` } })).json()) as {
      idps: Record<string, { issuer: string; clientId: string }>;
    };
    const demo = config.idps['oidc.demo']!;
    const { privateKey } = await generateKeyPair('RS256');
    const forge = (claims: Record<string, unknown>) =>
      new SignJWT({ email: 'forged@example.com', email_verified: true, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: 'forged' })
        .setIssuer(demo.issuer)
        .setAudience(String(claims.aud ?? demo.clientId))
        .setSubject('forged-subject')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    const users = await countUsers();
    const auth = newAuth();
    const provider = new OAuthProvider('oidc.demo');
    await assert.rejects(signInWithCredential(auth, provider.credential({ idToken: await forge({}) })), (error: { code?: string }) => error.code === 'auth/invalid-credential');
    await assert.rejects(signInWithCredential(auth, provider.credential({ idToken: await forge({ aud: 'someone-else' }) })), (error: { code?: string }) => error.code === 'auth/invalid-credential');
    assert.equal(await countUsers(), users);
  });

  test("the provider's genuine ID token works, and its nonce is checked", async () => {
    const email = uniqueEmail('credential');
    const flow = await runHandlerFlow(new CookieBrowser(), server, email);
    const viaHandler = await signInWithIdp({ requestUri: flow.event!.urlResponse, sessionId: flow.event!.sessionId, returnIdpCredential: true });
    const providerToken: string = viaHandler.body.oauthIdToken;
    const auth = newAuth();
    const provider = new OAuthProvider('oidc.demo');
    await assert.rejects(signInWithCredential(auth, provider.credential({ idToken: providerToken, rawNonce: 'not-the-nonce' })), (error: { code?: string }) => error.code === 'auth/missing-or-invalid-nonce');
    const result = await signInWithCredential(auth, provider.credential({ idToken: providerToken }));
    assert.equal(result.user.uid, viaHandler.body.localId);
  });
});

test('the demo provider is withdrawn when Hearth restarts without --demo-idp', async () => {
  const first = await startHearth({ demoIdpPort: await freePort() });
  const dataDir = first.dataDir;
  await first.hearth.close(); // keeps the data folder
  const restarted = await startHearth({ dataDir });
  try {
    const response = await fetch(`${restarted.url}/identitytoolkit.googleapis.com/v2/projects/${restarted.projectId}/config`, { headers: { authorization: `Bearer ${restarted.adminKey}` } });
    const config = (await response.json()) as { idps: Record<string, unknown> };
    assert.equal(config.idps['oidc.demo'], undefined);
  } finally {
    await restarted.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
