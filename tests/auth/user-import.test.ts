/**
 * firebase-admin importUsers (accounts:batchCreate) against Hearth, with every hash algorithm
 * Firebase accepts, then a client SDK sign-in with the original password. Hashes are made here
 * from each algorithm's definition with node:crypto (the definitions firebase-admin's own
 * integration tests use against Google), except Firebase's modified scrypt, checked against the
 * vectors published with github.com/firebase/scrypt, and bcrypt, checked against hashes made by
 * OpenBSD's C implementation (python3-bcrypt 3.2.2) and John the Ripper's test vectors.
 */
import assert from 'node:assert/strict';
import { createHash, createHmac, pbkdf2Sync, randomBytes, scryptSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { storedRows } from '../helpers/test-backend.js';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth, type UserImportOptions, type UserImportRecord } from 'firebase-admin/auth';
import { signInWithEmailAndPassword } from 'firebase/auth';
import { verifyBcrypt } from '../../packages/server/src/auth/core/bcrypt.js';
import { firebaseScrypt } from '../../packages/server/src/auth/core/imported-passwords.js';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { SdkClients } from '../helpers/client.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let adminApp: App;
let admin: AdminAuth;
const clients = new SdkClients('import-client');

before(async () => {
  server = await startHearth();
  process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
  adminApp = initializeAdminApp({ projectId: server.projectId }, 'import-test');
  admin = getAdminAuth(adminApp);
});

after(async () => {
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await clients.close();
  await deleteAdminApp(adminApp);
  await server.close();
});

/** The password hash Hearth keeps for an account, read from its SQLite file as an operator would. */
async function storedHash(uid: string): Promise<string | undefined> {
  const [row] = await storedRows(server.dataDir, 'SELECT record FROM users WHERE project_id = ? AND local_id = ?', [server.projectId, uid]);
  return row ? (JSON.parse(String(row.record)) as { passwordHash?: string }).passwordHash : undefined;
}

