/**
 * The official client SDK in a tenant (`auth.tenantId`), --dev: sign-up and sign-in with the
 * tenant's own settings, `firebase.tenant` in every ID token (refreshed ones too), the tenant's
 * password policy, email actions through the tenant's outbox (links carry the tenant), a federated
 * sign-in through the hosted handler with the tenant's own provider, a TOTP second factor under the
 * tenant's own multi-factor settings, a disabled tenant, and `hearth users export|import --tenant`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { backendEnv } from '../helpers/test-backend.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import {
  ActionCodeURL,
  applyActionCode,
  confirmPasswordReset,
  createUserWithEmailAndPassword,
  deleteUser,
  getIdTokenResult,
  getMultiFactorResolver,
  multiFactor,
  reload,
  sendEmailVerification,
  sendPasswordResetEmail,
  sendSignInLinkToEmail,
  signInAnonymously,
  signInWithEmailAndPassword,
  signInWithEmailLink,
  TotpMultiFactorGenerator,
  updateProfile,
  validatePassword,
  type Auth,
  type MultiFactorError,
} from 'firebase/auth';
import { uniqueEmail } from '../helpers/admin-http.js';
import { SdkClients, errorCodeOf } from '../helpers/client.js';
import { freePort, postJson, repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { CookieBrowser, runHandlerFlow } from '../helpers/idp-flow.js';
import { oobCodes } from '../helpers/outbox.js';
import { TotpDevice } from '../helpers/totp-device.js';
import { call, claimsOf, createTenant, tenantOobCodes, tenantsPath, waitForTenantMail, type TenantResource } from '../helpers/tenants.js';
import { hearthCommand } from '../helpers/hearth-command.js';

let server: TestHearth;
let tenant: TenantResource;
const clients = new SdkClients('tenants-sdk');

/** A fresh SDK client in `tenantId` (null: the project itself). */
function clientIn(tenantId: string | null): Auth {
  const auth = clients.auth(server);
  auth.tenantId = tenantId;
  return auth;
}

before(async () => {
  server = await startHearth({ demoIdpPort: await freePort() });
  tenant = await createTenant(server, { displayName: 'Shop' });
});
after(async () => {
  await clients.close();
  await server.close();
});

