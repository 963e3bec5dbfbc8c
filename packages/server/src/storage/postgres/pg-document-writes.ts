import type { PgClient } from './pg-connection.js';
import { StorageLimitExceeded, type DocumentChange, type IndexEntry } from '../document-store.js';
import { bytes, idBytes, indexValueKey, pathKey } from './pg-document-scan.js';
import { documentKey, keyedDelete } from './pg-keyed.js';

/** One SQL statement with its own numbered parameters. */
export interface PgStatement {
  sql: string;
  params: unknown[];
}

/** Runs statements one after another (where a later one must see an earlier one's effect). */
export async function runStatements(client: PgClient, statements: readonly PgStatement[]): Promise<void> {
  for (const statement of statements) await client.query(statement.sql, statement.params);
}

/**
 * Data-modifying statements as one (each in a WITH clause, `final` the query that ends it): one
 * round trip. They see the same snapshot, not each other's effects, so they must touch disjoint
 * rows, which documentChangeStatements ensures.
 */
export function combinedStatement(statements: readonly PgStatement[], final: PgStatement): PgStatement {
  const params: unknown[] = [];
  const renumber = (statement: PgStatement) => {
    const offset = params.length;
    params.push(...statement.params);
    return statement.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
  };
  const clauses = statements.map((statement, i) => `w${i} AS (${renumber(statement)})`);
  const tail = renumber(final);
  return { sql: clauses.length ? `WITH ${clauses.join(', ')} ${tail}` : tail, params };
}

/**
 * A commit's changes as a few set-wise statements (one per kind of change, arrays unnested)
 * rather than a statement per row: a commit's round trips do not grow with its size. An entry
 * both removed and added under the same stored key (two long values sharing the kept prefix) is
 * left as it is, so the statements touch disjoint rows and can run as one.
 */
export function documentChangeStatements(db: string, changes: readonly DocumentChange[], options: { entriesOnly?: boolean } = {}): PgStatement[] {
  const parts: PgStatement[] = [];
  const removed = new EntryColumns();
  const added = new EntryColumns();
  for (const change of changes) {
    for (const entry of change.removeEntries) removed.add(change, entry);
    for (const entry of change.addEntries) added.add(change, entry);
  }
  const both = removed.keys().filter((key) => added.keys().includes(key));
  if (both.length) {
    removed.drop(new Set(both));
    added.drop(new Set(both));
  }
  // Refused before anything is written: PostgreSQL would fail the statement (a B-tree entry must fit a third of a page).
  if (added.longestKey + Buffer.byteLength(db) > maxKeyBytes || changes.some((change) => Buffer.byteLength(change.path) + Buffer.byteLength(db) > maxKeyBytes)) {
    throw new StorageLimitExceeded('The document path and field names are too long to be indexed by this server (PostgreSQL keeps index keys under 2,400 bytes).');
  }
  if (removed.size) {
    parts.push(statement(
      keyedDelete('fs_index', [['parent', 'bytea'], ['field', 'bytea'], ['kind', 'smallint'], ['value', 'bytea'], ['doc_id', 'bytea']]),
      [db, ...removed.columns()],
    ));
  }
  if (!options.entriesOnly) {
    const written = changes.flatMap((change) => (change.row ? [change.row] : []));
    if (written.length) {
      const keys = written.map((row) => pathKey(row.path));
      parts.push(statement(
        `INSERT INTO fs_documents (db, parent, doc_id, collection_id, name_key, create_time, update_time, fields)
         SELECT $1, written.* FROM unnest($2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[], $6::bigint[], $7::bigint[], $8::text[]) AS written
         ON CONFLICT (db, parent, doc_id) DO UPDATE SET create_time = EXCLUDED.create_time, update_time = EXCLUDED.update_time, fields = EXCLUDED.fields`,
        [
          db,
          keys.map((key) => key.parent),
          keys.map((key) => key.docId),
          written.map((row) => bytes(row.collectionId)),
          written.map((row) => row.nameKey),
          written.map((row) => row.createTime),
          written.map((row) => row.updateTime),
          written.map((row) => row.fields),
        ],
      ));
    }
    const deleted = changes.filter((change) => !change.row).map((change) => pathKey(change.path));
    if (deleted.length) {
      parts.push(statement(keyedDelete('fs_documents', documentKey), [
        db,
        deleted.map((key) => key.parent),
        deleted.map((key) => key.docId),
      ]));
    }
  }
  parts.push(...vectorStatements(db, changes));
  if (added.size) {
    parts.push(statement(
      `INSERT INTO fs_index (db, parent, field, kind, value, doc_id)
       SELECT $1, added.* FROM unnest($2::bytea[], $3::bytea[], $4::smallint[], $5::bytea[], $6::bytea[]) AS added
       ON CONFLICT DO NOTHING`,
      [db, ...added.columns()],
    ));
  }
  return parts;
}

