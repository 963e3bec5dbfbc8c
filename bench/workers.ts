/**
 * `npm run bench -- workers`: `hearth start --workers N` on one data folder (SQLite) and on one
 * PostgreSQL database, for N = 1, 2 and the machine's cores (when more than 2): lookups, token refreshes, 20-result queries and
 * 1-write commits per second, each as a ratio to one worker in the same run. The load client
 * connects from as many loopback addresses as it has connections, chosen so that each worker gets
 * the same number (a worker serves whole client addresses). Settings: BENCH_SECONDS (5),
 * BENCH_WARMUP_SECONDS (1), BENCH_WORKERS_CONNECTIONS (12), BENCH_WORKERS (1,2,cores),
 * BENCH_WORKERS_SAMPLES (200 commits for the commit-to-snapshot latency: REST commits one at a
 * time from a client on worker 1, a firebase SDK listener on the same worker and on another),
 * BENCH_WORKERS_STORE (sqlite, postgres or both: both). The load client (and PostgreSQL) share
 * the machine's cores with the workers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stickyWorker } from '../packages/server/src/workers/worker-count.js';
import { freePort, spawnHearth, type SpawnedHearth } from '../tests/helpers/hearth.js';
import { createTestPgDatabase } from '../tests/helpers/pg-database.js';
import { machineCpuTicks, processTreeCpuSeconds } from '../tests/helpers/proc-usage.js';
import { envCount, envCounts, envNumber, machineLine, progress } from './env.js';
import { forwardFrom, type AddressForwarder } from '../tests/helpers/address-forwarder.js';
import { bodies, paths, post, type BenchUser } from './hearth-setup.js';
import { commitToSnapshot } from './postgres/instances.js';
import { measureLoad, type LoadSettings, type LoadTarget } from './load.js';
import type { Rate } from './stats.js';

const projectId = 'demo-bench-workers';
const documentsRoot = `projects/${projectId}/databases/(default)/documents`;
const userCount = 50;
const queryDocuments = 200;

const settings: LoadSettings = {
  seconds: envNumber('BENCH_SECONDS', 5),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 1),
  connections: envCount('BENCH_WORKERS_CONNECTIONS', 12),
};
const cores = availableParallelism();
const latencySamples = envCount('BENCH_WORKERS_SAMPLES', 200);
const workerCounts = envCounts('BENCH_WORKERS', [...new Set([1, 2, cores])].sort((a, b) => a - b));

/** `connections` source addresses, as many for each of `workers` workers. */
function balancedAddresses(connections: number, workers: number): string[] {
  const byWorker: string[][] = Array.from({ length: workers }, () => []);
  for (let last = 2, octet = 0; byWorker.some((list) => list.length < Math.ceil(connections / workers)); last++) {
    if (last > 254) {
      last = 1;
      octet++;
    }
    const address = `127.0.${octet}.${last}`;
    const list = byWorker[stickyWorker(address, workers)]!;
    if (list.length < Math.ceil(connections / workers)) list.push(address);
  }
  // Interleaved, so the connections take them in turn: worker 0's, worker 1's, ...
  return Array.from({ length: connections }, (_, i) => byWorker[i % workers]![Math.floor(i / workers)]!);
}

interface Served {
  hearth: SpawnedHearth;
  apiKey: string;
  dataDir: string;
}

