import type { OutboxMutation } from '../outbox-mutation.js';
import type { MailDeliveryStatus, OutboxMessage } from '../store.js';
import { num, type PgQueryable } from './pg-rows.js';

interface OutboxRow {
  id: string;
  message: string;
  decoy: boolean;
  delivery: string | null;
}

export const outboxReads = {
  /** Newest last. */
  async list(db: PgQueryable, projectId: string, limit: number): Promise<OutboxMessage[]> {
    const { rows } = await db.query<OutboxRow>(
      'SELECT * FROM (SELECT id, message, decoy, delivery FROM outbox WHERE project_id = $1 AND NOT decoy ORDER BY id DESC LIMIT $2) AS newest ORDER BY id',
      [projectId, limit],
    );
    return rows.map(parseOutboxRow);
  },

  /** Due rows, oldest due first. */
  async listDue(db: PgQueryable, now: number, limit: number, ids?: number[]): Promise<Array<OutboxMessage & { decoy: boolean }>> {
    const { rows } = await db.query<OutboxRow>(
      `SELECT id, message, decoy, delivery FROM outbox WHERE state = 'queued' AND next_attempt_at <= $1 AND ($3::bigint[] IS NULL OR id = ANY($3))
       ORDER BY next_attempt_at, id LIMIT $2`,
      [now, limit, ids ?? null],
    );
    return rows.map((row) => ({ ...parseOutboxRow(row), decoy: row.decoy }));
  },

  async nextDueAt(db: PgQueryable): Promise<number | undefined> {
    const { rows } = await db.query<{ due: string | null }>("SELECT min(next_attempt_at) AS due FROM outbox WHERE state = 'queued'");
    const due = rows[0]?.due;
    return due === null || due === undefined ? undefined : num(due);
  },
};

/** Inside the store's commit transaction. */
export async function applyOutboxMutation(client: PgQueryable, m: OutboxMutation): Promise<void> {
  switch (m.kind) {
    case 'insertOutboxMessage': {
      const { delivery, ...message } = m.message;
      await client.query('INSERT INTO outbox (project_id, created_at, message, state, decoy, next_attempt_at, delivery) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        m.message.projectId,
        m.message.createdAt,
        JSON.stringify(message),
        delivery.state,
        m.decoy === true,
        delivery.nextAttemptAt ?? null,
        JSON.stringify(delivery),
      ]);
      return;
    }
    case 'updateMailDelivery':
      await client.query('UPDATE outbox SET state = $1, next_attempt_at = $2, delivery = $3 WHERE id = $4', [m.delivery.state, m.delivery.nextAttemptAt ?? null, JSON.stringify(m.delivery), m.id]);
      return;
    case 'deleteOutboxMessage':
      await client.query('DELETE FROM outbox WHERE id = $1', [m.id]);
      return;
    case 'deleteOutboxDecoys':
      await client.query('DELETE FROM outbox WHERE decoy AND created_at < $1', [m.createdBefore]);
      return;
    case 'clearOutbox':
      await client.query('DELETE FROM outbox WHERE project_id = $1', [m.projectId]);
      return;
    case 'pruneOutbox':
      await client.query('DELETE FROM outbox WHERE created_at < $1', [m.olderThan]);
      return;
  }
}

function parseOutboxRow(row: OutboxRow): OutboxMessage {
  const delivery: MailDeliveryStatus = row.delivery ? (JSON.parse(row.delivery) as MailDeliveryStatus) : { state: 'kept', attempts: 0 };
  return { ...(JSON.parse(row.message) as Omit<OutboxMessage, 'id' | 'delivery'>), id: num(row.id), delivery };
}
