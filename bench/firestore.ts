/**
 * `npm run bench -- firestore`: Hearth's Cloud Firestore v1 REST API.
 *
 * 1. Commit throughput (documents written per second through `:commit`), beside raw better-sqlite3
 *    inserts of the same rows (the same JSON text, one row per document, WAL, synchronous=FULL, one
 *    transaction per batch) measured in this same process run: the ratio is the price of Hearth's
 *    HTTP, validation and index upkeep over the bare durable write.
 * 2. Query latency for results of exactly 20 documents in collections of 10k, 100k and 1M documents:
 *    equality on one field, a range in the order of one field, and two equalities (answered by
 *    merging two single-field indexes). The claim under test: a query's time follows the size of its
 *    result, not of the collection, so the three sizes should be close.
 * 3. The same workload against Google's Firestore emulator (`gcloud emulators firestore start`) on
 *    this machine, when installed.
 *
 * Settings: BENCH_SECONDS (5) and BENCH_WARMUP_SECONDS (1) per commit run;
 * HEARTH_BENCH_FIRESTORE_SIZES (10000,100000,1000000), HEARTH_BENCH_FIRESTORE_PEER_SIZES (the same);
 * HEARTH_BENCH_FIRESTORE_QUERIES (300 per query kind and size), HEARTH_BENCH_FIRESTORE_QUERY_SECONDS
 * (60, cap per query kind and size), HEARTH_BENCH_FIRESTORE_CLIENTS (4 concurrent committers),
 * HEARTH_BENCH_FIRESTORE_LOAD_BATCH (500 writes per loading commit), HEARTH_BENCH_FIRESTORE_LOAD_PARALLEL
 * (4 loading commits in flight), HEARTH_BENCH_FIRESTORE_PEER_LOAD_SECONDS (900, the emulator's
 * budget per size; a size that would take longer is skipped), HEARTH_BENCH_FIRESTORE_TARGETS
 * (hearth,emulator). JVM_FLAGS reaches the emulator's JVM (e.g. -Xmx12g).
 *
 * With the defaults a run took about 15 minutes on a 2-core machine: Hearth loaded 1M documents in
 * ~3.5 min; the emulator loaded them in ~30 s but held ~6 GB and took 5–25 s per query at 1M, so its
 * largest size stops at the time cap after a few queries (marked "capped").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startTrivialServer } from './baselines.js';
import { startBenchHearth } from './hearth-setup.js';
import { measureConcurrent, percentile, type Rate } from './stats.js';

type Json = Record<string, unknown>;

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, not "${raw}"`);
  return value;
}

function envSizes(name: string, fallback: readonly number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const sizes = raw.split(',').map((part) => Number(part.trim().replace(/_/g, '')));
  for (const size of sizes) {
    if (!Number.isInteger(size) || size < 20 || size % 20 !== 0) throw new Error(`${name}: every size must be a whole multiple of 20, not "${raw}"`);
  }
  return sizes;
}

function envList(name: string, fallback: readonly string[]): string[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  return raw.split(',').map((part) => part.trim().toLowerCase()).filter(Boolean);
}

const settings = {
  seconds: envNumber('BENCH_SECONDS', 5),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 1),
  clients: Math.max(1, Math.round(envNumber('HEARTH_BENCH_FIRESTORE_CLIENTS', 4))),
  sizes: envSizes('HEARTH_BENCH_FIRESTORE_SIZES', [10_000, 100_000, 1_000_000]),
  queries: Math.max(1, Math.round(envNumber('HEARTH_BENCH_FIRESTORE_QUERIES', 300))),
  querySeconds: envNumber('HEARTH_BENCH_FIRESTORE_QUERY_SECONDS', 60),
  queryWarmup: 20,
  loadBatch: Math.max(1, Math.round(envNumber('HEARTH_BENCH_FIRESTORE_LOAD_BATCH', 500))),
  loadParallel: Math.max(1, Math.round(envNumber('HEARTH_BENCH_FIRESTORE_LOAD_PARALLEL', 4))),
  peerLoadSeconds: envNumber('HEARTH_BENCH_FIRESTORE_PEER_LOAD_SECONDS', 900),
  targets: envList('HEARTH_BENCH_FIRESTORE_TARGETS', ['hearth', 'emulator']),
};
const peerSizes = envSizes('HEARTH_BENCH_FIRESTORE_PEER_SIZES', settings.sizes);

/** Commit runs: writes per commit, concurrent clients. */
const commitShapes = [
  { batch: 1, clients: 1 },
  { batch: 1, clients: settings.clients },
  { batch: 100, clients: settings.clients },
];

