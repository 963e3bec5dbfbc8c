/**
 * Tenants through firebase-admin the production way: a Hearth-issued service-account key, no
 * emulator variable, Google's hosts answered by Hearth (helpers/google-hosts.ts). tenantManager()
 * CRUD and paging, authForTenant's user management, custom tokens, ID tokens and session cookies
 * checked against their tenant, providers and action links per tenant, and a key of another
 * project refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cert, deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import { signInWithCustomToken, signInWithEmailAndPassword } from 'firebase/auth';
import { SdkClients, errorCodeOf } from '../helpers/client.js';
import { redirectGoogleHosts, type GoogleHostsRedirect } from '../helpers/google-hosts.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { call, claimsOf } from '../helpers/tenants.js';

let server: TestHearth;
let google: GoogleHostsRedirect;
let admin: AdminAuth;
const apps: App[] = [];
const clients = new SdkClients('tenants-admin');

async function adminWithKeyOf(projectId: string, name: string, appProjectId?: string): Promise<AdminAuth> {
  const key = await call(server, 'POST', `/hearth/v1/projects/${projectId}/serviceAccountKeys`);
  assert.equal(key.status, 200, JSON.stringify(key.body));
  const app = initializeApp({ credential: cert(key.body as Parameters<typeof cert>[0]), ...(appProjectId ? { projectId: appProjectId } : {}) }, name);
  apps.push(app);
  return getAuth(app);
}

/** The client SDK in a tenant (auth.tenantId), or in the project when `tenantId` is null. */
function clientIn(tenantId: string | null) {
  const auth = clients.auth(server);
  auth.tenantId = tenantId;
  return auth;
}

let seq = 0;
const email = (tag: string) => `${tag}-${++seq}-${Date.now()}@example.com`;

before(async () => {
  server = await startHearth({ dev: false });
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  google = redirectGoogleHosts(server.url);
  admin = await adminWithKeyOf(server.projectId, 'tenants-admin');
});

after(async () => {
  google.restore();
  await clients.close();
  await Promise.all(apps.map((app) => deleteApp(app)));
  await server.close();
});

describe('tenantManager()', () => {
  test('create, get, list with paging, update and delete', async () => {
    const manager = admin.tenantManager();
    const created = [];
    for (const displayName of ['Acme', 'Globex', 'Initech']) {
      created.push(
        await manager.createTenant({
          displayName,
          emailSignInConfig: { enabled: true, passwordRequired: false },
          anonymousSignInEnabled: displayName === 'Acme',
          passwordPolicyConfig: { enforcementState: 'ENFORCE', constraints: { minLength: 10, requireNumeric: true } },
          emailPrivacyConfig: { enableImprovedEmailPrivacy: false },
        }),
      );
    }
    const [acme, globex, initech] = created as [(typeof created)[0], (typeof created)[0], (typeof created)[0]];
    assert.match(acme.tenantId, /^Acme-[a-z0-9]{5}$/);
    assert.notEqual(acme.tenantId, globex.tenantId);

    const fetched = await manager.getTenant(acme.tenantId);
    assert.equal(fetched.displayName, 'Acme');
    assert.equal(fetched.emailSignInConfig?.enabled, true);
    assert.equal(fetched.emailSignInConfig?.passwordRequired, false);
    assert.equal(fetched.anonymousSignInEnabled, true);
    assert.equal(fetched.passwordPolicyConfig?.enforcementState, 'ENFORCE');
    assert.equal(fetched.passwordPolicyConfig?.constraints?.minLength, 10);
    assert.equal(fetched.passwordPolicyConfig?.constraints?.requireNumeric, true);
    assert.deepEqual(fetched.emailPrivacyConfig, { enableImprovedEmailPrivacy: false });

    const first = await manager.listTenants(2);
    assert.deepEqual(first.tenants.map((t) => t.tenantId), [acme.tenantId, globex.tenantId], 'oldest first');
    assert.ok(first.pageToken);
    const second = await manager.listTenants(2, first.pageToken);
    assert.deepEqual(second.tenants.map((t) => t.tenantId), [initech.tenantId]);
    assert.equal(second.pageToken, undefined);

    const updated = await manager.updateTenant(globex.tenantId, { displayName: 'Globex2', emailSignInConfig: { enabled: false } });
    assert.equal(updated.displayName, 'Globex2');
    assert.equal(updated.emailSignInConfig?.enabled, false);
    assert.equal(updated.emailSignInConfig?.passwordRequired, false, 'fields outside the update mask are kept');
    assert.equal(updated.passwordPolicyConfig?.constraints?.minLength, 10);

    await manager.deleteTenant(initech.tenantId);
    await assert.rejects(manager.getTenant(initech.tenantId), (error: { code?: string }) => error.code === 'auth/tenant-not-found');
    await assert.rejects(manager.deleteTenant(initech.tenantId), (error: { code?: string }) => error.code === 'auth/tenant-not-found');
    assert.deepEqual((await manager.listTenants()).tenants.map((t) => t.tenantId), [acme.tenantId, globex.tenantId]);
    for (const tenant of [acme, globex]) await manager.deleteTenant(tenant.tenantId);
  });

  test('a new tenant has every sign-in method off, as Google makes them', async () => {
    const tenant = await admin.tenantManager().createTenant({ displayName: 'Quiet' });
    assert.equal(tenant.emailSignInConfig?.enabled, false);
    assert.equal(tenant.emailSignInConfig?.passwordRequired, true);
    assert.equal(tenant.anonymousSignInEnabled, false);
    const auth = clientIn(tenant.tenantId);
    assert.equal(await errorCodeOf(signInWithEmailAndPassword(auth, email('quiet'), 'secret12')), 'auth/operation-not-allowed');
    await admin.tenantManager().deleteTenant(tenant.tenantId);
  });
});

