import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestPgDatabase, type TestPgDatabase } from './pg-database.js';

/**
 * Which storage the test servers use: SQLite (the default) or, with HEARTH_TEST_BACKEND=postgres,
 * a fresh PostgreSQL database per data folder. A restart on the same data folder (durability
 * tests) finds the same database again through a marker file in the folder.
 */
export const testBackend: 'sqlite' | 'postgres' = process.env.HEARTH_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';

const markerName = '.test-database-url';
const made = new Map<string, TestPgDatabase>();

/** The database URL for a data folder's server on the PostgreSQL backend (undefined on SQLite). */
export async function testDatabaseUrl(dataDir: string): Promise<string | undefined> {
  if (testBackend !== 'postgres') return undefined;
  const marker = join(dataDir, markerName);
  if (existsSync(marker)) return readFileSync(marker, 'utf8').trim();
  const database = await createTestPgDatabase();
  made.set(dataDir, database);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(marker, `${database.url}\n`);
  return database.url;
}

/** Drops the data folder's database, if this process made one. */
export async function dropTestDatabase(dataDir: string): Promise<void> {
  const database = made.get(dataDir);
  if (!database) return;
  made.delete(dataDir);
  await database.drop();
}

// Data folders a test passes itself outlive each server on them: their databases go at exit.
let dropping = false;
process.on('beforeExit', () => {
  if (dropping || made.size === 0) return;
  dropping = true;
  void Promise.all([...made.values()].map((database) => database.drop().catch(() => undefined))).then(() => made.clear());
});

/**
 * Rows of a test server's storage, read as an operator would: `sql` is a SELECT in the dialect
 * both share, with `?` placeholders; run on the data folder's SQLite file or on its database.
 */
export async function storedRows(dataDir: string, sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  const databaseUrl = await testDatabaseUrl(dataDir);
  if (!databaseUrl) {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dataDir, 'hearth.sqlite'), { readonly: true });
    try {
      return db.prepare(sql).all(...params) as Array<Record<string, unknown>>;
    } finally {
      db.close();
    }
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    let n = 0;
    return (await client.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

/** A secret the server keeps: a file of the data folder on SQLite, a row of the shared database on PostgreSQL. */
export async function storedSecret(dataDir: string, name: 'signing-keys' | 'captcha-key' | 'mfa-key'): Promise<string> {
  if (testBackend === 'sqlite') return readFileSync(join(dataDir, name === 'signing-keys' ? 'signing-keys.json' : name), 'utf8').trim();
  const rows =
    name === 'signing-keys'
      ? await storedRows(dataDir, 'SELECT keys AS value FROM key_rings WHERE name = ?', [name])
      : await storedRows(dataDir, 'SELECT secret AS value FROM shared_secrets WHERE name = ?', [name]);
  return String(rows[0]!.value).trim();
}

/** The environment a `hearth` command needs to find the storage of the data folder after `--data` in `args`. */
export async function backendEnv(args: string[]): Promise<NodeJS.ProcessEnv> {
  const dataIndex = args.indexOf('--data');
  const databaseUrl = dataIndex >= 0 ? await testDatabaseUrl(args[dataIndex + 1]!) : undefined;
  return databaseUrl ? { HEARTH_DATABASE_URL: databaseUrl } : {};
}
