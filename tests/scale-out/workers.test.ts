/**
 * `hearth start --workers 2` on the backend of the run (the SQLite file of one data folder, or
 * PostgreSQL in the PostgreSQL pass): one port, two worker processes. Clients at different
 * addresses (a forwarder per address in front of the port) land on different workers; the load
 * and checks of the instances test (helpers/scale-out-load.ts) hold across them: nothing
 * acknowledged lost, one commit order, the final state a serial replay, every listener in order.
 * Then a worker is killed with SIGKILL mid-load: it is started again, its clients are served
 * meanwhile by the other, nothing acknowledged is lost and every listener, its own included,
 * converges. Also: a client's connections keep reaching one worker (WebChannel sessions and
 * transactions span connections), and behind a trusted proxy requests reach the worker holding them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setLogFunction } from 'firebase-admin/firestore';
import { setLogLevel } from 'firebase/firestore';
import pg from 'pg';
import { stickyWorker } from '../../packages/server/src/workers/worker-count.js';
import { addressesOfWorkers, forwardFrom, type AddressForwarder } from '../helpers/address-forwarder.js';
import { handshake, payloads, type ChannelServer } from '../helpers/firestore-webchannel.js';
import { freePort, spawnHearth, type SpawnedHearth } from '../helpers/hearth.js';
import { createTestPgDatabase, type TestPgDatabase } from '../helpers/pg-database.js';
import { processCpuSeconds } from '../helpers/proc-usage.js';
import { checkHistory, connectGroup, disconnectGroup, load, pgStoreReader, sqliteStoreReader, type Acknowledged, type ScaleOutRun } from '../helpers/scale-out-load.js';
import { openRules, releaseRules } from '../helpers/security-rules.js';
import { waitFor } from '../helpers/wait-for.js';

setLogLevel('silent');
setLogFunction(null);

const onPostgres = process.env.HEARTH_TEST_BACKEND === 'postgres';
const projectId = 'demo-workers';
const dbKey = `${projectId}/(default)`;
const database = `projects/${projectId}/databases/(default)`;

let pgDatabase: TestPgDatabase | undefined;
let pool: pg.Pool | undefined;
let sqliteReader: ReturnType<typeof sqliteStoreReader> | undefined;
let hearth: SpawnedHearth;
let port: number;
let dataDir: string;
const forwarders: AddressForwarder[] = [];
let run: ScaleOutRun;
/** Which worker (0-based) serves each group, by its source address. */
const groupWorker = new Map<string, number>();

/** The workers' process ids, by worker, from the primary's "worker serving" lines (the latest per worker). */
function workerPids(): Map<number, number> {
  const pids = new Map<number, number>();
  for (const line of hearth.output().split('\n')) {
    if (!line.includes('"worker serving"')) continue;
    const entry = JSON.parse(line) as { worker: number; workerPid: number };
    pids.set(entry.worker - 1, entry.workerPid);
  }
  return pids;
}

/** A POST on a connection of its own (no keep-alive): each call is a new connection to the port. */
function postOnNewConnection(port: number, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), authorization: 'Bearer owner' } }, (res) => {
      let answer = '';
      res.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(answer || 'null') }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

/** A request on a connection of its own, with the given headers; answers status, headers and text. */
function requestOnNewConnection(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }) } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * From 127.0.0.1, each request on a new connection: a WebChannel session's handshake, back channel
 * and six more messages, then six REST transactions (begin, commit). Resolves to the session's id.
 */
async function sessionAndTransactionsAcrossConnections(port: number): Promise<string> {
  const addTarget = { database, addTarget: { documents: { documents: [`${database}/documents/sticky/s1`] }, targetId: 2 } };
  assert.equal((await postOnNewConnection(port, `/v1/${database}/documents:commit`, { writes: [{ update: { name: `${database}/documents/sticky/s1`, fields: { n: { integerValue: '1' } } } }] })).status, 200);
  // The raw WebChannel client opens a new connection for every request.
  const { session } = await handshake({ port } as ChannelServer, 'Listen', addTarget, '', database);
  const back = session.back(0, 0);
  await back.until((frames) => payloads(frames).some((p) => JSON.stringify(p).includes('"integerValue":"1"')), 10_000, 'the document');
  for (let ofs = 1; ofs <= 6; ofs++) {
    const forwarded = await session.forward(0, ofs, [{ database, addTarget: { ...addTarget.addTarget, targetId: 2 + 2 * ofs } }]);
    assert.equal(forwarded.status, 200, `message ${ofs} of the session: ${forwarded.text}`);
  }
  back.ended.catch(() => undefined);
  back.abort();
  await session.terminate();
  for (let i = 0; i < 6; i++) {
    const begun = await postOnNewConnection(port, `/v1/${database}/documents:beginTransaction`, {});
    assert.equal(begun.status, 200, JSON.stringify(begun.body));
    const committed = await postOnNewConnection(port, `/v1/${database}/documents:commit`, { transaction: begun.body.transaction, writes: [{ update: { name: `${database}/documents/sticky/t${i}`, fields: { n: { integerValue: String(i) } } } }] });
    assert.equal(committed.status, 200, `transaction ${i}: ${JSON.stringify(committed.body)}`);
  }
  return session.sid;
}

