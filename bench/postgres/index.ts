/**
 * `npm run bench -- postgres`: the PostgreSQL backend beside SQLite and beside raw PostgreSQL,
 * then several instances on one database. Settings: BENCH_PG_SECONDS (5) per throughput run,
 * BENCH_PG_CONCURRENCY (8) commits in flight, BENCH_PG_SIZES (10000,100000) documents in the
 * query collections, BENCH_PG_QUERIES (300) queries per size, BENCH_PG_SAMPLES (200) commits for
 * the commit-to-snapshot latency, BENCH_PG_SEED (bulk) how the query collections are loaded (bulk:
 * rows made by Hearth's encoders written in large batches, seed.ts; commits: 500 documents per
 * commit), BENCH_PG_PARTS (store,instances) which parts run. The 1M-document run:
 * BENCH_PG_SIZES=10000,100000,1000000 npm run bench -- postgres. Needs PostgreSQL
 * (HEARTH_TEST_PG_ADMIN_URL, as the tests).
 */
import { loadavg } from 'node:os';
import { envCount, envCounts, envList, envNumber, machineLine, progress } from '../env.js';
import { renderTable } from '../stats.js';
import { commitToSnapshot, spreadThroughput, startInstances } from './instances.js';
import { commitThroughput, loadCollection, postgresBackend, queryLatency, rawInsertThroughput, sqliteBackend, type Backend } from './stores.js';
import { createTestPgDatabase } from '../../tests/helpers/pg-database.js';

const seconds = envNumber('BENCH_PG_SECONDS', 5);
const concurrency = envCount('BENCH_PG_CONCURRENCY', 8);
const sizes = envCounts('BENCH_PG_SIZES', [10_000, 100_000]);
const queries = envCount('BENCH_PG_QUERIES', 300);
const samples = envCount('BENCH_PG_SAMPLES', 200);
const parts = envList('BENCH_PG_PARTS', ['store', 'instances']);

const ms = (value: number) => (value >= 10 ? value.toFixed(1) : value.toFixed(2));
const rate = (value: number) => value.toFixed(0);

export async function runPostgresBench(): Promise<void> {
  console.log('Hearth on PostgreSQL: the document store beside SQLite and raw PostgreSQL, then several instances');
  console.log(machineLine());
  console.log(`load average at start: ${loadavg().map((n) => n.toFixed(2)).join(' ')} (shared machine: compare ratios, not absolutes)`);
  console.log(`${concurrency} commits in flight, ${seconds} s per throughput run; queries one at a time`);

  if (parts.includes('store')) await storeBench();
  if (parts.includes('instances')) await instancesBench();
}

async function storeBench(): Promise<void> {
  const sqlite = await sqliteBackend();
  const postgres = await postgresBackend();
  try {
    progress('commit throughput');
    const rows: string[][] = [];
    const raw = await rawInsertThroughput(postgres.pool, concurrency, seconds);
    for (const backend of [sqlite, postgres] as Backend[]) {
      const commits = await commitThroughput(backend, concurrency, seconds);
      rows.push([`${backend.name} one-document commit`, rate(commits.perSecond), `${ms(commits.p50)} / ${ms(commits.p99)}`, (commits.perSecond / raw.perSecond).toFixed(3)]);
    }
    rows.push(['raw PostgreSQL INSERT (autocommit)', rate(raw.perSecond), `${ms(raw.p50)} / ${ms(raw.p99)}`, '1.000']);
    console.log('');
    console.log(renderTable(['commits (in process, no HTTP)', 'per s', 'p50/p99 ms', '÷ raw PostgreSQL'], rows, (column) => column === 0));
    console.log(`(load average after: ${loadNow()})`);

    progress('20-result queries');
    const queryRows: string[][] = [];
    let loaded = 0;
    for (const size of [...sizes].sort((a, b) => a - b)) {
      for (const backend of [sqlite, postgres] as Backend[]) await loadCollection(backend, 'items', loaded, size);
      loaded = size;
      const row = [String(size)];
      for (const backend of [sqlite, postgres] as Backend[]) {
        const latency = await queryLatency(backend, 'items', size, queries);
        row.push(`${ms(latency.p50)} / ${ms(latency.p99)}`);
      }
      row.push(loadNow());
      queryRows.push(row);
    }
    console.log('');
    console.log(renderTable(['documents', 'SQLite p50/p99 ms', 'PostgreSQL p50/p99 ms', 'load (1/5/15 min)'], queryRows, () => false));
    console.log('(where n >= random order by n limit 20; flat from size to size means the range is an index range)');
  } finally {
    await sqlite.close();
    await postgres.close();
  }
}

function loadNow(): string {
  return loadavg().map((n) => n.toFixed(1)).join(' ');
}

async function instancesBench(): Promise<void> {
  const shared = await createTestPgDatabase('hearth_bench');
  const instances = await startInstances(3, shared.url);
  try {
    progress('commit-to-snapshot latency');
    const same = await commitToSnapshot(instances, 0, samples);
    const other = await commitToSnapshot(instances, 1, samples);
    console.log('');
    console.log(`commit-to-snapshot, ${samples} REST commits one at a time through instance 1, a firebase SDK listener on:`);
    console.log(`  the same instance      p50 ${ms(same.p50)} ms, p99 ${ms(same.p99)} ms`);
    console.log(`  another instance       p50 ${ms(other.p50)} ms, p99 ${ms(other.p99)} ms`);

    progress('throughput over 1, 2, 3 instances');
    const spreadRows: string[][] = [];
    let one = 0;
    for (const use of [1, 2, 3]) {
      const result = await spreadThroughput(instances, use, concurrency * 2, seconds);
      if (use === 1) one = result.perSecond;
      spreadRows.push([String(use), rate(result.perSecond), `${ms(result.p50)} / ${ms(result.p99)}`, (result.perSecond / one).toFixed(2)]);
    }
    console.log('');
    console.log(renderTable(['instances', 'REST commits/s', 'p50/p99 ms', '÷ one instance'], spreadRows, () => false));
    console.log(`(${concurrency * 2} commits in flight from this process, round-robin; every instance shares this machine's cores and the one database)`);
  } finally {
    await instances.close();
    await shared.drop();
  }
}