function progress(message: string): void {
  process.stderr.write(`  … ${message}\n`);
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
const seconds = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const count = (value: number) => (value >= 1_000_000 && value % 1_000_000 === 0 ? `${value / 1_000_000}M` : value >= 1000 && value % 1000 === 0 ? `${value / 1000}k` : String(value));
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

// ---------------------------------------------------------------------------------------------
// Targets: Hearth in this process, the emulator in its own.

interface Target {
  name: string;
  /** Whether to ask for query explain (Hearth reports documents scanned; the emulator would run the slow query again). */
  explains: boolean;
  origin: string;
  projectId: string;
  /** A line on memory and disk, for the report. */
  footprint(): string;
  close(): Promise<void>;
}

const documentsPath = (target: Target) => `/v1/projects/${target.projectId}/databases/(default)/documents`;
const documentName = (target: Target, collection: string, id: string) => `projects/${target.projectId}/databases/(default)/documents/${collection}/${id}`;

function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

async function startHearthTarget(): Promise<Target> {
  const bench = await startBenchHearth();
  const { hearth } = bench;
  const dataDir = hearth.options.dataDir;
  return {
    name: 'Hearth',
    explains: true,
    origin: bench.url,
    projectId: hearth.options.defaultProjectId,
    footprint: () => `Hearth process RSS ${mib(process.memoryUsage().rss)} (includes this client), data folder ${mib(directoryBytes(dataDir))}`,
    close: () => bench.close(),
  };
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Resident memory of every process in a process group (Linux /proc), or undefined elsewhere. */
function groupRssBytes(pgid: number): number | undefined {
  try {
    let total = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        // Fields after the parenthesised command: state ppid pgrp ...
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(fields[2]) !== pgid) continue;
        const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'));
        if (match) total += Number(match[1]) * 1024;
      } catch {
        // The process ended while being read.
      }
    }
    return total;
  } catch {
    return undefined;
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops the whole process group (gcloud's Python, the launcher script and the JVM). */
async function stopGroup(pgid: number): Promise<void> {
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = performance.now() + 10_000;
  while (groupAlive(pgid) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (groupAlive(pgid)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * `gcloud emulators firestore start` in its own process group, or a reason it could not start.
 * The group is killed on exit or Ctrl-C so no JVM outlives the bench.
 */
async function startEmulatorTarget(projectId: string): Promise<Target | string> {
  const port = await freePort();
  let child: ChildProcess;
  let output = '';
  const spawnError = await new Promise<Error | undefined>((resolveSpawn) => {
    child = spawn('gcloud', ['emulators', 'firestore', 'start', `--host-port=127.0.0.1:${port}`, '--quiet'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CLOUDSDK_CORE_DISABLE_PROMPTS: '1' },
    });
    child.once('error', (error) => resolveSpawn(error));
    child.once('spawn', () => resolveSpawn(undefined));
  });
  if (spawnError) return `gcloud could not be started (${spawnError.message})`;
  const emulator = child!;
  const pgid = emulator.pid!;
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  emulator.stdout?.on('data', keep);
  emulator.stderr?.on('data', keep);
  let exited = false;
  emulator.once('exit', () => {
    exited = true;
  });
  const killNow = () => {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    killNow();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('exit', killNow);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const origin = `http://127.0.0.1:${port}`;
  const close = async () => {
    process.off('exit', killNow);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopGroup(pgid);
  };
  const deadline = performance.now() + 90_000;
  for (;;) {
    try {
      const response = await fetch(`${origin}/`);
      if (response.ok && (await response.text()).trim() === 'Ok') break;
    } catch {
      // Not listening yet.
    }
    if (exited || performance.now() > deadline) {
      await close();
      const tail = output.trim().split('\n').slice(-6).join('\n    ');
      return `the emulator ${exited ? 'exited' : 'did not answer within 90 s'}; its last output:\n    ${tail}`;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const version = /version[^\d]*(\d+\.\d+\.\d+)/i.exec(output)?.[1];
  return {
    name: 'emulator',
    explains: false,
    origin,
    projectId,
    footprint: () => {
      const rss = groupRssBytes(pgid);
      return `emulator${version ? ` ${version}` : ''} processes RSS ${rss === undefined ? 'unknown' : mib(rss)} (JVM_FLAGS=${process.env.JVM_FLAGS ?? 'unset: default heap'})`;
    },
    close,
  };
}

// ---------------------------------------------------------------------------------------------
// Requests.

const headers = { 'content-type': 'application/json', authorization: 'Bearer owner' };

/** POSTs and insists on a 2xx answer; a bench must never time errors. */
async function post(target: Target, suffix: string, body: string): Promise<string> {
  const response = await fetch(`${target.origin}${documentsPath(target)}${suffix}`, { method: 'POST', headers, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`${target.name} POST ${suffix} answered ${response.status}: ${text.slice(0, 500)}`);
  return text;
}

const int = (value: number) => ({ integerValue: String(value) });

/**
 * The query collection of `size` documents d0000000… with, for document i:
 *   group = i mod (size/20)   → every group has exactly 20 members
 *   n     = i                 → a range of 20 consecutive values is 20 documents
 *   a     = i mod A, b = ⌊i/A⌋ mod B with A·B = size/20 → each (a, b) pair has exactly 20 members,
 *           while a alone matches size/A documents and b alone size/B (both grow with the collection)
 *   s     = a short string, as real documents carry one
 */
interface Layout {
  size: number;
  collection: string;
  groups: number;
  A: number;
  B: number;
  idWidth: number;
}

function layoutFor(size: number, prefix: string): Layout {
  const cells = size / 20;
  let A = 1;
  for (let d = 1; d * d <= cells; d++) if (cells % d === 0) A = d;
  return { size, collection: `${prefix}${size}`, groups: cells, A, B: cells / A, idWidth: Math.max(7, String(size - 1).length) };
}

const docId = (layout: Layout, i: number) => `d${String(i).padStart(layout.idWidth, '0')}`;

function fieldsFor(layout: Layout, i: number): Json {
  return {
    group: int(i % layout.groups),
    n: int(i),
    a: int(i % layout.A),
    b: int(Math.floor(i / layout.A) % layout.B),
    s: { stringValue: `item number ${i}` },
  };
}

function commitBody(target: Target, collection: string, docs: { id: string; fields: Json }[]): string {
  return JSON.stringify({ writes: docs.map((doc) => ({ update: { name: documentName(target, collection, doc.id), fields: doc.fields } })) });
}

function checkCommit(target: Target, text: string, writes: number): void {
  const json = JSON.parse(text) as Json;
  const results = json.writeResults;
  if (!Array.isArray(results) || results.length !== writes || typeof json.commitTime !== 'string') {
    throw new Error(`${target.name} :commit of ${writes} writes answered ${text.slice(0, 300)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Commit throughput.

/** A commit workload of fresh documents (inserts) shaped like the query collection's. */
function commitOp(target: Target, batch: number): () => Promise<unknown> {
  const layout = layoutFor(1_000_000, 'unused');
  let next = 0;
  const run = `r${Math.random().toString(36).slice(2, 8)}b${batch}`;
  return async () => {
    const docs = Array.from({ length: batch }, () => {
      const i = next++;
      return { id: `${run}-${i}`, fields: fieldsFor(layout, i) };
    });
    checkCommit(target, await post(target, ':commit', commitBody(target, 'commits', docs)), batch);
  };
}

async function measureCommits(target: Target, shape: { batch: number; clients: number }): Promise<Rate> {
  return measureConcurrent(shape.clients, settings.warmupSeconds, settings.seconds, commitOp(target, shape.batch));
}

/** Raw better-sqlite3: the same document name and fields JSON per row, one transaction per batch. */
function rawSqliteBaseline(): { op: (batch: number) => () => Promise<unknown>; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-raw-'));
  const db = new Database(join(dir, 'raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE docs (name TEXT PRIMARY KEY, fields TEXT NOT NULL)');
  const insert = db.prepare<[string, string]>('INSERT INTO docs (name, fields) VALUES (?, ?)');
  const write = db.transaction((rows: [string, string][]) => {
    for (const row of rows) insert.run(...row);
  });
  const layout = layoutFor(1_000_000, 'unused');
  const prefix = 'projects/demo-hearth/databases/(default)/documents/commits/';
  let next = 0;
  return {
    op: (batch) => async () => {
      const rows = Array.from({ length: batch }, (): [string, string] => {
        const i = next++;
        return [`${prefix}raw-${i}`, JSON.stringify(fieldsFor(layout, i))];
      });
      write.immediate(rows);
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Loading and queries.

interface LoadResult {
  docs: number;
  seconds: number;
  complete: boolean;
}

/** Writes the collection in commits of `loadBatch`, `loadParallel` at once; stops early past `budgetSeconds`. */
async function load(target: Target, layout: Layout, budgetSeconds = Infinity): Promise<LoadResult> {
  const batches = Math.ceil(layout.size / settings.loadBatch);
  const started = performance.now();
  const deadline = started + budgetSeconds * 1000;
  let nextBatch = 0;
  let written = 0;
  let lastReport = started;
  const worker = async (): Promise<void> => {
    for (let b = nextBatch++; b < batches; b = nextBatch++) {
      if (performance.now() > deadline) return;
      const docs = [];
      for (let i = b * settings.loadBatch; i < Math.min(layout.size, (b + 1) * settings.loadBatch); i++) docs.push({ id: docId(layout, i), fields: fieldsFor(layout, i) });
      checkCommit(target, await post(target, ':commit', commitBody(target, layout.collection, docs)), docs.length);
      written += docs.length;
      if (performance.now() - lastReport > 15_000) {
        lastReport = performance.now();
        const elapsed = (lastReport - started) / 1000;
        progress(`${target.name}: ${written} of ${layout.size} loaded in ${elapsed.toFixed(0)} s (${(written / elapsed).toFixed(0)} docs/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: settings.loadParallel }, worker));
  return { docs: written, seconds: (performance.now() - started) / 1000, complete: written === layout.size };
}

interface QueryKind {
  name: string;
  describe(layout: Layout): string;
  /** A query body and the check of its answer, from a random number in [0, 1). */
  make(layout: Layout, random: () => number): { body: string; check(docs: Json[]): string | undefined };
}

const fieldFilter = (field: string, value: number) => ({ fieldFilter: { field: { fieldPath: field }, op: 'EQUAL', value: int(value) } });

function integerField(doc: Json, field: string): number {
  const fields = doc.fields as Record<string, { integerValue?: string }> | undefined;
  return Number(fields?.[field]?.integerValue);
}

const queryKinds: QueryKind[] = [
  {
    name: 'group == K limit 20',
    describe: (layout) => `${layout.groups} groups of exactly 20`,
    make(layout, random) {
      const group = Math.floor(random() * layout.groups);
      const body = JSON.stringify({ structuredQuery: { from: [{ collectionId: layout.collection }], where: fieldFilter('group', group), limit: 20 } });
      return {
        body,
        check: (docs) => (docs.every((doc) => integerField(doc, 'group') === group) ? undefined : `a document outside group ${group}`),
      };
    },
  },
  {
    name: 'orderBy n startAt X limit 20',
    describe: (layout) => `n = 0…${layout.size - 1}`,
    make(layout, random) {
      const start = Math.floor(random() * (layout.size - 19));
      const body = JSON.stringify({
        structuredQuery: {
          from: [{ collectionId: layout.collection }],
          orderBy: [{ field: { fieldPath: 'n' }, direction: 'ASCENDING' }],
          startAt: { values: [int(start)], before: true },
          limit: 20,
        },
      });
      return {
        body,
        check: (docs) => (docs.every((doc, k) => integerField(doc, 'n') === start + k) ? undefined : `n is not ${start}…${start + 19} in order`),
      };
    },
  },
  {
    name: 'a == x AND b == y (no limit)',
    describe: (layout) => `a matches ${count(layout.size / layout.A)}, b matches ${count(layout.size / layout.B)}, both 20`,
    make(layout, random) {
      const a = Math.floor(random() * layout.A);
      const b = Math.floor(random() * layout.B);
      const body = JSON.stringify({
        structuredQuery: { from: [{ collectionId: layout.collection }], where: { compositeFilter: { op: 'AND', filters: [fieldFilter('a', a), fieldFilter('b', b)] } } },
      });
      return {
        body,
        check: (docs) => (docs.every((doc) => integerField(doc, 'a') === a && integerField(doc, 'b') === b) ? undefined : `a document outside a == ${a} AND b == ${b}`),
      };
    },
  },
];

/** Mulberry32: the same query parameters for every target. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Latency {
  median: number;
  p99: number;
  n: number;
  capped: boolean;
  /** Documents the server read for one such query, when it says (query explain). */
  scanned?: number;
  /** The indexes it used, when it says. */
  plan?: string;
}

function summarize(latencies: number[], capped: boolean): Latency {
  const sorted = latencies.slice().sort((x, y) => x - y);
  return { median: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), n: sorted.length, capped };
}

/** A slow target stops at the time cap once it has this many measured queries. */
const minimumQueries = 3;

/** One client, one query at a time; every answer must hold exactly 20 documents that match. */
async function measureQueries(target: Target, layout: Layout, kind: QueryKind, seed: number): Promise<Latency> {
  const random = seeded(seed);
  const runOne = async (): Promise<number> => {
    const query = kind.make(layout, random);
    const began = performance.now();
    const text = await post(target, ':runQuery', query.body);
    const elapsed = performance.now() - began;
    const answer = JSON.parse(text) as unknown;
    if (!Array.isArray(answer)) throw new Error(`${target.name} ${kind.name}: runQuery answered ${text.slice(0, 300)}`);
    const docs = (answer as Json[]).filter((item) => item.document !== undefined).map((item) => item.document as Json);
    const names = new Set(docs.map((doc) => doc.name));
    const problem = docs.length !== 20 ? `${docs.length} documents` : names.size !== 20 ? 'repeated documents' : query.check(docs);
    if (problem) throw new Error(`${target.name} ${kind.name} on ${count(layout.size)}: expected 20 matching documents, got ${problem}; query ${query.body}`);
    return elapsed;
  };
  // Warm-up: up to queryWarmup queries, no more than 5 s of them, at least one.
  const warmupEnd = performance.now() + 5000;
  for (let i = 0; i < settings.queryWarmup && (i === 0 || performance.now() < warmupEnd); i++) await runOne();
  const latencies: number[] = [];
  const deadline = performance.now() + settings.querySeconds * 1000;
  let capped = false;
  while (latencies.length < settings.queries) {
    if (latencies.length >= minimumQueries && performance.now() > deadline) {
      capped = true;
      break;
    }
    latencies.push(await runOne());
  }
  return { ...summarize(latencies, capped), ...(await explain(target, layout, kind, seed)) };
}

/**
 * One more query, untimed, with `explainOptions: {analyze: true}`: the documents the server read to
 * answer (Hearth reports `debugStats.documents_scanned`) and the index it chose. Blank when the target
 * does not explain.
 */
async function explain(target: Target, layout: Layout, kind: QueryKind, seed: number): Promise<Pick<Latency, 'scanned' | 'plan'>> {
  if (!target.explains) return {};
  const query = kind.make(layout, seeded(seed));
  const body = JSON.stringify({ ...(JSON.parse(query.body) as Json), explainOptions: { analyze: true } });
  try {
    const answer = JSON.parse(await post(target, ':runQuery', body)) as Json[];
    const metrics = answer.find((item) => item.explainMetrics !== undefined)?.explainMetrics as
      | { planSummary?: { indexesUsed?: { properties?: string }[] }; executionStats?: { debugStats?: Record<string, unknown> } }
      | undefined;
    const scanned = Number(metrics?.executionStats?.debugStats?.documents_scanned);
    const plan = metrics?.planSummary?.indexesUsed?.map((index) => index.properties ?? '?').join(' + ');
    return { ...(Number.isFinite(scanned) ? { scanned } : {}), ...(plan ? { plan } : {}) };
  } catch {
    return {};
  }
}

/** The floor under every query: a fetch round trip to a bare Fastify route in this process. */
async function roundTripFloor(): Promise<Latency> {
  const trivial = await startTrivialServer();
  try {
    const once = async () => {
      const began = performance.now();
      const response = await fetch(trivial.url + trivial.path, { method: 'POST', headers, body: '{}' });
      await response.text();
      return performance.now() - began;
    };
    for (let i = 0; i < 50; i++) await once();
    const latencies: number[] = [];
    for (let i = 0; i < settings.queries; i++) latencies.push(await once());
    return summarize(latencies, false);
  } finally {
    await trivial.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Running one target through everything.

interface SizeResult {
  size: number;
  load?: LoadResult;
  /** Why this size was not measured, when it was not. */
  skipped?: string;
  queries: (Latency | undefined)[];
  footprint?: string;
}

interface TargetResult {
  name: string;
  projectId: string;
  commits: Map<string, Rate>;
  sizes: SizeResult[];
}

const shapeKey = (shape: { batch: number; clients: number }) => `${shape.batch}x${shape.clients}`;

/** Fills `result` as it goes, so a failure part-way still leaves what was measured. */
async function runTarget(
  target: Target,
  result: TargetResult,
  sizes: number[],
  raw: ReturnType<typeof rawSqliteBaseline> | undefined,
  rawRates: Map<number, Rate>,
  budgetSeconds: number,
): Promise<void> {
  for (const shape of commitShapes) {
    progress(`${target.name}: commits of ${shape.batch} write${shape.batch > 1 ? 's' : ''} from ${shape.clients} client${shape.clients > 1 ? 's' : ''}`);
    result.commits.set(shapeKey(shape), await measureCommits(target, shape));
    if (raw && !rawRates.has(shape.batch)) {
      progress(`baseline: raw better-sqlite3 transactions of ${shape.batch} insert${shape.batch > 1 ? 's' : ''}`);
      rawRates.set(shape.batch, await measureConcurrent(1, settings.warmupSeconds, settings.seconds, raw.op(shape.batch)));
    }
  }
  let lastRate: number | undefined;
  for (const size of sizes) {
    const layout = layoutFor(size, 'items');
    const entry: SizeResult = { size, queries: [] };
    result.sizes.push(entry);
    if (lastRate !== undefined && size / lastRate > budgetSeconds) {
      entry.skipped = `loading would take about ${seconds(size / lastRate)} s at the last size's ${lastRate.toFixed(0)} docs/s, over the ${budgetSeconds} s budget`;
      progress(`${target.name}: skipping ${count(size)}: ${entry.skipped}`);
      continue;
    }
    progress(`${target.name}: loading ${count(size)} documents into ${layout.collection} (commits of ${settings.loadBatch}, ${settings.loadParallel} in flight)`);
    entry.load = await load(target, layout, budgetSeconds);
    lastRate = entry.load.docs / entry.load.seconds;
    progress(`${target.name}: loaded ${entry.load.docs} in ${seconds(entry.load.seconds)} s (${lastRate.toFixed(0)} docs/s)`);
    if (!entry.load.complete) {
      entry.skipped = `loading passed the ${budgetSeconds} s budget with ${entry.load.docs} of ${size} documents written`;
      continue;
    }
    entry.footprint = target.footprint();
    for (const [k, kind] of queryKinds.entries()) {
      progress(`${target.name}: ${kind.name} on ${count(size)}`);
      entry.queries[k] = await measureQueries(target, layout, kind, size * 31 + k);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Report.

function render(head: string[], body: string[][], leftColumns = 1): string {
  const widths = head.map((cell, i) => Math.max(cell.length, ...body.map((line) => (line[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i < leftColumns ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

const docsPerSecond = (rate: Rate | undefined, batch: number) => (rate ? (rate.perSecond * batch).toFixed(0) : '—');
const latencyCell = (rate: Rate | undefined) => (rate ? `${ms(rate.p50)} / ${ms(rate.p99)}` : '—');
const queryCell = (latency: Latency | undefined) => (latency ? `${ms(latency.median)} / ${ms(latency.p99)} (${latency.n}${latency.capped ? ', capped' : ''})` : '—');

function report(hearth: TargetResult | undefined, peer: TargetResult | undefined, peerNote: string | undefined, rawRates: Map<number, Rate>, floor: Latency | undefined): void {
  console.log('');
  console.log('Commit throughput (documents written per second; p50/p99 ms per commit)');
  const commitBody = commitShapes.map((shape) => {
    const h = hearth?.commits.get(shapeKey(shape));
    const e = peer?.commits.get(shapeKey(shape));
    const raw = rawRates.get(shape.batch);
    const ratio = (x: Rate | undefined, y: Rate | undefined) => (x && y ? (x.perSecond / y.perSecond).toFixed(3) : '—');
    return [
      `${shape.batch} write${shape.batch > 1 ? 's' : ''}/commit, ${shape.clients} client${shape.clients > 1 ? 's' : ''}`,
      docsPerSecond(h, shape.batch),
      latencyCell(h),
      docsPerSecond(raw, shape.batch),
      latencyCell(raw),
      ratio(h, raw),
      docsPerSecond(e, shape.batch),
      latencyCell(e),
      ratio(h, e),
    ];
  });
  console.log(
    render(['commit shape', 'Hearth docs/s', 'p50/p99 ms', 'raw SQLite docs/s', 'p50/p99 ms', 'Hearth÷raw', 'emulator docs/s', 'p50/p99 ms', 'Hearth÷emulator'], commitBody),
  );
  console.log('raw SQLite: better-sqlite3 in this process, WAL, synchronous=FULL, one transaction per batch of the same rows');
  console.log('(document name, the same fields JSON), one writer (SQLite serialises writers anyway), no index but the name key.');
  console.log('Hearth÷emulator: above 1 when Hearth writes faster. The emulator keeps everything in memory and never syncs');
  console.log('to disk: its rate is not a durable one.');

  console.log('');
  console.log('Loading the query collections (commits of ' + settings.loadBatch + ' writes, ' + settings.loadParallel + ' in flight)');
  const sizes = [...new Set([...(hearth?.sizes ?? []), ...(peer?.sizes ?? [])].map((s) => s.size))].sort((x, y) => x - y);
  const loadCell = (entry: SizeResult | undefined) => {
    if (!entry) return 'not run';
    if (!entry.load) return 'skipped';
    return `${seconds(entry.load.seconds)} s, ${(entry.load.docs / entry.load.seconds).toFixed(0)} docs/s${entry.load.complete ? '' : ` (stopped at ${entry.load.docs})`}`;
  };
  const find = (result: TargetResult | undefined, size: number) => result?.sizes.find((s) => s.size === size);
  console.log(render(['documents', 'Hearth', 'emulator'], sizes.map((size) => [count(size), loadCell(find(hearth, size)), loadCell(find(peer, size))])));
  for (const size of sizes) {
    for (const entry of [find(hearth, size), find(peer, size)]) {
      if (entry?.footprint) console.log(`  after ${count(size)}: ${entry.footprint}`);
      if (entry?.skipped) console.log(`  ${count(size)} skipped: ${entry.skipped}`);
    }
  }

  console.log('');
  console.log('Query latency, each answer exactly 20 documents (checked): median / p99 ms (queries measured), one client');
  const body: string[][] = [];
  for (const [k, kind] of queryKinds.entries()) {
    for (const size of sizes) {
      const h = find(hearth, size)?.queries[k];
      const e = find(peer, size)?.queries[k];
      body.push([
        kind.name,
        count(size),
        kind.describe(layoutFor(size, 'items')),
        queryCell(h),
        h?.scanned === undefined ? '—' : String(h.scanned),
        queryCell(e),
        h && e ? (e.median / h.median).toFixed(2) : '—',
      ]);
    }
  }
  console.log(render(['query', 'collection', 'data', 'Hearth', 'scanned', 'emulator', 'emulator÷Hearth'], body, 3));
  const plans = queryKinds.map((kind, k) => `${kind.name}: ${[...new Set(sizes.map((size) => find(hearth, size)?.queries[k]?.plan).filter(Boolean))].join(' | ') || '—'}`);
  console.log(`scanned: documents Hearth read for one such query (query explain). Hearth's indexes: ${plans.join('; ')}`);
  console.log(`emulator÷Hearth: ratio of medians, above 1 when Hearth answers faster. "capped": the ${settings.querySeconds} s per kind and size ran out first.`);
  if (floor) console.log(`(context) fetch round trip to a bare Fastify route in this process: ${ms(floor.median)} / ${ms(floor.p99)} ms`);
  if (sizes.length > 1) {
    console.log('');
    console.log(`Growth of the median from ${count(sizes[0] ?? 0)} to each larger collection (1 = the size of the collection does not matter)`);
    for (const [k, kind] of queryKinds.entries()) {
      for (const result of [hearth, peer]) {
        if (!result) continue;
        const base = find(result, sizes[0] ?? 0)?.queries[k];
        const steps = sizes.slice(1).map((size) => {
          const other = find(result, size)?.queries[k];
          return `${count(size)} ×${base && other ? (other.median / base.median).toFixed(2) : '—'}`;
        });
        console.log(`  ${result.name.padEnd(8)} ${kind.name.padEnd(30)} ${steps.join('   ')}`);
      }
    }
  }
  if (peerNote) console.log(`\nemulator: ${peerNote}`);
}

function header(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return [
    'Hearth Firestore benchmark: REST :commit and :runQuery, beside raw SQLite and Google\'s emulator, measured in this process run',
    `machine: ${availableParallelism()} cores (${cpu}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${platform()} ${release()}, node ${process.version}`,
    `load average at start: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`,
    `commits: ${settings.seconds} s measured after ${settings.warmupSeconds} s warm-up per shape; queries: ${settings.queries} per kind and size after up to ${settings.queryWarmup} warm-up (at most ${settings.querySeconds} s, at least ${minimumQueries})`,
    `sizes: Hearth ${settings.targets.includes('hearth') ? settings.sizes.map(count).join(', ') : 'not run'}; emulator ${settings.targets.includes('emulator') ? peerSizes.map(count).join(', ') : 'not run'}`,
    'NOTE: the HTTP client runs in the same process as Hearth and shares its cores; the emulator has its own process.',
  ].join('\n');
}

export async function runFirestoreBench(): Promise<void> {
  console.log(header());
  const started = performance.now();
  const rawRates = new Map<number, Rate>();
  let hearthResult: TargetResult | undefined;
  let peerResult: TargetResult | undefined;
  let peerNote: string | undefined;
  let floor: Latency | undefined;
  try {
    floor = await roundTripFloor();
    if (settings.targets.includes('hearth')) {
      const raw = rawSqliteBaseline();
      const hearth = await startHearthTarget();
      try {
        progress(`Hearth at ${hearth.origin}`);
        hearthResult = { name: hearth.name, projectId: hearth.projectId, commits: new Map(), sizes: [] };
        await runTarget(hearth, hearthResult, settings.sizes, raw, rawRates, Infinity);
      } finally {
        raw.close();
        await hearth.close();
      }
    }
    if (settings.targets.includes('emulator')) {
      progress('starting the Firestore emulator (gcloud emulators firestore start)');
      const emulator = await startEmulatorTarget(hearthResult?.projectId ?? 'demo-hearth');
      if (typeof emulator === 'string') {
        peerNote = `skipped: ${emulator}`;
        progress(`emulator ${peerNote}`);
      } else {
        try {
          progress(`emulator at ${emulator.origin}`);
          const result: TargetResult = { name: emulator.name, projectId: emulator.projectId, commits: new Map(), sizes: [] };
          peerResult = result;
          await runTarget(emulator, result, peerSizes, undefined, rawRates, settings.peerLoadSeconds);
          const notMeasured = settings.sizes.filter((size) => !result.sizes.some((s) => s.size === size && s.queries.length > 0));
          if (notMeasured.length > 0) {
            peerNote = `not measured at ${notMeasured.map(count).join(', ')} (${peerSizes.length < settings.sizes.length ? 'HEARTH_BENCH_FIRESTORE_PEER_SIZES' : 'see the loading table'})`;
          }
        } catch (error) {
          peerNote = `failed: ${error instanceof Error ? error.message : String(error)}`;
          progress(`emulator ${peerNote}`);
        } finally {
          await emulator.close();
        }
      }
    }
  } finally {
    report(hearthResult, peerResult, peerNote, rawRates, floor);
    progress(`firestore bench done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}
