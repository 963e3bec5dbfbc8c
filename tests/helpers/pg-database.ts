import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A fresh PostgreSQL database per test server, on the local server (127.0.0.1:5432, trust auth on
 * these machines; HEARTH_TEST_PG_ADMIN_URL overrides where databases are made).
 */
export const pgAdminUrl = process.env.HEARTH_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Set by `npm test`: the run's tag. Its jobs name their databases `<prefix>_<tag>_...` and leave them
 * in place; the runner drops them all when the jobs are done (dropRunDatabases). On PostgreSQL 15
 * every DROP DATABASE asks for an immediate checkpoint and waits for it, which, with jobs writing
 * beside it, flushes and fsyncs everything they wrote: hundreds of those during the run cost each
 * PostgreSQL job about a third of its time (tests/auth on PostgreSQL: 209 -> 148 s).
 */
export const runDatabasesVariable = 'HEARTH_TEST_PG_RUN';

export interface TestPgDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestPgDatabase(prefix = 'hearth_t'): Promise<TestPgDatabase> {
  const run = process.env[runDatabasesVariable];
  const name = `${prefix}_${run ? `${run}_` : ''}${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(pgAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    // WITH (FORCE) ends connections a killed test server left behind.
    drop: () => (run ? Promise.resolve() : dropDatabase(name)),
  };
}

const dropDatabase = (name: string) => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);

/** Drops every database the jobs of run `tag` made (a few at a time: their checkpoints overlap). */
export async function dropRunDatabases(tag: string): Promise<number> {
  const client = new pg.Client({ connectionString: pgAdminUrl });
  await client.connect();
  let names: string[];
  try {
    const found = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE position($1 IN datname) > 0', [`_${tag}_`]);
    names = found.rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
  const queue = [...names];
  const dropper = async () => {
    for (let name = queue.pop(); name !== undefined; name = queue.pop()) await dropDatabase(name);
  };
  await Promise.all(Array.from({ length: 4 }, dropper));
  return names.length;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgAdminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
