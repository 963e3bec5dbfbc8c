/**
 * Callable and HTTPS functions under Hearth's origin: `httpsCallable` from the web SDK through
 * connectFunctionsEmulator and through the production form (getFunctions(app, 'https://HEARTH/functions')),
 * the caller's ID token checked by Hearth (a signed-out call reaches the function without auth and is
 * refused by it; a forged token is refused by Hearth before the worker), onRequest handlers with
 * their path, query and body, and hostile requests answered without a 500.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth, signOut, type Auth } from 'firebase/auth';
import { connectFunctionsEmulator, getFunctions, httpsCallable } from 'firebase/functions';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');

describe('callable and HTTPS functions', () => {
  let server: TestHearth;
  let app: FirebaseApp;
  let auth: Auth;
  let uid: string;

  before(async () => {
    server = await startHearth({ functionsDir: fixture });
    app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, 'callable-test');
    auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, server.url, { disableWarnings: true });
    uid = (await createUserWithEmailAndPassword(auth, 'caller@example.com', 'secret123')).user.uid;
  });
  after(async () => {
    await deleteApp(app);
    await server?.close();
  });

  test('httpsCallable through connectFunctionsEmulator answers the signed-in caller', async () => {
    const functions = getFunctions(app);
    connectFunctionsEmulator(functions, '127.0.0.1', Number(new URL(server.url).port));
    const result = await httpsCallable(functions, 'whoAmI')({ n: 7 });
    assert.deepEqual(result.data, { uid, echo: { n: 7 } });
  });

  test('httpsCallable through the production path (a custom domain on Hearth)', async () => {
    const functions = getFunctions(app, `${server.url}/functions`);
    const result = await httpsCallable(functions, 'whoAmI')('hi');
    assert.deepEqual(result.data, { uid, echo: 'hi' });
  });

  test('a signed-out call is refused', async () => {
    const other = initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, 'callable-signed-out');
    try {
      const functions = getFunctions(other, `${server.url}/functions`);
      await assert.rejects(httpsCallable(functions, 'whoAmI')({}), (error: { code?: string }) => error.code === 'functions/unauthenticated');
    } finally {
      await deleteApp(other);
    }
  });

  test('a forged or malformed ID token is refused by Hearth, in the callable error shape', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const claims = Buffer.from(JSON.stringify({ sub: 'intruder', user_id: 'intruder', aud: server.projectId, iss: `https://securetoken.google.com/${server.projectId}`, iat: 1, exp: 9999999999 })).toString('base64url');
    for (const authorization of [`Bearer ${header}.${claims}.`, 'Bearer not-a-token', 'Basic abc', 'Bearer']) {
      const answer = await fetch(`${server.url}/functions/whoAmI`, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: '{"data":null}' });
      assert.equal(answer.status, 401, authorization);
      assert.deepEqual(await answer.json(), { error: { status: 'UNAUTHENTICATED', message: 'Unauthenticated' } });
    }
  });

  test('onRequest handlers are served under Hearth with their path, query and body', async () => {
    const hello = await fetch(`${server.url}/functions/grouped-hello/a/b?x=1`);
    assert.equal(hello.status, 200);
    assert.equal(await hello.text(), 'hello /a/b');
    const viaEmulatorPath = await fetch(`${server.url}/${server.projectId}/us-central1/adminRoundTrip/p?id=h1`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"k":[1,2]}' });
    assert.equal(viaEmulatorPath.status, 200);
    const body = (await viaEmulatorPath.json()) as { stored: unknown };
    assert.deepEqual(body.stored, { path: '/p', method: 'PUT', body: { k: [1, 2] } });
  });

  test('hostile requests: unknown functions, other projects, huge bodies, bad JSON', async () => {
    assert.equal((await fetch(`${server.url}/functions/noSuchFunction`)).status, 404);
    assert.equal((await fetch(`${server.url}/other-project/us-central1/whoAmI`, { method: 'POST' })).status, 404);
    assert.equal((await fetch(`${server.url}/functions/whoAmI/../adminRoundTrip`)).status !== 500, true);
    const huge = await fetch(`${server.url}/functions/grouped-hello`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(33 * 1024 * 1024) });
    assert.equal(huge.status, 413);
    const badJson = await fetch(`${server.url}/functions/whoAmI`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"data":' });
    assert.ok(badJson.status >= 400 && badJson.status < 500, `bad JSON: ${badJson.status}`);
    const noData = await fetch(`${server.url}/functions/whoAmI`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"nodata":1}' });
    assert.equal(noData.status, 400);
    // The worker's key never leaves Hearth.
    const answer = await fetch(`${server.url}/functions/grouped-hello`);
    const names: string[] = [];
    answer.headers.forEach((_value, name) => names.push(name));
    assert.equal(names.some((name) => name.includes('hearth-worker')), false);
  });

  test('signing out makes the next call signed-out', async () => {
    await signOut(auth);
    const functions = getFunctions(app, `${server.url}/functions`);
    await assert.rejects(httpsCallable(functions, 'whoAmI')({}), (error: { code?: string }) => error.code === 'functions/unauthenticated');
  });
});

describe('callable functions outside --dev (the production path)', () => {
  test("a signed-in caller's RS256 ID token is checked by Hearth and the function sees the caller", async () => {
    const server = await startHearth({ functionsDir: fixture, dev: false });
    try {
      const signUp = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server.apiKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'prod@fine.example', password: 'secret123', returnSecureToken: true }),
      });
      assert.equal(signUp.status, 200);
      const { idToken, localId } = (await signUp.json()) as { idToken: string; localId: string };
      assert.equal(JSON.parse(Buffer.from(idToken.split('.')[0]!, 'base64url').toString()).alg, 'RS256');
      const call = (authorization?: string) => fetch(`${server.url}/functions/whoAmI`, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) }, body: '{"data":"p"}' });
      const answer = await call(`Bearer ${idToken}`);
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), { result: { uid: localId, echo: 'p' } });
      // A token with its signature changed, and the emulator's credential, are refused outside --dev.
      const tampered = `${idToken.slice(0, -4)}${idToken.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      assert.equal((await call(`Bearer ${tampered}`)).status, 401);
      assert.equal((await call('Bearer owner')).status, 401);
      assert.equal((await call()).status, 401, 'signed out: the function refuses');
    } finally {
      await server.close();
    }
  });
});
