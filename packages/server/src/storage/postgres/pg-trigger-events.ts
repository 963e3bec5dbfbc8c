import { triggerEventOf, type RaisedTriggerEvent, type TriggerEvent, type TriggerEventMutation, type TriggerEventRow, type TriggerEventStore } from '../trigger-events.js';
import type { PgPool } from './pg-connection.js';
import type { PgQueryable } from './pg-rows.js';

const columns = 'id, target, db, path, commit_time, payload, attempts, next_at, set_aside, last_error';

/** One INSERT for them all; an id already stored is left as it is (text refuses NULs: shown as U+FFFD). */
async function insertEvents(db: PgQueryable, events: readonly RaisedTriggerEvent[], now: number): Promise<void> {
  if (!events.length) return;
  const clean = (text: string) => text.replaceAll('\u0000', '\uFFFD');
  await db.query(
    `INSERT INTO fn_events (id, target, db, path, commit_time, payload, next_at)
     SELECT e.id, e.target, e.db, e.path, e.commit_time, e.payload, $7 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[]) AS e(id, target, db, path, commit_time, payload)
     ON CONFLICT DO NOTHING`,
    [events.map((e) => e.id), events.map((e) => e.target), events.map((e) => e.db), events.map((e) => clean(e.path)), events.map((e) => e.commitTime), events.map((e) => clean(e.payload)), now],
  );
}

/** An identity commit's raised events (v1 Auth triggers), inside that commit's transaction: the account and its events land together. */
export function applyTriggerEventMutation(client: PgQueryable, m: TriggerEventMutation): Promise<void> {
  return insertEvents(client, m.events, m.now);
}

/**
 * Trigger events in PostgreSQL (fn_events, made with the documents' schema), shared by every
 * instance: a claim leases due rows with FOR UPDATE SKIP LOCKED, so two instances never take the
 * same event at once, and an instance that dies holds its events only until their leases lapse.
 * Settling checks the lease's owner: an instance whose lease ran out (and whose event another
 * instance took) changes nothing.
 */
export class PgTriggerEvents implements TriggerEventStore {
  constructor(private readonly pool: PgPool) {}

  async claim(owner: string, now: number, leaseMs: number, limit: number): Promise<TriggerEvent[]> {
    const { rows } = await this.pool.query<TriggerEventRow>(
      `UPDATE fn_events SET lease_owner = $1, lease_until = $2
       WHERE id IN (SELECT id FROM fn_events WHERE set_aside = FALSE AND next_at <= $3 AND lease_until <= $3 ORDER BY next_at LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING ${columns}`,
      [owner, now + leaseMs, now, limit],
    );
    return rows.map(triggerEventOf).sort((a, b) => a.nextAt - b.nextAt);
  }

  async succeed(id: string, owner: string): Promise<boolean> {
    return ((await this.pool.query('DELETE FROM fn_events WHERE id = $1 AND lease_owner = $2', [id, owner])).rowCount ?? 0) === 1;
  }

  async fail(id: string, owner: string, update: { nextAt: number; error: string; setAside: boolean }): Promise<boolean> {
    const result = await this.pool.query(
      'UPDATE fn_events SET attempts = attempts + 1, next_at = $1, last_error = $2, set_aside = $3, lease_owner = NULL, lease_until = 0 WHERE id = $4 AND lease_owner = $5',
      [update.nextAt, update.error.replaceAll('\u0000', '\uFFFD').slice(0, 4096), update.setAside, id, owner],
    );
    return (result.rowCount ?? 0) === 1;
  }

  async list(options: { setAside: boolean; limit: number }): Promise<TriggerEvent[]> {
    const { rows } = await this.pool.query<TriggerEventRow>(`SELECT ${columns} FROM fn_events WHERE set_aside = $1 ORDER BY commit_time LIMIT $2`, [options.setAside, options.limit]);
    return rows.map(triggerEventOf);
  }

  async requeue(id: string, now: number): Promise<boolean> {
    const result = await this.pool.query('UPDATE fn_events SET set_aside = FALSE, attempts = 0, next_at = $1, lease_owner = NULL, lease_until = 0 WHERE id = $2 AND set_aside', [now, id]);
    return (result.rowCount ?? 0) === 1;
  }

  insert(events: readonly RaisedTriggerEvent[], now: number): Promise<void> {
    return insertEvents(this.pool, events, now);
  }

  async cursor(source: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ value: string }>('SELECT value FROM fn_cursors WHERE source = $1', [source]);
    return rows[0]?.value;
  }

  async setCursor(source: string, value: string): Promise<void> {
    await this.pool.query('INSERT INTO fn_cursors (source, value) VALUES ($1, $2) ON CONFLICT (source) DO UPDATE SET value = EXCLUDED.value', [source, value]);
  }

  async counts(): Promise<{ pending: number; setAside: number }> {
    const { rows } = await this.pool.query<{ pending: string; set_aside: string }>(
      'SELECT COUNT(*) FILTER (WHERE NOT set_aside) AS pending, COUNT(*) FILTER (WHERE set_aside) AS set_aside FROM fn_events',
    );
    return { pending: Number(rows[0]?.pending ?? 0), setAside: Number(rows[0]?.set_aside ?? 0) };
  }
}
