import type Database from 'better-sqlite3';
import { auditEntryOf, type AuditEntry, type AuditLog, type AuditRow, type NewAuditEntry } from '../audit-log.js';


/** The audit log in the same SQLite file as everything else (table from the audit migration). */
export class SqliteAuditLog implements AuditLog {
  private readonly statements;

  constructor(
    db: Database.Database,
    /** Waits until a write on this connection cannot wait for SQLite's lock (SqliteStore). */
    private readonly writeTurn: () => Promise<void> = async () => undefined,
  ) {
    this.statements = {
      insert: db.prepare('INSERT INTO audit_log (at, operator, address, user_agent, method, path, status, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      newest: db.prepare<[number, number], AuditRow>('SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?'),
      oldest: db.prepare<[number, number], AuditRow>('SELECT * FROM audit_log WHERE id > ? ORDER BY id ASC LIMIT ?'),
    };
  }

  async append(entry: NewAuditEntry): Promise<void> {
    await this.writeTurn();
    this.statements.insert.run(entry.at, entry.operator, entry.address, entry.userAgent, entry.method, entry.path, entry.status, entry.summary);
  }

  async list(limit: number, beforeId?: string): Promise<AuditEntry[]> {
    return this.statements.newest.all(beforeId === undefined ? Number.MAX_SAFE_INTEGER : Number(beforeId), limit).map(auditEntryOf);
  }

  async listForward(limit: number, afterId?: string): Promise<AuditEntry[]> {
    return this.statements.oldest.all(afterId === undefined ? 0 : Number(afterId), limit).map(auditEntryOf);
  }
}
