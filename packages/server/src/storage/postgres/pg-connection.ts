import pg from 'pg';

/**
 * The PostgreSQL side of storage: one pool per process and versioned schema steps. Each part of
 * Hearth (identity, documents, rules, ...) keeps its own list of steps under its own name, so the
 * parts can grow their schemas independently.
 */

export type PgPool = pg.Pool;
export type PgClient = pg.PoolClient;

export interface PgPoolOptions {
  /** Connections kept at most (pg's default is 10). */
  max?: number;
}

export function openPgPool(url: string, options: PgPoolOptions = {}): PgPool {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  // An idle client whose server went away emits 'error' on the pool; without a handler that would end the process.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `work` in one transaction on one connection: committed if it returns, rolled back if it throws. */
export async function inPgTransaction<T>(pool: PgPool, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** One lock key for every schema change: instances starting together apply each step exactly once. */
const migrationLockKey = 0x4865_6172; // "Hear"

/**
 * Applies the steps of `component` not applied yet, in order, each in its own transaction, under
 * an advisory lock so that several instances starting at once neither race nor repeat a step.
 * A step is SQL text; the steps of a component are only ever appended to.
 */
export async function applyPgMigrations(pool: PgPool, component: string, steps: readonly string[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [migrationLockKey]);
    try {
      await client.query(
        'CREATE TABLE IF NOT EXISTS hearth_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)',
      );
      const found = await client.query<{ version: number }>('SELECT version FROM hearth_schema WHERE component = $1', [component]);
      const applied = found.rows[0]?.version ?? 0;
      for (let step = applied; step < steps.length; step++) {
        await client.query('BEGIN');
        try {
          await client.query(steps[step]!);
          await client.query(
            'INSERT INTO hearth_schema (component, version) VALUES ($1, $2) ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version',
            [component, step + 1],
          );
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [migrationLockKey]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}
