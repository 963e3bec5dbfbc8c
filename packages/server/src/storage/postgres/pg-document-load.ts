import { DatabaseNotEmpty, type DocumentLoad, type DocumentLoadReport } from '../document-store.js';
import { changeChannel, notifyPayload } from './pg-change-log.js';
import { lockMeta } from './pg-commit-group.js';
import { inPgTransaction, type PgPool } from './pg-connection.js';
import { documentChangeStatements, runStatements } from './pg-document-writes.js';

/**
 * DocumentStore.loadDocuments on PostgreSQL: one transaction holding the database's fs_meta row
 * (so no commit interleaves), a few set-wise statements per batch. Committed, it is logged as a
 * reset (as a clear is): listeners of every instance start over and see the loaded documents.
 * A failure or a lost connection rolls all of it back.
 */
export async function loadPgDocuments(pool: PgPool, db: string, load: DocumentLoad): Promise<DocumentLoadReport & { seq: number }> {
  await pool.query('INSERT INTO fs_meta (db) VALUES ($1) ON CONFLICT (db) DO NOTHING', [db]);
  return inPgTransaction(pool, async (client) => {
    const meta = await lockMeta(client, db);
    const { rows } = await client.query('SELECT 1 FROM fs_documents WHERE db = $1 LIMIT 1', [db]);
    if (rows.length > 0) throw new DatabaseNotEmpty(db);
    const commitTime = Math.max(Math.floor(Date.now() * 1000), meta.lastCommitTime + 1);
    let documents = 0;
    let indexEntries = 0;
    for (const changes of load.batches(commitTime)) {
      const written = changes.filter((change) => change.row);
      if (written.length === 0) continue;
      await runStatements(client, documentChangeStatements(db, written));
      documents += written.length;
      for (const change of written) indexEntries += change.addEntries.length;
    }
    const seq = meta.seq + 1;
    await client.query(
      `WITH meta AS (UPDATE fs_meta SET last_commit_time = $2, seq = $3, index_set = $5 WHERE db = $1),
            logged AS (INSERT INTO fs_changes (db, seq, commit_time, changes) VALUES ($1, $3, $2, NULL))
       SELECT pg_notify('${changeChannel}', $4)`,
      [db, commitTime, seq, notifyPayload(db, seq), load.indexSet],
    );
    return { documents, indexEntries, commitTime, seq };
  });
}
