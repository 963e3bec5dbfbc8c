/**
 * Google's official Cloud Firestore emulator (from the Cloud SDK), started on a free port as an oracle
 * for differential tests and as the peer of the benches (bench/processes.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { freePort } from './hearth.js';

export interface GoogleEmulator {
  /** http://127.0.0.1:PORT */
  url: string;
  /** 127.0.0.1:PORT, for FIRESTORE_EMULATOR_HOST */
  hostPort: string;
  /** The process group of gcloud and its JVM (whose usage a bench reads). */
  pid: number;
  /** The version it printed, when it did. */
  version: string | undefined;
  stop(): Promise<void>;
}

const defaultStartupTimeoutMs = 60_000;
const stopTimeoutMs = 10_000;
const keptOutputChars = 20_000;

/** The Cloud SDK root that holds gcloud and the Firestore emulator component, if both are installed. */
export function findCloudSdkWithFirestoreEmulator(): string | undefined {
  const gcloud = (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, 'gcloud'))
    .find((candidate) => existsSync(candidate));
  if (!gcloud) return undefined;
  const sdkRoot = dirname(dirname(realpathSync(gcloud)));
  // Without the component, `gcloud emulators firestore start` would offer to install it and wait for an answer.
  return existsSync(join(sdkRoot, 'platform/cloud-firestore-emulator/cloud-firestore-emulator.jar')) ? sdkRoot : undefined;
}

export interface GoogleEmulatorOptions {
  /** 127.0.0.1:PORT to listen on (e.g. to restart on the same port); a free port when left out. */
  hostPort?: string;
  /** More `gcloud emulators firestore start` flags, e.g. `--rules=FILE`, `--import-data=FILE`. */
  args?: string[];
  /** How long it may take to answer (a loaded machine's JVM may need more than the default 60 s). */
  startupTimeoutMs?: number;
  /**
   * The JVM's just-in-time compilers: 'quick' (the default, for tests) stops at the first tier, which
   * halves the emulator's CPU over a test's few hundred to few thousand requests (its second tier
   * compiles for longer than such a run lasts: 300 REST commits and queries, 9.1 -> 4.2 CPU s);
   * 'full' is the JVM's default, for benches that measure the emulator at its steady state.
   */
  jit?: 'quick' | 'full';
}

/**
 * Starts the emulator (what `gcloud emulators firestore start` runs) on a free port and waits until it answers.
 * Returns undefined when gcloud or its Firestore emulator component is not installed.
 */
export async function startGoogleEmulator(options: GoogleEmulatorOptions = {}): Promise<GoogleEmulator | undefined> {
  const sdkRoot = findCloudSdkWithFirestoreEmulator();
  if (!sdkRoot) return undefined;
  for (let attempt = 1; ; attempt++) {
    const hostPort = options.hostPort ?? `127.0.0.1:${await freePort()}`;
    const started = await startOn(sdkRoot, hostPort, options.args ?? [], options.startupTimeoutMs ?? defaultStartupTimeoutMs, options.jit ?? 'quick');
    if ('emulator' in started) return started.emulator;
    // The emulator also opens a WebSocket server on a port of the kernel's choosing, which can
    // be the very port freePort() just released: then its main server cannot bind. Try again.
    const portRace = started.output.includes('java.net.BindException');
    if (!portRace || attempt === bindAttempts) throw new Error(`the Firestore emulator did not start: ${started.reason}\n${started.output}`);
  }
}

const bindAttempts = 3;

async function startOn(sdkRoot: string, hostPort: string, args: string[], startupTimeoutMs: number, jit: 'quick' | 'full'): Promise<{ emulator: GoogleEmulator } | { reason: string; output: string }> {
  const url = `http://${hostPort}`;
  const [host, port] = hostPort.split(':') as [string, string];
  // The component's own launcher, which `gcloud emulators firestore start` runs after starting Python
  // (about 0.6 CPU s and a second more per start); its flags are gcloud's, with --host-port split.
  // The launcher starts java: a process group of its own lets stop() end both.
  const launcher = join(sdkRoot, 'platform/cloud-firestore-emulator/cloud_firestore_emulator');
  const jvmOptions = [process.env.JAVA_TOOL_OPTIONS, jit === 'quick' ? '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' : undefined].filter(Boolean).join(' ');
  const child = spawn(launcher, ['start', `--host=${host}`, `--port=${port}`, '--database-mode=firestore-native', ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...(jvmOptions ? { JAVA_TOOL_OPTIONS: jvmOptions } : {}) },
  });
  const pid = child.pid!;
  let output = '';
  const keepOutput = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-keptOutputChars));
  child.stdout!.on('data', keepOutput);
  child.stderr!.on('data', keepOutput);
  const killOnExit = () => killGroup(pid, 'SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    process.removeListener('exit', killOnExit);
    await stopGroup(pid);
  };
  try {
    await waitUntilReady(url, () => child.exitCode !== null, startupTimeoutMs);
  } catch (error) {
    await stop();
    return { reason: (error as Error).message, output };
  }
  const version = /version[^\d]*(\d+\.\d+\.\d+)/i.exec(output)?.[1];
  return { emulator: { url, hostPort, pid, version, stop } };
}

/** Deletes every document of the emulator's default database for that project. */
export async function clearDatabase(url: string, projectId: string): Promise<void> {
  const response = await fetch(`${url}/emulator/v1/projects/${projectId}/databases/(default)/documents`, { method: 'DELETE' });
  if (!response.ok) throw new Error(`clearing the emulator's database failed: ${response.status} ${await response.text()}`);
}

async function waitUntilReady(url: string, exited: () => boolean, startupTimeoutMs: number): Promise<void> {
  const deadline = Date.now() + startupTimeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new Error('gcloud exited');
    try {
      const response = await fetch(`${url}/`);
      if ((await response.text()).trim() === 'Ok') return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`no "Ok" from GET ${url}/ within ${startupTimeoutMs / 1000} s`);
}

async function stopGroup(pid: number): Promise<void> {
  killGroup(pid, 'SIGTERM');
  if (await groupGoneWithin(pid, stopTimeoutMs)) return;
  killGroup(pid, 'SIGKILL');
  await groupGoneWithin(pid, stopTimeoutMs);
}

async function groupGoneWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (groupAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
