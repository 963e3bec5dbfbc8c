/**
 * Identity-provider emails as Firebase treats them, in production as in --dev: an address the
 * provider vouches for (email_verified) signs in to the account that holds it and links the
 * identity there, taking over an account whose own address was never verified (its password,
 * number and other providers go); an address it does not vouch for never joins or becomes another
 * account's (account-exists-with-different-credential), and an identity whose address another
 * account holds is not linked elsewhere (EMAIL_EXISTS). In --dev the Auth emulator's made-up
 * credentials also give a new account their unverified address, as the emulator does (the SDK's
 * own "can link with multiple idps").
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createUserWithEmailAndPassword,
  FacebookAuthProvider,
  GithubAuthProvider,
  GoogleAuthProvider,
  linkWithCredential,
  ProviderId,
  signInWithCredential,
  signInWithEmailAndPassword,
  unlink,
  type Auth,
} from 'firebase/auth';
import { uniqueEmail } from '../helpers/admin-http.js';
import { errorCodeOf, SdkClients } from '../helpers/client.js';
import { startDevHearth } from '../helpers/dev-hearth.js';
import { FakeGithub } from '../helpers/fake-github.js';
import { freePort, postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { CookieBrowser, pageData, handlerUrl, runHandlerFlow } from '../helpers/idp-flow.js';

const clients = new SdkClients('idp-email-rules');
after(() => clients.close());

/** The Auth emulator's made-up provider credential (--dev). */
const madeUp = (claims: Record<string, unknown>) => JSON.stringify(claims);

describe('--dev: the emulator-made identities follow its email rules', () => {
  let dev: TestHearth;
  let auth: () => Auth;
  before(async () => {
    dev = await startDevHearth();
    auth = () => clients.auth(dev);
  });
  after(() => dev.close());

  test("an unverified provider address becomes a new account's, unverified; linking a verified one keeps it (the SDK's \"can link with multiple idps\")", async () => {
    const googleEmail = uniqueEmail('google');
    const facebookEmail = uniqueEmail('facebook');
    const { user } = await signInWithCredential(auth(), FacebookAuthProvider.credential(madeUp({ sub: facebookEmail, email: facebookEmail })));
    assert.equal(user.email, facebookEmail);
    assert.equal(user.emailVerified, false);
    await linkWithCredential(user, GoogleAuthProvider.credential(madeUp({ sub: googleEmail, email: googleEmail, email_verified: true })));
    assert.equal(user.email, facebookEmail);
    assert.equal(user.emailVerified, false);
    assert.equal(user.providerData.length, 2);
    assert.equal(user.providerData.find((p) => p.providerId === 'google.com')?.email, googleEmail);
    await unlink(user, ProviderId.GOOGLE);
    assert.equal(user.email, facebookEmail);
    assert.deepEqual(user.providerData.map((p) => p.providerId), ['facebook.com']);
  });

  test('a verified address takes over the unverified password account that holds it', async () => {
    const email = uniqueEmail('takeover');
    const { user: emailUser } = await createUserWithEmailAndPassword(auth(), email, 'password');
    const { user } = await signInWithCredential(auth(), GoogleAuthProvider.credential(madeUp({ sub: `g-${email}`, email, email_verified: true })));
    assert.equal(user.uid, emailUser.uid);
    assert.equal(user.emailVerified, true);
    assert.deepEqual(user.providerData.map((p) => p.providerId), ['google.com']);
    assert.equal(await errorCodeOf(signInWithEmailAndPassword(auth(), email, 'password')), 'auth/wrong-password');
  });

  test('a second provider vouching for the same address signs in to that account and is linked there', async () => {
    const email = uniqueEmail('both');
    const google = GoogleAuthProvider.credential(madeUp({ sub: email, email, email_verified: true }));
    const { user: first } = await signInWithCredential(auth(), google);
    const { user: second } = await signInWithCredential(auth(), GithubAuthProvider.credential(madeUp({ sub: email, email, email_verified: true })));
    assert.equal(second.uid, first.uid);
    assert.deepEqual(second.providerData.map((p) => p.providerId).sort(), ['github.com', 'google.com']);
    assert.equal((await signInWithCredential(auth(), google)).user.uid, first.uid);
  });

  test('an address the provider does not vouch for never joins the account that holds it', async () => {
    const email = uniqueEmail('unvouched');
    await signInWithCredential(auth(), GoogleAuthProvider.credential(madeUp({ sub: email, email, email_verified: true })));
    const code = await errorCodeOf(signInWithCredential(auth(), FacebookAuthProvider.credential(madeUp({ sub: `fb-${email}`, email }))));
    assert.equal(code, 'auth/account-exists-with-different-credential');
  });
});

