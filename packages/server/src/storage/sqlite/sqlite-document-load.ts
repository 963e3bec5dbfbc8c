import type Database from 'better-sqlite3';
import { DatabaseNotEmpty, type DocumentLoad, type DocumentLoadReport } from '../document-store.js';
import { BatchRunner, WriteBatch } from './sqlite-write-batch.js';
import { indexValueKey } from '../index-value-prefix.js';
import { storedId } from './sqlite-document-rows.js';

/**
 * DocumentStore.loadDocuments on SQLite: one IMMEDIATE transaction on the connection, so a failure
 * or a killed process leaves the file as it was (SQLite rolls an unfinished transaction back).
 * Batches are written as they come, so SQLite spills to the file rather than memory holding them.
 */
export function loadSqliteDocuments(connection: Database.Database, db: string, load: DocumentLoad, commitTime: number): DocumentLoadReport {
  const runner = new BatchRunner(connection);
  let documents = 0;
  let indexEntries = 0;
  connection.transaction(() => {
    if (connection.prepare('SELECT 1 FROM fs_documents WHERE db = ? LIMIT 1').get(db)) throw new DatabaseNotEmpty(db);
    for (const changes of load.batches(commitTime)) {
      const batch = new WriteBatch();
      for (const change of changes) {
        const row = change.row;
        if (!row) continue;
        batch.add('upsert', db, row.parent, storedId(row.id), row.collectionId, row.nameKey, row.createTime, row.updateTime, row.fields);
        for (const entry of change.addEntries) {
          batch.add('insertEntry', db, entry.parent ?? change.parent, entry.field, entry.kind, indexValueKey(entry.value), storedId(entry.docId ?? change.id));
        }
        documents++;
        indexEntries += change.addEntries.length;
      }
      runner.run(batch.entries());
    }
    connection
      .prepare(`INSERT INTO fs_meta (db, last_commit_time, index_set) VALUES (?, ?, ?)
                ON CONFLICT (db) DO UPDATE SET last_commit_time = excluded.last_commit_time, index_set = excluded.index_set`)
      .run(db, commitTime, load.indexSet);
  }).immediate();
  return { documents, indexEntries, commitTime };
}
