import { auditEntryOf, type AuditEntry, type AuditLog, type AuditRow, type NewAuditEntry } from '../audit-log.js';
import { applyPgMigrations, type PgPool } from './pg-connection.js';

/** Schema steps of component 'audit' (append only). */
const auditSchema = [
  `
  CREATE TABLE audit_log (
    id BIGSERIAL PRIMARY KEY,
    at BIGINT NOT NULL,
    operator TEXT NOT NULL,
    address TEXT NOT NULL,
    user_agent TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER NOT NULL,
    summary TEXT NOT NULL
  );
  `,
];


/** The console's audit log in PostgreSQL: every instance's operators write to the one log. */
export class PgAuditLog implements AuditLog {
  private constructor(private readonly pool: PgPool) {}

  static async open(pool: PgPool): Promise<PgAuditLog> {
    await applyPgMigrations(pool, 'audit', auditSchema);
    return new PgAuditLog(pool);
  }

  async append(entry: NewAuditEntry): Promise<void> {
    await this.pool.query(
      'INSERT INTO audit_log (at, operator, address, user_agent, method, path, status, summary) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [entry.at, entry.operator, entry.address, entry.userAgent, entry.method, entry.path, entry.status, entry.summary],
    );
  }

  async list(limit: number, beforeId?: string): Promise<AuditEntry[]> {
    const rows = await this.pool.query<AuditRow>('SELECT * FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2', [
      beforeId === undefined ? Number.MAX_SAFE_INTEGER.toString() : idParameter(beforeId),
      limit,
    ]);
    return rows.rows.map(auditEntryOf);
  }

  async listForward(limit: number, afterId?: string): Promise<AuditEntry[]> {
    const rows = await this.pool.query<AuditRow>('SELECT * FROM audit_log WHERE id > $1 ORDER BY id ASC LIMIT $2', [
      afterId === undefined ? '0' : idParameter(afterId),
      limit,
    ]);
    return rows.rows.map(auditEntryOf);
  }
}

/** Page tokens come from clients: anything but digits would be a 500 from PostgreSQL's cast. */
function idParameter(id: string): string {
  return /^[0-9]{1,18}$/.test(id) ? id : '0';
}
