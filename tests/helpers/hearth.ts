import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { defaultOptions, type HearthOptions } from '../../packages/server/src/config.js';
import { createHearth, createLogger, type Hearth } from '../../packages/server/src/server.js';
import { dropTestDatabase, testDatabaseUrl } from './test-backend.js';
import { hearthCommand } from './hearth-command.js';

export const repoRoot = resolve(import.meta.dirname, '../..');

export interface TestHearth {
  hearth: Hearth;
  /** http://127.0.0.1:PORT */
  url: string;
  /** 127.0.0.1:PORT, for FIREBASE_AUTH_EMULATOR_HOST */
  hostPort: string;
  projectId: string;
  apiKey: string;
  adminKey: string;
  dataDir: string;
  close(): Promise<void>;
}

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'hearth-test-'));
}

/**
 * Starts Hearth in this process on a free port with a fresh data folder (and, with
 * HEARTH_TEST_BACKEND=postgres, a fresh database, dropped at close unless the folder was given).
 */
export async function startHearth(overrides: Partial<HearthOptions> = {}, logger?: Logger): Promise<TestHearth> {
  const dataDir = overrides.dataDir ?? tempDataDir();
  const databaseUrl = overrides.databaseUrl ?? (await testDatabaseUrl(dataDir));
  const options = defaultOptions({ port: 0, dataDir, dev: true, defaultProjectId: 'demo-test', logLevel: 'silent', webRoot: undefined, ...(databaseUrl ? { databaseUrl } : {}), ...overrides });
  const hearth = await createHearth(options, logger ?? createLogger(options.logLevel)).catch(async (error: unknown) => {
    if (!overrides.dataDir) await dropTestDatabase(dataDir);
    throw error;
  });
  const url = await hearth.listen();
  return {
    hearth,
    url,
    hostPort: url.replace('http://', ''),
    projectId: options.defaultProjectId,
    apiKey: hearth.defaultApiKey,
    adminKey: hearth.adminKey,
    dataDir,
    async close() {
      await hearth.close();
      if (!overrides.dataDir) {
        rmSync(dataDir, { recursive: true, force: true });
        await dropTestDatabase(dataDir);
      }
    },
  };
}

export interface SpawnedHearth {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `hearth start` as its own process, as a user would, and waits for /healthz. With
 * HEARTH_TEST_BACKEND=postgres, `--data DIR` also names DIR's test database (made on first use).
 * One process (`--workers 1`) unless `args` name a number of workers.
 */
export async function spawnHearth(args: string[], env: NodeJS.ProcessEnv = {}): Promise<SpawnedHearth> {
  const portIndex = args.indexOf('--port');
  const port = portIndex >= 0 ? args[portIndex + 1] : '9000';
  const dataIndex = args.indexOf('--data');
  const databaseUrl = dataIndex >= 0 && !args.includes('--database-url') ? await testDatabaseUrl(args[dataIndex + 1]!) : undefined;
  const backendArgs = databaseUrl ? ['--database-url', databaseUrl] : [];
  // One process unless the test asks for workers: on PostgreSQL the default is one per core, and
  // what a test kills, counts or reads the output of is the one serving process.
  const workerArgs = args.includes('--workers') ? [] : ['--workers', '1'];
  const child = spawn(process.execPath, [...hearthCommand(), 'start', ...args, ...backendArgs, ...workerArgs], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  // Generous: on a loaded shared machine a cold tsx start alone can take half a minute.
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`hearth exited early (${child.exitCode}):\n${output}`);
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`hearth did not become healthy:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

export { freePort } from './ports.js';

/** POSTs JSON and returns status and parsed body. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // leave as text; the caller's assertion will show it
  }
  return { status: response.status, body: parsed };
}