async function signInCode(email: string, password: string): Promise<string> {
  try {
    await signInWithEmailAndPassword(clients.auth(server), email, password);
    return 'signed in';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

/** Imports one account, signs in with the original password, and checks it was re-hashed to Hearth's scrypt. */
async function importThenSignIn(record: Omit<UserImportRecord, 'uid' | 'email'>, options: UserImportOptions, password: string): Promise<void> {
  const uid = `import-${randomBytes(6).toString('hex')}`;
  const email = uniqueEmail('import');
  const result = await admin.importUsers([{ uid, email, ...record }], options);
  assert.deepEqual({ successCount: result.successCount, failureCount: result.failureCount }, { successCount: 1, failureCount: 0 }, JSON.stringify(result.errors));
  const imported = (await storedHash(uid))!;
  assert.match(imported, new RegExp(`^imported\\$${options.hash.algorithm}\\$`));
  assert.equal(await signInCode(email, `${password}x`), 'auth/invalid-credential', 'a wrong password is refused');
  assert.equal(await storedHash(uid), imported, 'a failed sign-in changes nothing');
  const { user } = await signInWithEmailAndPassword(clients.auth(server), email, password);
  assert.equal(user.uid, uid);
  assert.equal(user.providerData[0]?.providerId, 'password');
  assert.match((await storedHash(uid))!, /^scrypt\$32768\$8\$1\$/, 'the first sign-in re-hashes with scrypt');
  assert.equal(await signInCode(email, password), 'signed in', 'and the password keeps working');
  assert.equal(await signInCode(email, `${password}x`), 'auth/invalid-credential');
}

const password = 'correct horse battery';
const salt = 'NaCl-salt';

describe('importUsers with each hash algorithm, then a client sign-in', () => {
  for (const [algorithm, digest] of [['HMAC_SHA512', 'sha512'], ['HMAC_SHA256', 'sha256'], ['HMAC_SHA1', 'sha1'], ['HMAC_MD5', 'md5']] as const) {
    test(algorithm, async () => {
      const key = Buffer.from('hmac signing secret');
      const hash = createHmac(digest, key).update(password + salt).digest();
      await importThenSignIn({ passwordHash: hash, passwordSalt: Buffer.from(salt) }, { hash: { algorithm, key } }, password);
    });
  }

  for (const [algorithm, digest] of [['SHA512', 'sha512'], ['SHA256', 'sha256'], ['SHA1', 'sha1']] as const) {
    test(`${algorithm}, one round and three`, async () => {
      const once = createHash(digest).update(salt + password).digest();
      await importThenSignIn({ passwordHash: once, passwordSalt: Buffer.from(salt) }, { hash: { algorithm, rounds: 1 } }, password);
      let thrice = once;
      for (let i = 1; i < 3; i++) thrice = createHash(digest).update(thrice).digest();
      await importThenSignIn({ passwordHash: thrice, passwordSalt: Buffer.from(salt) }, { hash: { algorithm, rounds: 3 } }, password);
    });
  }

  test('MD5 with rounds 0, the digest kept as hex text (as Firebase documents it)', async () => {
    const hex = createHash('md5').update(salt + password).digest('hex');
    await importThenSignIn({ passwordHash: Buffer.from(hex), passwordSalt: Buffer.from(salt) }, { hash: { algorithm: 'MD5', rounds: 0 } }, password);
  });

  test('PBKDF2_SHA256 and PBKDF_SHA1', async () => {
    const sha256 = pbkdf2Sync(password, salt, 10000, 64, 'sha256');
    await importThenSignIn({ passwordHash: sha256, passwordSalt: Buffer.from(salt) }, { hash: { algorithm: 'PBKDF2_SHA256', rounds: 10000 } }, password);
    const sha1 = pbkdf2Sync(password, salt, 1000, 20, 'sha1');
    await importThenSignIn({ passwordHash: sha1, passwordSalt: Buffer.from(salt) }, { hash: { algorithm: 'PBKDF_SHA1', rounds: 1000 } }, password);
  });

  test('STANDARD_SCRYPT', async () => {
    const hash = scryptSync(password, Buffer.from(salt), 64, { N: 1024, r: 8, p: 16 });
    await importThenSignIn(
      { passwordHash: hash, passwordSalt: Buffer.from(salt) },
      { hash: { algorithm: 'STANDARD_SCRYPT', memoryCost: 1024, parallelization: 16, blockSize: 8, derivedKeyLength: 64 } },
      password,
    );
  });

  const signerKey = Buffer.from('jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==', 'base64');
  const firebaseOptions: UserImportOptions = { hash: { algorithm: 'SCRYPT', key: signerKey, saltSeparator: Buffer.from('Bw==', 'base64'), rounds: 8, memoryCost: 14 } };

  test("SCRYPT (Firebase's modified scrypt): the firebase/scrypt README's sample account", async () => {
    const hash = Buffer.from('lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==', 'base64');
    await importThenSignIn({ passwordHash: hash, passwordSalt: Buffer.from('42xEC+ixf3L2lw==', 'base64') }, firebaseOptions, 'user1password');
  });

  test('SCRYPT: the vector firebase-admin tests with ("password", salt "NaCl")', async () => {
    const hash = Buffer.from('V358E8LdWJXAO7muq0CufVpEOXaj8aFiC7T/rcaGieN04q/ZPJ08WhJEHGjj9lz/2TT+/86N5VjVoc5DdBhBiw==', 'base64');
    await importThenSignIn({ passwordHash: hash, passwordSalt: Buffer.from('NaCl') }, firebaseOptions, 'password');
  });

  test('SCRYPT: the derivation itself matches both published vectors, and not another password', async () => {
    const options = { algorithm: 'SCRYPT' as const, signerKey, saltSeparator: Buffer.from('Bw==', 'base64'), rounds: 8, memoryCost: 14 };
    const readme = await firebaseScrypt(Buffer.from('user1password'), Buffer.from('42xEC+ixf3L2lw==', 'base64'), options);
    assert.equal(readme.toString('base64'), 'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==');
    const admin = await firebaseScrypt(Buffer.from('password'), Buffer.from('NaCl'), options);
    assert.equal(admin.toString('base64'), 'V358E8LdWJXAO7muq0CufVpEOXaj8aFiC7T/rcaGieN04q/ZPJ08WhJEHGjj9lz/2TT+/86N5VjVoc5DdBhBiw==');
    const other = await firebaseScrypt(Buffer.from('password1'), Buffer.from('NaCl'), options);
    assert.notEqual(other.toString('base64'), admin.toString('base64'));
  });

  test('BCRYPT: hashes made by OpenBSD bcrypt (cost 10 and 6, non-ASCII password)', async () => {
    await importThenSignIn({ passwordHash: Buffer.from('$2b$10$/uaF/uaF/uaF/uaF/uaF/u12hHBNxouyq2adwHsJc.hr4hn0UXCGm') }, { hash: { algorithm: 'BCRYPT' } }, 'password');
    await importThenSignIn({ passwordHash: Buffer.from('$2b$06$nqeXoMvTRjdeeXcJpR/Q6eCAbtTkZ4wOrOp31d2J144Wso6BvYPK.') }, { hash: { algorithm: 'BCRYPT' } }, 'pässwörd-ü');
  });

  test("BCRYPT: John the Ripper's vectors ($2a$, cost 5)", () => {
    assert.equal(verifyBcrypt('U*U', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'), true);
    assert.equal(verifyBcrypt('U*U*', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK'), true);
    assert.equal(verifyBcrypt('', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy'), true);
    assert.equal(verifyBcrypt('U*V', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'), false);
    assert.equal(verifyBcrypt('U*U', '$2x$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'), false, 'the buggy $2x$ variant is not claimed');
  });
});

describe('what importUsers carries and refuses', () => {
  test('profile, metadata, claims and provider data arrive as given', async () => {
    const uid = `fields-${randomBytes(6).toString('hex')}`;
    const email = uniqueEmail('fields');
    const when = new Date(1476235905000).toUTCString();
    const result = await admin.importUsers([
      {
        uid,
        email,
        emailVerified: true,
        displayName: 'Test User',
        photoURL: 'http://www.example.com/photo.png',
        phoneNumber: `+1555${String(Date.now()).slice(-7)}`,
        disabled: false,
        customClaims: { admin: true },
        metadata: { creationTime: when, lastSignInTime: when },
        providerData: [{ uid: `${uid}-facebook`, providerId: 'facebook.com', displayName: 'Facebook User', email, photoURL: 'http://www.example.com/fb.png' }],
      },
    ]);
    assert.equal(result.successCount, 1, JSON.stringify(result.errors));
    const user = await admin.getUser(uid);
    assert.equal(user.email, email);
    assert.equal(user.emailVerified, true);
    assert.equal(user.displayName, 'Test User');
    assert.equal(user.photoURL, 'http://www.example.com/photo.png');
    assert.deepEqual(user.customClaims, { admin: true });
    assert.equal(user.metadata.creationTime, when);
    assert.equal(user.metadata.lastSignInTime, when);
    const facebook = user.providerData.find((p) => p.providerId === 'facebook.com');
    assert.equal(facebook?.uid, `${uid}-facebook`);
    assert.equal(facebook?.displayName, 'Facebook User');
    assert.ok(user.providerData.some((p) => p.providerId === 'phone'));
  });

  test('refused accounts are reported by index and the others are imported', async () => {
    const taken = await admin.createUser({ email: uniqueEmail('taken') });
    const fine = [`ok-${randomBytes(4).toString('hex')}`, `ok-${randomBytes(4).toString('hex')}`];
    const result = await admin.importUsers([
      { uid: `bad-phone-${randomBytes(4).toString('hex')}`, phoneNumber: '+1error' },
      { uid: fine[0]!, email: uniqueEmail('fine') },
      { uid: `dup-email-${randomBytes(4).toString('hex')}`, email: taken.email! },
      { uid: `mfa-${randomBytes(4).toString('hex')}`, multiFactor: { enrolledFactors: [{ uid: 'f1', factorId: 'phone', phoneNumber: '+16505550001' }] } },
      { uid: fine[1]!, email: uniqueEmail('fine') },
      { uid: fine[1]!, email: uniqueEmail('again') },
    ]);
    assert.equal(result.successCount, 2);
    assert.equal(result.failureCount, 4);
    assert.deepEqual(result.errors.map((e) => [e.index, e.error.code]), [
      [0, 'auth/invalid-user-import'],
      [2, 'auth/invalid-user-import'],
      [3, 'auth/invalid-user-import'],
      [5, 'auth/invalid-user-import'],
    ]);
    assert.match(result.errors[1]!.error.message, /email exists/);
    assert.match(result.errors[2]!.error.message, /Second factor account requires email/);
    for (const uid of fine) assert.equal((await admin.getUser(uid)).uid, uid);
    assert.equal((await admin.getUser(taken.uid)).email, taken.email, 'the holder of the email is untouched');
  });

  test('importing an existing uid replaces the account and ends its sessions', async () => {
    const email = uniqueEmail('replace');
    const created = await admin.createUser({ email, password: 'first-password' });
    const auth = clients.auth(server);
    const { user } = await signInWithEmailAndPassword(auth, email, 'first-password');
    const hash = createHmac('sha256', 'k').update('second-password' + 's').digest();
    const result = await admin.importUsers([{ uid: created.uid, email, displayName: 'Replaced', passwordHash: hash, passwordSalt: Buffer.from('s') }], { hash: { algorithm: 'HMAC_SHA256', key: Buffer.from('k') } });
    assert.equal(result.successCount, 1, JSON.stringify(result.errors));
    assert.equal((await admin.getUser(created.uid)).displayName, 'Replaced');
    await assert.rejects(user.getIdToken(true), (error: { code?: string }) => error.code === 'auth/user-token-expired');
    assert.equal(await signInCode(email, 'first-password'), 'auth/invalid-credential');
    assert.equal(await signInCode(email, 'second-password'), 'signed in');
  });

  test('the wire: 1000 accounts at most, hash options required with hashes, admin only, Google error shapes', async () => {
    const tooMany = await adminPost(server, '/accounts:batchCreate', { users: Array.from({ length: 1001 }, (_, i) => ({ localId: `many-${i}` })) });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.error.status, 'INVALID_ARGUMENT');
    const noAlgorithm = await adminPost(server, '/accounts:batchCreate', { users: [{ localId: 'no-algo', email: uniqueEmail('x'), passwordHash: 'aGFzaA' }] });
    assert.equal(noAlgorithm.status, 400);
    assert.match(noAlgorithm.body.error.message, /hashAlgorithm/);
    const unknown = await adminPost(server, '/accounts:batchCreate', { hashAlgorithm: 'ROT13', users: [{ localId: 'rot', passwordHash: 'aGFzaA' }] });
    assert.equal(unknown.status, 400);
    const noKey = await adminPost(server, '/accounts:batchCreate', { hashAlgorithm: 'HMAC_SHA256', users: [{ localId: 'nokey', passwordHash: 'aGFzaA' }] });
    assert.equal(noKey.status, 400);
    const cliStrings = await adminPost(server, '/accounts:batchCreate', { hashAlgorithm: 'SHA256', rounds: '1', users: [{ localId: `cli-${Date.now()}`, passwordHash: 'aGFzaA', createdAt: '1476235905000' }] });
    assert.equal(cliStrings.status, 200, 'the Firebase CLI sends its numbers as text');
    const notBcrypt = await adminPost(server, '/accounts:batchCreate', { hashAlgorithm: 'BCRYPT', users: [{ localId: `nb-${Date.now()}`, passwordHash: 'aGFzaA' }] });
    assert.equal(notBcrypt.status, 200);
    assert.deepEqual(notBcrypt.body.error.map((e: { index: number }) => e.index), [0]);
    const asUser = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:batchCreate?key=${server.apiKey}`, { users: [{ localId: 'sneaky' }] });
    assert.equal(asUser.status, 400);
    assert.equal(asUser.body.error.message, 'ADMIN_ONLY_OPERATION');
    await assert.rejects(admin.getUser('sneaky'), (error: { code?: string }) => error.code === 'auth/user-not-found');
  });
});