describe('authForTenant()', () => {
  test("users live in their tenant: the same email twice, never found, listed or changed from another", async () => {
    const manager = admin.tenantManager();
    const a = await manager.createTenant({ displayName: 'TenantA', emailSignInConfig: { enabled: true } });
    const b = await manager.createTenant({ displayName: 'TenantB', emailSignInConfig: { enabled: true } });
    const inA = manager.authForTenant(a.tenantId);
    const inB = manager.authForTenant(b.tenantId);
    const shared = email('shared');
    const alice = await inA.createUser({ email: shared, password: 'secret12', displayName: 'Alice' });
    const bob = await inB.createUser({ email: shared, password: 'secret34', displayName: 'Bob' });
    assert.notEqual(alice.uid, bob.uid);
    assert.equal(alice.tenantId, a.tenantId);
    assert.equal(bob.tenantId, b.tenantId);

    assert.equal((await inA.getUserByEmail(shared)).uid, alice.uid);
    assert.equal((await inB.getUserByEmail(shared)).uid, bob.uid);
    await assert.rejects(inA.getUser(bob.uid), (error: { code?: string }) => error.code === 'auth/user-not-found');
    await assert.rejects(admin.getUserByEmail(shared), (error: { code?: string }) => error.code === 'auth/user-not-found');
    assert.deepEqual((await inA.listUsers()).users.map((u) => u.uid), [alice.uid]);
    assert.ok(!(await admin.listUsers()).users.some((u) => u.uid === alice.uid || u.uid === bob.uid), "the project's list has no tenant users");
    const found = await inA.getUsers([{ uid: alice.uid }, { uid: bob.uid }]);
    assert.deepEqual(found.users.map((u) => u.uid), [alice.uid]);
    assert.deepEqual(found.notFound, [{ uid: bob.uid }]);

    await assert.rejects(inA.updateUser(bob.uid, { displayName: 'Mallory' }), (error: { code?: string }) => error.code === 'auth/user-not-found');
    await assert.rejects(inA.deleteUser(bob.uid), (error: { code?: string }) => error.code === 'auth/user-not-found');
    assert.equal((await inB.getUser(bob.uid)).displayName, 'Bob');
    await inA.setCustomUserClaims(alice.uid, { plan: 'gold' });
    assert.deepEqual((await inA.getUser(alice.uid)).customClaims, { plan: 'gold' });

    // The password of each account is its own, and each signs in only in its tenant.
    const signedInA = await signInWithEmailAndPassword(clientIn(a.tenantId), shared, 'secret12');
    assert.equal(signedInA.user.uid, alice.uid);
    assert.equal(signedInA.user.tenantId, a.tenantId);
    assert.equal(claimsOf(await signedInA.user.getIdToken()).plan, 'gold');
    assert.equal(await errorCodeOf(signInWithEmailAndPassword(clientIn(b.tenantId), shared, 'secret12')), 'auth/invalid-credential');
    assert.equal(await errorCodeOf(signInWithEmailAndPassword(clientIn(null), shared, 'secret12')), 'auth/invalid-credential');
  });

  test('importUsers goes into the tenant; an account naming another tenant is refused', async () => {
    const manager = admin.tenantManager();
    const tenant = await manager.createTenant({ displayName: 'Imports', emailSignInConfig: { enabled: true } });
    const inTenant = manager.authForTenant(tenant.tenantId);
    const imported = email('imported');
    const result = await inTenant.importUsers([{ uid: `imp-${seq}`, email: imported, displayName: 'Imported' }]);
    assert.equal(result.successCount, 1, JSON.stringify(result.errors));
    assert.equal((await inTenant.getUser(`imp-${seq}`)).tenantId, tenant.tenantId);
    await assert.rejects(admin.getUser(`imp-${seq}`), (error: { code?: string }) => error.code === 'auth/user-not-found');

    // firebase-admin refuses this itself; over HTTP Hearth refuses that one account with Google's message.
    const raw = await call(server, 'POST', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/tenants/${tenant.tenantId}/accounts:batchCreate`, {
      users: [{ localId: 'stray', email: email('stray'), tenantId: 'Another-abcde' }],
    });
    assert.equal(raw.status, 200);
    assert.deepEqual(raw.body.error, [{ index: 0, message: 'Tenant id in userInfo does not match the tenant id in request.' }]);
  });

  test("custom tokens, ID tokens and session cookies belong to one tenant", async () => {
    const manager = admin.tenantManager();
    const a = await manager.createTenant({ displayName: 'Tokens-A' });
    const b = await manager.createTenant({ displayName: 'Tokens-B' });
    const inA = manager.authForTenant(a.tenantId);
    const inB = manager.authForTenant(b.tenantId);

    const token = await inA.createCustomToken('member-1', { role: 'editor' });
    assert.equal(claimsOf(token).tenant_id, a.tenantId);
    const { user } = await signInWithCustomToken(clientIn(a.tenantId), token);
    assert.equal(user.tenantId, a.tenantId);
    const idToken = await user.getIdToken();
    const claims = claimsOf(idToken);
    assert.equal(claims.firebase.tenant, a.tenantId);
    assert.equal(claims.firebase.sign_in_provider, 'custom');
    assert.equal(claims.role, 'editor');
    assert.equal(claims.aud, server.projectId, 'the audience is the project');
    assert.equal((await inA.getUser('member-1')).tenantId, a.tenantId);

    assert.equal(await errorCodeOf(signInWithCustomToken(clientIn(b.tenantId), token)), 'auth/tenant-id-mismatch');
    assert.equal(await errorCodeOf(signInWithCustomToken(clientIn(null), token)), 'auth/tenant-id-mismatch');
    assert.equal(await errorCodeOf(signInWithCustomToken(clientIn(a.tenantId), await admin.createCustomToken('project-user'))), 'auth/tenant-id-mismatch');

    assert.equal((await inA.verifyIdToken(idToken)).firebase.tenant, a.tenantId);
    await assert.rejects(inB.verifyIdToken(idToken), (error: { code?: string }) => error.code === 'auth/mismatching-tenant-id');

    const cookie = await inA.createSessionCookie(idToken, { expiresIn: 3600_000 });
    assert.equal((await inA.verifySessionCookie(cookie, true)).firebase.tenant, a.tenantId);
    await assert.rejects(inB.verifySessionCookie(cookie), (error: { code?: string }) => error.code === 'auth/mismatching-tenant-id');
    await assert.rejects(inB.createSessionCookie(idToken, { expiresIn: 3600_000 }), (error: { code?: string }) => error.code === 'auth/mismatching-tenant-id');

    await new Promise((resolve) => setTimeout(resolve, 1100)); // validSince has one-second steps
    await inA.revokeRefreshTokens('member-1');
    await assert.rejects(inA.verifyIdToken(idToken, true), (error: { code?: string }) => error.code === 'auth/id-token-revoked');
  });

  test('providers are per tenant', async () => {
    const manager = admin.tenantManager();
    const a = await manager.createTenant({ displayName: 'Idp-A' });
    const b = await manager.createTenant({ displayName: 'Idp-B' });
    const inA = manager.authForTenant(a.tenantId);
    await inA.createProviderConfig({ providerId: 'oidc.corp', displayName: 'Corp', enabled: true, clientId: 'corp-client', issuer: 'https://idp.example.com' });
    assert.deepEqual((await inA.listProviderConfigs({ type: 'oidc' })).providerConfigs.map((c) => c.providerId), ['oidc.corp']);
    assert.deepEqual((await manager.authForTenant(b.tenantId).listProviderConfigs({ type: 'oidc' })).providerConfigs, []);
    assert.ok(!(await admin.listProviderConfigs({ type: 'oidc' })).providerConfigs.some((c) => c.providerId === 'oidc.corp'));
    await assert.rejects(manager.authForTenant(b.tenantId).getProviderConfig('oidc.corp'), (error: { code?: string }) => error.code === 'auth/configuration-not-found');
    await inA.deleteProviderConfig('oidc.corp');
    assert.deepEqual((await inA.listProviderConfigs({ type: 'oidc' })).providerConfigs, []);
  });

  test('action links name their tenant', async () => {
    const manager = admin.tenantManager();
    const tenant = await manager.createTenant({ displayName: 'Links', emailSignInConfig: { enabled: true } });
    const inTenant = manager.authForTenant(tenant.tenantId);
    const address = email('links');
    await inTenant.createUser({ email: address, password: 'secret12' });
    for (const link of [await inTenant.generatePasswordResetLink(address), await inTenant.generateEmailVerificationLink(address)]) {
      const url = new URL(link);
      assert.equal(url.searchParams.get('tenantId'), tenant.tenantId);
      assert.equal(url.searchParams.get('apiKey'), server.apiKey);
    }
    await assert.rejects(admin.generatePasswordResetLink(address), (error: { code?: string }) => error.code === 'auth/email-not-found');
  });
});

describe('other projects', () => {
  test("a key of another project neither lists, reads nor creates this project's tenants", async () => {
    const tenant = await admin.tenantManager().createTenant({ displayName: 'Guarded' });
    const other = await adminWithKeyOf('other-project', 'tenants-other', server.projectId);
    const denied = (error: { code?: string }) => error.code === 'auth/insufficient-permission';
    await assert.rejects(other.tenantManager().listTenants(), denied);
    await assert.rejects(other.tenantManager().getTenant(tenant.tenantId), denied);
    await assert.rejects(other.tenantManager().createTenant({ displayName: 'Intruder' }), denied);
    await assert.rejects(other.tenantManager().authForTenant(tenant.tenantId).listUsers(), denied);

    // Its own project's tenants are its own: a tenant id of this project is unknown there.
    const otherOwn = await adminWithKeyOf('other-project', 'tenants-other-own');
    await assert.rejects(otherOwn.tenantManager().getTenant(tenant.tenantId), (error: { code?: string }) => error.code === 'auth/tenant-not-found');
    await assert.rejects(otherOwn.tenantManager().authForTenant(tenant.tenantId).listUsers(), (error: { code?: string }) => error.code === 'auth/tenant-not-found');
  });
});
