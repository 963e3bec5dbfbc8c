/**
 * ID tokens whose signature was checked once are remembered (auth/core/verified-tokens.ts). These
 * tests present a token until it is remembered, then change what it depends on, and expect the
 * same refusals a first sight gives: revoked (validSince), disabled and deleted accounts, another
 * project or tenant, a forged signature beside a genuine one, expiry, and a retired signing key.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import { signInWithEmailAndPassword } from 'firebase/auth';
import { SigningKeyRing } from '../../packages/server/src/auth/core/signing-keys.js';
import { nowSeconds, TokenService } from '../../packages/server/src/auth/core/tokens.js';
import { VerifiedTokenCache } from '../../packages/server/src/auth/core/verified-tokens.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import type { UserRecord } from '../../packages/server/src/storage/store.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { SdkClients } from '../helpers/client.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { clientCall, createTenant, errorCode } from '../helpers/tenants.js';

let server: TestHearth;
let adminApp: App;
let admin: AdminAuth;
const clients = new SdkClients('token-cache');

before(async () => {
  server = await startHearth();
  process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
  adminApp = initializeAdminApp({ projectId: server.projectId }, 'token-cache-admin');
  admin = getAdminAuth(adminApp);
});
after(async () => {
  await clients.close();
  await deleteAdminApp(adminApp);
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await server.close();
});

/** A signed-in SDK user and its ID token, looked up twice so the server has remembered it. */
async function rememberedSession(): Promise<{ uid: string; idToken: string }> {
  const email = uniqueEmail('cache');
  const created = await admin.createUser({ email, password: 'secret12' });
  const credential = await signInWithEmailAndPassword(clients.auth(server), email, 'secret12');
  const idToken = await credential.user.getIdToken();
  for (let i = 0; i < 2; i++) {
    const answer = await clientCall(server, 'lookup', { idToken });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.users[0].localId, created.uid);
  }
  return { uid: created.uid, idToken };
}

describe('a remembered ID token still meets every account check', () => {
  test('revoked sessions (validSince): TOKEN_EXPIRED', async () => {
    const { uid, idToken } = await rememberedSession();
    // validSince has one-second resolution: a token issued in this very second would still pass.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await admin.revokeRefreshTokens(uid);
    const answer = await clientCall(server, 'lookup', { idToken });
    assert.equal(answer.status, 400);
    assert.equal(errorCode(answer), 'TOKEN_EXPIRED');
  });

  test('disabled account: USER_DISABLED; enabled again, the token works again', async () => {
    const { uid, idToken } = await rememberedSession();
    await admin.updateUser(uid, { disabled: true });
    const refused = await clientCall(server, 'lookup', { idToken });
    assert.equal(refused.status, 400);
    assert.equal(errorCode(refused), 'USER_DISABLED');
    await admin.updateUser(uid, { disabled: false });
    assert.equal((await clientCall(server, 'lookup', { idToken })).status, 200);
  });

  test('deleted account: USER_NOT_FOUND', async () => {
    const { uid, idToken } = await rememberedSession();
    await admin.deleteUser(uid);
    const answer = await clientCall(server, 'lookup', { idToken });
    assert.equal(answer.status, 400);
    assert.equal(errorCode(answer), 'USER_NOT_FOUND');
  });

  test("the same token named for a tenant: TENANT_ID_MISMATCH; a tenant's remembered token in the project: refused", async () => {
    const { idToken } = await rememberedSession();
    const tenant = await createTenant(server);
    const answer = await clientCall(server, 'lookup', { idToken, tenantId: tenant.tenantId });
    assert.equal(answer.status, 400);
    assert.equal(errorCode(answer), 'TENANT_ID_MISMATCH');

    const signUp = await clientCall(server, 'signUp', { email: uniqueEmail('tenant-cache'), password: 'secret12', returnSecureToken: true, tenantId: tenant.tenantId });
    assert.equal(signUp.status, 200, JSON.stringify(signUp.body));
    const tenantToken = signUp.body.idToken as string;
    assert.equal((await clientCall(server, 'lookup', { idToken: tenantToken })).status, 200);
    assert.equal((await clientCall(server, 'lookup', { idToken: tenantToken })).status, 200);
    const other = await createTenant(server);
    const elsewhere = await clientCall(server, 'lookup', { idToken: tenantToken, tenantId: other.tenantId });
    assert.equal(errorCode(elsewhere), 'TENANT_ID_MISMATCH');
  });

  test('a forged signature beside the remembered genuine token: INVALID_ID_TOKEN', async () => {
    const { idToken } = await rememberedSession();
    // --dev issues the Auth emulator's unsigned form, which carries the signature in its header
    // (auth/core/emulator-tokens.ts): that one is forged then.
    const [header, payload] = idToken.split('.');
    const fields = JSON.parse(Buffer.from(header!, 'base64url').toString()) as { alg: string; hearth: string };
    assert.equal(fields.alg, 'none');
    const [signedHeader, signature] = fields.hearth.split('..');
    const bytes = Buffer.from(signature!, 'base64url');
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
    const forgedHeader = Buffer.from(JSON.stringify({ ...fields, hearth: `${signedHeader}..${bytes.toString('base64url')}` })).toString('base64url');
    const forged = `${forgedHeader}.${payload}.`;
    const answer = await clientCall(server, 'lookup', { idToken: forged });
    assert.equal(answer.status, 400);
    assert.equal(errorCode(answer), 'INVALID_ID_TOKEN');
    assert.equal((await clientCall(server, 'lookup', { idToken })).status, 200);
  });
});

