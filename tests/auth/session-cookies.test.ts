/**
 * Sessions and queries through firebase-admin with a Hearth-issued service-account key:
 * createSessionCookie / verifySessionCookie (against the session-cookie keys Hearth publishes),
 * revocation with checkRevoked, accounts:query (filters, sort, paging), and custom claims in new
 * ID tokens. Projects are isolated: one project's cookie never verifies for another.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cert, deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import { getIdTokenResult, signInWithCustomToken, signInWithEmailAndPassword } from 'firebase/auth';
import { SdkClients } from '../helpers/client.js';
import { redirectGoogleHosts, type GoogleHostsRedirect } from '../helpers/google-hosts.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let google: GoogleHostsRedirect;
let admin: AdminAuth;
let otherAdmin: AdminAuth;
const apps: App[] = [];
const clients = new SdkClients('session-cookies');

async function adminFor(projectId: string, name: string): Promise<AdminAuth> {
  const response = await fetch(`${server.url}/hearth/v1/projects/${projectId}/serviceAccountKeys`, { method: 'POST', headers: { authorization: `Bearer ${server.adminKey}` } });
  const app = initializeApp({ credential: cert((await response.json()) as Parameters<typeof cert>[0]) }, name);
  apps.push(app);
  return getAdminAuth(app);
}

async function signedIn(): Promise<{ uid: string; idToken: string }> {
  const email = `cookie-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const created = await admin.createUser({ email, password: 'secret12' });
  const { user } = await signInWithEmailAndPassword(clients.auth(server), email, 'secret12');
  return { uid: created.uid, idToken: await user.getIdToken() };
}

before(async () => {
  server = await startHearth({ dev: false });
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  google = redirectGoogleHosts(server.url);
  admin = await adminFor(server.projectId, 'cookies-admin');
  otherAdmin = await adminFor('cookies-other', 'cookies-other-admin');
});

after(async () => {
  google.restore();
  await clients.close();
  await Promise.all(apps.map((app) => deleteApp(app)));
  await server.close();
});

describe('session cookies', () => {
  test('createSessionCookie -> verifySessionCookie with the published session-cookie keys', async () => {
    const { uid, idToken } = await signedIn();
    const cookie = await admin.createSessionCookie(idToken, { expiresIn: 5 * 60 * 1000 });
    const decoded = await admin.verifySessionCookie(cookie);
    assert.equal(decoded.uid, uid);
    assert.equal(decoded.iss, `https://session.firebase.google.com/${server.projectId}`);
    assert.equal(decoded.exp - decoded.iat, 300);
    assert.equal(decoded.firebase.sign_in_provider, 'password');
    assert.ok(google.seen.includes('/www.googleapis.com/identitytoolkit/v3/relyingparty/publicKeys'));
    // An ID token is not a session cookie, nor the other way round.
    await assert.rejects(admin.verifySessionCookie(idToken), (error: { code?: string }) => error.code === 'auth/argument-error');
    await assert.rejects(admin.verifyIdToken(cookie), (error: { code?: string }) => error.code === 'auth/argument-error');
  });

  test('checkRevoked: revokeRefreshTokens ends the cookie; a disabled user too', async () => {
    const { uid, idToken } = await signedIn();
    const cookie = await admin.createSessionCookie(idToken, { expiresIn: 14 * 24 * 3600 * 1000 });
    assert.equal((await admin.verifySessionCookie(cookie, true)).uid, uid);
    // Revocation is at second granularity: the cookie's auth_time must fall before validSince.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await admin.revokeRefreshTokens(uid);
    await assert.rejects(admin.verifySessionCookie(cookie, true), (error: { code?: string }) => error.code === 'auth/session-cookie-revoked');
    assert.equal((await admin.verifySessionCookie(cookie)).uid, uid, 'without checkRevoked only the signature and times are checked');
    // A revoked ID token cannot mint a cookie.
    await assert.rejects(admin.createSessionCookie(idToken, { expiresIn: 300_000 }));
  });

  test("another project's cookie does not verify, and its admin cannot mint cookies here", async () => {
    const { idToken } = await signedIn();
    const cookie = await admin.createSessionCookie(idToken, { expiresIn: 300_000 });
    await assert.rejects(otherAdmin.verifySessionCookie(cookie), (error: { code?: string }) => error.code === 'auth/argument-error');
    const foreign = await postJson(
      `${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}:createSessionCookie`,
      { idToken, validDuration: '300' },
      { authorization: `Bearer ${await accessTokenOf(otherAdmin)}` },
    );
    assert.equal(foreign.status, 403);
  });

  test('the duration is checked: five minutes to two weeks (INVALID_SESSION_COOKIE_DURATION)', async () => {
    const { idToken } = await signedIn();
    for (const validDuration of ['60', String(14 * 24 * 3600 + 1), 'soon']) {
      const { status, body } = await postJson(
        `${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}:createSessionCookie`,
        { idToken, validDuration },
        { authorization: `Bearer ${server.adminKey}` },
      );
      assert.equal(status, 400, validDuration);
      assert.equal(body.error.message, 'INVALID_SESSION_COOKIE_DURATION');
    }
  });
});

describe('custom claims and revocation of ID tokens', () => {
  test('setCustomUserClaims shows in the next ID token; revokeRefreshTokens + checkRevoked', async () => {
    const uid = `claims-${Date.now()}`;
    const { user } = await signInWithCustomToken(clients.auth(server), await admin.createCustomToken(uid));
    assert.equal((await getIdTokenResult(user)).claims.admin, undefined);
    await admin.setCustomUserClaims(uid, { admin: true });
    assert.equal((await getIdTokenResult(user, true)).claims.admin, true);
    const idToken = await user.getIdToken();
    assert.equal((await admin.verifyIdToken(idToken, true)).uid, uid);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await admin.revokeRefreshTokens(uid);
    await assert.rejects(admin.verifyIdToken(idToken, true), (error: { code?: string }) => error.code === 'auth/id-token-revoked');
  });
});

describe('accounts:query', () => {
  test('filters, sort, order, limit, offset and a bare count', async () => {
    const tag = Date.now().toString(36);
    const names = ['Carol', 'Alice', 'Bob', 'Dave'];
    for (const [i, name] of names.entries()) await otherAdmin.createUser({ uid: `${tag}-${i}`, displayName: name, email: `${name.toLowerCase()}-${tag}@example.com` });
    const token = await accessTokenOf(otherAdmin);
    const query = (body: unknown) =>
      postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/cookies-other/accounts:query`, body, { authorization: `Bearer ${token}` });

    const byName = await query({ sortBy: 'NAME', order: 'DESC', limit: '2', offset: '1' });
    assert.equal(byName.status, 200, JSON.stringify(byName.body));
    assert.equal(byName.body.recordsCount, '4');
    assert.deepEqual(byName.body.userInfo.map((u: { displayName: string }) => u.displayName), ['Carol', 'Bob']);

    const byEmail = await query({ expression: [{ email: `BOB-${tag}@example.com` }] });
    assert.deepEqual(byEmail.body.userInfo.map((u: { localId: string }) => u.localId), [`${tag}-2`]);
    const byUid = await query({ expression: [{ userId: `${tag}-3` }], returnUserInfo: false });
    assert.deepEqual(byUid.body, { recordsCount: '1' });
    const counted = await query({ returnUserInfo: false });
    assert.deepEqual(counted.body, { recordsCount: '4' });
    const countedByName = await query({ returnUserInfo: false, sortBy: 'NAME' });
    assert.deepEqual(countedByName.body, { recordsCount: '4' });
    // By uid (the default sort): a window of the store's key, in either order.
    const uids = (answer: { body: { userInfo?: Array<{ localId: string }> } }) => (answer.body.userInfo ?? []).map((u) => u.localId);
    const pageByUid = await query({ limit: '2', offset: '1' });
    assert.equal(pageByUid.body.recordsCount, '4');
    assert.deepEqual(uids(pageByUid), [`${tag}-1`, `${tag}-2`]);
    assert.deepEqual(uids(await query({ sortBy: 'USER_ID', order: 'DESC', limit: '3' })), [`${tag}-3`, `${tag}-2`, `${tag}-1`]);
    assert.deepEqual((await query({ offset: '10' })).body, { recordsCount: '4' });
    // The largest offset there is reaches the store's OFFSET as it is: an empty page, not a 500.
    assert.deepEqual((await query({ offset: String(Number.MAX_SAFE_INTEGER) })).body, { recordsCount: '4' });
    const pastInt = await query({ offset: '9007199254740992' });
    assert.equal(pastInt.status, 400);
    assert.equal(pastInt.body.error.status, 'INVALID_ARGUMENT');
    const none = await query({ expression: [{ email: 'nobody@example.com' }] });
    assert.deepEqual(none.body, { recordsCount: '0' });
    const byCreation = await query({ sortBy: 'CREATED_AT', order: 'ASC' });
    assert.deepEqual(byCreation.body.userInfo.map((u: { displayName: string }) => u.displayName), names);

    const badLimit = await query({ limit: '501' });
    assert.equal(badLimit.status, 400);
    // This project's token does not query another project.
    const crossing = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:query`, {}, { authorization: `Bearer ${token}` });
    assert.equal(crossing.status, 403);
  });
});

/** The access token firebase-admin holds for its service-account credential. */
async function accessTokenOf(auth: AdminAuth): Promise<string> {
  const credential = auth.app.options.credential!;
  return (await credential.getAccessToken()).access_token;
}
