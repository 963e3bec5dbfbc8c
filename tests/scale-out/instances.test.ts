/**
 * Several Hearth processes on one PostgreSQL database: random writes and transactions through
 * all of them from many clients, a firebase SDK listener on each, checked against the database's
 * change log as helpers/scale-out-load.ts says (nothing acknowledged lost, one commit order, the
 * final state a serial replay, every listener in order and converged). Then the same under load while one instance is killed with SIGKILL: the survivors keep every
 * acknowledged write, and their listeners converge.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setLogFunction, type QuerySnapshot } from 'firebase-admin/firestore';
import { setLogLevel } from 'firebase/firestore';
import pg from 'pg';
import { freePort, spawnHearth, type SpawnedHearth } from '../helpers/hearth.js';
import { createTestPgDatabase, type TestPgDatabase } from '../helpers/pg-database.js';
import { checkHistory, connectGroup, disconnectGroup, load, pgStoreReader, type Acknowledged, type ClientGroup, type ScaleOutRun } from '../helpers/scale-out-load.js';
import { waitFor } from '../helpers/wait-for.js';

setLogLevel('silent');
setLogFunction(null);

const projectId = 'demo-scale';
const dbKey = `${projectId}/(default)`;

interface Instance extends ClientGroup {
  process: SpawnedHearth;
}

let pgDatabase: TestPgDatabase;
let pool: pg.Pool;
const instances: Instance[] = [];
const dataDirs: string[] = [];
let run: ScaleOutRun;

async function startInstance(name: string): Promise<Instance> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `hearth-scale-${name}-`));
  dataDirs.push(dataDir);
  const process_ = await spawnHearth(['--port', String(port), '--data', dataDir, '--dev', '--project', projectId, '--log-level', 'error', '--database-url', pgDatabase.url]);
  return { ...(await connectGroup(projectId, name, port)), process: process_ };
}

describe('three Hearth instances on one PostgreSQL database', { timeout: 120_000 }, () => {
  before(async () => {
    pgDatabase = await createTestPgDatabase();
    pool = new pg.Pool({ connectionString: pgDatabase.url, max: 2 });
    // All at once: the schema steps run once, under the advisory lock, whoever comes first.
    instances.push(...(await Promise.all(['a', 'b', 'c'].map(startInstance))));
    run = { store: pgStoreReader(pool), projectId, dbKey, instances, writeCounter: 0 };
  });

  after(async () => {
    for (const instance of instances) {
      await disconnectGroup(instance);
      await instance.process.stop('SIGKILL');
    }
    await pool?.end();
    await pgDatabase?.drop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    // The SDKs keep retrying calls that were in flight to the killed instance (with timers of
    // their own, for minutes) even after their apps are deleted; nothing of this file is left.
    setTimeout(() => process.exit(), 3_000).unref();
  });

  test('random writes and transactions through all three: every listener sees every change in order, nothing acknowledged is lost', async () => {
    const acknowledged: Acknowledged[] = [];
    const increments = new Map<string, number>();
    const refused = await load(run, 3, 15, acknowledged, increments);
    // Transactions that ran out of retries are refused as a whole; nothing else may fail.
    assert.ok(acknowledged.length >= 110, `most operations were acknowledged (${acknowledged.length}, refused ${refused})`);
    await checkHistory(run, 'three instances', acknowledged, increments, instances.map((instance) => instance.listener), false);
  });

  test('kill -9 of one instance mid-load: the survivors keep every acknowledged write and their listeners converge', async () => {
    const acknowledged: Acknowledged[] = [];
    const increments = new Map<string, number>();
    const victim = instances[2]!;
    let killed = false;
    const refused = await load(run, 2, 15, acknowledged, increments, (done) => {
      if (!killed && done >= 30) {
        killed = true;
        victim.alive = false;
        victim.process.child.kill('SIGKILL');
      }
    });
    assert.ok(killed);
    assert.ok(acknowledged.length >= 45, `the survivors served the load (${acknowledged.length} acknowledged, ${refused} refused)`);
    const survivors = instances.filter((instance) => instance.alive).map((instance) => instance.listener);
    await checkHistory(run, 'after kill -9', acknowledged, increments, survivors, true);
  });

  // Last: its commits are outside `items`, which the history checks above replay whole.
  test("a read time never passes a commit another instance is still writing (a client resuming from it would never get that commit)", async () => {
    const [a, b] = instances as [Instance, Instance];
    const doc = b.admin.doc('fence/p');
    await doc.set({ v: 'before' });
    // The document's row held, as a slow disk or a busy row would: b's next commit takes its time, then waits before COMMIT.
    const holder = await pool.connect();
    let first: QuerySnapshot | undefined;
    let unsubscribe = () => {};
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM fs_documents WHERE db = $1 AND collection_id = convert_to('fence', 'UTF8') FOR UPDATE", [dbKey]);
      const write = doc.set({ v: 'after' });
      await waitFor("b's commit waiting on the held row", async () => ((await pool.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rowCount ? true : undefined), 20_000);
      unsubscribe = a.admin.collection('fence').onSnapshot((snapshot) => (first ??= snapshot));
      // Time for a's first answer, were it labelled without waiting for b's commit.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await holder.query('COMMIT');
      const written = await write;
      const answer = await waitFor("a's first snapshot", async () => first, 20_000);
      const seen = answer.docs.find((found) => found.id === 'p')?.get('v') as string | undefined;
      assert.ok(seen === 'after' || answer.readTime.valueOf() < written.writeTime.valueOf(), `a's first snapshot at ${answer.readTime.toDate().toISOString()} shows ${seen}, but the commit of 'after' at ${written.writeTime.toDate().toISOString()} is at or before it`);
    } finally {
      unsubscribe();
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }
  });
});
