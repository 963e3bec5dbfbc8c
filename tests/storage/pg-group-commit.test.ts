/**
 * Group commit on PostgreSQL (issue 15): commits of one database that arrive while one is in
 * flight share one PostgreSQL transaction, each still its own commit (own time, own sequence, own
 * fs_changes row), and one refused commit of a group fails alone. How many transactions committed
 * the changes is read from PostgreSQL itself: a trigger on fs_changes records the top-level
 * transaction id of each row's inserter (pg_current_xact_id() answers the top-level id inside a
 * savepoint too).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { FieldValue, getFirestore, setLogFunction, type Firestore } from 'firebase-admin/firestore';
import pg from 'pg';
import { openPgPool, type PgPool } from '../../packages/server/src/storage/postgres/pg-connection.js';
import { openPgDocumentStore, type PgDocumentStore } from '../../packages/server/src/storage/postgres/pg-document-store.js';
import type { PgChangeFeed } from '../../packages/server/src/storage/postgres/pg-change-feed.js';
import type { DocumentChange, DocumentRow } from '../../packages/server/src/storage/document-store.js';
import { nameKey } from '../../packages/server/src/firestore/core/documents.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { createTestPgDatabase, type TestPgDatabase } from '../helpers/pg-database.js';

setLogFunction(null);
// No Google credentials to look for: the SDK talks to Hearth as an emulator.
process.env.METADATA_SERVER_DETECTION ??= 'none';

async function sql<R extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** Records, for every fs_changes row, the transaction that inserted it. */
async function installProbe(url: string): Promise<void> {
  await sql(url, `
    CREATE TABLE group_probe (db text, seq bigint, xact xid8);
    CREATE FUNCTION group_probe() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO group_probe VALUES (NEW.db, NEW.seq, pg_current_xact_id()); RETURN NEW; END $$;
    CREATE TRIGGER group_probe AFTER INSERT ON fs_changes FOR EACH ROW EXECUTE FUNCTION group_probe();`);
}

/** Sequences above `after` of a database: how many, how many transactions made them, whether they are gapless with times rising. */
async function changesSince(url: string, db: string, after: number): Promise<{ seqs: number[]; xacts: number; timesRise: boolean }> {
  const rows = await sql<{ seq: string; xact: string; commit_time: string }>(
    url,
    'SELECT c.seq, p.xact::text AS xact, c.commit_time FROM fs_changes c JOIN group_probe p USING (db, seq) WHERE c.db = $1 AND c.seq > $2 ORDER BY c.seq',
    [db, after],
  );
  const times = rows.map((row) => Number(row.commit_time));
  return {
    seqs: rows.map((row) => Number(row.seq)),
    xacts: new Set(rows.map((row) => row.xact)).size,
    timesRise: times.every((time, i) => i === 0 || time > times[i - 1]!),
  };
}

async function lastSeq(url: string, db: string): Promise<number> {
  const rows = await sql<{ seq: string }>(url, 'SELECT seq FROM fs_meta WHERE db = $1', [db]);
  return Number(rows[0]?.seq ?? 0);
}

function gapless(seqs: number[], from: number, count: number): boolean {
  return seqs.length === count && seqs.every((seq, i) => seq === from + 1 + i);
}