describe('accounts in a tenant', () => {
  test('sign-up, sign-in, reload, profile change and refresh all stay in the tenant', async () => {
    const email = uniqueEmail('tenant-user');
    const created = await createUserWithEmailAndPassword(clientIn(tenant.tenantId), email, 'secret12');
    assert.equal(created.user.tenantId, tenant.tenantId);
    assert.equal(claimsOf(await created.user.getIdToken()).firebase.tenant, tenant.tenantId);

    const auth = clientIn(tenant.tenantId);
    const { user } = await signInWithEmailAndPassword(auth, email, 'secret12');
    assert.equal(user.uid, created.user.uid);
    // reload and updateProfile send no tenantId: the ID token names the tenant.
    await updateProfile(user, { displayName: 'Tenant Tess' });
    await reload(user);
    assert.equal(user.displayName, 'Tenant Tess');
    assert.equal(user.tenantId, tenant.tenantId);

    const before = claimsOf(await user.getIdToken());
    await new Promise((resolve) => setTimeout(resolve, 1100)); // a refreshed token has a later iat
    const refreshed = await getIdTokenResult(user, true);
    assert.ok(refreshed.claims.iat! > before.iat, 'a new ID token');
    assert.equal((refreshed.claims.firebase as { tenant?: string }).tenant, tenant.tenantId, 'refresh keeps the tenant');
    assert.equal(refreshed.claims.name, 'Tenant Tess');

    // Not the project's account: the project's client knows no such user.
    assert.equal(await errorCodeOf(signInWithEmailAndPassword(clientIn(null), email, 'secret12')), 'auth/invalid-credential');
    await deleteUser(user);
    assert.equal(await errorCodeOf(signInWithEmailAndPassword(clientIn(tenant.tenantId), email, 'secret12')), 'auth/invalid-credential');
  });

  test("the tenant's sign-in settings, not the project's, decide", async () => {
    const closed = await createTenant(server, { displayName: 'Closed', enableAnonymousUser: false, allowPasswordSignup: false, enableEmailLinkSignin: false });
    assert.equal(await errorCodeOf(signInAnonymously(clientIn(closed.tenantId))), 'auth/operation-not-allowed');
    assert.equal(await errorCodeOf(createUserWithEmailAndPassword(clientIn(closed.tenantId), uniqueEmail('closed'), 'secret12')), 'auth/operation-not-allowed');
    assert.equal(
      await errorCodeOf(sendSignInLinkToEmail(clientIn(closed.tenantId), uniqueEmail('closed'), { url: 'http://localhost/done', handleCodeInApp: true })),
      'auth/operation-not-allowed',
    );
    const anonymous = await signInAnonymously(clientIn(null));
    assert.equal(anonymous.user.tenantId, null, 'the project itself still signs in anonymously');
    const open = await signInAnonymously(clientIn(tenant.tenantId));
    assert.equal(claimsOf(await open.user.getIdToken()).firebase.tenant, tenant.tenantId);
  });

  test("validatePassword reads the tenant's policy, and sign-up in the tenant meets it", async () => {
    const strict = await createTenant(server, {
      displayName: 'Strict',
      passwordPolicyConfig: { passwordPolicyEnforcementState: 'ENFORCE', passwordPolicyVersions: [{ customStrengthOptions: { minPasswordLength: 12, containsNumericCharacter: true } }] },
    });
    const auth = clientIn(strict.tenantId);
    const weak = await validatePassword(auth, 'shortpass');
    assert.equal(weak.isValid, false);
    assert.equal(weak.meetsMinPasswordLength, false);
    assert.equal(weak.containsNumericCharacter, false);
    assert.equal((await validatePassword(clientIn(null), 'shortpass')).isValid, true, "the project's policy is its own");
    assert.equal(await errorCodeOf(createUserWithEmailAndPassword(auth, uniqueEmail('strict'), 'shortpass')), 'auth/password-does-not-meet-requirements');
    const { user } = await createUserWithEmailAndPassword(auth, uniqueEmail('strict'), 'long-enough-12');
    assert.equal(user.tenantId, strict.tenantId);
  });
});