// The SDKs retry calls that were in flight to the killed worker with timers of their own, for
// minutes: once every test of the file has ended, nothing of it is left.
after(() => {
  setTimeout(() => process.exit(), 3_000).unref();
});

/** `--database-url` in the PostgreSQL pass (a database of the test's own), nothing on SQLite. */
async function storeFlags(): Promise<{ flags: string[]; database?: TestPgDatabase }> {
  if (!onPostgres) return { flags: [] };
  const database = await createTestPgDatabase();
  return { flags: ['--database-url', database.url], database };
}

describe(`hearth start --workers 2 on ${onPostgres ? 'one PostgreSQL database' : 'one SQLite file'}`, { timeout: 180_000 }, () => {
  before(async () => {
    const store = await storeFlags();
    pgDatabase = store.database;
    port = await freePort();
    dataDir = mkdtempSync(join(tmpdir(), 'hearth-workers-'));
    hearth = await spawnHearth(['--port', String(port), '--data', dataDir, '--dev', '--project', projectId, '--log-level', 'info', ...store.flags, '--workers', '2']);
    await waitFor('both workers serving', async () => (workerPids().size === 2 ? true : undefined), 30_000);
    // Groups a and c on one worker, b on the other.
    const addresses = addressesOfWorkers([0, 1, 0]);
    const groups = await Promise.all(
      ['a', 'b', 'c'].map(async (name, i) => {
        const forwarder = await forwardFrom(addresses[i]!, port);
        forwarders.push(forwarder);
        groupWorker.set(name, stickyWorker(addresses[i]!, 2));
        return connectGroup(projectId, name, forwarder.port);
      }),
    );
    if (pgDatabase) pool = new pg.Pool({ connectionString: pgDatabase.url, max: 2 });
    else sqliteReader = sqliteStoreReader(join(dataDir, 'hearth.sqlite'));
    run = { store: pool ? pgStoreReader(pool) : sqliteReader!, projectId, dbKey, instances: groups, writeCounter: 0 };
  });

  after(async () => {
    for (const group of run?.instances ?? []) await disconnectGroup(group);
    for (const forwarder of forwarders) await forwarder.close();
    await hearth?.stop('SIGKILL');
    await pool?.end();
    sqliteReader?.close();
    await pgDatabase?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('the banner names the processes, each worker its own', () => {
    assert.match(hearth.output(), /processes {6}2 processes \(--workers\)/);
    const pids = workerPids();
    assert.equal(new Set(pids.values()).size, 2);
    assert.ok(![...pids.values()].includes(hearth.child.pid!), 'the workers are not the primary');
  });

  test('random writes and transactions through both workers: every listener sees every change in order, nothing acknowledged is lost', async () => {
    const pids = workerPids();
    const before = [...pids.values()].map(processCpuSeconds);
    const acknowledged: Acknowledged[] = [];
    const increments = new Map<string, number>();
    const refused = await load(run, 3, 15, acknowledged, increments);
    assert.ok(acknowledged.length >= 110, `most operations were acknowledged (${acknowledged.length}, refused ${refused})`);
    await checkHistory(run, 'two workers', acknowledged, increments, run.instances.map((group) => group.listener), false);
    // Each worker served its clients: both used CPU for the load.
    const used = [...pids.values()].map((pid, i) => processCpuSeconds(pid) - before[i]!);
    for (const seconds of used) assert.ok(seconds > 0.05, `each worker served part of the load (CPU seconds used: ${used.join(', ')})`);
  });

  test("a client's new connections keep reaching its worker: a WebChannel session and REST transactions across connections", async () => {
    await sessionAndTransactionsAcrossConnections(port);
  });

  test('kill -9 of a worker mid-load: it is started again, nothing acknowledged is lost, and every listener converges', async () => {
    const victimWorker = groupWorker.get('b')!;
    const victimPid = workerPids().get(victimWorker)!;
    const acknowledged: Acknowledged[] = [];
    const increments = new Map<string, number>();
    let killed = false;
    const refused = await load(run, 2, 15, acknowledged, increments, (done) => {
      if (!killed && done >= 30) {
        killed = true;
        process.kill(victimPid, 'SIGKILL');
      }
    });
    assert.ok(killed);
    assert.ok(acknowledged.length >= 45, `the workers served the load (${acknowledged.length} acknowledged, ${refused} refused)`);
    await waitFor('the killed worker serving again', async () => {
      const pid = workerPids().get(victimWorker);
      return pid !== undefined && pid !== victimPid ? pid : undefined;
    }, 60_000);
    assert.match(hearth.output(), /worker stopped; starting it again/);
    // Every group's listener, the killed worker's included (its client reconnected and resumed).
    await checkHistory(run, 'after kill -9 of a worker', acknowledged, increments, run.instances.map((group) => group.listener), true);
  });

  test('rules released through one worker guard reads through the other within seconds', async () => {
    const [first, second] = [forwarders[0]!.port, forwarders[1]!.port];
    assert.notEqual(groupWorker.get('a'), groupWorker.get('b'));
    const documentUrl = (forwarderPort: number, path: string) => `http://127.0.0.1:${forwarderPort}/v1/${database}/documents/${path}`;
    for (const path of ['closed/c1', 'open/o1']) {
      const written = await fetch(documentUrl(first, path), { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: 'Bearer owner' }, body: JSON.stringify({ fields: { v: { stringValue: path } } }) });
      assert.equal(written.status, 200, await written.text());
    }
    await releaseRules(`http://127.0.0.1:${first}`, projectId, openRules);
    // The other worker reads the releases now, and holds them.
    assert.equal((await fetch(documentUrl(second, 'closed/c1'))).status, 200);
    await releaseRules(`http://127.0.0.1:${first}`, projectId, "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /{collection}/{id} {\n      allow read, write: if collection != 'closed';\n    }\n  }\n}\n");
    const refused = await waitFor('the other worker refusing the closed document', async () => {
      const read = await fetch(documentUrl(second, 'closed/c1'));
      return read.status === 403 ? read.status : undefined;
    }, 10_000);
    assert.equal(refused, 403);
    assert.equal((await fetch(documentUrl(second, 'open/o1'))).status, 200, 'what the new rules allow is still served');
  });
});

describe('hearth start --workers 2 behind a trusted reverse proxy (its connections spread over the workers)', { timeout: 120_000 }, () => {
  let proxied: SpawnedHearth;
  let proxiedPort: number;
  let proxiedDatabase: TestPgDatabase | undefined;
  let proxiedData: string;

  before(async () => {
    const store = await storeFlags();
    proxiedDatabase = store.database;
    proxiedPort = await freePort();
    proxiedData = mkdtempSync(join(tmpdir(), 'hearth-workers-proxied-'));
    // 127.0.0.1 plays the proxy: every connection from it may reach either worker.
    proxied = await spawnHearth(['--port', String(proxiedPort), '--data', proxiedData, '--dev', '--project', projectId, '--log-level', 'info', ...store.flags, '--workers', '2', '--trust-proxy', '127.0.0.1']);
    await waitFor('both workers serving', async () => ((proxied.output().match(/"worker serving"/g) ?? []).length === 2 ? true : undefined), 30_000);
  });

  after(async () => {
    await proxied?.stop();
    await proxiedDatabase?.drop();
    if (proxiedData) rmSync(proxiedData, { recursive: true, force: true });
  });

  test("the proxy's new connections reach both workers, and a session's or a transaction's requests are relayed to the worker that holds it", async () => {
    // Each of its requests on a new connection: the workers take them in turn, so half are relayed.
    await sessionAndTransactionsAcrossConnections(proxiedPort);
    // Two handshakes in a row, on two connections: one session on each worker.
    const addTarget = { database, addTarget: { documents: { documents: [`${database}/documents/sticky/s1`] }, targetId: 2 } };
    const opened = [await handshake({ port: proxiedPort } as ChannelServer, 'Listen', addTarget, '', database), await handshake({ port: proxiedPort } as ChannelServer, 'Listen', addTarget, '', database)];
    assert.deepEqual(opened.map(({ session }) => session.sid.split('.')[0]).sort(), ['w0', 'w1'], 'sessions were opened on both workers');
    for (const { session } of opened) await session.terminate();
  });

  test('a console session works whichever worker its requests reach', async () => {
    const adminKey = readFileSync(join(proxiedData, 'admin-key'), 'utf8').trim();
    const signIn = await requestOnNewConnection(proxiedPort, 'POST', '/hearth/v1/console/session', {}, JSON.stringify({ adminKey }));
    assert.equal(signIn.status, 200, signIn.text);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    for (let i = 0; i < 6; i++) {
      const current = await requestOnNewConnection(proxiedPort, 'GET', '/hearth/v1/console/session', { cookie, 'x-hearth-console': '1' });
      assert.equal(current.status, 200, `request ${i}: ${current.text}`);
      assert.equal((JSON.parse(current.text) as { operator: string }).operator, 'admin', `request ${i}`);
    }
  });
});
