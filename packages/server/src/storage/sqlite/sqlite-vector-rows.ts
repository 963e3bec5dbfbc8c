import type Database from 'better-sqlite3';
import type { DocumentChange } from '../document-store.js';
import { writeStatements, type WriteBatch } from './sqlite-write-batch.js';

/**
 * The side table of declared vector fields on SQLite (fs_vectors, and fs_vector_sets: a generation
 * per collection and field, storage/document-store.ts VectorEntry). Commits write it through the
 * group's batch (addVectorWrites); rebuilds, clears and reads use the main connection.
 */
export class SqliteVectorRows {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      deleteAll: db.prepare('DELETE FROM fs_vectors WHERE db = ?'),
      bumpAll: db.prepare('UPDATE fs_vector_sets SET generation = generation + 1 WHERE db = ?'),
      upsert: db.prepare(writeStatements.upsertVector.sql),
      bump: db.prepare(writeStatements.bumpVectorSet.sql),
      generation: db.prepare<[string, string, string], number>('SELECT generation FROM fs_vector_sets WHERE db = ? AND parent = ? AND field = ?').pluck(),
      scan: db.prepare<[string, string, string], [string, Buffer]>('SELECT doc_id, vector FROM fs_vectors WHERE db = ? AND parent = ? AND field = ?').raw(),
    };
  }

  /** Inside a rebuild's or a clear's transaction: no row left, every set's generation raised. */
  clear(db: string): void {
    this.statements.deleteAll.run(db);
    this.statements.bumpAll.run(db);
  }

  /** Inside a rebuild's transaction. */
  insert(db: string, parent: string, field: string, storedId: string, vector: Buffer): void {
    this.statements.upsert.run(db, parent, field, storedId, vector);
    this.statements.bump.run(db, parent, field);
  }

  generation(db: string, parent: string, field: string): number {
    return this.statements.generation.get(db, parent, field) ?? 0;
  }

  /** Stored ids and vectors. */
  scan(db: string, parent: string, field: string): Array<[string, Buffer]> {
    return this.statements.scan.all(db, parent, field);
  }
}

/** A change's vector rows, each field upserted or deleted and its set's generation raised. */
export function addVectorWrites(batch: WriteBatch, db: string, change: DocumentChange, storedId: string): void {
  if (!change.vectors) return;
  for (const field of change.vectors.fields) {
    const entry = change.vectors.entries.find((candidate) => candidate.field === field);
    if (entry) batch.add('upsertVector', db, change.parent, field, storedId, entry.vector);
    else batch.add('deleteVector', db, change.parent, field, storedId);
    batch.add('bumpVectorSet', db, change.parent, field);
  }
}
