/**
 * `hearth start --dev` as Google's Auth emulator for firebase-admin in emulator mode
 * (FIREBASE_AUTH_EMULATOR_HOST): ID tokens and session cookies come in the emulator's unsigned form,
 * which verifyIdToken and verifySessionCookie accept there (with the revocation check emulator mode
 * forces); createCustomToken and the emulator's plain-JSON custom tokens sign in through the SDK;
 * and Hearth's own checks still hold for those tokens (a forged one is refused, a revoked one is
 * expired). Outside --dev: RS256 tokens only, plain JSON and unsigned tokens refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import { createUserWithEmailAndPassword, getIdTokenResult, signInWithCustomToken } from 'firebase/auth';
import { toEmulatorForm } from '../../packages/server/src/auth/core/emulator-tokens.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { errorCodeOf, SdkClients } from '../helpers/client.js';
import { startDevHearth } from '../helpers/dev-hearth.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { clientCall, errorCode } from '../helpers/tenants.js';

let dev: TestHearth;
let production: TestHearth;
let adminApp: App;
let admin: AdminAuth;
const clients = new SdkClients('dev-tokens');

before(async () => {
  dev = await startDevHearth();
  production = await startHearth({ dev: false });
  process.env.FIREBASE_AUTH_EMULATOR_HOST = dev.hostPort;
  adminApp = initializeApp({ projectId: dev.projectId }, 'dev-tokens-admin');
  admin = getAdminAuth(adminApp);
});
after(async () => {
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await clients.close();
  await deleteApp(adminApp);
  await dev.close();
  await production.close();
});

function partsOf(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown>; signature: string } {
  const [header, payload, signature] = jwt.split('.');
  const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>;
  return { header: decode(header!), payload: decode(payload!), signature: signature! };
}

async function signedUp(): Promise<{ uid: string; idToken: string; email: string }> {
  const email = uniqueEmail('emulated');
  const { user } = await createUserWithEmailAndPassword(clients.auth(dev), email, 'secret12');
  return { uid: user.uid, idToken: await user.getIdToken(), email };
}

const nextSecond = () => new Promise((resolve) => setTimeout(resolve, 1100));

describe('--dev: firebase-admin in emulator mode', () => {
  test('verifyIdToken takes the ID tokens Hearth issues, and finds them revoked after revokeRefreshTokens', async () => {
    const { uid, idToken, email } = await signedUp();
    const { header, signature } = partsOf(idToken);
    assert.equal(header.alg, 'none', 'the emulator form: unsigned for firebase-admin');
    assert.equal(signature, '');
    const decoded = await admin.verifyIdToken(idToken);
    assert.equal(decoded.uid, uid);
    assert.equal(decoded.email, email);
    assert.equal(decoded.firebase.sign_in_provider, 'password');
    assert.equal(decoded.iss, `https://securetoken.google.com/${dev.projectId}`);
    assert.equal((await admin.verifyIdToken(idToken, true)).uid, uid);

    await nextSecond();
    await admin.revokeRefreshTokens(uid);
    await assert.rejects(admin.verifyIdToken(idToken), (error: { code?: string }) => error.code === 'auth/id-token-revoked');
  });

  test('createSessionCookie -> verifySessionCookie; a disabled account is refused', async () => {
    const { uid, idToken } = await signedUp();
    const cookie = await admin.createSessionCookie(idToken, { expiresIn: 10 * 60 * 1000 });
    assert.equal(partsOf(cookie).header.alg, 'none');
    const decoded = await admin.verifySessionCookie(cookie);
    assert.equal(decoded.uid, uid);
    assert.equal(decoded.iss, `https://session.firebase.google.com/${dev.projectId}`);
    assert.equal(decoded.exp - decoded.iat, 600);
    await admin.updateUser(uid, { disabled: true });
    await assert.rejects(admin.verifySessionCookie(cookie), (error: { code?: string }) => error.code === 'auth/user-disabled');
  });

  test('createCustomToken signs in through the SDK with its claims', async () => {
    const uid = `admin-made-${Date.now()}`;
    const { user } = await signInWithCustomToken(clients.auth(dev), await admin.createCustomToken(uid, { plan: 'gold' }));
    assert.equal(user.uid, uid);
    const result = await getIdTokenResult(user);
    assert.equal(result.claims.plan, 'gold');
    assert.equal((await admin.verifyIdToken(result.token)).plan, 'gold');
  });
});

describe('--dev: custom tokens as plain JSON, as the Auth emulator takes them', () => {
  test('{uid, claims} signs in (the account made on first use, the claims in its ID token); user_id stands for uid', async () => {
    const uid = `json-${Date.now()}`;
    const first = await signInWithCustomToken(clients.auth(dev), JSON.stringify({ uid, claims: { customClaim: 'some-claim' } }));
    assert.equal(first.user.uid, uid);
    assert.equal((await getIdTokenResult(first.user)).claims.customClaim, 'some-claim');
    const again = await signInWithCustomToken(clients.auth(dev), JSON.stringify({ user_id: uid }));
    assert.equal(again.user.uid, uid);
  });

  test('broken JSON, reserved claims and a missing uid are refused as the emulator refuses them', async () => {
    assert.equal(await errorCodeOf(signInWithCustomToken(clients.auth(dev), '{"uid": ')), 'auth/invalid-custom-token');
    assert.equal(await errorCodeOf(signInWithCustomToken(clients.auth(dev), JSON.stringify({ uid: 'x', claims: { sub: 'y' } }))), 'auth/invalid-custom-token');
    const missing = await clientCall(dev, 'signInWithCustomToken', { token: JSON.stringify({ claims: {} }), returnSecureToken: true });
    assert.equal(missing.status, 400);
    assert.equal(errorCode(missing), 'MISSING_IDENTIFIER');
  });
});

describe("--dev: Hearth's own checks of its unsigned-form tokens", () => {
  test('a token whose claims were changed, or an unsigned token made up elsewhere, is refused by the identity API', async () => {
    const { idToken } = await signedUp();
    const other = await signedUp();
    const { header } = partsOf(idToken);
    const [headerPart, payloadPart] = idToken.split('.');
    const payload = JSON.parse(Buffer.from(payloadPart!, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${headerPart}.${Buffer.from(JSON.stringify({ ...payload, sub: other.uid, user_id: other.uid })).toString('base64url')}.`;
    assert.equal(errorCode(await clientCall(dev, 'lookup', { idToken: forged })), 'INVALID_ID_TOKEN');
    const madeUp = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT', kid: header.kid })).toString('base64url')}.${payloadPart}.`;
    assert.equal(errorCode(await clientCall(dev, 'lookup', { idToken: madeUp })), 'INVALID_ID_TOKEN');
    const genuine = await clientCall(dev, 'lookup', { idToken });
    assert.equal(genuine.status, 200, JSON.stringify(genuine.body));
  });

  test('a revoked session ends: TOKEN_EXPIRED', async () => {
    const { uid, idToken } = await signedUp();
    await nextSecond();
    await admin.revokeRefreshTokens(uid);
    assert.equal(errorCode(await clientCall(dev, 'lookup', { idToken })), 'TOKEN_EXPIRED');
  });
});

describe('outside --dev none of it is reachable', () => {
  test('ID tokens are RS256; plain-JSON and unsigned custom tokens are refused', async () => {
    const signUp = await clientCall(production, 'signUp', { email: uniqueEmail('prod'), password: 'secret12', returnSecureToken: true });
    assert.equal(signUp.status, 200, JSON.stringify(signUp.body));
    const { header, signature } = partsOf(signUp.body.idToken as string);
    assert.equal(header.alg, 'RS256');
    assert.notEqual(signature, '');

    const json = await clientCall(production, 'signInWithCustomToken', { token: JSON.stringify({ uid: 'someone' }), returnSecureToken: true });
    assert.equal(json.status, 400);
    assert.equal(errorCode(json), 'INVALID_CUSTOM_TOKEN');
    const unsignedHeader = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const claims = Buffer.from(
      JSON.stringify({ aud: 'https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit', uid: 'someone', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 600 }),
    ).toString('base64url');
    const unsigned = await clientCall(production, 'signInWithCustomToken', { token: `${unsignedHeader}.${claims}.`, returnSecureToken: true });
    assert.equal(errorCode(unsigned), 'INVALID_CUSTOM_TOKEN');
  });

  test("unsigned ID tokens are refused, the emulator form of production's own genuine token included", async () => {
    const signUp = await clientCall(production, 'signUp', { email: uniqueEmail('prod-unsigned'), password: 'secret12', returnSecureToken: true });
    const idToken = signUp.body.idToken as string;
    assert.equal(errorCode(await clientCall(production, 'lookup', { idToken: toEmulatorForm(idToken) })), 'INVALID_ID_TOKEN');
    const [, payload] = idToken.split('.');
    const bare = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    assert.equal(errorCode(await clientCall(production, 'lookup', { idToken: bare })), 'INVALID_ID_TOKEN');
    // The session cookies it makes are RS256 as well.
    const cookie = await postJson(`${production.url}/identitytoolkit.googleapis.com/v1/projects/${production.projectId}:createSessionCookie`, { idToken, validDuration: 600 }, { authorization: `Bearer ${production.adminKey}` });
    assert.equal(cookie.status, 200, JSON.stringify(cookie.body));
    assert.equal(partsOf(cookie.body.sessionCookie as string).header.alg, 'RS256');
  });
});
