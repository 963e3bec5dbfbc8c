import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A fresh PostgreSQL database per test server, on the local server (127.0.0.1:5432, trust auth on
 * these machines; HEARTH_TEST_PG_ADMIN_URL overrides where databases are made).
 */
export const pgAdminUrl = process.env.HEARTH_TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestPgDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestPgDatabase(prefix = 'hearth_t'): Promise<TestPgDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(pgAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    // WITH (FORCE) ends connections a killed test server left behind.
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
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