describe('group commit through the firebase-admin SDK', () => {
  let database: TestPgDatabase;
  let server: TestHearth;
  const apps: App[] = [];
  const clients: Firestore[] = [];
  const db = () => `${server.projectId}/(default)`;
  const savedEmulatorHost = process.env.FIRESTORE_EMULATOR_HOST;

  before(async () => {
    database = await createTestPgDatabase();
    server = await startHearth({ databaseUrl: database.url });
    await installProbe(database.url);
    // Read by the SDK when it first calls, not when it is made: set for the whole suite.
    process.env.FIRESTORE_EMULATOR_HOST = server.hostPort;
    for (let i = 0; i < 6; i++) {
      const app = initializeApp({ projectId: server.projectId }, `group-${i}-${Date.now()}`);
      apps.push(app);
      clients.push(getFirestore(app));
    }
    // Connected before the measured runs: the first calls of each client do not spread them out.
    await Promise.all(clients.map((client, i) => client.doc(`warm/c${i}`).set({ i })));
  });

  after(async () => {
    for (const app of apps) await deleteApp(app);
    if (savedEmulatorHost === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = savedEmulatorHost;
    await server?.close();
    await database?.drop();
  });

  test('40 concurrent commits to one database share fewer PostgreSQL transactions, each with its own sequence and time', async (t) => {
    const start = await lastSeq(database.url, db());
    await Promise.all(Array.from({ length: 40 }, (_, i) => clients[i % clients.length]!.doc(`burst/d${i}`).set({ n: i })));
    const { seqs, xacts, timesRise } = await changesSince(database.url, db(), start);
    assert.ok(gapless(seqs, start, 40), `one gapless sequence per commit: ${seqs.join(',')}`);
    assert.ok(timesRise, 'commit times rise with the sequence');
    t.diagnostic(`40 commits were made by ${xacts} PostgreSQL transactions`);
    assert.ok(xacts < 40, `40 commits were made by ${xacts} PostgreSQL transactions`);
    const read = await clients[0]!.collection('burst').get();
    assert.equal(read.size, 40);
  });

  test('one failing precondition among concurrent commits fails only itself', async () => {
    const start = await lastSeq(database.url, db());
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => {
        const ref = clients[i % clients.length]!.doc(`mixed/d${i}`);
        // update() requires the document to exist: d7 does not.
        return i === 7 ? ref.update({ n: i }) : ref.set({ n: i });
      }),
    );
    const failed = outcomes.flatMap((outcome, i) => (outcome.status === 'rejected' ? [{ i, error: outcome.reason as { code?: number } }] : []));
    assert.deepEqual(failed.map((failure) => failure.i), [7]);
    assert.equal(failed[0]!.error.code, 5, 'NOT_FOUND, as Firestore answers an update of a missing document');
    const read = await clients[0]!.collection('mixed').get();
    assert.deepEqual(read.docs.map((doc) => doc.id).sort(), Array.from({ length: 20 }, (_, i) => `d${i}`).filter((id) => id !== 'd7').sort());
    const { seqs, timesRise } = await changesSince(database.url, db(), start);
    assert.ok(gapless(seqs, start, 19), `the refused commit took no sequence: ${seqs.join(',')}`);
    assert.ok(timesRise);
  });

  test('hostile strings in names and values come back exactly (statements carry them as literals)', async () => {
    const nasty = ["o'brien", "'); DROP TABLE fs_documents; --", '\\x00ff', '$1 $2', "E'\\''", 'nul\u0000inside', '\u{1F600} ünï', '\\', "''"];
    // Concurrent, so most of them go in one group: one round trip carries them all.
    await Promise.all(nasty.map((text, i) => clients[i % clients.length]!.doc(`hostile/${encodeURIComponent(text)}-${i}`).set({ text, [text.replace(/[.\u0000]/g, '_') || 'k']: text, list: [text, i] })));
    await Promise.all(nasty.map((text, i) => clients[0]!.collection('hostile').doc(`${text.replace(/\//g, '_')}-raw-${i}`).set({ text })));
    for (const [i, text] of nasty.entries()) {
      const snapshot = await clients[0]!.doc(`hostile/${encodeURIComponent(text)}-${i}`).get();
      assert.equal(snapshot.get('text'), text);
      assert.deepEqual(snapshot.get('list'), [text, i]);
      const raw = await clients[0]!.collection('hostile').doc(`${text.replace(/\//g, '_')}-raw-${i}`).get();
      assert.equal(raw.get('text'), text, `document named after ${JSON.stringify(text)}`);
    }
    const found = await clients[0]!.collection('hostile').where('text', '==', "'); DROP TABLE fs_documents; --").get();
    assert.equal(found.size, 2);
  });

  test('concurrent transactional increments from many clients end with the exact count', async () => {
    const counter = clients[0]!.doc('counters/c');
    await counter.set({ n: 0 });
    const perClient = 6;
    await Promise.all(
      clients.flatMap((client) =>
        Array.from({ length: perClient }, () =>
          // All of them read the counter before any commits, so under wound-wait the k-th oldest can
          // be wounded k-1 times: more attempts than the SDK's default five, as an application
          // with this much contention on one document would allow (Google's service aborts the same way).
          client.runTransaction(
            async (transaction) => {
              const snapshot = await transaction.get(client.doc('counters/c'));
              transaction.update(client.doc('counters/c'), { n: (snapshot.get('n') as number) + 1 });
            },
            { maxAttempts: 30 },
          ),
        ),
      ),
    );
    assert.equal((await counter.get()).get('n'), clients.length * perClient);
    // And blind increments (server-side transforms), grouped: every one counts.
    await Promise.all(Array.from({ length: 30 }, (_, i) => clients[i % clients.length]!.doc('counters/c').update({ n: FieldValue.increment(1) })));
    assert.equal((await counter.get()).get('n'), clients.length * perClient + 30);
  });
});

