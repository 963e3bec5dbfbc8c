/**
 * Bulk seeding for the query-latency runs (BENCH_PG_SEED=bulk, the default): documents made by
 * Hearth's own encoders (parseWrites, changeFor: the row, its name key and its index entries, as a
 * commit makes them), written in large batches rather than as commits, so a million documents load
 * in minutes. On PostgreSQL the batches are the store's own set-wise statements
 * (documentChangeStatements: INSERT ... SELECT FROM unnest) in one transaction each, without the
 * commit's locks, change log and NOTIFY; on SQLite one store transaction (transact) per batch. The
 * database's last commit time is moved past the seeded rows, as commits would have left it.
 * BENCH_PG_SEED=commits loads through DocumentDatabase.commit instead (500 documents per commit).
 */
import type { DocumentChange, DocumentStore } from '../../packages/server/src/storage/document-store.js';
import { changeFor, type Doc } from '../../packages/server/src/firestore/core/documents.js';
import type { Write } from '../../packages/server/src/firestore/core/writes.js';
import { inPgTransaction, type PgPool } from '../../packages/server/src/storage/postgres/pg-connection.js';
import { documentChangeStatements, runStatements } from '../../packages/server/src/storage/postgres/pg-document-writes.js';

const batchSize = 5000;

/** What a commit would store for these (whole-document) writes: rows and their index entries. */
function changesOf(writes: readonly Write[], time: number): DocumentChange[] {
  return writes.map((write) => {
    const doc: Doc = { key: write.key, fields: write.fields!, createTime: time, updateTime: time };
    return changeFor(undefined, doc, { composite: () => [] });
  });
}

export interface SeedTarget {
  name: string;
  dbKey: string;
  store: DocumentStore;
  /** PostgreSQL only: the pool the set-wise statements run on. */
  pool?: PgPool;
}

/** Writes documents from..to-1 made by `writesFor(at, count)`, `batchSize` at a time. */
export async function bulkSeed(target: SeedTarget, from: number, to: number, writesFor: (at: number, count: number) => Write[]): Promise<void> {
  const { dbKey, store, pool } = target;
  const time = Math.floor(Date.now() * 1000);
  for (let at = from; at < to; at += batchSize) {
    const writes = writesFor(at, Math.min(batchSize, to - at));
    if (pool) {
      const changes = changesOf(writes, time);
      await inPgTransaction(pool, (client) => runStatements(client, documentChangeStatements(dbKey, changes)));
    } else {
      await store.transact(dbKey, [], (_current, commitTime) => ({ changes: changesOf(writes, commitTime), result: undefined }));
    }
  }
  if (pool) {
    await pool.query('INSERT INTO fs_meta (db) VALUES ($1) ON CONFLICT (db) DO NOTHING', [dbKey]);
    await pool.query('UPDATE fs_meta SET last_commit_time = GREATEST(last_commit_time, $2) WHERE db = $1', [dbKey, time]);
    // A bulk load leaves the planner's statistics behind (autovacuum would catch up later).
    await pool.query('ANALYZE fs_documents; ANALYZE fs_index');
  }
}
