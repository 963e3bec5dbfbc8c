import type Database from 'better-sqlite3';
import type { PgClient } from '../storage/postgres/pg-connection.js';
import { indexValueKey } from '../storage/postgres/pg-document-scan.js';

/**
 * The documents part of `hearth migrate`: every database's documents, index entries, superseded
 * versions and meta row, copied from the SQLite file into PostgreSQL inside the caller's
 * transaction. Rows are streamed from SQLite and written a batch at a time (one INSERT of unnested
 * arrays per batch), so a large folder never sits in memory.
 *
 * Both backends store the same encodings (stored ids, name keys, index values: the same encoders
 * wrote them), so rows are copied rather than rebuilt from the documents; text columns become their
 * UTF-8 bytes (the PostgreSQL side is BYTEA, see pg-document-schema.ts) and index values are cut to
 * the prefix PostgreSQL keeps (indexValueKey, as its own commits do). Composite entries are copied
 * with the index set that made them, so an instance started with the same indexes file does not
 * rebuild them, and one started with another file rebuilds as after any change of the file.
 *
 * fs_meta keeps each database's last commit time (readTime and resume tokens are commit times, so
 * they stay monotonic across the move) and history_start (the versions move too, so reads at a past
 * time answer as before). The change sequence starts at 0: SQLite has no shared change log, and a
 * feed starts from the current sequence, so there is nothing earlier to replay.
 */

export const documentTables = ['fs_meta', 'fs_documents', 'fs_index', 'fs_versions', 'fs_changes', 'fs_vectors', 'fs_vector_sets'] as const;

export interface DocumentCopyReport {
  databases: number;
  documents: number;
  indexEntries: number;
  versions: number;
}

/** Told after each batch: which table, and how many of its rows are copied so far. */
export type CopyProgress = (table: string, rows: number) => void;

const batchRows = 2000;

interface Copy {
  table: string;
  select: string;
  insert: string;
  /** A SQLite row (columns in `select` order) as the arrays' elements. */
  convert: (row: unknown[]) => unknown[];
}

const utf8 = (value: unknown) => Buffer.from(String(value), 'utf8');

const copies: readonly Copy[] = [
  {
    table: 'fs_meta',
    select: 'SELECT db, last_commit_time, index_set, history_start FROM fs_meta',
    insert: `INSERT INTO fs_meta (db, last_commit_time, seq, index_set, history_start)
             SELECT db, t, 0, s, h FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[]) AS r(db, t, s, h)`,
    convert: (row) => row,
  },
  {
    table: 'fs_documents',
    select: 'SELECT db, parent, doc_id, collection_id, name_key, create_time, update_time, fields FROM fs_documents',
    insert: `INSERT INTO fs_documents (db, parent, doc_id, collection_id, name_key, create_time, update_time, fields)
             SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[], $6::bigint[], $7::bigint[], $8::text[])`,
    convert: ([db, parent, docId, collectionId, nameKey, createTime, updateTime, fields]) => [db, utf8(parent), utf8(docId), utf8(collectionId), nameKey, createTime, updateTime, fields],
  },
  {
    table: 'fs_index',
    select: 'SELECT db, parent, field, kind, value, doc_id FROM fs_index',
    // Two long values sharing the kept prefix become one entry, as in a commit on PostgreSQL.
    insert: `INSERT INTO fs_index (db, parent, field, kind, value, doc_id)
             SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::smallint[], $5::bytea[], $6::bytea[]) ON CONFLICT DO NOTHING`,
    convert: ([db, parent, field, kind, value, docId]) => [db, utf8(parent), utf8(field), kind, indexValueKey(value as Buffer), utf8(docId)],
  },
  {
    table: 'fs_versions',
    select: 'SELECT db, parent, doc_id, collection_id, name_key, create_time, update_time, until_time, fields FROM fs_versions',
    insert: `INSERT INTO fs_versions (db, parent, doc_id, collection_id, name_key, create_time, update_time, until_time, fields)
             SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[])`,
    convert: ([db, parent, docId, collectionId, nameKey, createTime, updateTime, untilTime, fields]) => [
      db, utf8(parent), utf8(docId), utf8(collectionId), nameKey, createTime, updateTime, untilTime, fields,
    ],
  },
  {
    // The side table of declared vector fields: recorded in fs_meta's index set with the composite
    // entries, so it moves with them. Generations start again (fs_vector_sets): nothing holds a set yet.
    table: 'fs_vectors',
    select: 'SELECT db, parent, field, doc_id, vector FROM fs_vectors',
    insert: `INSERT INTO fs_vectors (db, parent, field, doc_id, vector) SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[])`,
    convert: ([db, parent, field, docId, vector]) => [db, utf8(parent), utf8(field), utf8(docId), vector],
  },
];

export async function copyDocuments(sqlite: Database.Database, client: PgClient, progress: CopyProgress = () => undefined): Promise<DocumentCopyReport> {
  const counts: Record<string, number> = {};
  for (const copy of copies) counts[copy.table] = await copyRows(sqlite, client, copy, progress);
  // A database with documents but no meta row (none is expected) still needs the row every commit locks.
  await client.query('INSERT INTO fs_meta (db) SELECT DISTINCT db FROM fs_documents ON CONFLICT (db) DO NOTHING');
  return { databases: counts.fs_meta ?? 0, documents: counts.fs_documents ?? 0, indexEntries: counts.fs_index ?? 0, versions: counts.fs_versions ?? 0 };
}

async function copyRows(sqlite: Database.Database, client: PgClient, copy: Copy, progress: CopyProgress): Promise<number> {
  // safeIntegers: times are microseconds, past 2^53 never in practice, but a copy must not round.
  const select = sqlite.prepare(copy.select).raw(true).safeIntegers(true);
  let count = 0;
  await inBatches(select.iterate() as Iterable<unknown[]>, batchRows, async (rows) => {
    const columns: unknown[][] = [];
    for (const row of rows) {
      const values = copy.convert(row.map((value) => (typeof value === 'bigint' ? value.toString() : value)));
      values.forEach((value, i) => (columns[i] ??= []).push(value));
    }
    await client.query(copy.insert, columns);
    count += rows.length;
    progress(copy.table, count);
  });
  return count;
}

/** Rows streamed from SQLite, written `size` at a time, so a large table never sits in memory. */
export async function inBatches<T>(rows: Iterable<T>, size: number, write: (batch: T[]) => Promise<void>): Promise<void> {
  let batch: T[] = [];
  for (const row of rows) {
    batch.push(row);
    if (batch.length >= size) {
      await write(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await write(batch);
}
