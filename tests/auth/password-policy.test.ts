/**
 * Password policy: set with firebase-admin's projectConfigManager (with a Hearth-issued key), read
 * by the client SDK's validatePassword() from /v2/passwordPolicy, and enforced by Hearth on
 * sign-up, linking and password change (and on sign-in with forceUpgradeOnSignin). recaptchaConfig
 * is answered with every provider off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cert, deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import {
  confirmPasswordReset,
  createUserWithEmailAndPassword,
  EmailAuthProvider,
  linkWithCredential,
  signInAnonymously,
  signInWithEmailAndPassword,
  updatePassword,
  validatePassword,
} from 'firebase/auth';
import { SdkClients, errorCodeOf } from '../helpers/client.js';
import { redirectGoogleHosts, type GoogleHostsRedirect } from '../helpers/google-hosts.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let google: GoogleHostsRedirect;
let admin: AdminAuth;
const apps: App[] = [];
const clients = new SdkClients('password-policy');
const email = (name: string) => `${name}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
const unmet = 'auth/password-does-not-meet-requirements';

async function setPolicy(enforcementState: 'ENFORCE' | 'OFF', forceUpgradeOnSignin = false): Promise<void> {
  await admin.projectConfigManager().updateProjectConfig({
    passwordPolicyConfig: { enforcementState, forceUpgradeOnSignin, constraints: { minLength: 8, requireUppercase: true, requireNumeric: true } },
  });
}

before(async () => {
  server = await startHearth({ dev: false });
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  google = redirectGoogleHosts(server.url);
  const response = await fetch(`${server.url}/hearth/v1/projects/${server.projectId}/serviceAccountKeys`, { method: 'POST', headers: { authorization: `Bearer ${server.adminKey}` } });
  const app = initializeApp({ credential: cert((await response.json()) as Parameters<typeof cert>[0]) }, 'password-policy-admin');
  apps.push(app);
  admin = getAdminAuth(app);
});

after(async () => {
  google.restore();
  await clients.close();
  await Promise.all(apps.map((app) => deleteApp(app)));
  await server.close();
});

describe('password policy', () => {
  test('off by default: six characters do, and validatePassword says so', async () => {
    const auth = clients.auth(server);
    const status = await validatePassword(auth, 'abcdef');
    assert.equal(status.isValid, true);
    assert.equal(status.passwordPolicy.enforcementState, 'OFF');
    assert.equal(status.passwordPolicy.customStrengthOptions.minPasswordLength, 6);
    await createUserWithEmailAndPassword(auth, email('default'), 'abcdef');
    // The characters Google's documentation lists as non-alphanumeric, nothing else.
    const served = (await (await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/passwordPolicy?key=${server.apiKey}`)).json()) as { allowedNonAlphanumericCharacters: string[]; schemaVersion: number };
    assert.equal(served.allowedNonAlphanumericCharacters.join(' '), '^ $ * . [ ] { } ( ) ? " ! @ # % & / \\ , > < \' : ; | _ ~ `');
    assert.equal(served.schemaVersion, 1);
  });

  test('enforced: validatePassword reads the policy; sign-up, linking and password change must meet it', async () => {
    const earlyEmail = email('early');
    await createUserWithEmailAndPassword(clients.auth(server), earlyEmail, 'weakpass');
    await setPolicy('ENFORCE');
    const config = await admin.projectConfigManager().getProjectConfig();
    assert.equal(config.passwordPolicyConfig?.enforcementState, 'ENFORCE');
    assert.equal(config.passwordPolicyConfig?.constraints?.minLength, 8);

    const auth = clients.auth(server);
    const weak = await validatePassword(auth, 'short');
    assert.equal(weak.isValid, false);
    assert.equal(weak.meetsMinPasswordLength, false);
    assert.equal(weak.containsUppercaseLetter, false);
    assert.equal(weak.containsNumericCharacter, false);
    assert.equal((await validatePassword(auth, 'Longenough1')).isValid, true);

    assert.equal(await errorCodeOf(createUserWithEmailAndPassword(auth, email('weak'), 'longenough')), unmet);
    const { user } = await createUserWithEmailAndPassword(auth, email('strong'), 'Longenough1');
    assert.equal(await errorCodeOf(updatePassword(user, 'alllowercase1')), unmet);
    await updatePassword(user, 'Different22');

    const anonymous = await signInAnonymously(clients.auth(server));
    assert.equal(await errorCodeOf(linkWithCredential(anonymous.user, EmailAuthProvider.credential(email('link'), 'weak1234'))), unmet);

    // Without forceUpgradeOnSignin an older weak password still signs in; the admin is not bound by the policy.
    await signInWithEmailAndPassword(clients.auth(server), earlyEmail, 'weakpass');
    await admin.createUser({ email: email('by-admin'), password: 'weakpass' });

    await setPolicy('ENFORCE', true);
    assert.equal(await errorCodeOf(signInWithEmailAndPassword(clients.auth(server), earlyEmail, 'weakpass')), unmet);
    await setPolicy('OFF');
    await signInWithEmailAndPassword(clients.auth(server), earlyEmail, 'weakpass');
  });

  test('a password reset must meet the policy too', async () => {
    const address = email('reset');
    await admin.createUser({ email: address, password: 'weakpass' });
    await setPolicy('ENFORCE');
    try {
      const link = await admin.generatePasswordResetLink(address);
      const oobCode = new URL(link).searchParams.get('oobCode')!;
      const auth = clients.auth(server);
      assert.equal(await errorCodeOf(confirmPasswordReset(auth, oobCode, 'weakpass2')), unmet);
      await confirmPasswordReset(auth, oobCode, 'Longenough1');
      await signInWithEmailAndPassword(clients.auth(server), address, 'Longenough1');
    } finally {
      await setPolicy('OFF');
    }
  });

  test("Google's message lists what is missing; a policy below Google's floor is refused", async () => {
    await setPolicy('ENFORCE');
    try {
      const response = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server.apiKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: email('message'), password: 'abcdefg', returnSecureToken: true }),
      });
      const body = (await response.json()) as { error: { message: string } };
      assert.equal(response.status, 400);
      assert.equal(
        body.error.message,
        'PASSWORD_DOES_NOT_MEET_REQUIREMENTS : Missing password requirements: [Password must contain at least 8 characters, Password must contain an upper case character, Password must contain a numeric character]',
      );
    } finally {
      await setPolicy('OFF');
    }
    const refused = await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/config?updateMask=passwordPolicyConfig.passwordPolicyVersions`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.adminKey}` },
      body: JSON.stringify({ passwordPolicyConfig: { passwordPolicyVersions: [{ customStrengthOptions: { minPasswordLength: 3 } }] } }),
    });
    assert.equal(refused.status, 400);
  });
});

describe('recaptchaConfig', () => {
  test('answered with a site key and every provider off, so the SDK never loads reCAPTCHA', async () => {
    const response = await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/recaptchaConfig?key=${server.apiKey}&clientType=CLIENT_TYPE_WEB&version=RECAPTCHA_ENTERPRISE`);
    assert.equal(response.status, 200);
    const body = (await response.json()) as { recaptchaKey: string; recaptchaEnforcementState: Array<{ provider: string; enforcementState: string }> };
    assert.equal(body.recaptchaKey.split('/')[3], 'hearth-no-recaptcha');
    assert.deepEqual(new Set(body.recaptchaEnforcementState.map((s) => s.enforcementState)), new Set(['OFF']));
    const unknownKey = await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/recaptchaConfig?key=not-a-key`);
    assert.equal(unknownKey.status, 400);
  });
});