describe('group commit in the store', () => {
  let database: TestPgDatabase;
  let pool: PgPool;
  let store: PgDocumentStore;
  let feed: PgChangeFeed;
  const db = 'demo-store/(default)';

  before(async () => {
    database = await createTestPgDatabase();
    pool = openPgPool(database.url);
    ({ store, feed } = await openPgDocumentStore(pool));
    await installProbe(database.url);
  });

  after(async () => {
    await feed?.close();
    await pool?.end();
    await database?.drop();
  });

  const row = (path: string, fields: string, time: number, before?: DocumentRow): DocumentRow => {
    const slash = path.lastIndexOf('/');
    const parent = path.slice(0, slash);
    return { path, parent, collectionId: parent, id: path.slice(slash + 1), nameKey: nameKey(path), createTime: before?.createTime ?? time, updateTime: time, fields };
  };
  const put = (path: string, fields: (current: DocumentRow | undefined) => string) =>
    store.transact(db, [path], (current, time) => {
      const after = row(path, fields(current.get(path)), time, current.get(path));
      const change: DocumentChange = { path, parent: after.parent, id: after.id, row: after, removeEntries: [], addEntries: [] };
      return { changes: [change], result: current.get(path)?.fields };
    });

  test('commits queued behind one in flight go together; each sees the earlier ones; refused ones and a failing statement are undone alone', async () => {
    await put('c/first', () => '{}');
    const start = await lastSeq(database.url, db);
    // The first starts at once; the others arrive while it is in flight and form the next group.
    const lone = put('c/x', () => '{"v":0}');
    const queued = [
      put('c/x', (current) => `{"v":${JSON.parse(current!.fields).v + 1}}`),
      store.transact(db, ['c/x'], () => {
        throw new Error('refused by decide');
      }),
      // PostgreSQL's text cannot hold a NUL character: refused before it is sent.
      put('c/nul', () => '{"s":"\u0000"}'),
      // A time past bigint: PostgreSQL refuses this commit's INSERT, inside its savepoint.
      store.transact(db, ['c/big'], () => {
        const big = { ...row('c/big', '{}', 2 ** 70), updateTime: 2 ** 70 };
        return { changes: [{ path: 'c/big', parent: 'c', id: 'big', row: big, removeEntries: [], addEntries: [] }], result: undefined };
      }),
      put('c/x', (current) => `{"v":${JSON.parse(current!.fields).v + 1}}`),
      put('c/y', () => '{"y":1}'),
    ];
    const outcomes = await Promise.allSettled([lone, ...queued]);
    assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
    assert.match(String((outcomes[2] as PromiseRejectedResult).reason), /refused by decide/);
    assert.equal((outcomes[4] as PromiseRejectedResult).reason.code, '22003', 'bigint out of range, from PostgreSQL');
    // Each decided on the rows its group's earlier commits left: x went 0, 1, 2.
    const results = outcomes.map((outcome) => (outcome.status === 'fulfilled' ? (outcome.value as { result: string | undefined }).result : 'failed'));
    assert.deepEqual(results, [undefined, '{"v":0}', 'failed', 'failed', 'failed', '{"v":1}', undefined]);
    const rows = await store.getDocuments(db, ['c/x', 'c/y', 'c/nul', 'c/big']);
    assert.equal(rows.get('c/x')?.fields, '{"v":2}');
    assert.equal(rows.get('c/y')?.fields, '{"y":1}');
    assert.equal(rows.has('c/nul'), false);
    assert.equal(rows.has('c/big'), false);
    const times = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [(outcome.value as { commitTime: number }).commitTime] : []));
    assert.ok(times.every((time, i) => i === 0 || time > times[i - 1]!), 'commit times rise in arrival order');
    const { seqs, xacts, timesRise } = await changesSince(database.url, db, start);
    assert.ok(gapless(seqs, start, 4) && timesRise, `four commits, four sequences: ${seqs.join(',')}`);
    assert.equal(xacts, 2, 'the lone commit, then one transaction for the three that waited');
    // The versions a group's later commits replaced are kept: x as of the first queued commit's time.
    const past = await store.getDocumentsAt(db, ['c/x'], times[1]!);
    assert.equal(past.get('c/x')?.fields, '{"v":1}');
  });
});
