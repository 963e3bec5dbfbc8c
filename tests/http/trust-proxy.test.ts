/**
 * Issue 28, item 9: behind a reverse proxy every per-address limit used to be global, since every
 * request came from the proxy's address: ten wrong console keys from anyone locked the operator out,
 * and the whole user base shared one address's sign-ups. `--trust-proxy ADDRESSES` names the proxies
 * whose X-Forwarded-For is believed. Tested behind a real nginx (tests/helpers/nginx.ts), with clients
 * on distinct loopback addresses (127.0.0.2, 127.0.0.3, ...) so nginx itself names them; Hearth runs as
 * `hearth start` with the flag, as an operator would run it.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { freePort, spawnHearth, tempDataDir, type SpawnedHearth } from '../helpers/hearth.js';
import { findNginx, startNginx, type Nginx } from '../helpers/nginx.js';

const projectId = 'demo-proxy';
const adminKey = 'trust-proxy-test-admin-key-0123456789';

interface Answer {
  status: number;
  body: { error?: { message?: string } } & Record<string, unknown>;
}

/** A JSON POST from a chosen loopback address (`from`), with extra headers. */
function postFrom(from: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: 'POST', localAddress: from, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (data += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data ? (JSON.parse(data) as Answer['body']) : {} }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

interface Deployment {
  hearth: SpawnedHearth;
  nginx: Nginx;
  apiKey: string;
  close(): Promise<void>;
}

async function deploy(extraArgs: string[]): Promise<Deployment> {
  const dataDir = tempDataDir();
  const port = await freePort();
  const hearth = await spawnHearth(['--port', String(port), '--data', dataDir, '--project', projectId, '--max-signups-per-address', '2', '--log-level', 'warn', ...extraArgs], { HEARTH_ADMIN_KEY: adminKey });
  const apiKey = /API key (\S+)/.exec(hearth.output())?.[1];
  assert.ok(apiKey, hearth.output());
  const nginx = await startNginx(hearth.url);
  return {
    hearth,
    nginx,
    apiKey,
    async close() {
      await nginx.stop();
      await hearth.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const consoleSignIn = (deployment: Deployment, from: string, key: string, url = deployment.nginx.url, headers: Record<string, string> = {}) =>
  postFrom(from, `${url}/hearth/v1/console/session`, { adminKey: key }, headers);

const signUp = (deployment: Deployment, from: string, url = deployment.nginx.url, headers: Record<string, string> = {}) =>
  postFrom(from, `${url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${deployment.apiKey}`, { returnSecureToken: true }, headers);

/** Ten wrong console keys: the failures that lock an address out. */
async function wrongKeys(deployment: Deployment, from: string, url?: string, forge?: (i: number) => Record<string, string>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) statuses.push((await consoleSignIn(deployment, from, `wrong-key-${i}-0123456789abcdef0123456789`, url, forge?.(i))).status);
  return statuses;
}

const skip = !findNginx() && 'nginx is not installed (apt-get install nginx)';

describe('--trust-proxy 127.0.0.1 behind nginx: each client is limited on its own address', { skip, timeout: 240_000 }, () => {
  let deployment: Deployment;
  before(async () => {
    deployment = await deploy(['--trust-proxy', '127.0.0.1']);
  });
  after(async () => deployment?.close());

  test("an attacker's wrong console keys lock out the attacker, not the operator", async () => {
    assert.deepEqual(await wrongKeys(deployment, '127.0.0.2'), Array<number>(10).fill(401));
    assert.equal((await consoleSignIn(deployment, '127.0.0.2', adminKey)).status, 429, 'the attacker is locked out, even with the key');
    const operator = await consoleSignIn(deployment, '127.0.0.3', adminKey);
    assert.equal(operator.status, 200, JSON.stringify(operator.body));
    assert.equal(operator.body.operator, 'admin');
  });

  test('sign-ups are counted per client, not for everyone behind the proxy', async () => {
    const first = [await signUp(deployment, '127.0.0.5'), await signUp(deployment, '127.0.0.5'), await signUp(deployment, '127.0.0.5')];
    assert.deepEqual(first.map((answer) => answer.status), [200, 200, 400]);
    assert.match(first[2]!.body.error?.message ?? '', /TOO_MANY_ATTEMPTS_TRY_LATER/);
    const second = [await signUp(deployment, '127.0.0.6'), await signUp(deployment, '127.0.0.6')];
    assert.deepEqual(second.map((answer) => answer.status), [200, 200]);
  });

  test('X-Forwarded-For a client writes itself is not believed: through the proxy, nor straight to Hearth', async () => {
    // Through nginx: it appends the real address after the forged one; only the proxy is trusted.
    const forgedThroughProxy = await wrongKeys(deployment, '127.0.0.7', undefined, (i) => ({ 'x-forwarded-for': `198.51.100.${i}` }));
    assert.deepEqual(forgedThroughProxy, Array<number>(10).fill(401));
    assert.equal((await consoleSignIn(deployment, '127.0.0.7', adminKey, undefined, { 'x-forwarded-for': '198.51.100.99' })).status, 429);
    // Straight to Hearth from an address that is not a trusted proxy: its own address counts.
    const direct = deployment.hearth.url;
    const forgedDirect = await wrongKeys(deployment, '127.0.0.8', direct, (i) => ({ 'x-forwarded-for': `203.0.113.${i}` }));
    assert.deepEqual(forgedDirect, Array<number>(10).fill(401));
    assert.equal((await consoleSignIn(deployment, '127.0.0.8', adminKey, direct, { 'x-forwarded-for': '203.0.113.99' })).status, 429);
    // Nor can a direct client spend someone else's budget by naming them.
    assert.equal((await signUp(deployment, '127.0.0.9', direct, { 'x-forwarded-for': '127.0.0.6' })).status, 200);
  });

  test('an IPv6 client counts as its /64, as one host usually holds a whole /64', async () => {
    // From the trusted proxy's own address (127.0.0.1), straight to Hearth, naming IPv6 clients.
    const direct = deployment.hearth.url;
    const fromHost = (address: string) => ({ 'x-forwarded-for': address });
    const rotating = await wrongKeys(deployment, '127.0.0.1', direct, (i) => fromHost(`2001:db8:0:1::${i + 1}`));
    assert.deepEqual(rotating, Array<number>(10).fill(401));
    assert.equal((await consoleSignIn(deployment, '127.0.0.1', adminKey, direct, fromHost('2001:db8:0:1:ffff::7'))).status, 429, 'another address of the same /64 is the same client');
    const elsewhere = await consoleSignIn(deployment, '127.0.0.1', adminKey, direct, fromHost('2001:db8:0:2::1'));
    assert.equal(elsewhere.status, 200, 'another /64 is another client');
  });
});

describe('without --trust-proxy nothing changes: X-Forwarded-For is ignored', { skip, timeout: 240_000 }, () => {
  let deployment: Deployment;
  before(async () => {
    deployment = await deploy([]);
  });
  after(async () => deployment?.close());

  test('behind the proxy every client has the proxy\'s address; a direct client is its own address whatever it forwards', async () => {
    assert.deepEqual(await wrongKeys(deployment, '127.0.0.2'), Array<number>(10).fill(401));
    assert.equal((await consoleSignIn(deployment, '127.0.0.3', adminKey)).status, 429, 'one address for everyone behind nginx');
    const direct = await consoleSignIn(deployment, '127.0.0.4', adminKey, deployment.hearth.url, { 'x-forwarded-for': '127.0.0.1' });
    assert.equal(direct.status, 200, 'a direct client from elsewhere is not the proxy, whatever it forwards');
  });
});

test('--trust-proxy refuses what is not an address or a range', async () => {
  const dataDir = tempDataDir();
  try {
    await assert.rejects(spawnHearth(['--port', String(await freePort()), '--data', dataDir, '--trust-proxy', '127.0.0.1,nginx.local']), /"nginx\.local" is not an IP address/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