describe('email actions in a tenant', () => {
  test("a password reset goes through the tenant's outbox; its link names the tenant", async () => {
    const email = uniqueEmail('tenant-reset');
    await createUserWithEmailAndPassword(clientIn(tenant.tenantId), email, 'old-password');
    await sendPasswordResetEmail(clientIn(tenant.tenantId), email);
    const mail = await waitForTenantMail(server, tenant.tenantId, email, 'PASSWORD_RESET');
    const link = ActionCodeURL.parseLink(mail.oobLink);
    assert.equal(link?.tenantId, tenant.tenantId);
    assert.ok(!(await oobCodes(server)).some((m) => m.email === email), "nothing in the project's outbox");
    await confirmPasswordReset(clientIn(tenant.tenantId), link!.code, 'new-password');
    const { user } = await signInWithEmailAndPassword(clientIn(tenant.tenantId), email, 'new-password');
    assert.equal(user.emailVerified, true);
  });

  test('email verification and email-link sign-in with the link the tenant mailed', async () => {
    const email = uniqueEmail('tenant-verify');
    const { user } = await createUserWithEmailAndPassword(clientIn(tenant.tenantId), email, 'secret12');
    await sendEmailVerification(user);
    const verification = await waitForTenantMail(server, tenant.tenantId, email, 'VERIFY_EMAIL');
    await applyActionCode(clientIn(tenant.tenantId), ActionCodeURL.parseLink(verification.oobLink)!.code);
    await reload(user);
    assert.equal(user.emailVerified, true);

    const newcomer = uniqueEmail('tenant-link');
    const continueUrl = 'http://localhost/finish';
    await sendSignInLinkToEmail(clientIn(tenant.tenantId), newcomer, { url: continueUrl, handleCodeInApp: true });
    const signIn = await waitForTenantMail(server, tenant.tenantId, newcomer, 'EMAIL_SIGNIN');
    // The SDK itself refuses a tenant's link in another tenant (or none): auth/tenant-id-mismatch.
    assert.equal(await errorCodeOf(signInWithEmailLink(clientIn(null), newcomer, signIn.oobLink)), 'auth/tenant-id-mismatch');
    const linked = await signInWithEmailLink(clientIn(tenant.tenantId), newcomer, signIn.oobLink);
    assert.equal(linked.user.tenantId, tenant.tenantId);
    assert.equal(claimsOf(await linked.user.getIdToken()).firebase.tenant, tenant.tenantId);
  });

  test("the hosted action page hands a tenant's sign-in link back with its tenant", async () => {
    const email = uniqueEmail('tenant-handback');
    await sendSignInLinkToEmail(clientIn(tenant.tenantId), email, { url: 'http://localhost:5173/finish', handleCodeInApp: true });
    const mail = await waitForTenantMail(server, tenant.tenantId, email, 'EMAIL_SIGNIN');
    const response = await fetch(mail.oobLink, { redirect: 'manual' });
    assert.equal(response.status, 303);
    const back = new URL(response.headers.get('location')!);
    assert.equal(back.origin, 'http://localhost:5173');
    assert.equal(back.searchParams.get('tenantId'), tenant.tenantId);
    assert.equal(back.searchParams.get('oobCode'), ActionCodeURL.parseLink(mail.oobLink)!.code);
  });

  test("the Auth emulator's link handler resets a tenant's password from the link", async () => {
    const email = uniqueEmail('tenant-emulator');
    await createUserWithEmailAndPassword(clientIn(tenant.tenantId), email, 'old-password');
    const issued = await call(server, 'POST', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/tenants/${tenant.tenantId}/accounts:sendOobCode`, {
      requestType: 'PASSWORD_RESET',
      email,
      returnOobLink: true,
    });
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    const link = new URL(issued.body.oobLink);
    const emulatorLink = `${server.url}/emulator/action?${link.searchParams}&newPassword=emulated-pass`;
    const answer = await fetch(emulatorLink);
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.equal(((await answer.json()) as { authEmulator: { email: string } }).authEmulator.email, email);
    await signInWithEmailAndPassword(clientIn(tenant.tenantId), email, 'emulated-pass');
  });
});

describe('identity providers of a tenant', () => {
  test("the hosted handler signs in with the tenant's provider (tid) and the event names the tenant", async () => {
    const project = await call(server, 'GET', `/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/config`);
    const demo = project.body.idps['oidc.demo'] as { issuer: string; clientId: string; clientSecret: string };
    const tenantIdp = `/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/tenants/${tenant.tenantId}/oauthIdpConfigs`;

    // Without its own provider the tenant has none: the project's is not the tenant's. In --dev
    // a provider without settings gets the Auth emulator's widget, never the project's provider.
    const before = await runHandlerFlow(new CookieBrowser(), server, uniqueEmail('idp'), 'oidc.demo', { tid: tenant.tenantId });
    assert.equal(before.event, undefined, JSON.stringify(before.event));
    assert.match(before.callbackHtml, /<title>Auth Emulator IDP Login Widget<\/title>/);

    const created = await call(server, 'POST', `${tenantIdp}?oauthIdpConfigId=oidc.demo`, { issuer: demo.issuer, clientId: demo.clientId, clientSecret: demo.clientSecret, enabled: true, displayName: 'Demo' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.name, `projects/${server.projectId}/tenants/${tenant.tenantId}/oauthIdpConfigs/oidc.demo`);

    const email = uniqueEmail('tenant-idp');
    const flow = await runHandlerFlow(new CookieBrowser(), server, email, 'oidc.demo', { tid: tenant.tenantId });
    assert.equal(flow.event?.error, undefined, JSON.stringify(flow.event));
    assert.equal((flow.event as { tenantId?: string }).tenantId, tenant.tenantId);
    const signInWithIdp = (tenantId: string | undefined) =>
      postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp?key=${server.apiKey}`, {
        requestUri: flow.event!.urlResponse,
        sessionId: flow.event!.sessionId,
        returnSecureToken: true,
        ...(tenantId ? { tenantId } : {}),
      });
    // The flow's session belongs to the tenant: it cannot be finished in the project.
    const elsewhere = await signInWithIdp(undefined);
    assert.equal(elsewhere.body.error?.message.split(' : ')[0], 'INVALID_IDP_RESPONSE');
    const signedIn = await signInWithIdp(tenant.tenantId);
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.tenantId, tenant.tenantId);
    assert.equal(signedIn.body.email, email);
    const claims = claimsOf(signedIn.body.idToken);
    assert.equal(claims.firebase.tenant, tenant.tenantId);
    assert.equal(claims.firebase.sign_in_provider, 'oidc.demo');
  });
});

