/**
 * Service accounts the production way: Hearth issues a key file, firebase-admin is configured with
 * `cert()` of it (no emulator variable, so no `Bearer owner`), exchanges a signed assertion for an
 * access token at Google's token endpoint and calls Google's identitytoolkit host. The test's one
 * stand-in for the outside world sends those https requests to Hearth (helpers/google-hosts.ts).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { cert, deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getAuth } from 'firebase-admin/auth';
import { redirectGoogleHosts, type GoogleHostsRedirect } from '../helpers/google-hosts.js';
import { repoRoot, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { backendEnv, storedRows } from '../helpers/test-backend.js';
import { hearthCommand } from '../helpers/hearth-command.js';

let server: TestHearth;
let google: GoogleHostsRedirect;
const apps: App[] = [];

interface KeyFile {
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  token_uri: string;
}

async function hearthApi(method: string, path: string, credential: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${credential}` } });
  return { status: response.status, body: await response.json() };
}

async function createKey(projectId: string): Promise<KeyFile> {
  const { status, body } = await hearthApi('POST', `/hearth/v1/projects/${projectId}/serviceAccountKeys`, server.adminKey);
  assert.equal(status, 200, JSON.stringify(body));
  return body as KeyFile;
}

function adminWith(key: KeyFile, name: string, projectId?: string) {
  const app = initializeApp({ credential: cert(key as unknown as Parameters<typeof cert>[0]), ...(projectId ? { projectId } : {}) }, name);
  apps.push(app);
  return getAuth(app);
}

before(async () => {
  // Production mode: `Bearer owner` is refused, so only the key's access token can be the administrator.
  server = await startHearth({ dev: false });
  delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
  google = redirectGoogleHosts(server.url);
});

after(async () => {
  google.restore();
  await Promise.all(apps.map((app) => deleteApp(app)));
  await server.close();
});

describe('service-account keys', () => {
  test('a Hearth-issued key file works with cert(): user management through the exchanged access token', async () => {
    const key = await createKey(server.projectId);
    assert.equal(key.project_id, server.projectId);
    assert.match(key.client_email, new RegExp(`@${server.projectId}\\.iam\\.gserviceaccount\\.com$`));
    assert.equal(key.token_uri, `${server.url}/oauth2.googleapis.com/token`);
    const admin = adminWith(key, 'sa-main');

    const created = await admin.createUser({ email: `sa-${Date.now()}@example.com`, password: 'secret12', displayName: 'Ada' });
    assert.equal((await admin.getUser(created.uid)).displayName, 'Ada');
    await admin.updateUser(created.uid, { displayName: 'Ada L.' });
    await admin.setCustomUserClaims(created.uid, { role: 'editor' });
    assert.deepEqual((await admin.getUser(created.uid)).customClaims, { role: 'editor' });
    const page = await admin.listUsers(10);
    assert.ok(page.users.some((u) => u.uid === created.uid));
    await admin.deleteUser(created.uid);
    await assert.rejects(admin.getUser(created.uid), (error: { code?: string }) => error.code === 'auth/user-not-found');
    assert.ok(google.seen.includes('/oauth2.googleapis.com/token'), 'the access token came from Hearth');
    assert.ok(google.seen.some((path) => path.startsWith(`/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts`)));
  });

  test("a key is the administrator of its own project only: another project's key is refused", async () => {
    const other = await createKey('other-project');
    const intruder = adminWith(other, 'sa-intruder', server.projectId);
    const refused = (error: { code?: string }) => error.code === 'auth/insufficient-permission';
    await assert.rejects(intruder.createUser({ email: `intruder-${Date.now()}@example.com` }), refused);
    await assert.rejects(intruder.listUsers(1), refused);
    // The same key works in its own project.
    const own = adminWith(other, 'sa-other');
    const user = await own.createUser({ email: `other-${Date.now()}@example.com` });
    await assert.rejects(adminWith(await createKey(server.projectId), 'sa-main-2').getUser(user.uid), (error: { code?: string }) => error.code === 'auth/user-not-found');
  });

  test('keys are listed and revoked; a revoked key and its access tokens stop working at once', async () => {
    const key = await createKey(server.projectId);
    const admin = adminWith(key, 'sa-revoked');
    await admin.listUsers(1);
    const listed = await hearthApi('GET', `/hearth/v1/projects/${server.projectId}/serviceAccountKeys`, server.adminKey);
    assert.ok(listed.body.keys.some((k: { keyId: string }) => k.keyId === key.private_key_id));
    assert.ok(listed.body.keys.every((k: Record<string, unknown>) => !('private_key' in k) && !('publicKey' in k)));

    const revoked = await hearthApi('DELETE', `/hearth/v1/projects/${server.projectId}/serviceAccountKeys/${key.private_key_id}`, server.adminKey);
    assert.equal(revoked.status, 200);
    // firebase-admin still holds its cached access token: Hearth no longer honours it.
    await assert.rejects(admin.listUsers(1), (error: Error) => /UNAUTHENTICATED/.test(error.message));
    // A new exchange with the revoked key is refused (firebase-admin caches one credential per key file, so ask directly).
    const exchange = await exchangeFor(key);
    assert.deepEqual([exchange.status, exchange.body.error], [400, 'invalid_grant']);
    const again = await hearthApi('DELETE', `/hearth/v1/projects/${server.projectId}/serviceAccountKeys/${key.private_key_id}`, server.adminKey);
    assert.equal(again.status, 404);
    assert.equal(again.body.error.status, 'NOT_FOUND');
  });

  test('only the admin key manages keys: not a service account, not a stranger', async () => {
    const key = await createKey(server.projectId);
    const exchange = await exchangeFor(key);
    assert.equal(exchange.status, 200, JSON.stringify(exchange.body));
    const token = exchange.body.access_token as string;
    assert.equal((await hearthApi('POST', `/hearth/v1/projects/${server.projectId}/serviceAccountKeys`, token)).status, 403);
    assert.equal((await hearthApi('GET', `/hearth/v1/projects/${server.projectId}/serviceAccountKeys`, 'nonsense')).status, 403);
    // The access token is no credential from a web page on another origin.
    const fromPage = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:batchGet`, {
      headers: { authorization: `Bearer ${token}`, origin: 'https://evil.example' },
    });
    assert.equal(fromPage.status, 403);
  });

  test('the token endpoint answers refusals in OAuth 2 shape', async () => {
    const wrongGrant = await postForm({ grant_type: 'client_credentials', assertion: 'x' });
    assert.deepEqual([wrongGrant.status, wrongGrant.body.error], [400, 'unsupported_grant_type']);
    const garbage = await postForm({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: 'not.a.jwt' });
    assert.deepEqual([garbage.status, garbage.body.error], [400, 'invalid_grant']);
    // Signed with a key Hearth never issued, in the name of a real account.
    const key = await createKey(server.projectId);
    const { generateKeyPairSync } = await import('node:crypto');
    const forgedKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const forged = await exchangeFor({ ...key, private_key: forgedKey });
    assert.deepEqual([forged.status, forged.body.error], [400, 'invalid_grant']);
  });

  test('private keys are never stored: the database holds only the public half', async () => {
    const key = await createKey(server.projectId);
    const secretLine = key.private_key.split('\n')[5]!;
    for (const file of ['hearth.sqlite', 'hearth.sqlite-wal']) {
      let bytes = '';
      try {
        bytes = readFileSync(join(server.dataDir, file)).toString('latin1');
      } catch {
        continue;
      }
      assert.ok(!bytes.includes(secretLine), `${file} holds no part of the private key`);
    }
    const stored = await storedRows(server.dataDir, 'SELECT * FROM service_account_keys');
    assert.ok(JSON.stringify(stored).includes(key.private_key_id), 'the key is stored (so the check above looked at it)');
    assert.ok(!JSON.stringify(stored).includes(secretLine), 'the stored row holds no part of the private key');
  });
});

describe('hearth service-accounts (CLI)', () => {
  test('create writes a 0600 key file that cert() accepts and Hearth honours; list and revoke', async () => {
    const dataDir = tempDataDir();
    const run = promisify(execFile);
    const cli = async (...args: string[]) =>
      run(process.execPath, [...hearthCommand(), 'service-accounts', ...args], { cwd: repoRoot, env: { ...process.env, ...(await backendEnv(args)) } });
    const out = join(dataDir, 'key.json');
    const created = await cli('create', '--project', 'cli-project', '--data', dataDir, '--out', out, '--public-url', 'https://auth.example.com');
    assert.match(created.stdout, /key\.json/);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const key = JSON.parse(readFileSync(out, 'utf8')) as KeyFile;
    assert.equal(key.token_uri, 'https://auth.example.com/oauth2.googleapis.com/token');
    cert(key as unknown as Parameters<typeof cert>[0]);
    const listed = await cli('list', '--project', 'cli-project', '--data', dataDir);
    assert.match(listed.stdout, new RegExp(key.private_key_id));
    await cli('revoke', key.private_key_id, '--project', 'cli-project', '--data', dataDir);
    assert.doesNotMatch((await cli('list', '--project', 'cli-project', '--data', dataDir)).stdout, new RegExp(key.private_key_id));
    await assert.rejects(cli('revoke', key.private_key_id, '--project', 'cli-project', '--data', dataDir));
  });
});

async function postForm(fields: Record<string, string>): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/oauth2.googleapis.com/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, body: await response.json() };
}

async function exchangeFor(key: KeyFile): Promise<{ status: number; body: any }> {
  const { SignJWT, importPKCS8 } = await import('jose');
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({ scope: 'https://www.googleapis.com/auth/cloud-platform' })
    .setProtectedHeader({ alg: 'RS256', kid: key.private_key_id })
    .setIssuer(key.client_email)
    .setAudience('https://oauth2.googleapis.com/token')
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(await importPKCS8(key.private_key, 'RS256'));
  return postForm({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
}