describe('production: configured providers', () => {
  let server: TestHearth;
  const octocat = { id: 9_000_001, login: 'octo-rules', name: 'Octo Rules', email: uniqueEmail('octo') };
  const github = new FakeGithub(octocat);
  const signInWithIdp = (body: Record<string, unknown>) => postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=${server.apiKey}`, { returnSecureToken: true, ...body });
  const lookup = async (localId: string) =>
    (await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:lookup`, { localId: [localId] }, { authorization: `Bearer ${server.adminKey}` })).body.users[0];

  before(async () => {
    server = await startHearth({ dev: false, demoIdpPort: await freePort() });
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
  });
  after(async () => {
    await github.stop();
    await server.close();
  });

  test('an unverified provider address whose account exists: needConfirmation; that account is untouched', async () => {
    const { user } = await createUserWithEmailAndPassword(clients.auth(server), octocat.email, 'secret12');
    const { response } = await new CookieBrowser().follow(handlerUrl(server, 'github.com'));
    const event = pageData(await response.text()).event!;
    const answer = await signInWithIdp({ requestUri: event.urlResponse, sessionId: event.sessionId });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.needConfirmation, true);
    assert.equal(answer.body.idToken, undefined);
    const account = await lookup(user.uid);
    assert.deepEqual(account.providerUserInfo.map((p: { providerId: string }) => p.providerId), ['password']);
    assert.equal((await signInWithEmailAndPassword(clients.auth(server), octocat.email, 'secret12')).user.uid, user.uid);
  });

  test('a verified provider address of a verified account: signs in there and links, the password kept', async () => {
    const email = uniqueEmail('verified-holder');
    const created = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts`, { email, password: 'secret12', emailVerified: true }, { authorization: `Bearer ${server.adminKey}` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const flow = await runHandlerFlow(new CookieBrowser(), server, email);
    const answer = await signInWithIdp({ requestUri: flow.event!.urlResponse, sessionId: flow.event!.sessionId });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.localId, created.body.localId);
    assert.equal(answer.body.isNewUser, false);
    const account = await lookup(created.body.localId as string);
    assert.deepEqual(account.providerUserInfo.map((p: { providerId: string }) => p.providerId).sort(), ['oidc.demo', 'password']);
    assert.equal((await signInWithEmailAndPassword(clients.auth(server), email, 'secret12')).user.uid, created.body.localId);
  });

  test("linking an identity whose verified address is another account's: refused (EMAIL_EXISTS), nothing linked", async () => {
    const holderEmail = uniqueEmail('holder');
    await createUserWithEmailAndPassword(clients.auth(server), holderEmail, 'secret12');
    const { user } = await createUserWithEmailAndPassword(clients.auth(server), uniqueEmail('linker'), 'secret12');
    const flow = await runHandlerFlow(new CookieBrowser(), server, holderEmail, 'oidc.demo', { authType: 'linkViaPopup' });
    const answer = await signInWithIdp({ requestUri: flow.event!.urlResponse, sessionId: flow.event!.sessionId, idToken: await user.getIdToken() });
    assert.equal(answer.body.errorMessage, 'EMAIL_EXISTS');
    assert.equal(answer.body.idToken, undefined);
    assert.deepEqual((await lookup(user.uid)).providerUserInfo.map((p: { providerId: string }) => p.providerId), ['password']);
  });
});
