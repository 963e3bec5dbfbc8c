/**
 * A service account administers its own project, never the console: the default project's service
 * account (firebase-admin with cert() of a Hearth-issued key, production mode) can neither make an
 * operator (the `hearthOperator` claim by setCustomUserClaims, importUsers or signUp), nor take an
 * operator account over (its password, email, state, claims, deletion, replacement by import, its
 * action links), nor open a console session with a custom token it signs for an operator. The
 * admin key and operators still manage operators. firebase-admin and the client SDK, raw HTTP for
 * the console and exact shapes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cert, deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import { signInWithCustomToken } from 'firebase/auth';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { SdkClients } from '../helpers/client.js';
import { redirectGoogleHosts, type GoogleHostsRedirect } from '../helpers/google-hosts.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let google: GoogleHostsRedirect;
let serviceAccountApp: App;
let sa: AdminAuth;
let saToken = '';
const clients = new SdkClients('operator-claims');
const password = 'operator password 1';

before(async () => {
  server = await startHearth({ dev: false });
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  google = redirectGoogleHosts(server.url);
  const key = await fetch(`${server.url}/hearth/v1/projects/${server.projectId}/serviceAccountKeys`, { method: 'POST', headers: { authorization: `Bearer ${server.adminKey}` } });
  assert.equal(key.status, 200);
  serviceAccountApp = initializeAdminApp({ credential: cert((await key.json()) as Parameters<typeof cert>[0]) }, 'operator-claims-sa');
  sa = getAdminAuth(serviceAccountApp);
  saToken = (await serviceAccountApp.options.credential!.getAccessToken()).access_token;
});

after(async () => {
  google.restore();
  await clients.close();
  await deleteAdminApp(serviceAccountApp);
  await server.close();
});

const refused = (error: { code?: string; message?: string }) => {
  assert.equal(error.code, 'auth/insufficient-permission', error.message);
  return true;
};

/** POST /hearth/v1/console/session with an ID token: the status. */
async function consoleSignIn(idToken: string): Promise<number> {
  const answer = await postJson(`${server.url}/hearth/v1/console/session`, { idToken });
  return answer.status;
}

async function passwordIdToken(email: string): Promise<string> {
  const answer = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server.apiKey}`, { email, password, returnSecureToken: true });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.idToken as string;
}

/** An operator made by the admin key, as the console's users page or a script does. */
async function operatorAccount(): Promise<{ uid: string; email: string }> {
  const email = uniqueEmail('operator');
  const created = await adminPost(server, '/accounts', { email, password, emailVerified: true });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const uid = created.body.localId as string;
  const claimed = await adminPost(server, '/accounts:update', { localId: uid, customAttributes: JSON.stringify({ hearthOperator: true }) });
  assert.equal(claimed.status, 200, JSON.stringify(claimed.body));
  return { uid, email };
}

describe('a service account cannot make an operator', () => {
  test('setCustomUserClaims, importUsers and signUp with the claim are refused; other claims are its to set', async () => {
    const email = uniqueEmail('would-be');
    const user = await sa.createUser({ email, password });
    await assert.rejects(sa.setCustomUserClaims(user.uid, { hearthOperator: true }), refused);
    await assert.rejects(sa.setCustomUserClaims(user.uid, { role: 'editor', hearthOperator: true }), refused);
    await assert.rejects(sa.setCustomUserClaims(user.uid, { hearthOperator: false }), refused, 'the claim is the owner’s whatever its value');
    await sa.setCustomUserClaims(user.uid, { role: 'editor' });
    assert.deepEqual((await sa.getUser(user.uid)).customClaims, { role: 'editor' });
    assert.equal(await consoleSignIn(await passwordIdToken(email)), 401);

    const imported = await sa.importUsers([
      { uid: `imported-${Date.now()}`, email: uniqueEmail('imported'), customClaims: { hearthOperator: true } },
      { uid: `plain-${Date.now()}`, email: uniqueEmail('plain'), customClaims: { role: 'viewer' } },
    ]);
    assert.equal(imported.successCount, 1);
    assert.deepEqual(imported.errors.map((e) => [e.index, e.error.message]), [[0, 'INSUFFICIENT_PERMISSION : Only the admin key or a console operator may set or change the hearthOperator claim.']]);

    // signUp (firebase-admin's createUser) carries no claims at all: an unknown field is refused.
    const signUp = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts`, { email: uniqueEmail('signup'), customAttributes: '{"hearthOperator":true}' }, { authorization: `Bearer ${saToken}` });
    assert.equal(signUp.status, 400, JSON.stringify(signUp.body));
    assert.match(signUp.body.error.message, /Invalid JSON payload received\. Unknown name "customAttributes"/);
  });
});

