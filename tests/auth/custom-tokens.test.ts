/**
 * Custom tokens: firebase-admin's createCustomToken with a Hearth-issued service-account key, then
 * signInWithCustomToken in the client SDK (v1) and the legacy verifyCustomToken (v3); Google's
 * refusals for forged, expired, foreign and malformed tokens; in --dev the unsigned tokens
 * firebase-admin mints for an emulator.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { cert, deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getAuth as getAdminAuth, type Auth as AdminAuth } from 'firebase-admin/auth';
import { getIdTokenResult, signInWithCustomToken } from 'firebase/auth';
import { bundleForBrowser } from '../helpers/browser-bundle.js';
import { createServer, type Server } from 'node:http';
import { importPKCS8, SignJWT } from 'jose';
import { assertBrowserReady, BrowserRecord, launchChromium, requestsOffMachine } from '../helpers/browser.js';
import { SdkClients, errorCodeOf } from '../helpers/client.js';
import { redirectGoogleHosts, type GoogleHostsRedirect } from '../helpers/google-hosts.js';
import { postJson, repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';

const audience = 'https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit';

interface KeyFile {
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
}

let server: TestHearth;
let google: GoogleHostsRedirect;
let key: KeyFile;
let admin: AdminAuth;
const apps: App[] = [];
const clients = new SdkClients('custom-token');

async function createKey(target: TestHearth, projectId: string): Promise<KeyFile> {
  const response = await fetch(`${target.url}/hearth/v1/projects/${projectId}/serviceAccountKeys`, { method: 'POST', headers: { authorization: `Bearer ${target.adminKey}` } });
  assert.equal(response.status, 200);
  return (await response.json()) as KeyFile;
}

/** A token signed by hand, to vary what firebase-admin never varies. */
async function handMade(signer: KeyFile, claims: Record<string, unknown>, times: { iat?: number; exp?: number } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const iat = times.iat ?? now;
  return new SignJWT({ uid: 'hand-made', ...claims })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(signer.client_email)
    .setSubject(signer.client_email)
    .setAudience(typeof claims.aud === 'string' ? claims.aud : audience)
    .setIssuedAt(iat)
    .setExpirationTime(times.exp ?? iat + 3600)
    .sign(await importPKCS8(signer.private_key, 'RS256'));
}

function signInRaw(target: TestHearth, token: string, legacy = false) {
  const path = legacy ? '/www.googleapis.com/identitytoolkit/v3/relyingparty/verifyCustomToken' : '/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken';
  return postJson(`${target.url}${path}?key=${target.apiKey}`, { token, returnSecureToken: true });
}

before(async () => {
  server = await startHearth({ dev: false });
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  google = redirectGoogleHosts(server.url);
  key = await createKey(server, server.projectId);
  const app = initializeApp({ credential: cert(key as unknown as Parameters<typeof cert>[0]) }, 'custom-token-admin');
  apps.push(app);
  admin = getAdminAuth(app);
});

after(async () => {
  google.restore();
  await clients.close();
  await Promise.all(apps.map((app) => deleteApp(app)));
  await server.close();
});

