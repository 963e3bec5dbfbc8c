/**
 * Emulator-style tests sign in with made-up provider credentials, as Google's Auth emulator
 * documents: `GoogleAuthProvider.credential('{"sub":"abc","email":"a@b.c","email_verified":true}')`
 * (or an unsigned JWT, as an ID token or an access token). Hearth takes them in --dev only, and
 * only for providers it was not configured to verify; outside --dev the same call is refused.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FacebookAuthProvider, GoogleAuthProvider, OAuthProvider, signInWithCredential } from 'firebase/auth';
import { errorCodeOf, SdkClients } from '../helpers/client.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let dev: TestHearth;
let production: TestHearth;
const clients = new SdkClients('fake-idp');

before(async () => {
  dev = await startHearth();
  production = await startHearth({ dev: false });
});

after(async () => {
  await clients.close();
  await dev.close();
  await production.close();
});

function unsignedJwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

test('--dev: a made-up Google ID token signs up, then in to the same account', async () => {
  const sub = `google-${Date.now()}`;
  const email = `${sub}@example.com`;
  const credential = GoogleAuthProvider.credential(JSON.stringify({ sub, email, email_verified: true, name: 'Ada' }));
  const first = await signInWithCredential(clients.auth(dev), credential);
  assert.equal(first.user.email, email);
  assert.equal(first.user.emailVerified, true);
  assert.equal(first.user.displayName, 'Ada');
  assert.deepEqual(first.user.providerData.map((info) => [info.providerId, info.uid]), [['google.com', sub]]);
  const token = await first.user.getIdTokenResult();
  assert.equal(token.signInProvider, 'google.com');

  const again = await signInWithCredential(clients.auth(dev), GoogleAuthProvider.credential(JSON.stringify({ sub, email, email_verified: true })));
  assert.equal(again.user.uid, first.user.uid);
});

test('--dev: an unsigned JWT as another provider\'s access token, and as an OIDC ID token', async () => {
  const facebook = await signInWithCredential(clients.auth(dev), FacebookAuthProvider.credential(unsignedJwt({ sub: `fb-${Date.now()}`, email: 'fb@example.com' })));
  assert.equal(facebook.user.providerData[0]?.providerId, 'facebook.com');
  const oidc = await signInWithCredential(clients.auth(dev), new OAuthProvider('oidc.made-up').credential({ idToken: unsignedJwt({ sub: `o-${Date.now()}` }) }));
  assert.equal(oidc.user.providerData[0]?.providerId, 'oidc.made-up');
});

test('--dev: a made-up credential without a subject, or that is not JSON nor a JWT, is refused', async () => {
  assert.equal(await errorCodeOf(signInWithCredential(clients.auth(dev), GoogleAuthProvider.credential(JSON.stringify({ email: 'x@example.com' })))), 'auth/invalid-credential');
  assert.equal(await errorCodeOf(signInWithCredential(clients.auth(dev), GoogleAuthProvider.credential('{not json'))), 'auth/invalid-credential');
  assert.equal(await errorCodeOf(signInWithCredential(clients.auth(dev), GoogleAuthProvider.credential('plain words'))), 'auth/invalid-credential');
});

test('outside --dev the same made-up credential is refused and creates nothing', async () => {
  const sub = `google-prod-${Date.now()}`;
  const code = await errorCodeOf(signInWithCredential(clients.auth(production), GoogleAuthProvider.credential(JSON.stringify({ sub, email: `${sub}@example.com` }))));
  assert.equal(code, 'auth/operation-not-allowed');
  const listed = await fetch(`${production.url}/identitytoolkit.googleapis.com/v1/projects/${production.projectId}/accounts:batchGet?maxResults=100`, {
    headers: { authorization: `Bearer ${production.adminKey}` },
  });
  assert.equal(listed.status, 200);
  const { users = [] } = (await listed.json()) as { users?: Array<{ email?: string }> };
  assert.equal(users.filter((user) => user.email === `${sub}@example.com`).length, 0);
});
