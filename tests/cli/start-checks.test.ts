/**
 * `hearth start` as an operator runs it: oidc-provider (and its runtime warning) is loaded only
 * with --demo-idp, --dev beyond loopback is refused unless --dev-allow-remote says it is meant
 * (and then announced), and the help text names only what exists.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { devExposure, isLoopbackHost } from '../../packages/server/src/cli/start-checks.js';
import { freePort, repoRoot, spawnHearth } from '../helpers/hearth.js';
import { hearthCommand } from '../helpers/hearth-command.js';

const dataDirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-start-'));
  dataDirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs `hearth start ...args` to its end (it must exit by itself) and returns its code and output. */
function runToExit(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [...hearthCommand(), ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolveRun) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, output });
    }),
  );
}

test('loopback addresses are told apart from the rest', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost', 'LOCALHOST']) assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['0.0.0.0', '::', '192.168.1.4', 'example.com', '127.0.0.1.example.com']) assert.equal(isLoopbackHost(host), false, host);
  assert.equal(devExposure({ dev: false, host: '0.0.0.0', devAllowRemote: false }).verdict, 'fine');
  assert.equal(devExposure({ dev: true, host: '127.0.0.1', devAllowRemote: false }).verdict, 'fine');
  assert.equal(devExposure({ dev: true, host: '0.0.0.0', devAllowRemote: false }).verdict, 'refuse');
  assert.equal(devExposure({ dev: true, host: '0.0.0.0', devAllowRemote: true }).verdict, 'warn');
});

test('--dev on a non-loopback host is refused without --dev-allow-remote, and nothing listens', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const { code, output } = await runToExit(['start', '--dev', '--host', '0.0.0.0', '--port', String(port), '--data', dataDir()]);
  assert.notEqual(code, 0);
  assert.match(output, /refusing to start: --dev on 0\.0\.0\.0/);
  assert.match(output, /--dev-allow-remote/);
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
});

test('--dev-allow-remote starts it and warns loudly; without --demo-idp oidc-provider is never loaded', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const hearth = await spawnHearth(['--dev', '--dev-allow-remote', '--host', '0.0.0.0', '--port', String(port), '--data', dataDir()]);
  try {
    assert.equal((await fetch(`${hearth.url}/healthz`)).status, 200);
    assert.match(hearth.output(), /WARNING: --dev on 0\.0\.0\.0 lets anyone who can reach this address act as administrator/);
    assert.doesNotMatch(hearth.output(), /oidc-provider|Unsupported runtime/);
  } finally {
    await hearth.stop();
  }
});

test('a plain loopback start neither warns about --dev nor loads oidc-provider', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const hearth = await spawnHearth(['--port', String(port), '--data', dataDir()]);
  try {
    assert.doesNotMatch(hearth.output(), /WARNING|oidc-provider|Unsupported runtime/);
  } finally {
    await hearth.stop();
  }
});

async function bannerOf(hearth: { output: () => string }): Promise<string> {
  for (let waited = 0; !hearth.output().includes('    connect '); waited += 50) {
    assert.ok(waited < 30_000, `no start banner:\n${hearth.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return hearth.output();
}

test('the start banner names the console and where mails and texts go (never the SMTP password)', { timeout: 90_000 }, async () => {
  const port = await freePort();
  const plain = await spawnHearth(['--port', String(port), '--data', dataDir()]);
  try {
    const banner = await bannerOf(plain);
    assert.match(banner, new RegExp(`console +http://127\\.0\\.0\\.1:${port}/console\n`));
    assert.match(banner, new RegExp(`mail +no SMTP server: mails are not sent, only kept in the console's Outbox \\(http://127\\.0\\.0\\.1:${port}/console/outbox\\)`));
    assert.match(banner, /sms +no provider: phone sign-in and SMS second factors are refused/);
  } finally {
    await plain.stop();
  }
  const withSmtp = await spawnHearth(['--port', String(port), '--data', dataDir(), '--dev', '--smtp-url', 'smtp://mailer:s3cret-pass@127.0.0.1:2525']);
  try {
    const banner = await bannerOf(withSmtp);
    assert.match(banner, /mail +sent through 127\.0\.0\.1:2525, copies kept in the console's Outbox/);
    assert.match(banner, /sms +codes kept in the console's Outbox/);
    assert.doesNotMatch(banner, /s3cret-pass/);
  } finally {
    await withSmtp.stop();
  }
});

test('with --demo-idp the provider is loaded and offered', { timeout: 60_000 }, async () => {
  const port = await freePort();
  const idpPort = await freePort();
  const hearth = await spawnHearth(['--port', String(port), '--data', dataDir(), '--demo-idp', String(idpPort)]);
  try {
    // /healthz answers as soon as Hearth listens; the provider starts right after.
    let status = 0;
    for (let tries = 0; tries < 100 && status !== 200; tries++) {
      status = await fetch(`http://127.0.0.1:${idpPort}/.well-known/openid-configuration`).then(
        (response) => response.status,
        () => 0,
      );
      if (status !== 200) await new Promise((wait) => setTimeout(wait, 100));
    }
    assert.equal(status, 200);
  } finally {
    await hearth.stop();
  }
});

test('the start help names only what exists', { timeout: 60_000 }, async () => {
  const { code, output } = await runToExit(['start', '--help']);
  assert.equal(code, 0);
  assert.match(output, /--dev-allow-remote/);
  // Every page it names is served: the console among them now.
  assert.match(output, /operator\s+console \(\/console\)/);
  const hearth = await spawnHearth(['--port', String(await freePort()), '--data', dataDir()]);
  try {
    const page = await fetch(`${hearth.url}/console`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="root">/);
  } finally {
    await hearth.stop();
  }
});
