/**
 * Moving a project's users: `hearth users export` from a running Hearth, `hearth users import`
 * into a fresh one (JSON and CSV, the CLI run as its own process), then client SDK sign-ins with
 * the original passwords. Also a file in the shape `firebase auth:export` writes, with Firebase's
 * modified-scrypt hashes (the firebase/scrypt README's sample account).
 */
import assert from 'node:assert/strict';
import { hearthUsers } from '../helpers/hearth-users-cli.js';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import { createUserWithEmailAndPassword, signInWithEmailAndPassword } from 'firebase/auth';
import { parseCsvAccounts } from '../../packages/server/src/auth/core/user-files.js';
import { SdkClients } from '../helpers/client.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

const clients = new SdkClients('export-client');
const project = 'demo-test';


function adminFor(server: TestHearth, name: string): { app: App; auth: AdminAuth } {
  process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
  const app = initializeAdminApp({ projectId: server.projectId }, name);
  return { app, auth: getAdminAuth(app) };
}

async function signInCode(server: TestHearth, email: string, password: string): Promise<string> {
  try {
    await signInWithEmailAndPassword(clients.auth(server), email, password);
    return 'signed in';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

let source: TestHearth;
let sourceAdmin: { app: App; auth: AdminAuth };
const work = tempDataDir();
const people = {
  signedUp: { email: 'ada@example.com', password: 'analytical engine' },
  created: { email: 'grace@example.com', password: 'cobol-1959', uid: 'grace-uid' },
  /** Imported with bcrypt and never signed in since: exported without a hash. */
  pendingImport: { email: 'alan@example.com', password: 'password', uid: 'alan-uid' },
};

before(async () => {
  source = await startHearth({ defaultProjectId: project });
  sourceAdmin = adminFor(source, 'export-source');
  await createUserWithEmailAndPassword(clients.auth(source), people.signedUp.email, people.signedUp.password);
  await sourceAdmin.auth.createUser({ uid: people.created.uid, email: people.created.email, password: people.created.password, displayName: 'Grace, Rear Admiral', emailVerified: true, phoneNumber: '+15550001111' });
  await sourceAdmin.auth.setCustomUserClaims(people.created.uid, { role: 'admin', "quote's": 'a "b"' });
  await sourceAdmin.auth.createUser({ uid: 'disabled-uid', email: 'off@example.com', password: 'switched-off', disabled: true });
  const imported = await sourceAdmin.auth.importUsers(
    [
      {
        uid: people.pendingImport.uid,
        email: people.pendingImport.email,
        passwordHash: Buffer.from('$2b$10$/uaF/uaF/uaF/uaF/uaF/u12hHBNxouyq2adwHsJc.hr4hn0UXCGm'),
        providerData: [{ uid: 'alan-google', providerId: 'google.com', email: people.pendingImport.email, displayName: 'Alan T' }],
      },
    ],
    { hash: { algorithm: 'BCRYPT' } },
  );
  assert.equal(imported.successCount, 1);
});

after(async () => {
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await clients.close();
  await deleteAdminApp(sourceAdmin.app);
  await source.close();
  rmSync(work, { recursive: true, force: true });
});

/** Imports `file` into a fresh data folder, starts a Hearth on it and checks who can sign in. */
async function moveInto(file: string, { startFirst }: { startFirst: boolean }): Promise<void> {
  const dataDir = join(work, `target-${Math.random().toString(36).slice(2)}`);
  let target = startFirst ? await startHearth({ dataDir, defaultProjectId: project }) : undefined;
  const imported = await hearthUsers('import', file, '--project', project, '--data', dataDir, '--hash-algo', 'HEARTH_SCRYPT');
  assert.equal(imported.code, 0, imported.stderr);
  assert.match(imported.stderr, /Imported 4 of 4 account\(s\)/);
  target ??= await startHearth({ dataDir, defaultProjectId: project });
  // firebase-admin reads FIREBASE_AUTH_EMULATOR_HOST on each call: read the source first.
  const original = await sourceAdmin.auth.getUser(people.created.uid);
  const targetAdmin = adminFor(target, `export-target-${Math.random()}`);
  try {
    assert.equal(await signInCode(target, people.signedUp.email, people.signedUp.password), 'signed in');
    assert.equal(await signInCode(target, people.created.email, people.created.password), 'signed in');
    assert.equal(await signInCode(target, people.created.email, 'cobol-1960'), 'auth/invalid-credential');
    assert.equal(await signInCode(target, 'off@example.com', 'switched-off'), 'auth/user-disabled');
    assert.equal(await signInCode(target, people.pendingImport.email, people.pendingImport.password), 'auth/invalid-credential', 'its hash was not in the export');
    const grace = await targetAdmin.auth.getUser(people.created.uid);
    assert.equal(grace.displayName, 'Grace, Rear Admiral');
    assert.equal(grace.emailVerified, true);
    assert.equal(grace.phoneNumber, '+15550001111');
    assert.deepEqual(grace.customClaims, { role: 'admin', "quote's": 'a "b"' });
    assert.equal(grace.metadata.creationTime, original.metadata.creationTime);
    const alan = await targetAdmin.auth.getUser(people.pendingImport.uid);
    assert.deepEqual(alan.providerData.map((p) => [p.providerId, p.uid, p.displayName]), [['google.com', 'alan-google', 'Alan T']]);
  } finally {
    await deleteAdminApp(targetAdmin.app);
    await target.close();
    process.env.FIREBASE_AUTH_EMULATOR_HOST = source.hostPort;
  }
}

describe('export -> import into a fresh Hearth -> sign-in', () => {
  test('JSON, exported while the source runs, imported before the target starts', async () => {
    const file = join(work, 'users.json');
    const exported = await hearthUsers('export', file, '--project', project, '--data', source.dataDir);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stderr, /Exported 4 account\(s\)/);
    assert.match(exported.stderr, /1 account\(s\) have an imported password hash/);
    assert.match(exported.stderr, /firebase auth:import \S+ --hash-algo STANDARD_SCRYPT --mem-cost 32768 --block-size 8 --parallelization 1 --dk-len 64/);
    assert.equal(statSync(file).mode & 0o777, 0o600, 'the file holds password hashes');
    const { users } = JSON.parse(readFileSync(file, 'utf8')) as { users: Array<Record<string, unknown>> };
    const grace = users.find((u) => u.localId === people.created.uid)!;
    assert.deepEqual(Object.keys(grace).sort(), ['createdAt', 'customAttributes', 'disabled', 'displayName', 'email', 'emailVerified', 'localId', 'passwordHash', 'phoneNumber', 'providerUserInfo', 'salt'].sort());
    assert.match(grace.passwordHash as string, /^[A-Za-z0-9+/]+=*$/, 'standard base64, as the Firebase CLI writes');
    assert.equal(Buffer.from(grace.passwordHash as string, 'base64').length, 64);
    assert.equal(typeof grace.createdAt, 'string');
    assert.equal(users.find((u) => u.localId === people.pendingImport.uid)!.passwordHash, undefined);
    await moveInto(file, { startFirst: false });
  });

  test('CSV, imported while the target runs', async () => {
    const file = join(work, 'users.csv');
    const exported = await hearthUsers('export', file, '--project', project, '--data', source.dataDir);
    assert.equal(exported.code, 0, exported.stderr);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 4);
    const grace = lines.find((l) => l.startsWith(`${people.created.uid},`))!;
    assert.ok(grace.includes('"Grace, Rear Admiral"'), grace);
    assert.ok(grace.endsWith(','), 'a trailing comma, as the Firebase CLI writes');
    const [parsed] = parseCsvAccounts(grace);
    assert.equal(parsed!.customAttributes, JSON.stringify({ role: 'admin', "quote's": 'a "b"' }));
    await moveInto(file, { startFirst: true });
  });

  test("a file as `firebase auth:export` writes it, with Firebase's scrypt parameters", async () => {
    // The firebase/scrypt README's sample account (password "user1password"), in the CLI's CSV columns.
    const cells = new Array<string>(28).fill('');
    Object.assign(cells, { 0: 'kYi4EvWQlQTKSfnJ3dRSP6IH3ed2', 1: 'user1@test.com', 2: 'false', 3: 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==', 4: '42xEC+ixf3L2lw==', 5: 'Test User 1', 23: '1508893925000', 24: '1508893925000' });
    const csv = join(work, 'firebase.csv');
    writeFileSync(csv, `${cells.join(',')},\n`);
    const json = join(work, 'firebase.json');
    writeFileSync(json, JSON.stringify({ users: [{ localId: 'json-user', email: 'user1json@test.com', emailVerified: false, passwordHash: cells[3], salt: cells[4], createdAt: '1508893925000', lastSignedInAt: '1508893925000', providerUserInfo: [] }] }, null, 2));
    const dataDir = join(work, 'from-firebase');
    const flags = ['--project', project, '--data', dataDir, '--hash-algo', 'SCRYPT', '--hash-key', 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==', '--salt-separator', 'Bw==', '--rounds', '8', '--mem-cost', '14'];
    const missingAlgo = await hearthUsers('import', csv, '--project', project, '--data', dataDir);
    assert.equal(missingAlgo.code, 1);
    assert.match(missingAlgo.stderr, /--hash-algo/);
    const badRounds = await hearthUsers('import', csv, ...flags.slice(0, -4), '--rounds', '9', '--mem-cost', '14');
    assert.equal(badRounds.code, 1);
    assert.match(badRounds.stderr, /rounds/);
    assert.equal((await hearthUsers('import', csv, ...flags)).code, 0);
    assert.equal((await hearthUsers('import', json, ...flags)).code, 0);
    const target = await startHearth({ dataDir, defaultProjectId: project });
    try {
      assert.equal(await signInCode(target, 'user1@test.com', 'user1password'), 'signed in');
      assert.equal(await signInCode(target, 'user1json@test.com', 'user1password'), 'signed in');
      assert.equal(await signInCode(target, 'user1@test.com', 'user2password'), 'auth/invalid-credential');
    } finally {
      await target.close();
    }
  });

  test('refused accounts and unreadable files are reported', async () => {
    const dataDir = join(work, 'refusals');
    const file = join(work, 'mixed.json');
    writeFileSync(file, JSON.stringify({ users: [{ localId: 'ok-1', email: 'same@example.com' }, { localId: 'ok-2', email: 'same@example.com' }, { localId: 'bad-phone', phoneNumber: '555' }] }));
    const partial = await hearthUsers('import', file, '--project', project, '--data', dataDir);
    assert.equal(partial.code, 2);
    assert.match(partial.stderr, /Imported 1 of 3/);
    assert.match(partial.stderr, /account 2 \(ok-2\): email is given twice/);
    assert.match(partial.stderr, /account 3 \(bad-phone\): invalid phone number/);
    writeFileSync(file, JSON.stringify({ users: [{ localId: 'x', favouriteColour: 'blue' }] }));
    const unknownKey = await hearthUsers('import', file, '--project', project, '--data', dataDir);
    assert.equal(unknownKey.code, 1);
    assert.match(unknownKey.stderr, /unsupported keys: favouriteColour/);
    writeFileSync(join(work, 'broken.csv'), 'uid,"not closed\n');
    const broken = await hearthUsers('import', join(work, 'broken.csv'), '--project', project, '--data', dataDir);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /Line 1: a quoted cell is not closed/);
    const noFormat = await hearthUsers('export', join(work, 'users.txt'), '--project', project, '--data', source.dataDir);
    assert.equal(noFormat.code, 1);
    assert.match(noFormat.stderr, /--format/);
  });
});
