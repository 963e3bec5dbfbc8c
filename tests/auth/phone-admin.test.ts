/**
 * Phone numbers on the admin paths, through firebase-admin (FIREBASE_AUTH_EMULATOR_HOST, `Bearer
 * owner` in --dev) and raw HTTP: numbers are validated and normalized to E.164, and unique per
 * project, on createUser, updateUser, importUsers and lookups.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getAuth, type Auth } from 'firebase-admin/auth';
import { adminPost } from '../helpers/admin-http.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let adminApp: App;
let admin: Auth;

before(async () => {
  server = await startHearth();
  process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
  adminApp = initializeApp({ projectId: server.projectId }, 'phone-admin');
  admin = getAuth(adminApp);
});

after(async () => {
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await deleteApp(adminApp);
  await server.close();
});

const codeOf = (error: unknown) => (error as { code?: string }).code;
let numbers = 0;
const uniqueNumber = () => `+3361234${String(++numbers).padStart(4, '0')}`;

describe('createUser and updateUser', () => {
  test('a number that is not a possible one is auth/invalid-phone-number', async () => {
    // firebase-admin only checks for a leading + and one alphanumeric; the server checks the rest.
    for (const phoneNumber of ['+abc', '+1', '+999 123456', '+1 650 555 3434 x12']) {
      await assert.rejects(admin.createUser({ phoneNumber }), (error) => codeOf(error) === 'auth/invalid-phone-number', phoneNumber);
    }
    const user = await admin.createUser({});
    await assert.rejects(admin.updateUser(user.uid, { phoneNumber: '+abc' }), (error) => codeOf(error) === 'auth/invalid-phone-number');
  });

  test('raw admin sign-up with "abc" is INVALID_PHONE_NUMBER : Invalid format. (it was accepted before)', async () => {
    const answer = await adminPost(server, '/accounts', { phoneNumber: 'abc' });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.message, 'INVALID_PHONE_NUMBER : Invalid format.');
    const update = await adminPost(server, '/accounts:update', { localId: (await admin.createUser({})).uid, phoneNumber: '' });
    assert.equal(update.body.error.message, 'INVALID_PHONE_NUMBER : Invalid format.');
  });

  test('numbers are stored in E.164 and found however they are typed', async () => {
    const created = await admin.createUser({ phoneNumber: '+1 (650) 555-3434' });
    assert.equal(created.phoneNumber, '+16505553434');
    assert.deepEqual(created.providerData.map((p) => [p.providerId, p.phoneNumber]), [['phone', '+16505553434']]);
    assert.equal((await admin.getUserByPhoneNumber('+1 650-555-3434')).uid, created.uid);
    const { users } = await admin.getUsers([{ phoneNumber: '+16505553434' }]);
    assert.deepEqual(users.map((u) => u.uid), [created.uid]);
  });

  test('a number belongs to one account: auth/phone-number-already-exists on create and update', async () => {
    const phoneNumber = uniqueNumber();
    const holder = await admin.createUser({ phoneNumber });
    await assert.rejects(admin.createUser({ phoneNumber }), (error) => codeOf(error) === 'auth/phone-number-already-exists');
    const other = await admin.createUser({ phoneNumber: uniqueNumber() });
    await assert.rejects(admin.updateUser(other.uid, { phoneNumber }), (error) => codeOf(error) === 'auth/phone-number-already-exists');
    assert.equal((await admin.updateUser(holder.uid, { phoneNumber })).phoneNumber, phoneNumber, 'setting an account\'s own number again is fine');
    await admin.updateUser(holder.uid, { phoneNumber: null });
    assert.equal((await admin.updateUser(other.uid, { phoneNumber })).phoneNumber, phoneNumber, 'a removed number is free again');
  });
});

describe('importUsers', () => {
  test('invalid and duplicate numbers refuse only their own accounts', async () => {
    const taken = uniqueNumber();
    await admin.createUser({ phoneNumber: taken });
    const fresh = uniqueNumber();
    const result = await admin.importUsers([
      { uid: `import-a-${Date.now()}`, phoneNumber: '+33 6 12 99 00 01' },
      { uid: `import-b-${Date.now()}`, phoneNumber: '+abc' },
      { uid: `import-c-${Date.now()}`, phoneNumber: taken },
      { uid: `import-d-${Date.now()}`, phoneNumber: fresh },
      { uid: `import-e-${Date.now()}`, phoneNumber: fresh },
    ]);
    assert.equal(result.successCount, 2);
    assert.deepEqual(result.errors.map((e) => e.index), [1, 2, 4]);
    assert.match(result.errors[0]!.error.message, /invalid phone number/);
    assert.match(result.errors[1]!.error.message, /phone number exists in other account/);
    assert.match(result.errors[2]!.error.message, /phone number is given twice/);
    assert.equal((await admin.getUserByPhoneNumber('+33612990001')).phoneNumber, '+33612990001');
  });
});
