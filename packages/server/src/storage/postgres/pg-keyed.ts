/**
 * Rows found by their whole keys, given as parallel arrays (`$2`, `$3`, ...; `$1` is the
 * database): one index lookup per key, whatever the planner's statistics say.
 *
 * Written as `(key columns) IN (SELECT * FROM unnest(...))`, PostgreSQL chose a hash join over
 * every row of the database whenever its statistics predated a burst of writes: 20 documents read
 * by scanning 20,200 (4.7 ms instead of 0.09), and 20-result queries at 0.4 of their rate until an
 * ANALYZE. A LATERAL subquery with a LIMIT is never flattened into a join, so each key is an index
 * scan of its own, driven by the keys.
 */

/** `[column, SQL type of its array]` of each key column after `db`, in the order of the parameters. */
export type KeyColumns = ReadonlyArray<readonly [column: string, type: string]>;

/** `SELECT found.*`: `select` of the row each key names (at most one: the key is the table's, or `extra` leaves one). */
export function keyedLookup(table: string, keys: KeyColumns, select: string, extra?: string): string {
  const arrays = keys.map(([, type], i) => `$${i + 2}::${type}[]`).join(', ');
  const names = keys.map(([column]) => column).join(', ');
  const match = keys.map(([column]) => `${column} = k.${column}`).join(' AND ');
  return `SELECT found.* FROM unnest(${arrays}) AS k(${names}) CROSS JOIN LATERAL (SELECT ${select} FROM ${table} WHERE db = $1 AND ${match}${extra ? ` AND ${extra}` : ''} LIMIT 1) found`;
}

/**
 * Deletes the rows the keys name, by the tuple ids keyedLookup finds. Only for rows no other
 * transaction changes meanwhile: a commit's own documents and entries, under its path locks.
 */
export function keyedDelete(table: string, keys: KeyColumns): string {
  return `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(${keyedLookup(table, keys, 'ctid')}))`;
}

export const documentKey: KeyColumns = [['parent', 'bytea'], ['doc_id', 'bytea']];