describe('signInWithCustomToken with a service-account key', () => {
  test('createCustomToken -> signInWithCustomToken: the uid signs in, developer claims ride in every ID token', async () => {
    const uid = `backend-user-${Date.now()}`;
    const token = await admin.createCustomToken(uid, { role: 'admin', tier: 3 });
    const auth = clients.auth(server);
    const { user } = await signInWithCustomToken(auth, token);
    assert.equal(user.uid, uid);
    const result = await getIdTokenResult(user);
    assert.equal(result.signInProvider, 'custom');
    assert.equal(result.claims.role, 'admin');
    assert.equal(result.claims.tier, 3);
    // A refreshed token keeps the session's claims (the refresh endpoint, as the SDK calls it).
    const refreshed = await postJson(`${server.url}/securetoken.googleapis.com/v1/token?key=${server.apiKey}`, { grant_type: 'refresh_token', refresh_token: user.refreshToken });
    assert.equal(refreshed.status, 200);
    const refreshedClaims = JSON.parse(Buffer.from(String(refreshed.body.id_token).split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    assert.equal(refreshedClaims.role, 'admin');
    assert.equal((refreshedClaims.firebase as { sign_in_provider: string }).sign_in_provider, 'custom');
    // The account was created on first use and is an ordinary user for the admin.
    const record = await admin.getUser(uid);
    assert.equal(record.uid, uid);
    // A token without claims signs in the same account; setCustomUserClaims shows in new ID tokens.
    await admin.setCustomUserClaims(uid, { plan: 'pro' });
    const second = await signInWithCustomToken(clients.auth(server), await admin.createCustomToken(uid));
    const claims = (await getIdTokenResult(second.user)).claims;
    assert.equal(claims.plan, 'pro');
    assert.equal(claims.role, undefined);
    // The ID token verifies with firebase-admin against Hearth's published keys.
    const decoded = await admin.verifyIdToken(await second.user.getIdToken());
    assert.equal(decoded.firebase.sign_in_provider, 'custom');
  });

  test('legacy v3 verifyCustomToken answers in its own kind', async () => {
    const token = await admin.createCustomToken(`legacy-${Date.now()}`);
    const { status, body } = await signInRaw(server, token, true);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.kind, 'identitytoolkit#VerifyCustomTokenResponse');
    assert.equal(body.isNewUser, true);
    assert.ok(body.idToken && body.refreshToken);
  });

  test("a key of another project: CREDENTIAL_MISMATCH (auth/custom-token-mismatch); the other project's own sign-in works", async () => {
    const otherKey = await createKey(server, 'custom-other');
    const token = await handMade(otherKey, { uid: 'crosser' });
    const { status, body } = await signInRaw(server, token);
    assert.equal(status, 400);
    assert.match(body.error.message, /^CREDENTIAL_MISMATCH/);
    assert.equal(await errorCodeOf(signInWithCustomToken(clients.auth(server), token)), 'auth/custom-token-mismatch');
  });

  test('forged, expired, long-lived, future, foreign-audience and malformed tokens: INVALID_CUSTOM_TOKEN', async () => {
    const now = Math.floor(Date.now() / 1000);
    const stranger = { ...key, private_key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
    const valid = await admin.createCustomToken('tamper-target');
    const [h, p, sig] = valid.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), uid: 'someone-else' })).toString('base64url')}.${sig}`;
    const cases: Array<[string, string]> = [
      ['forged signature', await handMade(stranger, { uid: 'x' })],
      ['tampered payload', tampered],
      ['expired', await handMade(key, { uid: 'x' }, { iat: now - 7200, exp: now - 3600 })],
      ['lives longer than an hour', await handMade(key, { uid: 'x' }, { iat: now, exp: now + 7200 })],
      ['issued in the future', await handMade(key, { uid: 'x' }, { iat: now + 3000, exp: now + 3600 })],
      ['ID token audience', await handMade(key, { uid: 'x', aud: server.projectId })],
      ['uid too long', await handMade(key, { uid: 'u'.repeat(129) })],
      ['reserved claim', await handMade(key, { uid: 'x', claims: { firebase: { tenant: 'x' } } })],
      ['two segments', 'abc.def'],
      ['unsigned outside --dev', `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ aud: audience, uid: 'x', iat: now, exp: now + 3600 })).toString('base64url')}.`],
    ];
    for (const [name, token] of cases) {
      const { status, body } = await signInRaw(server, token);
      assert.equal(status, 400, name);
      assert.match(body.error.message, /^INVALID_CUSTOM_TOKEN/, `${name}: ${body.error.message}`);
    }
    assert.equal(await errorCodeOf(signInWithCustomToken(clients.auth(server), tampered)), 'auth/invalid-custom-token');
    const missing = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken?key=${server.apiKey}`, {});
    assert.match(missing.body.error.message, /^MISSING_CUSTOM_TOKEN/);
  });

  test("a session from a custom token never works in another project: ID token, refresh token, custom token", async () => {
    const config = await fetch(`${server.url}/identitytoolkit.googleapis.com/v2/projects/custom-isolated/config`, { headers: { authorization: `Bearer ${server.adminKey}` } });
    const otherApiKey = ((await config.json()) as { apiKeys: string[] }).apiKeys[0]!;
    const signedIn = await signInRaw(server, await admin.createCustomToken(`isolated-${Date.now()}`, { role: 'admin' }));
    assert.equal(signedIn.status, 200);
    const lookup = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:lookup?key=${otherApiKey}`, { idToken: signedIn.body.idToken });
    assert.deepEqual([lookup.status, lookup.body.error.message], [400, 'INVALID_ID_TOKEN']);
    const refresh = await postJson(`${server.url}/securetoken.googleapis.com/v1/token?key=${otherApiKey}`, { grant_type: 'refresh_token', refresh_token: signedIn.body.refreshToken });
    assert.equal(refresh.status, 400);
    assert.match(refresh.body.error.message, /INVALID_API_KEY/);
    const token = await admin.createCustomToken('crossing-over');
    const crossing = await postJson(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithCustomToken?key=${otherApiKey}`, { token, returnSecureToken: true });
    assert.match(crossing.body.error.message, /^CREDENTIAL_MISMATCH/);
  });

  test('a disabled account cannot sign in with a custom token', async () => {
    const uid = `disabled-${Date.now()}`;
    await admin.createUser({ uid });
    await admin.updateUser(uid, { disabled: true });
    assert.equal(await errorCodeOf(signInWithCustomToken(clients.auth(server), await admin.createCustomToken(uid))), 'auth/user-disabled');
  });
});