describe('a disabled tenant', () => {
  test('disableAuth stops sign-ins, refreshes and user management until it is off again', async () => {
    const paused = await createTenant(server, { displayName: 'Paused' });
    const email = uniqueEmail('paused');
    const { user } = await createUserWithEmailAndPassword(clientIn(paused.tenantId), email, 'secret12');
    const toggle = (disableAuth: boolean) => call(server, 'PATCH', `${tenantsPath(server)}/${paused.tenantId}?updateMask=disableAuth`, { disableAuth });
    assert.equal((await toggle(true)).body.disableAuth, true);

    assert.equal(await errorCodeOf(signInWithEmailAndPassword(clientIn(paused.tenantId), email, 'secret12')), 'auth/project-disabled');
    assert.equal(await errorCodeOf(user.getIdToken(true)), 'auth/project-disabled');
    const listed = await call(server, 'GET', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/tenants/${paused.tenantId}/accounts:batchGet`);
    assert.equal(listed.body.error?.message, 'PROJECT_DISABLED');
    assert.equal((await call(server, 'GET', `${tenantsPath(server)}/${paused.tenantId}`)).status, 200, 'the tenant itself is still managed');

    await toggle(false);
    await signInWithEmailAndPassword(clientIn(paused.tenantId), email, 'secret12');
    assert.equal(claimsOf(await user.getIdToken(true)).firebase.tenant, paused.tenantId);
  });

  test("a tenant's mails and texts are listed for it alone", async () => {
    const before = (await tenantOobCodes(server, tenant.tenantId)).length;
    const email = uniqueEmail('listed');
    await createUserWithEmailAndPassword(clientIn(tenant.tenantId), email, 'secret12');
    await sendPasswordResetEmail(clientIn(tenant.tenantId), email);
    await waitForTenantMail(server, tenant.tenantId, email, 'PASSWORD_RESET');
    assert.equal((await tenantOobCodes(server, tenant.tenantId)).length, before + 1);
    const outbox = await call(server, 'GET', `/hearth/v1/projects/${server.projectId}/tenants/${tenant.tenantId}/outbox`);
    const kept = (outbox.body.messages as Array<{ to: string; tenantId?: string }>).filter((m) => m.to === email);
    assert.deepEqual(kept.map((m) => m.tenantId), [tenant.tenantId], 'the outbox shows the tenant');
  });
});

describe('hearth users --tenant', () => {
  test("a tenant's accounts move to another tenant with their passwords; the project's stay out", async () => {
    const from = await createTenant(server, { displayName: 'Source' });
    const to = await createTenant(server, { displayName: 'Destination' });
    const email = uniqueEmail('moving');
    await createUserWithEmailAndPassword(clientIn(from.tenantId), email, 'moving-pass');
    await createUserWithEmailAndPassword(clientIn(null), uniqueEmail('stays'), 'other-pass');
    const file = join(server.dataDir, 'tenant-users.json');
    const cli = async (...args: string[]) =>
      promisify(execFile)(process.execPath, [...hearthCommand(), 'users', ...args, '--project', server.projectId, '--data', server.dataDir], {
        cwd: repoRoot,
        env: { ...process.env, ...(await backendEnv(['--data', server.dataDir])) },
      });

    await cli('export', file, '--tenant', from.tenantId);
    const exported = (JSON.parse(readFileSync(file, 'utf8')) as { users: Array<{ email?: string }> }).users;
    assert.deepEqual(exported.map((u) => u.email), [email]);
    await cli('import', file, '--tenant', to.tenantId, '--hash-algo', 'HEARTH_SCRYPT');
    const { user } = await signInWithEmailAndPassword(clientIn(to.tenantId), email, 'moving-pass');
    assert.equal(user.tenantId, to.tenantId);
    await assert.rejects(cli('import', file, '--tenant', 'Missing-abcde', '--hash-algo', 'HEARTH_SCRYPT'), /has no tenant Missing-abcde/);
  });
});

describe('multi-factor authentication in a tenant', () => {
  test("the tenant's mfaConfig decides; a TOTP factor is asked for in the tenant, and its pending credential works nowhere else", async () => {
    const totpOn = { mfaConfig: { state: 'ENABLED', providerConfigs: [{ state: 'ENABLED', totpProviderConfig: { adjacentIntervals: 5 } }] } };
    const secure = await createTenant(server, { displayName: 'Secure', ...totpOn });
    const other = await createTenant(server, { displayName: 'Secure-Too', ...totpOn });
    assert.equal(secure.mfaConfig && (secure.mfaConfig as { state: string }).state, 'ENABLED');
    assert.equal((tenant.mfaConfig as { state: string }).state, 'DISABLED', 'a new tenant has multi-factor off, as Google makes them');

    const enrolled = async (tenantId: string) => {
      const email = uniqueEmail('tenant-mfa');
      const { user } = await createUserWithEmailAndPassword(clientIn(tenantId), email, 'secret12');
      const verified = await call(server, 'POST', `/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/tenants/${tenantId}/accounts:update`, { localId: user.uid, emailVerified: true });
      assert.equal(verified.status, 200, JSON.stringify(verified.body));
      await reload(user);
      return { user, email };
    };
    const off = await enrolled(tenant.tenantId);
    assert.equal(await errorCodeOf(multiFactor(off.user).getSession().then((session) => TotpMultiFactorGenerator.generateSecret(session))), 'auth/operation-not-allowed');

    const { user, email } = await enrolled(secure.tenantId);
    const secret = await TotpMultiFactorGenerator.generateSecret(await multiFactor(user).getSession());
    const device = new TotpDevice(secret.secretKey, { algorithm: secret.hashingAlgorithm, digits: secret.codeLength, period: secret.codeIntervalSeconds });
    await multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), 'Phone app');

    const auth = clientIn(secure.tenantId);
    const refused = await signInWithEmailAndPassword(auth, email, 'secret12').then(
      () => assert.fail('a second factor is asked for'),
      (error: MultiFactorError) => error,
    );
    assert.equal(refused.code, 'auth/multi-factor-auth-required');
    const pending = (refused.customData as unknown as { _serverResponse: { mfaPendingCredential: string } })._serverResponse.mfaPendingCredential;
    const resolver = getMultiFactorResolver(auth, refused);
    const factor = resolver.hints[0]!;

    // The pending credential is sealed for its tenant: the project and another tenant cannot finish it.
    for (const elsewhere of [other.tenantId, undefined]) {
      const answer = await postJson(`${server.url}/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize?key=${server.apiKey}`, {
        mfaPendingCredential: pending,
        mfaEnrollmentId: factor.uid,
        totpVerificationInfo: { verificationCode: device.codeFromNow(0) },
        ...(elsewhere ? { tenantId: elsewhere } : {}),
      });
      assert.equal(answer.body.error?.message.split(' : ')[0], 'INVALID_MFA_PENDING_CREDENTIAL', JSON.stringify(answer.body));
    }

    const signedIn = await resolver.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(factor.uid, device.next()));
    const claims = claimsOf(await signedIn.user.getIdToken());
    assert.equal(claims.firebase.tenant, secure.tenantId);
    assert.equal(claims.firebase.sign_in_second_factor, 'totp');
    assert.equal(signedIn.user.tenantId, secure.tenantId);
  });
});
