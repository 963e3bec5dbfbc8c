import pg from 'pg';
import type { PgStatement } from './pg-document-writes.js';

/**
 * Statements with their parameters written into the text as literals, so that several go in one
 * simple-protocol round trip (`BEGIN; …; …`): the pg driver sends one statement per round trip
 * otherwise, and a commit holding its database's fs_meta row pays every round trip while other
 * commits wait. Only values this server made or checked go through here (numbers, booleans,
 * Buffers, strings), each through one escaping function; strings with NUL are refused here as
 * PostgreSQL would refuse them, because the simple protocol ends a query at a NUL.
 */
export function inlineStatements(statements: readonly PgStatement[]): string {
  return statements.map(inlineStatement).join('; ');
}

export function inlineStatement(statement: PgStatement): string {
  // One pass over the template: a literal put in is never scanned again for placeholders.
  return statement.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= statement.params.length) throw new Error(`statement has no parameter $${n}`);
    return literal(statement.params[index]);
  });
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('a statement parameter is not a finite number');
    return String(value);
  }
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
    return pg.escapeLiteral(value);
  }
  if (Buffer.isBuffer(value)) return `${pg.escapeLiteral(`\\x${value.toString('hex')}`)}::bytea`;
  if (Array.isArray(value)) return value.length ? `ARRAY[${value.map(literal).join(',')}]` : `'{}'`;
  throw new Error(`a statement parameter of type ${typeof value} cannot be written as a literal`);
}