describe('--dev: the unsigned tokens firebase-admin mints for an emulator', () => {
  test('FIREBASE_AUTH_EMULATOR_HOST: createCustomToken (alg none) -> signInWithCustomToken', async () => {
    const dev = await startHearth({ dev: true });
    process.env.FIREBASE_AUTH_EMULATOR_HOST = dev.hostPort;
    const app = initializeApp({ projectId: dev.projectId }, 'custom-token-emulator');
    try {
      const token = await getAdminAuth(app).createCustomToken('emulated', { role: 'tester' });
      assert.match(token, /\.$/, 'unsigned: empty signature');
      const { user } = await signInWithCustomToken(clients.auth(dev), token);
      assert.equal(user.uid, 'emulated');
      assert.equal((await getIdTokenResult(user)).claims.role, 'tester');
      // A signed token from a key of this Hearth works in --dev too.
      const devKey = await createKey(dev, dev.projectId);
      assert.equal((await signInRaw(dev, await handMade(devKey, { uid: 'signed-in-dev' }))).status, 200);
    } finally {
      delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
      await deleteApp(app);
      await dev.close();
    }
  });
});

describe('in Chromium', () => {
  test('an app page on another origin signs in with a custom token from firebase-admin', { timeout: 120_000 }, async () => {
    assertBrowserReady();
    const script = await bundleForBrowser({
      stdin: {
        contents: `
          import { initializeApp } from 'firebase/app';
          import { connectAuthEmulator, getIdTokenResult, inMemoryPersistence, initializeAuth, signInWithCustomToken } from 'firebase/auth';
          globalThis.signInWithToken = async (config, hearthUrl, token) => {
            const auth = initializeAuth(initializeApp(config), { persistence: inMemoryPersistence });
            connectAuthEmulator(auth, hearthUrl, { disableWarnings: true });
            const { user } = await signInWithCustomToken(auth, token);
            const result = await getIdTokenResult(user);
            return { uid: user.uid, provider: result.signInProvider, role: result.claims.role };
          };`,
        resolveDir: repoRoot,
      },
    });
    const page$ = createServer((request, response) => {
      if (request.url === '/app.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      else response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><script type="module" src="/app.js"></script>');
    });
    await new Promise<void>((resolve) => page$.listen(0, '127.0.0.1', resolve));
    const pageUrl = `http://127.0.0.1:${(page$.address() as { port: number }).port}/`;
    const browser = await launchChromium();
    const record = new BrowserRecord();
    try {
      const page = await record.newPage(await record.newContext(browser, 30_000));
      await page.goto(pageUrl);
      await page.waitForFunction(() => 'signInWithToken' in globalThis);
      const uid = `browser-${Date.now()}`;
      const token = await admin.createCustomToken(uid, { role: 'reader' });
      const config = { apiKey: server.apiKey, projectId: server.projectId, authDomain: new URL(server.url).host };
      const result = await page.evaluate(
        ([c, url, t]) => (globalThis as unknown as { signInWithToken: (c: unknown, u: string, t: string) => Promise<unknown> }).signInWithToken(c, url, t),
        [config, server.url, token] as const,
      );
      assert.deepEqual(result, { uid, provider: 'custom', role: 'reader' });
      assert.deepEqual(record.pageErrors, []);
      assert.deepEqual(requestsOffMachine(record.requested), []);
    } finally {
      await browser.close();
      await new Promise((resolve) => (page$ as Server).close(resolve));
    }
  });
});
