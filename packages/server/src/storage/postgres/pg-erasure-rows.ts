import type { ErasureMutation } from '../erasure-mutation.js';
import type { AccountErasure } from '../store.js';
import type { PgClient } from './pg-connection.js';
import type { PgQueryable } from './pg-rows.js';

/** The queue of deleted accounts whose data is still to be erased (storage/store.ts AccountErasure). */
export async function listAccountErasures(db: PgQueryable, limit: number): Promise<AccountErasure[]> {
  const { rows } = await db.query<{ project_id: string; local_id: string; requested_at: string }>(
    'SELECT project_id, local_id, requested_at FROM account_erasures ORDER BY requested_at, project_id, local_id LIMIT $1',
    [limit],
  );
  return rows.map((row) => ({ projectId: row.project_id, localId: row.local_id, requestedAt: Number(row.requested_at) }));
}

export async function applyErasureMutation(client: PgClient, m: ErasureMutation): Promise<void> {
  if (m.kind === 'insertAccountErasure') {
    await client.query('INSERT INTO account_erasures (project_id, local_id, requested_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [m.erasure.projectId, m.erasure.localId, m.erasure.requestedAt]);
  } else {
    await client.query('DELETE FROM account_erasures WHERE project_id = $1 AND local_id = $2', [m.projectId, m.localId]);
  }
}
