/**
 * Multi-factor through firebase-admin: second factors set on users (createUser, updateUser,
 * importUsers) and read back (getUser().multiFactor), and the project's MFA config
 * (projectConfigManager), whose TOTP window and code format the client SDK then meets; phone
 * factors through `hearth users export|import`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { backendEnv } from '../helpers/test-backend.js';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth, type PhoneMultiFactorInfo } from 'firebase-admin/auth';
import { getMultiFactorResolver, multiFactor, reload, signInWithEmailAndPassword, TotpMultiFactorGenerator, type MultiFactorError } from 'firebase/auth';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { errorCodeOf, SdkClients } from '../helpers/client.js';
import { repoRoot, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { TotpDevice } from '../helpers/totp-device.js';
import { hearthCommand } from '../helpers/hearth-command.js';

let server: TestHearth;
let adminApp: App;
let admin: AdminAuth;
const clients = new SdkClients('mfa-admin');

before(async () => {
  server = await startHearth();
  process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
  adminApp = initializeAdminApp({ projectId: server.projectId }, 'mfa-admin');
  admin = getAdminAuth(adminApp);
});

after(async () => {
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await clients.close();
  await deleteAdminApp(adminApp);
  await server.close();
});

/** Signs in with a password and enrols a TOTP factor through the client SDK. */
async function enrolTotp(email: string): Promise<{ device: TotpDevice; uid: string }> {
  const { user } = await signInWithEmailAndPassword(clients.auth(server), email, 'secret12');
  const secret = await TotpMultiFactorGenerator.generateSecret(await multiFactor(user).getSession());
  const device = new TotpDevice(secret.secretKey, { algorithm: secret.hashingAlgorithm, digits: secret.codeLength, period: secret.codeIntervalSeconds });
  await multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), 'authenticator');
  await reload(user);
  return { device, uid: multiFactor(user).enrolledFactors[0]!.uid };
}

