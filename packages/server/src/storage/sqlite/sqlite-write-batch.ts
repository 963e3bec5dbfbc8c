/**
 * One group's document writes as the writer thread receives them: the statements to run in order,
 * packed so that crossing threads costs one copy of plain arrays and a transfer of one buffer
 * (structured clone of thousands of small Buffers would clone each one's pooled backing store).
 * Both threads import this file: the main thread builds a batch, the writer runs it.
 */

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

export type Param = string | number | Buffer | null;

/**
 * What crosses to the writer. `ops` holds each statement's index in `statementNames`; `args` every
 * parameter in order, a BLOB as two numbers (offset and length in `blob`).
 */
export interface PackedWrites {
  ops: Uint8Array;
  args: Array<string | number | null>;
  blob: ArrayBuffer;
}

export class WriteBatch {
  private readonly ops: number[] = [];
  private readonly args: Array<string | number | null> = [];
  private readonly blobs: Buffer[] = [];
  private blobBytes = 0;

  get size(): number {
    return this.ops.length;
  }

  add(statement: WriteStatement, ...params: Param[]): void {
    const shape = writeStatements[statement];
    if (params.length !== shape.arity) throw new Error(`${statement} takes ${shape.arity} parameters, not ${params.length}`);
    this.ops.push(statementNames.indexOf(statement));
    for (const param of params) {
      if (Buffer.isBuffer(param)) {
        this.args.push(this.blobBytes, param.length);
        this.blobs.push(param);
        this.blobBytes += param.length;
      } else {
        this.args.push(param);
      }
    }
  }

  pack(): PackedWrites {
    const blob = new ArrayBuffer(this.blobBytes);
    const view = new Uint8Array(blob);
    let at = 0;
    for (const part of this.blobs) {
      view.set(part, at);
      at += part.length;
    }
    return { ops: Uint8Array.from(this.ops), args: this.args, blob };
  }
}

/** In the writer: each statement with its parameters restored (BLOBs as views of `blob`, no copy). */
export function* unpack(packed: PackedWrites): Generator<[WriteStatement, Param[]]> {
  let at = 0;
  for (const op of packed.ops) {
    const name = statementNames[op]!;
    const shape = writeStatements[name];
    const params: Param[] = [];
    for (let i = 0; i < shape.arity; i++) {
      if ((shape.blobs as readonly number[]).includes(i)) {
        const offset = packed.args[at++] as number;
        const length = packed.args[at++] as number;
        params.push(Buffer.from(packed.blob, offset, length));
      } else {
        params.push(packed.args[at++]!);
      }
    }
    yield [name, params];
  }
}
