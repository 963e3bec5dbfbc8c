/**
 * The shared change feed on its own, two processes' worth of stores on one PostgreSQL database:
 * commits made concurrently through both reach each side's listeners once each and in commit
 * order (its own commits too, at once); commits made while a side's listening connection is cut
 * (their NOTIFYs lost) still arrive, in order, once it is back (catch-up from the last sequence);
 * caughtUp answers only once every commit visible when called has been told.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DocumentDatabase, type CommitEvent } from '../../packages/server/src/firestore/core/database.js';
import { defaultQueryLimits } from '../../packages/server/src/firestore/core/query.js';
import { parseWrites } from '../../packages/server/src/firestore/core/writes.js';
import { openPgPool, type PgPool } from '../../packages/server/src/storage/postgres/pg-connection.js';
import { openPgDocumentStore } from '../../packages/server/src/storage/postgres/pg-document-store.js';
import type { PgChangeFeed } from '../../packages/server/src/storage/postgres/pg-change-feed.js';
import { createTestPgDatabase, type TestPgDatabase } from '../helpers/pg-database.js';

const db = { projectId: 'demo-feed', databaseId: '(default)' };
const root = `projects/${db.projectId}/databases/${db.databaseId}/documents`;

interface Side {
  pool: PgPool;
  feed: PgChangeFeed;
  database: DocumentDatabase;
  events: CommitEvent[];
}

let pgDatabase: TestPgDatabase;
const sides: Side[] = [];

async function openSide(): Promise<Side> {
  const pool = openPgPool(pgDatabase.url);
  const { store, feed } = await openPgDocumentStore(pool);
  const database = new DocumentDatabase(store, { queryLimits: defaultQueryLimits, compositeIndexes: [], changeFeed: feed });
  const side: Side = { pool, feed, database, events: [] };
  database.onCommit((event) => side.events.push(event));
  return side;
}

function set(side: Side, path: string, n: number) {
  return side.database.commit(db, parseWrites(db, [{ update: { name: `${root}/${path}`, fields: { n: { integerValue: String(n) } } } }]));
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Each side saw exactly `commitTimes` (ascending), each once. */
function checkSeen(expected: number[], label: string): void {
  const sorted = [...expected].sort((a, b) => a - b);
  for (const [i, side] of sides.entries()) {
    const times = side.events.map((event) => event.commitTime);
    assert.deepEqual(times, sorted, `${label}: side ${i} saw every commit once, in commit order`);
  }
}

describe('the change feed on PostgreSQL', () => {
  before(async () => {
    pgDatabase = await createTestPgDatabase();
    sides.push(await openSide(), await openSide());
  });

  after(async () => {
    for (const side of sides) {
      await side.feed.close();
      await side.pool.end();
    }
    await pgDatabase?.drop();
  });

  test('concurrent commits through both sides: each side hears all of them once, in commit order', async () => {
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => set(sides[i % 2]!, `items/d${i % 7}`, i)));
    const times = outcomes.map((outcome) => outcome.commitTime);
    assert.equal(new Set(times).size, times.length, 'commit times are distinct across the two sides');
    await until(() => sides.every((side) => side.events.length >= times.length), 'every commit on both sides');
    checkSeen(times, 'concurrent');
    // What a listener is told is what the commit wrote.
    const last = sides[1]!.events.at(-1)!;
    const written = outcomes.find((outcome) => outcome.commitTime === last.commitTime)!;
    assert.deepEqual([...written.documents.values()].map((doc) => doc?.fields), last.changes.map((change) => change.after?.fields));
  });

  test('commits made while the listening connections are cut still arrive, in order, once they are back', async () => {
    const before = sides.map((side) => side.events.length);
    const admin = openPgPool(pgDatabase.url);
    try {
      const cut = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()");
      assert.equal(cut.rowCount, 2, 'both sides had a listening connection');
    } finally {
      await admin.end();
    }
    const outcomes = [];
    for (let i = 0; i < 10; i++) outcomes.push(await set(sides[0]!, `cut/d${i}`, i));
    await until(() => sides[1]!.events.length >= before[1]! + 10, 'the commits made while cut, on the other side');
    for (const [i, side] of sides.entries()) assert.deepEqual(side.events.slice(before[i]!).map((event) => event.commitTime), outcomes.map((outcome) => outcome.commitTime), `side ${i}`);
    // And the feed listens again: a commit now arrives at the other side.
    const next = await set(sides[0]!, 'cut/after', 1);
    await until(() => sides[1]!.events.at(-1)?.commitTime === next.commitTime, 'a commit after the reconnect');
  });

  test('caughtUp answers once every commit visible when it was called has been told (a Listen resume relies on it)', async () => {
    // Side 1 hears nothing by NOTIFY (its listening connection is cut): only the catch-up read can tell it.
    const admin = openPgPool(pgDatabase.url);
    try {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()");
    } finally {
      await admin.end();
    }
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push(await set(sides[0]!, `caught/d${i}`, i));
    assert.equal(await sides[1]!.feed.caughtUp(`${db.projectId}/${db.databaseId}`), true);
    const heard = new Set(sides[1]!.events.map((event) => event.commitTime));
    assert.deepEqual(outcomes.filter((outcome) => !heard.has(outcome.commitTime)), [], 'every commit made before caughtUp was told by the time it answered');
    assert.equal(await sides[1]!.feed.caughtUp('demo-feed/never-written'), true, 'a database with no commits is caught up at once');
  });
});