describe('second factors on users', () => {
  test('createUser with phone factors; getUser().multiFactor lists them; the client is asked for one', async () => {
    const email = uniqueEmail('admin-mfa');
    const created = await admin.createUser({
      email,
      password: 'secret12',
      emailVerified: true,
      multiFactor: { enrolledFactors: [{ factorId: 'phone', phoneNumber: '+16505550101', displayName: 'Mobile' }] },
    });
    const factors = created.multiFactor?.enrolledFactors ?? [];
    assert.equal(factors.length, 1);
    const factor = factors[0] as PhoneMultiFactorInfo;
    assert.deepEqual([factor.factorId, factor.phoneNumber, factor.displayName], ['phone', '+16505550101', 'Mobile']);
    assert.match(factor.uid, /^[A-Za-z0-9]{28}$/);
    assert.ok(Math.abs(Date.parse(String(factor.enrollmentTime)) - Date.now()) < 60_000);

    const auth = clients.auth(server);
    const error = (await signInWithEmailAndPassword(auth, email, 'secret12').then(
      (): MultiFactorError => assert.fail('no second factor was asked'),
      (e: MultiFactorError) => e,
    ));
    assert.equal(error.code, 'auth/multi-factor-auth-required');
    const hints = getMultiFactorResolver(auth, error).hints;
    assert.deepEqual(hints.map((h) => [h.uid, h.factorId, (h as { phoneNumber?: string }).phoneNumber]), [[factor.uid, 'phone', '+*******0101']]);
  });

  test('updateUser replaces the list (a known uid keeps its enrolment time); enrolledFactors: null removes them all', async () => {
    const created = await admin.createUser({
      email: uniqueEmail('admin-update'),
      emailVerified: true,
      multiFactor: { enrolledFactors: [{ factorId: 'phone', phoneNumber: '+16505550102' }] },
    });
    const kept = created.multiFactor!.enrolledFactors[0]!;
    const updated = await admin.updateUser(created.uid, {
      multiFactor: {
        enrolledFactors: [
          { uid: kept.uid, factorId: 'phone', phoneNumber: '+16505550102', displayName: 'renamed', enrollmentTime: kept.enrollmentTime },
          { uid: 'chosen-by-admin', factorId: 'phone', phoneNumber: '+16505550103' },
        ],
      },
    });
    const after = updated.multiFactor!.enrolledFactors;
    assert.deepEqual(after.map((f) => [f.uid, f.displayName]), [[kept.uid, 'renamed'], ['chosen-by-admin', undefined]]);
    assert.equal(after[0]!.enrollmentTime, kept.enrollmentTime);
    const cleared = await admin.updateUser(created.uid, { multiFactor: { enrolledFactors: null } });
    assert.equal(cleared.multiFactor, undefined);
  });

  test('a TOTP factor shows in getUser without its secret; raw updates keep it by id, and bad numbers are refused', async () => {
    const email = uniqueEmail('admin-totp');
    const created = await admin.createUser({ email, password: 'secret12', emailVerified: true });
    const { uid } = await enrolTotp(email);
    const record = await admin.getUser(created.uid);
    const factor = record.multiFactor!.enrolledFactors[0]!;
    assert.deepEqual([factor.uid, factor.factorId, factor.displayName], [uid, 'totp', 'authenticator']);
    assert.ok(!JSON.stringify(record.toJSON()).includes('sealed'), 'nothing of the secret reaches the administrator');

    // firebase-admin sends phone factors only; the wire's mfaEnrollmentId alone keeps a TOTP factor as it is.
    const kept = await adminPost(server, '/accounts:update', { localId: created.uid, mfa: { enrollments: [{ mfaEnrollmentId: uid }, { phoneInfo: '+16505550104' }] } });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.deepEqual((await admin.getUser(created.uid)).multiFactor!.enrolledFactors.map((f) => f.factorId), ['totp', 'phone']);
    for (const phoneInfo of ['abc', '+1555', '6505550101']) {
      const bad = await adminPost(server, '/accounts:update', { localId: created.uid, mfa: { enrollments: [{ phoneInfo }] } });
      assert.equal(bad.body.error.message, 'INVALID_MFA_PHONE_NUMBER : Invalid format.');
    }
    const badTime = await adminPost(server, '/accounts:update', { localId: created.uid, mfa: { enrollments: [{ phoneInfo: '+16505550105', enrolledAt: 'yesterday' }] } });
    assert.match(badTime.body.error.message, /^INVALID_ENROLLMENT_TIME/);
    const unknownId = await adminPost(server, '/accounts:update', { localId: created.uid, mfa: { enrollments: [{ mfaEnrollmentId: 'no-such-factor' }] } });
    assert.equal(unknownId.body.error.message, 'INVALID_MFA_PHONE_NUMBER : Invalid format.');
    // An owner cannot set factors by account update: that is the administrator's field.
    const ownerTry = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:update?key=${server.apiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ idToken: 'x', mfa: {} }),
    });
    assert.equal(((await ownerTry.json()) as { error: { message: string } }).error.message, 'ADMIN_ONLY_OPERATION');
  });

  test('importUsers brings phone factors for verified emails and refuses them otherwise', async () => {
    const verified = `import-${Date.now()}`;
    const unverified = `import-u-${Date.now()}`;
    const result = await admin.importUsers([
      { uid: verified, email: uniqueEmail('imported'), emailVerified: true, multiFactor: { enrolledFactors: [{ uid: 'f1', factorId: 'phone', phoneNumber: '+16505550106', enrollmentTime: new Date(0).toUTCString() }] } },
      { uid: unverified, email: uniqueEmail('imported-u'), multiFactor: { enrolledFactors: [{ uid: 'f1', factorId: 'phone', phoneNumber: '+16505550107' }] } },
    ]);
    assert.equal(result.successCount, 1);
    assert.deepEqual(result.errors.map((e) => [e.index, e.error.message]), [[1, 'Second factor account requires email to be verified.']]);
    const factor = (await admin.getUser(verified)).multiFactor!.enrolledFactors[0] as PhoneMultiFactorInfo;
    assert.deepEqual([factor.uid, factor.phoneNumber, Date.parse(String(factor.enrollmentTime))], ['f1', '+16505550106', 0]);
  });
});

