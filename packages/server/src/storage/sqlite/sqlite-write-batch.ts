/**
 * One group's document writes as the writer thread receives them: the statements to run in order,
 * packed so that crossing threads costs one copy of plain arrays and a transfer of one buffer
 * (structured clone of thousands of small Buffers would clone each one's pooled backing store).
 * Both threads import this file: the main thread builds a batch, the writer runs it.
 */
import type Database from 'better-sqlite3';

/** The statements a group runs; `blobs` names the parameters that are BLOBs. */
export const writeStatements = {
  keepVersion: {
    sql: `INSERT OR REPLACE INTO fs_versions (db, parent, doc_id, collection_id, name_key, create_time, update_time, fields, until_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    arity: 9,
    blobs: [4],
  },
  deleteEntry: {
    sql: 'DELETE FROM fs_index WHERE db = ? AND parent = ? AND field = ? AND kind = ? AND value = ? AND doc_id = ?',
    arity: 6,
    blobs: [4],
  },
  upsert: {
    sql: `INSERT INTO fs_documents (db, parent, doc_id, collection_id, name_key, create_time, update_time, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (db, parent, doc_id) DO UPDATE SET create_time = excluded.create_time, update_time = excluded.update_time, fields = excluded.fields`,
    arity: 8,
    blobs: [4],
  },
  delete: {
    sql: 'DELETE FROM fs_documents WHERE db = ? AND parent = ? AND doc_id = ?',
    arity: 3,
    blobs: [],
  },
  insertEntry: {
    sql: 'INSERT OR IGNORE INTO fs_index (db, parent, field, kind, value, doc_id) VALUES (?, ?, ?, ?, ?, ?)',
    arity: 6,
    blobs: [4],
  },
  setLastCommit: {
    sql: 'INSERT INTO fs_meta (db, last_commit_time) VALUES (?, ?) ON CONFLICT (db) DO UPDATE SET last_commit_time = excluded.last_commit_time',
    arity: 2,
    blobs: [],
  },
} as const satisfies Record<string, { sql: string; arity: number; blobs: readonly number[] }>;

export type WriteStatement = keyof typeof writeStatements;
export const statementNames = Object.keys(writeStatements) as WriteStatement[];
const statementIndex = Object.fromEntries(statementNames.map((name, i) => [name, i])) as Record<WriteStatement, number>;

export type Param = string | number | Buffer | null;

/**
 * What crosses to the writer. `ops` holds each statement's index in `statementNames`; `args` every
 * parameter in order, a BLOB as its index in `blobSpans` (offset and length in `blob`).
 */
export interface PackedWrites {
  ops: Uint8Array;
  args: Array<string | number | null>;
  blobSpans: Float64Array;
  blob: ArrayBuffer;
}

export class WriteBatch {
  private readonly ops: number[] = [];
  /** Each statement's parameters as given: written here as they are, flattened only by `pack`. */
  private readonly params: Param[][] = [];
  private blobCount = 0;
  private blobBytes = 0;
  private textBytes = 0;

  get size(): number {
    return this.ops.length;
  }

  /** Roughly what SQLite will write: BLOB bytes and text characters. */
  get bytes(): number {
    return this.blobBytes + this.textBytes;
  }

  add(statement: WriteStatement, ...params: Param[]): void {
    const shape = writeStatements[statement];
    if (params.length !== shape.arity) throw new Error(`${statement} takes ${shape.arity} parameters, not ${params.length}`);
    this.ops.push(statementIndex[statement]);
    this.params.push(params);
    for (const param of params) {
      if (typeof param === 'string') this.textBytes += param.length;
      else if (Buffer.isBuffer(param)) {
        this.blobCount++;
        this.blobBytes += param.length;
      }
    }
  }

  /** Each statement with its parameters, as added (for a write on this thread). */
  *entries(): Generator<[WriteStatement, Param[]]> {
    for (let i = 0; i < this.ops.length; i++) yield [statementNames[this.ops[i]!]!, this.params[i]!];
  }

  pack(): PackedWrites {
    const blob = new ArrayBuffer(this.blobBytes);
    const view = new Uint8Array(blob);
    const blobSpans = new Float64Array(this.blobCount * 2);
    const args: Array<string | number | null> = [];
    let at = 0;
    let blobIndex = 0;
    for (const params of this.params) {
      for (const param of params) {
        if (!Buffer.isBuffer(param)) {
          args.push(param);
          continue;
        }
        view.set(param, at);
        blobSpans[2 * blobIndex] = at;
        blobSpans[2 * blobIndex + 1] = param.length;
        args.push(blobIndex++);
        at += param.length;
      }
    }
    return { ops: Uint8Array.from(this.ops), args, blobSpans, blob };
  }
}

/** In the writer: each statement with its parameters restored (BLOBs as views of `blob`, no copy). */
export function unpack(packed: PackedWrites): Generator<[WriteStatement, Param[]]> {
  const { blobSpans, blob } = packed;
  return statementsOf(packed.ops, packed.args, (index) => Buffer.from(blob, blobSpans[2 * index]!, blobSpans[2 * index + 1]!));
}

function* statementsOf(ops: ArrayLike<number>, args: ReadonlyArray<string | number | null>, blobAt: (index: number) => Buffer): Generator<[WriteStatement, Param[]]> {
  let at = 0;
  for (let o = 0; o < ops.length; o++) {
    const name = statementNames[ops[o]!]!;
    const shape = writeStatements[name];
    const blobs: readonly number[] = shape.blobs;
    const params: Param[] = new Array<Param>(shape.arity);
    for (let i = 0; i < shape.arity; i++) {
      const arg = args[at++]!;
      params[i] = blobs.includes(i) ? blobAt(arg as number) : arg;
    }
    yield [name, params];
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
