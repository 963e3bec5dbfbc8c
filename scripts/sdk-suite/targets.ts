/**
 * What the suites run against: `hearth start --dev` from this checkout, or Google's Auth emulator
 * (`firebase emulators:start --only auth` from an npm `firebase-tools` installed outside the
 * repository), each in a process group of its own on free loopback ports, with a scratch folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../tests/helpers/ports.js';

export { freePort };

export interface Target {
  name: string;
  /** 127.0.0.1:PORT, for FIREBASE_AUTH_EMULATOR_HOST */
  hostPort: string;
  output(): string;
  stop(): Promise<void>;
}

export const repoRoot = resolve(import.meta.dirname, '../..');

export async function startHearthDev(projectId: string, extraArgs: string[] = []): Promise<Target> {
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), 'hearth-sdk-suite-'));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'packages/server/src/main.ts'), 'start', '--dev', '--project', projectId, '--port', String(port), '--data', data, '--log-level', 'warn', ...extraArgs],
    { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const target = supervise('hearth --dev', child, `127.0.0.1:${port}`, () => rmSync(data, { recursive: true, force: true }));
  await waitUntil(target, child, `http://127.0.0.1:${port}/healthz`, 120_000);
  return target;
}

export async function startAuthEmulator(projectId: string, firebaseBin: string): Promise<Target> {
  if (!existsSync(firebaseBin)) throw new Error(`${firebaseBin} is missing: npm install firebase-tools in the tools folder (outside the repository)`);
  const [port, hub, logging] = [await freePort(), await freePort(), await freePort()];
  const folder = mkdtempSync(join(tmpdir(), 'auth-emulator-'));
  writeFileSync(
    join(folder, 'firebase.json'),
    JSON.stringify({ emulators: { auth: { host: '127.0.0.1', port }, hub: { host: '127.0.0.1', port: hub }, logging: { host: '127.0.0.1', port: logging }, ui: { enabled: false } } }),
  );
  const child = spawn(firebaseBin, ['emulators:start', '--only', 'auth', '--project', projectId, '--config', join(folder, 'firebase.json')], {
    cwd: folder,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_UPDATE_NOTIFIER: '1', FIREBASE_CLI_DISABLE_UPDATE_CHECK: 'true', CI: 'true' },
  });
  const target = supervise('Google Auth emulator', child, `127.0.0.1:${port}`, () => rmSync(folder, { recursive: true, force: true }));
  await waitUntil(target, child, `http://127.0.0.1:${port}/`, 120_000);
  return target;
}

/** Google's Firestore emulator from gcloud (`gcloud emulators firestore start`), the Firestore suite's oracle. */
export async function startFirestoreEmulator(): Promise<Target> {
  const port = await freePort();
  const child = spawn('gcloud', ['emulators', 'firestore', 'start', `--host-port=127.0.0.1:${port}`], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CLOUDSDK_CORE_DISABLE_PROMPTS: '1' },
  });
  const target = supervise('Google Firestore emulator', child, `127.0.0.1:${port}`, () => undefined);
  await waitUntil(target, child, `http://127.0.0.1:${port}/`, 120_000);
  return target;
}

function supervise(name: string, child: ChildProcess, hostPort: string, cleanUp: () => void): Target {
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const killOnExit = () => killGroup(child.pid!, 'SIGKILL');
  process.once('exit', killOnExit);
  return {
    name,
    hostPort,
    output: () => output,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        killGroup(child.pid!, 'SIGTERM');
        const timer = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      cleanUp();
    },
  };
}

async function waitUntil(target: Target, child: ChildProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${target.name} exited early (${child.exitCode}):\n${target.output()}`);
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await target.stop();
      throw new Error(`${target.name} did not answer ${url}:\n${target.output()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
