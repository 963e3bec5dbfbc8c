/**
 * firebase-admin against Hearth: user management through FIREBASE_AUTH_EMULATOR_HOST (which
 * sends `Bearer owner`, accepted in --dev), and ID token verification with the real signature
 * check against the keys Hearth publishes.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { after, before, describe, test } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import { getIdTokenResult, signInWithEmailAndPassword, type Auth } from 'firebase/auth';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { SdkClients } from '../helpers/client.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let adminApp: App;
let admin: AdminAuth;

const clients = new SdkClients('admin-client');
const clientAuth = (): Auth => clients.auth(server);

before(async () => {
  server = await startHearth();
  process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
  adminApp = initializeAdminApp({ projectId: server.projectId }, 'admin-test');
  admin = getAdminAuth(adminApp);
});

after(async () => {
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  await clients.close();
  await deleteAdminApp(adminApp);
  await server.close();
});

describe('user management', () => {
  test('createUser, getUser, getUserByEmail, updateUser', async () => {
    const email = uniqueEmail('admin');
    const created = await admin.createUser({ email, password: 'secret12', displayName: 'Grace', emailVerified: true });
    assert.equal(created.email, email);
    assert.equal(created.emailVerified, true);
    assert.equal(created.displayName, 'Grace');
    assert.equal(created.passwordHash, undefined, 'the password hash never leaves the server');
    assert.deepEqual((await admin.getUserByEmail(email)).uid, created.uid);
    const updated = await admin.updateUser(created.uid, { disabled: true, displayName: 'Grace Hopper' });
    assert.equal(updated.disabled, true);
    assert.equal((await admin.getUser(created.uid)).displayName, 'Grace Hopper');
  });

  test('createUser with a chosen uid; a duplicate uid or email is refused', async () => {
    const uid = `chosen-${Date.now()}`;
    const email = uniqueEmail('chosen');
    await admin.createUser({ uid, email });
    await assert.rejects(admin.createUser({ uid }), (error: { code?: string }) => error.code === 'auth/uid-already-exists');
    await assert.rejects(admin.createUser({ email }), (error: { code?: string }) => error.code === 'auth/email-already-exists');
    await assert.rejects(admin.getUser('does-not-exist'), (error: { code?: string }) => error.code === 'auth/user-not-found');
  });

  test('custom claims reach the ID token after a refresh', async () => {
    const email = uniqueEmail('claims');
    const { uid } = await admin.createUser({ email, password: 'secret12' });
    await admin.setCustomUserClaims(uid, { role: 'editor', level: 3 });
    assert.deepEqual((await admin.getUser(uid)).customClaims, { role: 'editor', level: 3 });
    const { user } = await signInWithEmailAndPassword(clientAuth(), email, 'secret12');
    const result = await getIdTokenResult(user, true);
    assert.equal(result.claims.role, 'editor');
    assert.equal(result.claims.level, 3);
    // firebase-admin checks reserved names itself; the server refuses them too, for raw callers.
    const forbidden = await adminPost(server, '/accounts:update', { localId: uid, customAttributes: '{"sub":"nope"}' });
    assert.equal(forbidden.body.error.message, 'FORBIDDEN_CLAIM : sub');
    const tooLarge = await adminPost(server, '/accounts:update', { localId: uid, customAttributes: JSON.stringify({ blob: 'x'.repeat(1000) }) });
    assert.equal(tooLarge.body.error.message, 'CLAIMS_TOO_LARGE');
  });

  test('listUsers pages through every user; deleteUser and deleteUsers remove them', async () => {
    const uids: string[] = [];
    for (let i = 0; i < 5; i++) uids.push((await admin.createUser({ email: uniqueEmail('list') })).uid);
    const seen = new Set<string>();
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const page = await admin.listUsers(2, pageToken);
      page.users.forEach((u) => seen.add(u.uid));
      pageToken = page.pageToken;
      pages++;
    } while (pageToken);
    for (const uid of uids) assert.ok(seen.has(uid));
    assert.ok(pages >= 3);
    await admin.deleteUser(uids[0]!);
    await assert.rejects(admin.getUser(uids[0]!), (error: { code?: string }) => error.code === 'auth/user-not-found');
    const result = await admin.deleteUsers(uids.slice(1));
    assert.equal(result.successCount, 4);
    assert.equal(result.failureCount, 0);
    const { users, notFound } = await admin.getUsers(uids.map((uid) => ({ uid })));
    assert.equal(users.length, 0);
    assert.equal(notFound.length, 5);
  });

  test('revokeRefreshTokens ends the client session', async () => {
    const email = uniqueEmail('revoke');
    const { uid } = await admin.createUser({ email, password: 'secret12' });
    const { user } = await signInWithEmailAndPassword(clientAuth(), email, 'secret12');
    await new Promise((r) => setTimeout(r, 1100));
    await admin.revokeRefreshTokens(uid);
    const validAfter = Date.parse((await admin.getUser(uid)).tokensValidAfterTime!);
    assert.ok(Math.abs(validAfter - Date.now()) < 5000);
    await assert.rejects(user.getIdToken(true), (error: { code?: string }) => error.code === 'auth/user-token-expired');
  });
});

describe('the same calls from a plain client are refused', () => {
  test('admin paths without the admin credential: ADMIN_ONLY_OPERATION', async () => {
    const calls: Array<[string, unknown]> = [
      ['/accounts', { localId: 'x' }],
      ['/accounts:lookup', { localId: ['x'] }],
      ['/accounts:update', { localId: 'x', disableUser: true }],
      ['/accounts:delete', { localId: 'x' }],
      ['/accounts:batchDelete', { localIds: ['x'], force: true }],
    ];
    for (const [path, body] of calls) {
      const response = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}${path}`, body);
      assert.equal(response.status, 400, path);
      assert.equal(response.body.error.message, 'ADMIN_ONLY_OPERATION', path);
    }
    const wrongKey = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:lookup`, { localId: ['x'] }, { authorization: 'Bearer not-the-key' });
    assert.equal(wrongKey.body.error.message, 'ADMIN_ONLY_OPERATION');
  });

  test('admin-only fields on client paths: the SDK sees admin-restricted-operation', async () => {
    const base = `${server.url}/identitytoolkit.googleapis.com/v1`;
    const signUp = await postJson(`${base}/accounts:signUp?key=${server.apiKey}`, { email: uniqueEmail(), password: 'secret12', emailVerified: true });
    assert.equal(signUp.body.error.message, 'ADMIN_ONLY_OPERATION');
    const lookup = await postJson(`${base}/accounts:lookup?key=${server.apiKey}`, { localId: ['someone'] });
    assert.equal(lookup.body.error.message, 'ADMIN_ONLY_OPERATION');
    const claims = await postJson(`${base}/accounts:update?key=${server.apiKey}`, { localId: 'someone', customAttributes: '{"admin":true}' });
    assert.equal(claims.body.error.message, 'ADMIN_ONLY_OPERATION');
  });
});

describe('ID token verification with the published keys', () => {
  // In emulator mode firebase-admin accepts only unsigned (alg: none) ID tokens, which Hearth issues
  // in --dev only (tests/auth/dev-emulator-admin.test.ts); so a production Hearth is verified the
  // production way: firebase-admin fetches Google's certificate URL and calls Google's
  // identitytoolkit host, and this test's one stand-in for the outside world points those two
  // hosts at Hearth. The admin key is the OAuth access token.
  test('firebase-admin verifies the RS256 signature against /robot/v1/metadata/x509 and checks revocation', async () => {
    const production = await startHearth({ dev: false });
    const email = uniqueEmail('verify');
    const signUp = await postJson(`${production.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${production.apiKey}`, { email, password: 'secret12', returnSecureToken: true });
    assert.equal(signUp.status, 200, JSON.stringify(signUp.body));
    const idToken: string = signUp.body.idToken;
    const user = { uid: signUp.body.localId as string };

    // Outside emulator mode firebase-admin fetches Google's certificate URL; the one outside
    // dependency of this test is pointed at Hearth, which publishes the same document.
    const originalRequest = https.request;
    const redirected: string[] = [];
    const port = Number(new URL(production.url).port);
    (https as { request: unknown }).request = (options: http.RequestOptions, callback?: (res: http.IncomingMessage) => void) => {
      if (options.hostname === 'www.googleapis.com' || options.hostname === 'identitytoolkit.googleapis.com') {
        const path = options.hostname === 'www.googleapis.com' ? String(options.path) : `/identitytoolkit.googleapis.com${String(options.path)}`;
        redirected.push(path.split('?')[0]!);
        const { agent: _agent, ...rest } = options;
        return http.request({ ...rest, protocol: 'http:', hostname: '127.0.0.1', port, path }, callback);
      }
      return (originalRequest as (o: http.RequestOptions, cb?: (res: http.IncomingMessage) => void) => http.ClientRequest)(options, callback);
    };
    delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
    const credential = { getAccessToken: async () => ({ access_token: production.adminKey, expires_in: 3600 }) };
    const verifierApp = initializeAdminApp({ projectId: production.projectId, credential }, 'verifier');
    try {
      const verifier = getAdminAuth(verifierApp);
      const decoded = await verifier.verifyIdToken(idToken);
      assert.equal(decoded.uid, user.uid);
      assert.equal(decoded.firebase.sign_in_provider, 'password');
      assert.deepEqual(redirected, ['/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com']);

      const [header, payload, signature] = idToken.split('.');
      const tampered = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
      tampered.sub = 'someone-else';
      const forged = `${header}.${Buffer.from(JSON.stringify(tampered)).toString('base64url')}.${signature}`;
      await assert.rejects(verifier.verifyIdToken(forged), (error: { code?: string }) => error.code === 'auth/argument-error');

      assert.equal((await verifier.verifyIdToken(idToken, true)).uid, user.uid);
      await new Promise((r) => setTimeout(r, 1100));
      await verifier.revokeRefreshTokens(user.uid);
      await assert.rejects(verifier.verifyIdToken(idToken, true), (error: { code?: string }) => error.code === 'auth/id-token-revoked');
      assert.ok(redirected.includes(`/identitytoolkit.googleapis.com/v1/projects/${production.projectId}/accounts:lookup`));
    } finally {
      (https as { request: unknown }).request = originalRequest;
      process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
      await deleteAdminApp(verifierApp);
      await production.close();
    }
  });
});