test('hearth users export keeps phone factors (never TOTP secrets); import brings them back', async () => {
  const email = uniqueEmail('export-mfa');
  const created = await admin.createUser({ email, password: 'secret12', emailVerified: true });
  const totp = await enrolTotp(email);
  const both = await adminPost(server, '/accounts:update', { localId: created.uid, mfa: { enrollments: [{ mfaEnrollmentId: totp.uid }, { phoneInfo: '+16505550109', displayName: 'Desk' }] } });
  assert.equal(both.status, 200, JSON.stringify(both.body));
  const phoneFactor = (await admin.getUser(created.uid)).multiFactor!.enrolledFactors.find((f) => f.factorId === 'phone')!;
  const work = tempDataDir();
  try {
    const file = join(work, 'users.json');
    const exported = await hearthUsers('export', file, '--project', server.projectId, '--data', server.dataDir);
    assert.equal(exported.code, 0, exported.stderr);
    const { users } = JSON.parse(readFileSync(file, 'utf8')) as { users: Array<{ localId: string; mfaInfo?: Array<Record<string, string>> }> };
    const mine = users.find((u) => u.localId === created.uid)!;
    const factorId = phoneFactor.uid;
    assert.deepEqual(mine.mfaInfo, [{ mfaEnrollmentId: factorId, displayName: 'Desk', phoneInfo: '+16505550109', enrolledAt: mine.mfaInfo![0]!.enrolledAt }]);
    assert.ok(!readFileSync(file, 'utf8').includes('sealed'), 'no TOTP secret, sealed or not, leaves in an export');

    const target = join(work, 'target');
    const imported = await hearthUsers('import', file, '--project', server.projectId, '--data', target, '--hash-algo', 'STANDARD_SCRYPT', '--mem-cost', '32768', '--block-size', '8', '--parallelization', '1', '--dk-len', '64');
    assert.equal(imported.code, 0, imported.stderr);
    const moved = await startHearth({ dataDir: target });
    try {
      const lookup = await adminPost(moved, '/accounts:lookup', { localId: [created.uid] });
      assert.deepEqual(lookup.body.users[0].mfaInfo.map((f: { mfaEnrollmentId: string; phoneInfo: string }) => [f.mfaEnrollmentId, f.phoneInfo]), [[factorId, '+16505550109']]);
    } finally {
      await moved.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

/** `hearth users …` as its own process, as a user runs it. */
async function hearthUsers(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, [...hearthCommand(), 'users', ...args], { cwd: repoRoot, env: { ...process.env, ...(await backendEnv(args)) } });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
}

describe('the project MFA config', () => {
  test('getProjectConfig shows the defaults; updateProjectConfig changes the TOTP window, which sign-in then applies', async () => {
    const manager = admin.projectConfigManager();
    const initial = (await manager.getProjectConfig()).multiFactorConfig;
    assert.deepEqual(JSON.parse(JSON.stringify(initial)), { state: 'ENABLED', factorIds: ['phone'], providerConfigs: [{ state: 'ENABLED', totpProviderConfig: { adjacentIntervals: 5 } }] });

    const email = uniqueEmail('window');
    await admin.createUser({ email, password: 'secret12', emailVerified: true });
    const { device, uid } = await enrolTotp(email);
    await manager.updateProjectConfig({ multiFactorConfig: { state: 'ENABLED', factorIds: [], providerConfigs: [{ state: 'ENABLED', totpProviderConfig: { adjacentIntervals: 1 } }] } });
    try {
      const updated = (await manager.getProjectConfig()).multiFactorConfig!;
      assert.deepEqual([updated.factorIds, updated.providerConfigs![0]!.totpProviderConfig!.adjacentIntervals], [[], 1]);
      const auth = clients.auth(server);
      const error = await signInWithEmailAndPassword(auth, email, 'secret12').then(
        (): MultiFactorError => assert.fail('no second factor was asked'),
        (e: MultiFactorError) => e,
      );
      const resolver = getMultiFactorResolver(auth, error);
      // Three steps ahead is outside a one-step window (it was inside the default five).
      assert.equal(await errorCodeOf(resolver.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(uid, device.codeFromNow(3)))), 'auth/invalid-verification-code');
      const result = await resolver.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(uid, device.next()));
      // SMS is off for new enrolments now.
      const sms = await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:start?key=${server.apiKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ idToken: await result.user.getIdToken(), phoneEnrollmentInfo: { phoneNumber: '+16505550108' } }),
      });
      assert.equal(((await sms.json()) as { error: { message: string } }).error.message, 'OPERATION_NOT_ALLOWED : SMS based MFA not enabled.');
    } finally {
      await manager.updateProjectConfig({ multiFactorConfig: { state: 'ENABLED', factorIds: ['phone'], providerConfigs: [{ state: 'ENABLED', totpProviderConfig: { adjacentIntervals: 5 } }] } });
    }
  });

  test("Hearth's TOTP code format (algorithm, length, period) is served to new enrolments; out-of-range settings are refused", async () => {
    const patch = (body: unknown, mask: string) =>
      fetch(`${server.url}/identitytoolkit.googleapis.com/v2/projects/${server.projectId}/config?updateMask=${mask}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.adminKey}` },
        body: JSON.stringify(body),
      });
    for (const [body, mask] of [
      [{ mfa: { providerConfigs: [{ state: 'ENABLED', totpProviderConfig: { adjacentIntervals: 11 } }] } }, 'mfa.providerConfigs'],
      [{ mfa: { totpCodeFormat: { verificationCodeLength: 5 } } }, 'mfa.totpCodeFormat'],
      [{ mfa: { totpCodeFormat: { periodSec: 3600 } } }, 'mfa.totpCodeFormat'],
      [{ mfa: { totpCodeFormat: { hashingAlgorithm: 'MD5' } } }, 'mfa.totpCodeFormat'],
      [{ mfa: { state: 'MANDATORY' } }, 'mfa.state'],
      [{ mfa: { enabledProviders: ['EMAIL_OTP'] } }, 'mfa.enabledProviders'],
    ] as const) {
      const answer = await patch(body, mask);
      assert.equal(answer.status, 400, JSON.stringify(body));
    }
    assert.equal((await patch({ mfa: { totpCodeFormat: { hashingAlgorithm: 'SHA256', verificationCodeLength: 8, periodSec: 60 } } }, 'mfa.totpCodeFormat')).status, 200);
    try {
      const email = uniqueEmail('format');
      await admin.createUser({ email, password: 'secret12', emailVerified: true });
      const { user } = await signInWithEmailAndPassword(clients.auth(server), email, 'secret12');
      const secret = await TotpMultiFactorGenerator.generateSecret(await multiFactor(user).getSession());
      assert.deepEqual([secret.hashingAlgorithm, secret.codeLength, secret.codeIntervalSeconds], ['SHA256', 8, 60]);
      const device = new TotpDevice(secret.secretKey, { algorithm: 'SHA256', digits: 8, period: 60 });
      await multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, device.next()), 'eight digits');
      assert.equal(multiFactor(user).enrolledFactors.length, 1);
    } finally {
      assert.equal((await patch({ mfa: { totpCodeFormat: { hashingAlgorithm: 'SHA1', verificationCodeLength: 6, periodSec: 30 } } }, 'mfa.totpCodeFormat')).status, 200);
    }
  });
});
