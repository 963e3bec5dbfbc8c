/** What the benches run against: Hearth in this process, or Google's emulator in its own, and REST requests to either. */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnHearth } from '../../tests/helpers/hearth.js';
import { processTreeCpuSeconds } from '../../tests/helpers/proc-usage.js';
import { startBenchHearth } from '../hearth-setup.js';
import { startFirestoreEmulator } from '../processes.js';
import { mib } from '../stats.js';

export type Json = Record<string, unknown>;

export interface Target {
  name: string;
  /** Whether to ask for query explain (Hearth reports documents scanned; the emulator would run the slow query again). */
  explains: boolean;
  /** http://127.0.0.1:PORT: REST, and gRPC on the same port. */
  origin: string;
  /** 127.0.0.1:PORT, for FIRESTORE_EMULATOR_HOST. */
  hostPort: string;
  projectId: string;
  /** Resident memory and CPU time so far of the server's processes (Hearth's is this one), when known. */
  usage(): { rssBytes: number; cpuMs: number } | undefined;
  /** A line on memory and disk, for the report. */
  footprint(): string;
  close(): Promise<void>;
}

/** Enough of a target to send it REST requests (a process of clients has no more). */
export type Endpoint = Pick<Target, 'name' | 'origin' | 'projectId'>;

export const documentsPath = (target: Endpoint) => `/v1/projects/${target.projectId}/databases/(default)/documents`;
export const documentName = (target: Endpoint, collection: string, id: string) => `projects/${target.projectId}/databases/(default)/documents/${collection}/${id}`;

function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

export async function startHearthTarget(): Promise<Target> {
  const bench = await startBenchHearth();
  const { hearth } = bench;
  const dataDir = hearth.options.dataDir;
  return {
    name: 'Hearth',
    explains: true,
    origin: bench.url,
    hostPort: bench.url.replace(/^http:\/\//, ''),
    projectId: hearth.options.defaultProjectId,
    usage: () => {
      const cpu = process.cpuUsage();
      return { rssBytes: process.memoryUsage().rss, cpuMs: (cpu.user + cpu.system) / 1000 };
    },
    footprint: () => `Hearth process RSS ${mib(process.memoryUsage().rss)} (includes this client), data folder ${mib(directoryBytes(dataDir))}`,
    close: () => bench.close(),
  };
}

/**
 * `hearth start --workers N` on a fresh data folder (SQLite), in processes of its own. The bench's
 * clients all connect from 127.0.0.1, which is named a trusted proxy, so the primary hands their
 * connections to the workers in turn: listeners and the writer land on every worker.
 */
export async function startHearthWorkersTarget(workers: number): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-workers-'));
  const projectId = 'demo-hearth';
  const hearth = await spawnHearth(['--port', String(await freePort()), '--data', dataDir, '--dev', '--project', projectId, '--log-level', 'error', '--workers', String(workers), '--trust-proxy', '127.0.0.1']);
  const pid = hearth.child.pid!;
  return {
    name: `Hearth --workers ${workers}`,
    explains: true,
    origin: hearth.url,
    hostPort: hearth.url.replace(/^http:\/\//, ''),
    projectId,
    usage: () => ({ rssBytes: 0, cpuMs: processTreeCpuSeconds(pid) * 1000 }),
    footprint: () => `data folder ${mib(directoryBytes(dataDir))}`,
    close: async () => {
      await hearth.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Google's emulator under `projectId`, or the reason it could not start. */
export async function startEmulatorTarget(projectId: string): Promise<Target | string> {
  const emulator = await startFirestoreEmulator();
  if (typeof emulator === 'string') return emulator;
  return {
    name: 'emulator',
    explains: false,
    origin: emulator.origin,
    hostPort: emulator.hostPort,
    projectId,
    usage: () => emulator.usage(),
    footprint: () => {
      const rss = emulator.usage()?.rssBytes;
      return `emulator${emulator.version ? ` ${emulator.version}` : ''} processes RSS ${rss === undefined ? 'unknown' : mib(rss)} (JVM_FLAGS=${process.env.JVM_FLAGS ?? 'unset: default heap'})`;
    },
    close: () => emulator.close(),
  };
}

export const headers = { 'content-type': 'application/json', authorization: 'Bearer owner' };

/** POSTs to the target's documents path and insists on a 2xx answer; a bench must never time errors. */
export async function post(target: Endpoint, suffix: string, body: string): Promise<string> {
  const response = await fetch(`${target.origin}${documentsPath(target)}${suffix}`, { method: 'POST', headers, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`${target.name} POST ${suffix} answered ${response.status}: ${text.slice(0, 500)}`);
  return text;
}
