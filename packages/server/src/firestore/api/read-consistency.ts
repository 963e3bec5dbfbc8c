import type { DocumentDatabase } from '../core/database.js';
import { firestoreErrors } from '../core/errors.js';
import type { DatabaseId } from '../core/paths.js';
import type { ServerTransaction, TransactionConcurrency } from '../core/transactions.js';
import type { FirestoreCaller } from '../security/guard.js';
import { formatMicros, parseMicros } from '../core/value-wire.js';
import { onlyKeys, wireObject } from '../core/wire-checks.js';

/**
 * Which snapshot a read sees, from the request: the present, a server transaction (named, or
 * begun by this read), or a past read time. Shared by the verbs (REST, gRPC) and the single
 * document calls.
 */

type Body = Record<string, unknown>;

export interface Consistency {
  transaction?: ServerTransaction;
  /** The read began the transaction: its id goes back with the first answer. */
  isNew: boolean;
  /** Reads see the data as of this time (µs): asked for, or the read-only transaction's snapshot. */
  readTime?: number;
}

/**
 * The administrator's transactions lock what they read (admin SDKs expect serializable
 * transactions); those of callers judged by security rules are optimistic, so that no such caller
 * can hold anyone else's writes (core/transactions.ts).
 */
export function concurrencyFor(caller: FirestoreCaller): TransactionConcurrency {
  return caller.kind === 'admin' ? 'pessimistic' : 'optimistic';
}

/** `transaction`, `newTransaction` or `readTime`: which snapshot a read sees. */
export async function readConsistency(database: DocumentDatabase, db: DatabaseId, body: Body, caller: FirestoreCaller): Promise<Consistency> {
  const selectors = ['transaction', 'newTransaction', 'readTime'].filter((key) => body[key] !== undefined);
  if (selectors.length > 1) throw firestoreErrors.invalidArgument('Only one of transaction, newTransaction and readTime may be set.');
  let transaction: ServerTransaction | undefined;
  if (body.transaction !== undefined) transaction = database.transactions.use(database.dbKey(db), body.transaction);
  if (body.newTransaction !== undefined) transaction = await beginWith(database, db, body.newTransaction, concurrencyFor(caller));
  const readTime = body.readTime !== undefined ? await checkedReadTime(database, db, body.readTime) : transaction?.readTime;
  return { isNew: body.newTransaction !== undefined, ...(transaction ? { transaction } : {}), ...(readTime !== undefined ? { readTime } : {}) };
}

/** A request's read time (a proto3 JSON Timestamp), within what the kept versions can answer. */
export async function checkedReadTime(database: DocumentDatabase, db: DatabaseId, raw: unknown): Promise<number> {
  const micros = typeof raw === 'string' ? parseMicros(raw) : undefined;
  if (micros === undefined) throw firestoreErrors.invalidArgument("Invalid value at 'read_time' (type.googleapis.com/google.protobuf.Timestamp).");
  await database.checkReadTime(db, micros);
  return micros;
}

/**
 * A new transaction. A read-only one reads a snapshot: at the read time it names, or at its
 * start (as Google's emulator does), whatever commits follow.
 */
export async function beginWith(database: DocumentDatabase, db: DatabaseId, options: unknown, concurrency: TransactionConcurrency): Promise<ServerTransaction> {
  const wire = (options ?? {}) as { readOnly?: unknown; readWrite?: { retryTransaction?: unknown } };
  if (typeof wire !== 'object') throw firestoreErrors.invalidArgument('Invalid transaction options.');
  if (wire.readOnly !== undefined && wire.readWrite !== undefined) throw firestoreErrors.invalidArgument('Transaction options must set one of readOnly and readWrite.');
  const dbKey = database.dbKey(db);
  if (wire.readOnly !== undefined) {
    const readOnly = wireObject(wire.readOnly, 'options.read_only');
    onlyKeys(readOnly, ['readTime'], 'options.read_only');
    const readTime = readOnly.readTime !== undefined ? await checkedReadTime(database, db, readOnly.readTime) : await database.readTime(db);
    return database.transactions.begin(dbKey, true, undefined, readTime, concurrency);
  }
  if (wire.readWrite !== undefined) onlyKeys(wireObject(wire.readWrite, 'options.read_write'), ['retryTransaction'], 'options.read_write');
  const retrying = wire.readWrite?.retryTransaction === undefined ? undefined : database.transactions.find(dbKey, wire.readWrite.retryTransaction);
  if (retrying) database.transactions.end(retrying);
  return database.transactions.begin(dbKey, false, retrying, undefined, concurrency);
}

/**
 * A read that failed (refused by the rules, say) ends the transaction it began: its id never
 * reached the client, so nothing else could use or end it.
 */
export async function endIfBegun<T>(database: DocumentDatabase, consistency: Consistency, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (consistency.isNew && consistency.transaction) database.transactions.end(consistency.transaction);
    throw error;
  }
}

/** The readTime of an answer: the snapshot read, or now. */
export async function answerTime(database: DocumentDatabase, db: DatabaseId, consistency: Consistency): Promise<string> {
  return formatMicros(consistency.readTime ?? (await database.readTime(db)));
}
