import type Database from 'better-sqlite3';
import type { MailDeliveryStatus, OutboxMessage } from '../store.js';
import type { OutboxMutation } from '../outbox-mutation.js';

interface OutboxRow {
  id: number;
  message: string;
  state: string;
  decoy: number;
  next_attempt_at: number | null;
  delivery: string | null;
}

/** How long a process of --workers holds a mail it is sending: longer than an SMTP attempt takes. */
const mailLeaseMs = 2 * 60_000;

/** The mail outbox, which is also the SMTP queue, in the store's file and transactions. */
export class SqliteOutboxRows {
  private readonly statements;

  constructor(private readonly db: Database.Database) {
    this.statements = {
      claimable: db.prepare<[number, number, string, number], OutboxRow>(
        "SELECT o.* FROM outbox o LEFT JOIN outbox_claims c ON c.id = o.id WHERE o.state = 'queued' AND o.next_attempt_at <= ? AND (c.id IS NULL OR c.until <= ? OR c.owner = ?) ORDER BY o.next_attempt_at, o.id LIMIT ?",
      ),
      claim: db.prepare<[number, string, number]>('INSERT INTO outbox_claims (id, owner, until) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, until = excluded.until'),
      release: db.prepare<[number]>('DELETE FROM outbox_claims WHERE id = ?'),
      releaseGone: db.prepare('DELETE FROM outbox_claims WHERE id NOT IN (SELECT id FROM outbox)'),
      list: db.prepare<[string, number], OutboxRow>('SELECT * FROM (SELECT * FROM outbox WHERE project_id = ? AND decoy = 0 ORDER BY id DESC LIMIT ?) ORDER BY id'),
      listDue: db.prepare<[number, number], OutboxRow>("SELECT * FROM outbox WHERE state = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?"),
      nextDueAt: db.prepare<[], { due: number | null }>("SELECT min(next_attempt_at) AS due FROM outbox WHERE state = 'queued'"),
      insert: db.prepare('INSERT INTO outbox (project_id, created_at, message, state, decoy, next_attempt_at, delivery) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      updateDelivery: db.prepare('UPDATE outbox SET state = ?, next_attempt_at = ?, delivery = ? WHERE id = ?'),
      delete: db.prepare('DELETE FROM outbox WHERE id = ?'),
      deleteDecoys: db.prepare('DELETE FROM outbox WHERE decoy = 1 AND created_at < ?'),
      clear: db.prepare('DELETE FROM outbox WHERE project_id = ?'),
      prune: db.prepare('DELETE FROM outbox WHERE created_at < ?'),
    };
  }

  /** Newest last. */
  list(projectId: string, limit: number): OutboxMessage[] {
    return this.statements.list.all(projectId, limit).map(parseOutboxRow);
  }

  listDue(now: number, limit: number): Array<OutboxMessage & { decoy: boolean }> {
    return this.statements.listDue.all(now, limit).map((row) => ({ ...parseOutboxRow(row), decoy: row.decoy === 1 }));
  }

  /**
   * Where several processes deliver (--workers): the due mails no other live process holds, each
   * now held by `owner` until its attempt's outcome is committed or the lease ends (a process that
   * died mid-send lets go that way: the mail is sent at least once).
   */
  claimDue(owner: string, now: number, limit: number): Array<OutboxMessage & { decoy: boolean }> {
    return this.db.transaction(() => {
      const rows = this.statements.claimable.all(now, now, owner, limit);
      for (const row of rows) this.statements.claim.run(row.id, owner, now + mailLeaseMs);
      return rows.map((row) => ({ ...parseOutboxRow(row), decoy: row.decoy === 1 }));
    }).immediate();
  }

  nextDueAt(): number | undefined {
    return this.statements.nextDueAt.get()?.due ?? undefined;
  }

  /** Inside the store's commit transaction. */
  apply(m: OutboxMutation): void {
    const s = this.statements;
    switch (m.kind) {
      case 'insertOutboxMessage': {
        const { delivery, ...message } = m.message;
        s.insert.run(m.message.projectId, m.message.createdAt, JSON.stringify(message), delivery.state, m.decoy ? 1 : 0, delivery.nextAttemptAt ?? null, JSON.stringify(delivery));
        return;
      }
      // An attempt's outcome lets go of the mail's claim (--workers).
      case 'updateMailDelivery':
        s.updateDelivery.run(m.delivery.state, m.delivery.nextAttemptAt ?? null, JSON.stringify(m.delivery), m.id);
        s.release.run(m.id);
        return;
      case 'deleteOutboxMessage':
        s.delete.run(m.id);
        s.release.run(m.id);
        return;
      case 'deleteOutboxDecoys':
        s.deleteDecoys.run(m.createdBefore);
        s.releaseGone.run();
        return;
      case 'clearOutbox':
        s.clear.run(m.projectId);
        s.releaseGone.run();
        return;
      case 'pruneOutbox':
        s.prune.run(m.olderThan);
        s.releaseGone.run();
        return;
    }
  }
}

/** Rows from before the mail queue have no delivery column: they were kept in the outbox. */
function parseOutboxRow(row: OutboxRow): OutboxMessage {
  const delivery: MailDeliveryStatus = row.delivery ? (JSON.parse(row.delivery) as MailDeliveryStatus) : { state: 'kept', attempts: 0 };
  return { ...(JSON.parse(row.message) as Omit<OutboxMessage, 'id' | 'delivery'>), id: row.id, delivery };
}
