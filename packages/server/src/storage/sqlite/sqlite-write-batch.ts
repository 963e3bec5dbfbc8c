/**
 * One group's document writes: the statements to run in order, run on the main thread or packed
 * for the writer thread (sqlite-write-packing.ts). Both threads import this file: the main thread
 * builds a batch, the writer runs it.
 */
import type Database from 'better-sqlite3';
import { unpackParams, type PackedWrites, type PackingArena, type Param } from './sqlite-write-packing.js';

export type { Param } from './sqlite-write-packing.js';

/** The statements a group runs. */
export const writeStatements = {
  keepVersion: {
    sql: `INSERT OR REPLACE INTO fs_versions (db, parent, doc_id, collection_id, name_key, create_time, update_time, fields, until_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    arity: 9,
  },
  deleteEntry: {
    sql: 'DELETE FROM fs_index WHERE db = ? AND parent = ? AND field = ? AND kind = ? AND value = ? AND doc_id = ?',
    arity: 6,
  },
  upsert: {
    sql: `INSERT INTO fs_documents (db, parent, doc_id, collection_id, name_key, create_time, update_time, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (db, parent, doc_id) DO UPDATE SET create_time = excluded.create_time, update_time = excluded.update_time, fields = excluded.fields`,
    arity: 8,
  },
  delete: {
    sql: 'DELETE FROM fs_documents WHERE db = ? AND parent = ? AND doc_id = ?',
    arity: 3,
  },
  insertEntry: {
    sql: 'INSERT OR IGNORE INTO fs_index (db, parent, field, kind, value, doc_id) VALUES (?, ?, ?, ?, ?, ?)',
    arity: 6,
  },
  insertTriggerEvent: {
    sql: 'INSERT OR IGNORE INTO fn_events (id, target, db, path, commit_time, payload, next_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    arity: 7,
  },
  upsertVector: {
    sql: 'INSERT INTO fs_vectors (db, parent, field, doc_id, vector) VALUES (?, ?, ?, ?, ?) ON CONFLICT (db, parent, field, doc_id) DO UPDATE SET vector = excluded.vector',
    arity: 5,
  },
  deleteVector: {
    sql: 'DELETE FROM fs_vectors WHERE db = ? AND parent = ? AND field = ? AND doc_id = ?',
    arity: 4,
  },
  bumpVectorSet: {
    sql: 'INSERT INTO fs_vector_sets (db, parent, field, generation) VALUES (?, ?, ?, 1) ON CONFLICT (db, parent, field) DO UPDATE SET generation = generation + 1',
    arity: 3,
  },
  setLastCommit: {
    sql: 'INSERT INTO fs_meta (db, last_commit_time) VALUES (?, ?) ON CONFLICT (db) DO UPDATE SET last_commit_time = excluded.last_commit_time',
    arity: 2,
  },
} as const satisfies Record<string, { sql: string; arity: number }>;

export type WriteStatement = keyof typeof writeStatements;
export const statementNames = Object.keys(writeStatements) as WriteStatement[];
const statementIndex = Object.fromEntries(statementNames.map((name, i) => [name, i])) as Record<WriteStatement, number>;

export class WriteBatch {
  private readonly ops: number[] = [];
  /** Each statement's parameters as given: written here as they are, flattened only by `pack`. */
  private readonly params: Param[][] = [];
  /** Running counts, which size the packed form. */
  private readonly sizes = { params: 0, numbers: 0, spans: 0, chars: 0, blobBytes: 0 };

  get size(): number {
    return this.ops.length;
  }

  /** Roughly what SQLite will write: BLOB bytes and text characters. */
  get bytes(): number {
    return this.sizes.blobBytes + this.sizes.chars;
  }

  add(statement: WriteStatement, ...params: Param[]): void {
    const shape = writeStatements[statement];
    if (params.length !== shape.arity) throw new Error(`${statement} takes ${shape.arity} parameters, not ${params.length}`);
    this.ops.push(statementIndex[statement]);
    this.params.push(params);
    const sizes = this.sizes;
    sizes.params += params.length;
    for (const param of params) {
      if (typeof param === 'string') {
        sizes.spans++;
        sizes.chars += param.length;
      } else if (typeof param === 'number') sizes.numbers++;
      else if (param !== null) {
        sizes.spans++;
        sizes.blobBytes += param.length;
      }
    }
  }

  /** Each statement with its parameters, as added (for a write on this thread). */
  *entries(): Generator<[WriteStatement, Param[]]> {
    for (let i = 0; i < this.ops.length; i++) yield [statementNames[this.ops[i]!]!, this.params[i]!];
  }

  /** The batch as the writer thread receives it, its text and BLOBs written into `arena`. */
  pack(arena: PackingArena): PackedWrites {
    return arena.pack(this.ops, this.params, this.sizes);
  }
}

/** In the writer: each statement with its parameters restored. */
export function* unpack(packed: PackedWrites): Generator<[WriteStatement, Param[]]> {
  const args = unpackParams(packed);
  let at = 0;
  for (let o = 0; o < packed.ops.length; o++) {
    const name = statementNames[packed.ops[o]!]!;
    const arity = writeStatements[name].arity;
    yield [name, args.slice(at, at + arity)];
    at += arity;
  }
}

/** Index entries inserted per statement at most: one multi-row INSERT costs less than as many single ones. */
export const entryRowsPerStatement = 16;

/**
 * Runs a group's statements in order on one connection (inside the caller's transaction).
 * Consecutive `insertEntry`s (a document's new index entries, often several documents') go up to
 * `entryRowsPerStatement` rows per INSERT: the same rows, inserted in the same order relative to
 * every other statement (the pending rows are inserted before any other statement runs), and
 * INSERT OR IGNORE skips a duplicate row alone, as it did one statement at a time.
 */
export class BatchRunner {
  private readonly single: Map<WriteStatement, Database.Statement<Param[]>>;
  private readonly insertRows = new Map<number, Database.Statement<Param[]>>();

  constructor(private readonly db: Database.Database) {
    this.single = new Map(statementNames.map((name) => [name, db.prepare<Param[]>(writeStatements[name].sql)]));
  }

  run(statements: Iterable<[WriteStatement, Param[]]>): void {
    const pending: Param[] = [];
    let rows = 0;
    const flush = () => {
      if (rows === 0) return;
      this.insertStatement(rows).run(...pending);
      pending.length = 0;
      rows = 0;
    };
    for (const [name, params] of statements) {
      if (name !== 'insertEntry') {
        flush();
        this.single.get(name)!.run(...params);
        continue;
      }
      for (const param of params) pending.push(param);
      if (++rows === entryRowsPerStatement) flush();
    }
    flush();
  }

  private insertStatement(rows: number): Database.Statement<Param[]> {
    if (rows === 1) return this.single.get('insertEntry')!;
    let statement = this.insertRows.get(rows);
    if (!statement) {
      // insertEntry's own statement with its row of placeholders repeated.
      const { sql } = writeStatements.insertEntry;
      const row = sql.slice(sql.lastIndexOf('('));
      statement = this.db.prepare<Param[]>(`${sql}${`, ${row}`.repeat(rows - 1)}`);
      this.insertRows.set(rows, statement);
    }
    return statement;
  }
}