/**
 * The changed vector rows (declared vector fields, storage/document-store.ts VectorChange): each
 * field a row either deleted or upserted, and each touched set's generation raised once (one row
 * per set in the statement, as ON CONFLICT requires). Disjoint from every other statement's rows.
 */
export function vectorStatements(db: string, changes: readonly DocumentChange[]): PgStatement[] {
  const upserts = { parents: [] as Buffer[], fields: [] as Buffer[], ids: [] as Buffer[], vectors: [] as Buffer[] };
  const deletes = { parents: [] as Buffer[], fields: [] as Buffer[], ids: [] as Buffer[] };
  const sets = new Map<string, [Buffer, Buffer]>();
  for (const change of changes) {
    if (!change.vectors) continue;
    const parent = bytes(change.parent);
    const id = idBytes(change.id);
    for (const field of change.vectors.fields) {
      const fieldBytes = bytes(field);
      const entry = change.vectors.entries.find((candidate) => candidate.field === field);
      if (entry) {
        upserts.parents.push(parent);
        upserts.fields.push(fieldBytes);
        upserts.ids.push(id);
        upserts.vectors.push(entry.vector);
      } else {
        deletes.parents.push(parent);
        deletes.fields.push(fieldBytes);
        deletes.ids.push(id);
      }
      sets.set(`${change.parent}\u0000${field}`, [parent, fieldBytes]);
    }
  }
  const parts: PgStatement[] = [];
  if (deletes.ids.length) {
    parts.push(statement(keyedDelete('fs_vectors', [['parent', 'bytea'], ['field', 'bytea'], ['doc_id', 'bytea']]), [
      db, deletes.parents, deletes.fields, deletes.ids,
    ]));
  }
  if (upserts.ids.length) {
    parts.push(statement(
      `INSERT INTO fs_vectors (db, parent, field, doc_id, vector) SELECT $1, v.* FROM unnest($2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[]) AS v
       ON CONFLICT (db, parent, field, doc_id) DO UPDATE SET vector = EXCLUDED.vector`,
      [db, upserts.parents, upserts.fields, upserts.ids, upserts.vectors],
    ));
  }
  if (sets.size) {
    const touched = [...sets.values()];
    parts.push(statement(
      `INSERT INTO fs_vector_sets (db, parent, field, generation) SELECT $1, s.*, 1 FROM unnest($2::bytea[], $3::bytea[]) AS s
       ON CONFLICT (db, parent, field) DO UPDATE SET generation = fs_vector_sets.generation + 1`,
      [db, touched.map(([parent]) => parent), touched.map(([, field]) => field)],
    ));
  }
  return parts;
}

function statement(sql: string, params: unknown[]): PgStatement {
  return { sql, params };
}

/** A B-tree entry's key bytes, with room for the tuple's own overhead under PostgreSQL's limit (2,704 bytes with 8 KB pages). */
const maxKeyBytes = 2_400;

/** Index entries as parallel arrays, filed under their document's collection and id unless they say otherwise. */
class EntryColumns {
  longestKey = 0;
  private readonly parents: Buffer[] = [];
  private readonly fields: Buffer[] = [];
  private readonly kinds: number[] = [];
  private readonly values: Buffer[] = [];
  private readonly ids: Buffer[] = [];

  get size(): number {
    return this.ids.length;
  }

  add(change: DocumentChange, entry: IndexEntry): void {
    this.parents.push(bytes(entry.parent ?? change.parent));
    this.fields.push(bytes(entry.field));
    this.kinds.push(entry.kind);
    this.values.push(indexValueKey(entry.value));
    this.ids.push(idBytes(entry.docId ?? change.id));
    const at = this.ids.length - 1;
    this.longestKey = Math.max(this.longestKey, this.parents[at]!.length + this.fields[at]!.length + this.values[at]!.length + this.ids[at]!.length);
  }

  /** Each entry's stored key as text, to compare entries. */
  keys(): string[] {
    return this.ids.map((id, i) => [this.parents[i]!.toString('hex'), this.fields[i]!.toString('hex'), this.kinds[i], this.values[i]!.toString('hex'), id.toString('hex')].join(' '));
  }

  drop(keys: ReadonlySet<string>): void {
    const keep = this.keys().map((key) => !keys.has(key));
    for (const column of [this.parents, this.fields, this.kinds, this.values, this.ids] as unknown[][]) {
      const kept = column.filter((_, i) => keep[i]);
      column.splice(0, column.length, ...kept);
    }
  }

  columns(): [Buffer[], Buffer[], number[], Buffer[], Buffer[]] {
    return [this.parents, this.fields, this.kinds, this.values, this.ids];
  }
}