async function start(workers: number, databaseUrl: string | undefined): Promise<Served> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-workers-'));
  const hearth = await spawnHearth(['--port', String(await freePort()), '--data', dataDir, '--dev', '--project', projectId, '--log-level', 'error', ...(databaseUrl ? ['--database-url', databaseUrl] : []), '--workers', String(workers)]);
  // /healthz answers once the first worker serves; the banner comes when all of them do.
  const deadline = Date.now() + 60_000;
  let banner: RegExpExecArray | null;
  while (!(banner = /API key (\S+)/.exec(hearth.output()))) {
    if (Date.now() > deadline) throw new Error(`no API key in the banner:\n${hearth.output()}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  return { hearth, apiKey: banner[1]!, dataDir };
}

async function seed(served: Served): Promise<BenchUser[]> {
  const users: BenchUser[] = [];
  for (let i = 0; i < userCount; i++) {
    const email = `worker-bench-${i}@example.com`;
    const password = `bench-password-${i}`;
    const json = await post(`${served.hearth.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${served.apiKey}`, JSON.stringify({ email, password, returnSecureToken: true }), 'application/json');
    users.push({ email, password, localId: String(json.localId), idToken: String(json.idToken), refreshToken: String(json.refreshToken) });
  }
  const writes = Array.from({ length: queryDocuments }, (_, i) => ({ update: { name: `${documentsRoot}/items/i${String(i).padStart(4, '0')}`, fields: { rank: { integerValue: String(i) }, title: { stringValue: `item ${i}` } } } }));
  const response = await fetch(`${served.hearth.url}/v1/${documentsRoot}:commit`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer owner' }, body: JSON.stringify({ writes }) });
  if (!response.ok) throw new Error(`seeding the query collection: ${response.status} ${await response.text()}`);
  return users;
}

let commitCounter = 0;

function targets(served: Served, users: BenchUser[], sourceAddresses: string[]): Array<{ name: string; target: LoadTarget }> {
  const url = served.hearth.url;
  const json = { 'content-type': 'application/json' };
  const owner = { ...json, authorization: 'Bearer owner' };
  const query = JSON.stringify({ structuredQuery: { from: [{ collectionId: 'items' }], orderBy: [{ field: { fieldPath: 'rank' }, direction: 'DESCENDING' }], limit: 20 } });
  return [
    { name: 'accounts:lookup', target: { title: 'lookup', url, method: 'POST', path: paths.lookup(served.apiKey), headers: json, bodies: users.map(bodies.lookup), sourceAddresses } },
    { name: 'token refresh', target: { title: 'refresh', url, method: 'POST', path: paths.refresh(served.apiKey), headers: { 'content-type': 'application/x-www-form-urlencoded' }, bodies: users.map(bodies.refresh), sourceAddresses } },
    { name: 'runQuery, 20 results', target: { title: 'query', url, method: 'POST', path: `/v1/${documentsRoot}:runQuery`, headers: owner, bodies: [query], sourceAddresses } },
    {
      name: 'commit, 1 write',
      target: {
        title: 'commit',
        url,
        method: 'POST',
        path: `/v1/${documentsRoot}:commit`,
        headers: owner,
        // Fresh documents each run: a write per request, none contending for one row.
        bodies: () => Array.from({ length: 20_000 }, () => JSON.stringify({ writes: [{ update: { name: `${documentsRoot}/writes/w${++commitCounter}`, fields: { n: { integerValue: String(commitCounter) } } } }] })),
        sourceAddresses,
      },
    },
  ];
}

/**
 * Commit-to-snapshot latency with the writer on worker 1 and the listener on worker 1 or on worker 2:
 * clients at addresses that `stickyWorker` sends there, each through a forwarder (one more hop for
 * both, alike).
 */
async function crossWorkerLatency(served: Served, workers: number): Promise<string[]> {
  const port = Number(new URL(served.hearth.url).port);
  /** The `nth` loopback address (0-based) that `stickyWorker` gives to `worker`. */
  const addressOf = (worker: number, nth: number): string => {
    for (let last = 2, found = 0; ; last++) {
      const address = `127.0.0.${last}`;
      if (stickyWorker(address, workers) === worker && found++ === nth) return address;
    }
  };
  const addresses = [addressOf(0, 0), addressOf(0, 1), ...(workers > 1 ? [addressOf(1, 0)] : [])];
  const forwarders: AddressForwarder[] = [];
  try {
    for (const address of addresses) forwarders.push(await forwardFrom(address, port));
    const instances = { urls: forwarders.map((forwarder) => `http://127.0.0.1:${forwarder.port}`), ports: forwarders.map((forwarder) => forwarder.port), close: async () => undefined };
    const lines: string[] = [];
    const same = await commitToSnapshot(instances, 1, latencySamples);
    lines.push(`${workers} worker(s), listener on the writer's worker: p50 ${same.p50.toFixed(2)} ms, p99 ${same.p99.toFixed(2)} ms`);
    if (workers > 1) {
      const other = await commitToSnapshot(instances, 2, latencySamples);
      lines.push(`${workers} worker(s), listener on another worker:     p50 ${other.p50.toFixed(2)} ms, p99 ${other.p99.toFixed(2)} ms`);
    }
    return lines;
  } finally {
    for (const forwarder of forwarders) await forwarder.close();
  }
}

type Store = 'sqlite' | 'postgres';

export async function runWorkersBench(): Promise<void> {
  const wanted = process.env.BENCH_WORKERS_STORE ?? 'both';
  for (const store of ['sqlite', 'postgres'] as Store[]) if (wanted === 'both' || wanted === store) await runWorkersBenchOn(store);
}

async function runWorkersBenchOn(store: Store): Promise<void> {
  console.log(`hearth start --workers N on ${store === 'sqlite' ? 'one data folder (SQLite)' : 'one PostgreSQL database'}: requests per second by number of worker processes`);
  console.log(machineLine());
  console.log(`load average at start: ${loadavg().map((n) => n.toFixed(2)).join(' ')} (shared machine: compare ratios, not absolutes)`);
  console.log(`${settings.connections} connections from as many loopback addresses, as many per worker; ${settings.seconds} s runs after ${settings.warmupSeconds} s warm-up; ${store === 'postgres' ? 'PostgreSQL and ' : ''}the load client on the same cores`);
  const rates = new Map<string, Map<number, Rate>>();
  const latencyLines: string[] = [];
  /** How busy the whole machine was during each run (warm-up included), by request and worker count. */
  const busyShare = new Map<string, number>();
  for (const workers of workerCounts) {
    // A database of its own for each count, seeded alike: one left behind by another count's
    // 1-write commits (thousands of them) answered the same queries at half the rate.
    const database = store === 'postgres' ? await createTestPgDatabase() : undefined;
    const served = await start(workers, database?.url);
    try {
      const users = await seed(served);
      progress(`${workers} worker(s) serving`);
      for (const { name, target } of targets(served, users, balancedAddresses(settings.connections, workers))) {
        const cpuBefore = processTreeCpuSeconds(served.hearth.child.pid!);
        const machineBefore = machineCpuTicks();
        const rate = await measureLoad(target, settings);
        const machineAfter = machineCpuTicks();
        if (machineBefore && machineAfter) busyShare.set(`${name}/${workers}`, (machineAfter.busy - machineBefore.busy) / (machineAfter.all - machineBefore.all));
        // Hearth's processes' CPU per request, warm-up included in both counts (ops counts only the measured run: an upper bound, alike for every N).
        rate.cpuMsPerOp = ((processTreeCpuSeconds(served.hearth.child.pid!) - cpuBefore) * 1000) / rate.ops;
        if (!rates.has(name)) rates.set(name, new Map());
        rates.get(name)!.set(workers, rate);
        progress(`${name} with ${workers} worker(s): ${rate.perSecond.toFixed(0)}/s`);
      }
      if (workers <= 2) latencyLines.push(...(await crossWorkerLatency(served, workers)));
    } finally {
      await served.hearth.stop();
      rmSync(served.dataDir, { recursive: true, force: true });
      await database?.drop();
    }
  }
  const header = ['request', ...workerCounts.map((n) => `${n} worker${n === 1 ? '' : 's'}`)];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map(() => '---').join('|')}|`);
  for (const [name, byWorkers] of rates) {
    const one = byWorkers.get(workerCounts[0]!)!.perSecond;
    const cells = workerCounts.map((n) => {
      const rate = byWorkers.get(n)!;
      const detail = `p99 ${rate.p99.toFixed(1)} ms, Hearth ${rate.cpuMsPerOp!.toFixed(3)} CPU ms/request, client ${rate.clientCpuMsPerOp?.toFixed(3) ?? '?'}, machine ${busyShare.has(`${name}/${n}`) ? `${(100 * busyShare.get(`${name}/${n}`)!).toFixed(0)}%` : '?'} busy`;
      return n === workerCounts[0] ? `${rate.perSecond.toFixed(0)}/s (${detail})` : `${rate.perSecond.toFixed(0)}/s, ${(rate.perSecond / one).toFixed(2)}x (${detail})`;
    });
    console.log(`| ${name} | ${cells.join(' | ')} |`);
  }
  console.log(`Hearth: CPU of the primary and its workers per request; client: the load client's; machine: every core's busy share during the run (${store === 'postgres' ? 'PostgreSQL and ' : ''}the client included).`);
  console.log('');
  console.log(`commit-to-snapshot, ${latencySamples} REST commits one at a time from a client on worker 1, a firebase SDK listener (gRPC) on:`);
  for (const line of latencyLines) console.log(`  ${line}`);
}
