/**
 * The document store itself, SQLite beside PostgreSQL, in this process (no HTTP): commit
 * throughput of one-document commits beside raw PostgreSQL inserts of a row of the same size
 * (one autocommitted INSERT per commit, same pool and concurrency), and the latency of a
 * 20-result range query on a collection of 10k, 100k, ... documents.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import type { DatabaseId } from '../../packages/server/src/firestore/core/paths.js';
import { parseWrites } from '../../packages/server/src/firestore/core/writes.js';
import { defaultQueryLimits } from '../../packages/server/src/firestore/core/query.js';
import { openPgPool, type PgPool } from '../../packages/server/src/storage/postgres/pg-connection.js';
import { openPgDocumentStore } from '../../packages/server/src/storage/postgres/pg-document-store.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { createTestPgDatabase, type TestPgDatabase } from '../../tests/helpers/pg-database.js';
import { envList, progress } from '../env.js';
import { percentile, runConcurrent, type Rate } from '../stats.js';
import { bulkSeed, type SeedTarget } from './seed.js';

export const benchDb: DatabaseId = { projectId: 'bench', databaseId: '(default)' };
const documentsRoot = `projects/${benchDb.projectId}/databases/${benchDb.databaseId}/documents`;

export interface Backend {
  name: string;
  database: DocumentDatabase;
  seed: SeedTarget;
  close(): Promise<void>;
}

/** BENCH_PG_SEED: `bulk` (default, seed.ts) or `commits`. */
const seedMode = envList('BENCH_PG_SEED', ['bulk'])[0];

export async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-bench-pg-'));
  const sqlite = new SqliteStore(join(dir, 'hearth.sqlite'));
  const database = new DocumentDatabase(sqlite.documents(), { queryLimits: defaultQueryLimits, compositeIndexes: [] });
  return {
    name: 'SQLite',
    database,
    seed: { name: 'SQLite', dbKey: database.dbKey(benchDb), store: sqlite.documents() },
    async close() {
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function postgresBackend(): Promise<Backend & { pool: PgPool; pgDatabase: TestPgDatabase }> {
  const pgDatabase = await createTestPgDatabase('hearth_bench');
  const pool = openPgPool(pgDatabase.url);
  const { store, feed } = await openPgDocumentStore(pool);
  const database = new DocumentDatabase(store, { queryLimits: defaultQueryLimits, compositeIndexes: [], changeFeed: feed });
  return {
    name: 'PostgreSQL',
    pool,
    pgDatabase,
    database,
    seed: { name: 'PostgreSQL', dbKey: database.dbKey(benchDb), store, pool },
    async close() {
      await feed.close();
      await pool.end();
      await pgDatabase.drop();
    },
  };
}

function fieldsOf(i: number) {
  return { n: { integerValue: String(i) }, group: { integerValue: String(i % 500) }, s: { stringValue: `item number ${i}` } };
}

function setWrites(collection: string, from: number, count: number) {
  return parseWrites(benchDb, Array.from({ length: count }, (_, k) => ({ update: { name: `${documentsRoot}/${collection}/d${String(from + k).padStart(8, '0')}`, fields: fieldsOf(from + k) } })));
}

export async function commitThroughput(backend: Backend, concurrency: number, seconds: number): Promise<Rate> {
  let next = 0;
  return runConcurrent(concurrency, seconds, () => backend.database.commit(benchDb, setWrites('commits', next++ % 100_000, 1)));
}

/** The physical floor on PostgreSQL: one durable INSERT of a row like a document's, autocommitted. */
export async function rawInsertThroughput(pool: PgPool, concurrency: number, seconds: number): Promise<Rate> {
  await pool.query('CREATE TABLE IF NOT EXISTS bench_raw (id BIGSERIAL PRIMARY KEY, path TEXT NOT NULL, fields TEXT NOT NULL)');
  let next = 0;
  return runConcurrent(concurrency, seconds, () => pool.query('INSERT INTO bench_raw (path, fields) VALUES ($1, $2)', [`commits/d${next}`, JSON.stringify(fieldsOf(next++))]));
}

/** Loads documents from..to-1 into `collection`: in bulk (seed.ts) or 500 per commit (BENCH_PG_SEED=commits). */
export async function loadCollection(backend: Backend, collection: string, from: number, to: number): Promise<void> {
  const started = performance.now();
  let next = from;
  if (seedMode !== 'commits') {
    // One commit first: the database is then ready (its composite entries checked), which a query would otherwise do over every seeded row.
    await backend.database.commit(benchDb, setWrites(collection, from, 1));
    await bulkSeed(backend.seed, from, to, (at, count) => setWrites(collection, at, count));
    progress(`${backend.name}: documents ${from}..${to} seeded in bulk in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return;
  }
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let at = (next += 500) - 500; at < to; at = (next += 500) - 500) await backend.database.commit(benchDb, setWrites(collection, at, Math.min(500, to - at)));
    }),
  );
  progress(`${backend.name}: documents ${from}..${to} loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** p50/p99 ms of `where n >= x order by n limit 20` at random x, one at a time. */
export async function queryLatency(backend: Backend, collection: string, size: number, count: number): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const from = Math.floor(Math.random() * (size - 20));
    const query = backend.database.parseQuery(benchDb, '', {
      from: [{ collectionId: collection }],
      where: { fieldFilter: { field: { fieldPath: 'n' }, op: 'GREATER_THAN_OR_EQUAL', value: { integerValue: String(from) } } },
      orderBy: [{ field: { fieldPath: 'n' }, direction: 'ASCENDING' }],
      limit: 20,
    });
    const began = performance.now();
    const result = await backend.database.runQuery(benchDb, query);
    times.push(performance.now() - began);
    if (result.docs.length !== 20) throw new Error(`${backend.name}: the query found ${result.docs.length} documents, not 20`);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

export async function closeQuietly(pool: pg.Pool | undefined): Promise<void> {
  await pool?.end().catch(() => undefined);
}