describe('a service account cannot take an operator account over', () => {
  test("changes, deletion, replacement by import and action links of an operator are refused; the operator's own sign-in is unharmed", async () => {
    const operator = await operatorAccount();
    await assert.rejects(sa.updateUser(operator.uid, { password: 'taken over 1' }), refused);
    await assert.rejects(sa.updateUser(operator.uid, { email: uniqueEmail('attacker') }), refused);
    await assert.rejects(sa.updateUser(operator.uid, { disabled: true }), refused);
    await assert.rejects(sa.updateUser(operator.uid, { phoneNumber: '+16505550199' }), refused);
    await assert.rejects(sa.setCustomUserClaims(operator.uid, null), refused);
    await assert.rejects(sa.revokeRefreshTokens(operator.uid), refused);
    await assert.rejects(sa.deleteUser(operator.uid), refused);
    const deleted = await sa.deleteUsers([operator.uid]);
    assert.equal(deleted.failureCount, 1);
    const replaced = await sa.importUsers([{ uid: operator.uid, email: uniqueEmail('replaced') }]);
    assert.deepEqual(replaced.errors.map((e) => e.error.message), ['INSUFFICIENT_PERMISSION : Only the admin key or a console operator may replace a console operator account.']);
    await assert.rejects(sa.generatePasswordResetLink(operator.email), refused);
    await assert.rejects(sa.generateSignInWithEmailLink(operator.email, { url: 'http://localhost/finish', handleCodeInApp: true }), refused);
    await assert.rejects(sa.generateVerifyAndChangeEmailLink(operator.email, uniqueEmail('moved')), refused);

    // Nor may it wipe the project's accounts, operators with them (the emulator's reset endpoint).
    const wipe = await fetch(`${server.url}/emulator/v1/projects/${server.projectId}/accounts`, { method: 'DELETE', headers: { authorization: `Bearer ${saToken}` } });
    assert.equal(wipe.status, 403, await wipe.text());

    // Reading is still the service account's, and the operator is as it was.
    const seen = await sa.getUser(operator.uid);
    assert.deepEqual([seen.email, seen.disabled, seen.customClaims], [operator.email, false, { hearthOperator: true }]);
    assert.equal(await consoleSignIn(await passwordIdToken(operator.email)), 200);
  });

  test("sent mails and codes are the owner's to read: a reset mail to an operator gives a service account nothing", async () => {
    const operator = await operatorAccount();
    // Anyone may ask for a reset mail to the operator's address; its link must reach the operator only.
    const sent = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:sendOobCode?key=${server.apiKey}`, { requestType: 'PASSWORD_RESET', email: operator.email });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const base = `/projects/${server.projectId}`;
    for (const path of [`/emulator/v1${base}/oobCodes`, `/hearth/v1${base}/outbox`, `/emulator/v1${base}/verificationCodes`, `/hearth/v1${base}/smsOutbox`]) {
      const bySa = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${saToken}` } });
      const body = await bySa.text();
      assert.equal(bySa.status, 403, `${path}: ${body}`);
      assert.ok(!body.includes(operator.email), path);
    }
    const cleared = await fetch(`${server.url}/hearth/v1${base}/outbox`, { method: 'DELETE', headers: { authorization: `Bearer ${saToken}` } });
    assert.equal(cleared.status, 403);
    // The admin key reads them as before.
    const byOwner = await fetch(`${server.url}/emulator/v1${base}/oobCodes`, { headers: { authorization: `Bearer ${server.adminKey}` } });
    assert.equal(byOwner.status, 200);
    assert.ok(((await byOwner.json()) as { oobCodes: Array<{ email: string }> }).oobCodes.some((code) => code.email === operator.email));
  });

  test('a custom token the service account signs for an operator signs in to the app, but opens no console session', async () => {
    const operator = await operatorAccount();
    const customToken = await sa.createCustomToken(operator.uid, { hearthOperator: true });
    const { user } = await signInWithCustomToken(clients.auth(server), customToken);
    assert.equal(user.uid, operator.uid);
    const idToken = await user.getIdToken();
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as { hearthOperator?: boolean; firebase: { sign_in_provider: string } };
    assert.deepEqual([claims.hearthOperator, claims.firebase.sign_in_provider], [true, 'custom']);
    const answer = await postJson(`${server.url}/hearth/v1/console/session`, { idToken });
    assert.equal(answer.status, 401, JSON.stringify(answer.body));
    assert.equal(answer.body.error.status, 'UNAUTHENTICATED');
  });
});

describe('the owner still manages operators', () => {
  test('the admin key and a console operator give and take the claim', async () => {
    const operator = await operatorAccount();
    const session = await fetch(`${server.url}/hearth/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ idToken: await passwordIdToken(operator.email) }) });
    assert.equal(session.status, 200);
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
    const other = await sa.createUser({ email: uniqueEmail('promoted'), password });
    const byOperator = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:update`, {
      method: 'POST',
      headers: { cookie, 'x-hearth-console': '1', 'sec-fetch-site': 'same-origin', origin: server.url, 'content-type': 'application/json' },
      body: JSON.stringify({ localId: other.uid, customAttributes: JSON.stringify({ hearthOperator: true }) }),
    });
    assert.equal(byOperator.status, 200, await byOperator.text());
    assert.equal(await consoleSignIn(await passwordIdToken(other.email!)), 200);
    const byAdminKey = await adminPost(server, '/accounts:update', { localId: other.uid, customAttributes: '{}' });
    assert.equal(byAdminKey.status, 200);
    assert.equal(await consoleSignIn(await passwordIdToken(other.email!)), 401);
  });
});