describe('TokenService with a key ring of its own', () => {
  let folder: string;
  let store: SqliteStore;
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'hearth-token-cache-'));
    store = new SqliteStore(join(folder, 'hearth.db'));
  });
  after(() => {
    store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const user: UserRecord = { localId: 'user-1', emailVerified: false, providerUserInfo: [], disabled: false, createdAt: 1, lastLoginAt: 1, validSince: 0, version: 1 };
  const invalid = { message: /INVALID_ID_TOKEN/ };

  test('a token of a retired key stops verifying once the key is dropped, remembered or not', async () => {
    const options = { rotateAfterMs: 60_000, prepublishMs: 0, publishRetiredForMs: 60_000 };
    const keys = await SigningKeyRing.open(join(folder, 'keys.json'), options);
    const tokens = new TokenService(keys, store);
    const idToken = await tokens.signIdToken('demo-cache', user, nowSeconds(), 'password');
    for (let i = 0; i < 2; i++) assert.equal((await tokens.verifyIdToken('demo-cache', idToken)).sub, 'user-1');
    const oldKid = JSON.parse(Buffer.from(idToken.split('.')[0]!, 'base64url').toString()).kid as string;

    // The next key signs; the old one stays published while its tokens may still be in use.
    await keys.rotateIfDue(Date.now() + 61_000);
    assert.notEqual((await keys.signingKey()).kid, oldKid);
    assert.equal(keys.isPublished(oldKid), true);
    assert.equal((await tokens.verifyIdToken('demo-cache', idToken)).sub, 'user-1');

    // Past publishRetiredForMs the old key is dropped: its tokens are refused, though remembered.
    await keys.rotateIfDue(Date.now() + 122_000);
    assert.equal(keys.isPublished(oldKid), false);
    await assert.rejects(tokens.verifyIdToken('demo-cache', idToken), invalid);
  });

  test('another project (issuer and audience) is refused for a remembered token', async () => {
    const keys = await SigningKeyRing.open(join(folder, 'keys-projects.json'), { rotateAfterMs: 3_600_000, prepublishMs: 0, publishRetiredForMs: 3_600_000 });
    const tokens = new TokenService(keys, store);
    const idToken = await tokens.signIdToken('demo-one', user, nowSeconds(), 'password');
    await tokens.verifyIdToken('demo-one', idToken);
    await assert.rejects(tokens.verifyIdToken('demo-two', idToken), invalid);
    assert.equal((await tokens.verifyIdToken('demo-one', idToken)).aud, 'demo-one');
  });

  test('a remembered token expires on time: TOKEN_EXPIRED', async () => {
    const keys = await SigningKeyRing.open(join(folder, 'keys-expiry.json'), { rotateAfterMs: 3_600_000, prepublishMs: 0, publishRetiredForMs: 3_600_000 });
    const tokens = new TokenService(keys, store);
    // The ring's first key is made before the clock starts (it is made on first use, which can take a while).
    await keys.signingKey();
    // Issued so that it expires two seconds from now.
    const issued = nowSeconds() - 3600 + 2;
    const idToken = await tokens.signIdToken('demo-exp', user, issued, 'password', undefined, undefined, issued);
    assert.equal((await tokens.verifyIdToken('demo-exp', idToken)).exp, issued + 3600);
    await tokens.verifyIdToken('demo-exp', idToken);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await assert.rejects(tokens.verifyIdToken('demo-exp', idToken), { message: /TOKEN_EXPIRED/ });
  });

  test('the claims handed out are frozen: no caller can change them for the next', async () => {
    const keys = await SigningKeyRing.open(join(folder, 'keys-frozen.json'), { rotateAfterMs: 3_600_000, prepublishMs: 0, publishRetiredForMs: 3_600_000 });
    const tokens = new TokenService(keys, store);
    const idToken = await tokens.signIdToken('demo-frozen', user, nowSeconds(), 'password');
    const claims = await tokens.verifyIdToken('demo-frozen', idToken);
    assert.throws(() => {
      (claims as { sub: string }).sub = 'someone-else';
    }, TypeError);
    assert.throws(() => {
      claims.firebase.sign_in_provider = 'custom';
    }, TypeError);
    assert.equal((await tokens.verifyIdToken('demo-frozen', idToken)).sub, 'user-1');
  });
});

describe('VerifiedTokenCache', () => {
  const claims = (exp: number) => ({ sub: 'u', aud: 'p', iat: 0, exp, auth_time: 0, user_id: 'u', firebase: { identities: {}, sign_in_provider: 'password' } });

  test('holds at most its capacity, dropping the oldest', () => {
    const cache = new VerifiedTokenCache(2);
    const exp = nowSeconds() + 100;
    cache.remember('a', 'k', claims(exp));
    cache.remember('b', 'k', claims(exp));
    cache.remember('c', 'k', claims(exp));
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a', nowSeconds()), undefined);
    assert.equal(cache.get('b', nowSeconds())?.kid, 'k');
    assert.equal(cache.get('c', nowSeconds())?.kid, 'k');
  });

  test('forgets an entry at its expiry, and capacity 0 remembers nothing', () => {
    const cache = new VerifiedTokenCache(10);
    cache.remember('t', 'k', claims(1000));
    assert.equal(cache.get('t', 999)?.kid, 'k');
    assert.equal(cache.get('t', 1000), undefined);
    assert.equal(cache.size, 0);
    const none = new VerifiedTokenCache(0);
    none.remember('t', 'k', claims(nowSeconds() + 100));
    assert.equal(none.get('t', nowSeconds()), undefined);
  });
});
