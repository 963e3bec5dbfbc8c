/**
 * A token refresh reads its refresh token and the account it names in one statement
 * (Store.getRefreshTokenWithUser, a join). These tests hold that read to what two separate reads
 * gave: the account as it is at this moment (a changed name, disabling, revocation, deletion,
 * a deleted uid created again), and the account of the token's own realm when a tenant has an
 * account with the same uid as the project. Run on SQLite and on PostgreSQL
 * (HEARTH_TEST_BACKEND=postgres).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';
import { call, claimsOf, clientCall, createTenant, errorCode } from '../helpers/tenants.js';

let server: TestHearth;

before(async () => {
  server = await startHearth();
});
after(async () => {
  await server.close();
});

const refresh = (refreshToken: string) =>
  postJson(`${server.url}/securetoken.googleapis.com/v1/token?key=${server.apiKey}`, { grant_type: 'refresh_token', refresh_token: refreshToken });

/** A new password account of the project and its first session. */
async function session(localId?: string): Promise<{ uid: string; refreshToken: string; email: string }> {
  const email = uniqueEmail('refresh-account');
  const created = await adminPost(server, '/accounts', { email, password: 'secret12', ...(localId ? { localId } : {}) });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const signedIn = await clientCall(server, 'signInWithPassword', { email, password: 'secret12', returnSecureToken: true });
  assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
  return { uid: signedIn.body.localId as string, refreshToken: signedIn.body.refreshToken as string, email };
}

test('the refreshed ID token carries the account as it is now', async () => {
  const { uid, refreshToken } = await session();
  assert.equal((await refresh(refreshToken)).status, 200);
  assert.equal((await adminPost(server, '/accounts:update', { localId: uid, displayName: 'Renamed' })).status, 200);
  const answer = await refresh(refreshToken);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.user_id, uid);
  assert.equal(claimsOf(answer.body.id_token as string).name, 'Renamed');
});

test('a disabled account: USER_DISABLED; enabled again, the same refresh token works', async () => {
  const { uid, refreshToken } = await session();
  assert.equal((await adminPost(server, '/accounts:update', { localId: uid, disableUser: true })).status, 200);
  assert.equal(errorCode(await refresh(refreshToken)), 'USER_DISABLED');
  assert.equal((await adminPost(server, '/accounts:update', { localId: uid, disableUser: false })).status, 200);
  assert.equal((await refresh(refreshToken)).status, 200);
});

test('revoked sessions: TOKEN_EXPIRED once, then the token is gone', async () => {
  const { uid, refreshToken } = await session();
  const later = Math.floor(Date.now() / 1000) + 2;
  assert.equal((await adminPost(server, '/accounts:update', { localId: uid, validSince: String(later) })).status, 200);
  assert.equal(errorCode(await refresh(refreshToken)), 'TOKEN_EXPIRED');
  assert.equal(errorCode(await refresh(refreshToken)), 'INVALID_REFRESH_TOKEN');
});

test('a deleted account: USER_NOT_FOUND once, then the token is gone', async () => {
  const { uid, refreshToken } = await session();
  assert.equal((await adminPost(server, '/accounts:delete', { localId: uid })).status, 200);
  assert.equal(errorCode(await refresh(refreshToken)), 'USER_NOT_FOUND');
  assert.equal(errorCode(await refresh(refreshToken)), 'INVALID_REFRESH_TOKEN');
});

test('a deleted uid created again is another account: the old session is not its', async () => {
  const { uid, refreshToken, email } = await session();
  assert.equal((await adminPost(server, '/accounts:delete', { localId: uid })).status, 200);
  // Created again in a later millisecond, with the same uid and address.
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal((await adminPost(server, '/accounts', { localId: uid, email, password: 'secret12' })).status, 200);
  assert.equal(errorCode(await refresh(refreshToken)), 'USER_NOT_FOUND');
});

test("a tenant's account with the project account's uid: each session refreshes as its own account", async () => {
  const uid = `shared-uid-${process.pid}-${Date.now()}`;
  const own = await session(uid);
  const tenant = await createTenant(server);
  const tenantEmail = uniqueEmail('refresh-tenant');
  const created = await call(server, 'POST', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/tenants/${tenant.tenantId}/accounts`, {
    localId: uid,
    email: tenantEmail,
    password: 'secret12',
    displayName: 'In the tenant',
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const signedIn = await clientCall(server, 'signInWithPassword', { email: tenantEmail, password: 'secret12', returnSecureToken: true, tenantId: tenant.tenantId });
  assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));

  const inTenant = await refresh(signedIn.body.refreshToken as string);
  assert.equal(inTenant.status, 200, JSON.stringify(inTenant.body));
  const tenantClaims = claimsOf(inTenant.body.id_token as string);
  assert.equal(tenantClaims.sub, uid);
  assert.equal(tenantClaims.email, tenantEmail);
  assert.equal(tenantClaims.name, 'In the tenant');
  assert.equal(tenantClaims.firebase.tenant, tenant.tenantId);

  const inProject = await refresh(own.refreshToken);
  assert.equal(inProject.status, 200, JSON.stringify(inProject.body));
  const projectClaims = claimsOf(inProject.body.id_token as string);
  assert.equal(projectClaims.sub, uid);
  assert.equal(projectClaims.email, own.email);
  assert.equal(projectClaims.firebase.tenant, undefined);
});

test('an unknown refresh token: INVALID_REFRESH_TOKEN', async () => {
  assert.equal(errorCode(await refresh('never-issued')), 'INVALID_REFRESH_TOKEN');
});
