/**
 * The operator console's audit log: one entry per change made with a console session (who, what,
 * when, from where). Its own small interface, apart from the Store, so that each storage backend
 * adds it without touching the others. Entries are never changed once written.
 */
export interface AuditEntry {
  /** Increasing with time of writing; opaque to callers. */
  id: string;
  /** Milliseconds since the epoch. */
  at: number;
  /** `admin` (the admin key) or an operator account's email or uid. */
  operator: string;
  /** The client's address as Hearth saw it. */
  address: string;
  userAgent: string;
  method: string;
  /** The URL path, without its query (which may carry API keys). */
  path: string;
  status: number;
  /** What changed, with passwords, hashes, tokens and keys redacted (console/audit-summary.ts). */
  summary: string;
}

export type NewAuditEntry = Omit<AuditEntry, 'id'>;

export interface AuditLog {
  append(entry: NewAuditEntry): Promise<void>;
  /** Newest first, at most `limit`; `beforeId` continues after the last entry of a previous page. */
  list(limit: number, beforeId?: string): Promise<AuditEntry[]>;
  /** Oldest first, `afterId` continues a previous batch: for exports, a batch at a time. */
  listForward(limit: number, afterId?: string): Promise<AuditEntry[]>;
}

/** An `audit_log` row as either backend reads it (PostgreSQL hands BIGINT columns over as text). */
export interface AuditRow {
  id: number | string;
  at: number | string;
  operator: string;
  address: string;
  user_agent: string;
  method: string;
  path: string;
  status: number;
  summary: string;
}

export function auditEntryOf(row: AuditRow): AuditEntry {
  return {
    id: String(row.id),
    at: Number(row.at),
    operator: row.operator,
    address: row.address,
    userAgent: row.user_agent,
    method: row.method,
    path: row.path,
    status: row.status,
    summary: row.summary,
  };
}
