import type Database from 'better-sqlite3';
import { triggerEventOf, type RaisedTriggerEvent, type TriggerEvent, type TriggerEventMutation, type TriggerEventRow, type TriggerEventStore } from '../trigger-events.js';

const columns = 'id, target, db, path, commit_time, payload, attempts, next_at, set_aside, last_error';
const insertSql = 'INSERT OR IGNORE INTO fn_events (id, target, db, path, commit_time, payload, next_at) VALUES (?, ?, ?, ?, ?, ?, ?)';

/**
 * Applies an identity commit's raised events (v1 Auth triggers) inside that commit's transaction
 * on the store's connection, so the account and its events are written together or not at all.
 */
export function triggerEventWriter(db: Database.Database): (m: TriggerEventMutation) => void {
  const insert = db.prepare<[string, string, string, string, number, string, number]>(insertSql);
  return (m) => {
    for (const event of m.events) insert.run(event.id, event.target, event.db, event.path, event.commitTime, event.payload, m.now);
  };
}

/**
 * Trigger events in the SQLite file (the fn_events table; document commits insert them on the writer
 * thread, identity commits on the store's connection through triggerEventWriter).
 * With one process on the file, a lease only keeps this process's own dispatcher from handing an
 * event out twice: a lease of another owner was held by a process that has died (a kill -9 mid
 * delivery), and its events are due again at once rather than when that lease would have ended.
 * With several (--workers), another owner's lease holds until it ends, as on PostgreSQL.
 */
export class SqliteTriggerEvents implements TriggerEventStore {
  private readonly statements;

  constructor(
    private readonly db: Database.Database,
    private readonly writeTurn: () => Promise<void>,
    /** Other processes dispatch from the file too (--workers): their leases are theirs until they end. */
    private readonly shared = false,
  ) {
    this.statements = {
      due: db.prepare<[number, number, string, number], TriggerEventRow>(
        `SELECT ${columns} FROM fn_events WHERE set_aside = 0 AND next_at <= ? AND (lease_until <= ? OR lease_owner IS NOT ?) ORDER BY next_at LIMIT ?`,
      ),
      dueUnleased: db.prepare<[number, number, number], TriggerEventRow>(
        `SELECT ${columns} FROM fn_events WHERE set_aside = 0 AND next_at <= ? AND lease_until <= ? ORDER BY next_at LIMIT ?`,
      ),
      lease: db.prepare<[string, number, string]>('UPDATE fn_events SET lease_owner = ?, lease_until = ? WHERE id = ?'),
      succeed: db.prepare<[string, string]>('DELETE FROM fn_events WHERE id = ? AND lease_owner = ?'),
      fail: db.prepare<[number, string, number, string, string]>(
        'UPDATE fn_events SET attempts = attempts + 1, next_at = ?, last_error = ?, set_aside = ?, lease_owner = NULL, lease_until = 0 WHERE id = ? AND lease_owner = ?',
      ),
      list: db.prepare<[number, number], TriggerEventRow>(`SELECT ${columns} FROM fn_events WHERE set_aside = ? ORDER BY commit_time LIMIT ?`),
      requeue: db.prepare<[number, string]>('UPDATE fn_events SET set_aside = 0, attempts = 0, next_at = ?, lease_owner = NULL, lease_until = 0 WHERE id = ? AND set_aside = 1'),
      insert: db.prepare<[string, string, string, string, number, string, number]>(insertSql),
      cursor: db.prepare<[string], { value: string }>('SELECT value FROM fn_cursors WHERE source = ?'),
      setCursor: db.prepare<[string, string]>('INSERT INTO fn_cursors (source, value) VALUES (?, ?) ON CONFLICT (source) DO UPDATE SET value = excluded.value'),
      counts: db.prepare<[], { pending: number; set_aside: number }>(
        'SELECT COALESCE(SUM(set_aside = 0), 0) AS pending, COALESCE(SUM(set_aside = 1), 0) AS set_aside FROM fn_events',
      ),
    };
  }

  async claim(owner: string, now: number, leaseMs: number, limit: number): Promise<TriggerEvent[]> {
    await this.writeTurn();
    return this.db.transaction(() => {
      const rows = this.shared ? this.statements.dueUnleased.all(now, now, limit) : this.statements.due.all(now, now, owner, limit);
      for (const row of rows) this.statements.lease.run(owner, now + leaseMs, row.id);
      return rows.map(triggerEventOf);
    }).immediate();
  }

  async succeed(id: string, owner: string): Promise<boolean> {
    await this.writeTurn();
    return this.statements.succeed.run(id, owner).changes === 1;
  }

  async fail(id: string, owner: string, update: { nextAt: number; error: string; setAside: boolean }): Promise<boolean> {
    await this.writeTurn();
    return this.statements.fail.run(update.nextAt, update.error.slice(0, 4096), update.setAside ? 1 : 0, id, owner).changes === 1;
  }

  async list(options: { setAside: boolean; limit: number }): Promise<TriggerEvent[]> {
    return this.statements.list.all(options.setAside ? 1 : 0, options.limit).map(triggerEventOf);
  }

  async requeue(id: string, now: number): Promise<boolean> {
    await this.writeTurn();
    return this.statements.requeue.run(now, id).changes === 1;
  }

  async insert(events: readonly RaisedTriggerEvent[], now: number): Promise<void> {
    if (!events.length) return;
    await this.writeTurn();
    this.db.transaction(() => {
      for (const event of events) this.statements.insert.run(event.id, event.target, event.db, event.path, event.commitTime, event.payload, now);
    }).immediate();
  }

  async cursor(source: string): Promise<string | undefined> {
    return this.statements.cursor.get(source)?.value;
  }

  async setCursor(source: string, value: string): Promise<void> {
    await this.writeTurn();
    this.statements.setCursor.run(source, value);
  }

  async counts(): Promise<{ pending: number; setAside: number }> {
    const row = this.statements.counts.get()!;
    return { pending: row.pending, setAside: row.set_aside };
  }
}
