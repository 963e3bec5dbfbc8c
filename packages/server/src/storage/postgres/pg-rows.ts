import pg from 'pg';
import { StoreConflict } from '../store.js';

/** A pool or one client inside a transaction: reads run on either. */
export type PgQueryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/** BIGINT columns come back as text (they may exceed 2^53); Hearth's are times and counters that never do. */
export function num(value: string | number): number {
  return typeof value === 'number' ? value : Number(value);
}

export function optionalNum(value: string | number | null): number | undefined {
  return value === null ? undefined : num(value);
}

/** A unique index refusing a row, by the index's name, as the store's conflict reason. */
export function translateUniqueViolation(error: unknown): unknown {
  if (!(error instanceof pg.DatabaseError) || error.code !== '23505') return error;
  switch (error.constraint) {
    case 'user_providers_pkey':
      return new StoreConflict('federated-id-taken');
    case 'users_phone':
      return new StoreConflict('phone-taken');
    case 'users_email':
      return new StoreConflict('email-taken');
    case 'users_pkey':
      return new StoreConflict('local-id-taken');
    case 'human_checks_pkey':
      return new StoreConflict('code-used');
    default:
      return error;
  }
}

/** Serialization failures and deadlocks: the whole transaction can simply run again. */
export function isRetryable(error: unknown): boolean {
  return error instanceof pg.DatabaseError && (error.code === '40001' || error.code === '40P01');
}

/** Runs `sql` and throws `conflict` unless it changed exactly one row. */
export async function changeOne(client: PgQueryable, sql: string, values: unknown[], conflict: StoreConflict['reason']): Promise<void> {
  const result = await client.query(sql, values);
  if (result.rowCount !== 1) throw new StoreConflict(conflict);
}
