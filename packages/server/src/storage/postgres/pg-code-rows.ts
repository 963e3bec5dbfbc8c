import type { HandlerSessionRecord, HumanCheckRecord, Mutation, OobCodeRecord, PhoneVerificationRecord, SmsOutboxMessage, ThrottleRecord } from '../store.js';
import { changeOne, num, type PgQueryable } from './pg-rows.js';

/** Short-lived rows: action codes, handler sessions, throttle counters, human checks, SMS codes and texts. */
export type CodeMutation = Extract<
  Mutation,
  {
    kind:
      | 'insertOobCode'
      | 'deleteOobCode'
      | 'deleteExpiredOobCodes'
      | 'putHandlerSession'
      | 'updateHandlerSession'
      | 'deleteHandlerSession'
      | 'deleteExpiredHandlerSessions'
      | 'putThrottleRecord'
      | 'deleteThrottleRecord'
      | 'deleteExpiredThrottleRecords'
      | 'insertHumanCheck'
      | 'useHumanCheck'
      | 'deleteExpiredHumanChecks'
      | 'insertPhoneVerification'
      | 'spendPhoneVerificationAttempt'
      | 'deletePhoneVerification'
      | 'deleteExpiredPhoneVerifications'
      | 'insertSmsOutboxMessage'
      | 'clearSmsOutbox'
      | 'pruneSmsOutbox';
  }
>;

const codeMutationKinds = new Set<string>([
  'insertOobCode',
  'deleteOobCode',
  'deleteExpiredOobCodes',
  'putHandlerSession',
  'updateHandlerSession',
  'deleteHandlerSession',
  'deleteExpiredHandlerSessions',
  'putThrottleRecord',
  'deleteThrottleRecord',
  'deleteExpiredThrottleRecords',
  'insertHumanCheck',
  'useHumanCheck',
  'deleteExpiredHumanChecks',
  'insertPhoneVerification',
  'spendPhoneVerificationAttempt',
  'deletePhoneVerification',
  'deleteExpiredPhoneVerifications',
  'insertSmsOutboxMessage',
  'clearSmsOutbox',
  'pruneSmsOutbox',
]);

export function isCodeMutation(mutation: Mutation): mutation is CodeMutation {
  return codeMutationKinds.has(mutation.kind);
}

async function oneRecord<T>(db: PgQueryable, sql: string, key: string): Promise<T | undefined> {
  const { rows } = await db.query<{ record: string }>(sql, [key]);
  return rows[0] ? (JSON.parse(rows[0].record) as T) : undefined;
}

export const codeReads = {
  getOobCode: (db: PgQueryable, codeHash: string) => oneRecord<OobCodeRecord>(db, 'SELECT record FROM oob_codes WHERE code_hash = $1', codeHash),
  getHandlerSession: (db: PgQueryable, id: string) => oneRecord<HandlerSessionRecord>(db, 'SELECT record FROM handler_sessions WHERE id = $1', id),

  async listThrottleRecords(db: PgQueryable, scope: string, now: number, limit: number): Promise<ThrottleRecord[]> {
    const { rows } = await db.query<{ scope: string; key_hash: string; expires_at: string; state: string }>(
      'SELECT * FROM (SELECT * FROM throttle_state WHERE scope = $1 AND expires_at > $2 ORDER BY expires_at DESC LIMIT $3) AS newest ORDER BY expires_at',
      [scope, now, limit],
    );
    return rows.map((row) => ({ scope: row.scope, keyHash: row.key_hash, expiresAt: num(row.expires_at), state: row.state }));
  },

  /** The rows of these keys that have not decayed by `now` (ThrottleRowReader). */
  async getThrottleRecords(db: PgQueryable, scope: string, keyHashes: string[], now: number): Promise<ThrottleRecord[]> {
    const { rows } = await db.query<{ scope: string; key_hash: string; expires_at: string; state: string }>(
      'SELECT * FROM throttle_state WHERE scope = $1 AND key_hash = ANY($2) AND expires_at > $3',
      [scope, keyHashes, now],
    );
    return rows.map((row) => ({ scope: row.scope, keyHash: row.key_hash, expiresAt: num(row.expires_at), state: row.state }));
  },

  async getHumanCheck(db: PgQueryable, keyHash: string): Promise<HumanCheckRecord | undefined> {
    const { rows } = await db.query<{ key_hash: string; project_id: string; expires_at: string; used_at: string | null }>('SELECT * FROM human_checks WHERE key_hash = $1', [keyHash]);
    const row = rows[0];
    if (!row) return undefined;
    return { keyHash: row.key_hash, projectId: row.project_id, expiresAt: num(row.expires_at), ...(row.used_at !== null ? { usedAt: num(row.used_at) } : {}) };
  },

  async getPhoneVerification(db: PgQueryable, sessionHash: string): Promise<PhoneVerificationRecord | undefined> {
    const { rows } = await db.query<{ attempts_left: number; record: string }>('SELECT attempts_left, record FROM phone_verifications WHERE session_hash = $1', [sessionHash]);
    const row = rows[0];
    // The column is the truth for tries: it is what the conditional update changes.
    return row ? { ...(JSON.parse(row.record) as PhoneVerificationRecord), attemptsLeft: row.attempts_left } : undefined;
  },

  async listSmsOutbox(db: PgQueryable, projectId: string, limit: number): Promise<SmsOutboxMessage[]> {
    const { rows } = await db.query<{ id: string; message: string }>(
      'SELECT * FROM (SELECT id, message FROM sms_outbox WHERE project_id = $1 ORDER BY id DESC LIMIT $2) AS newest ORDER BY id',
      [projectId, limit],
    );
    return rows.map((row) => ({ ...(JSON.parse(row.message) as Omit<SmsOutboxMessage, 'id'>), id: num(row.id) }));
  },
};

/** A deleted realm's SMS codes, proofs and kept texts. */
export async function deleteRealmCodeRows(client: PgQueryable, projectId: string): Promise<void> {
  await client.query('DELETE FROM phone_verifications WHERE project_id = $1', [projectId]);
  await client.query('DELETE FROM sms_outbox WHERE project_id = $1', [projectId]);
}

/**
 * Inside the store's commit transaction. Single-use rows are taken by one conditional statement
 * each: an instance that races another for the same row waits for its lock, then finds it gone.
 */
export async function applyCodeMutation(client: PgQueryable, m: CodeMutation): Promise<void> {
  switch (m.kind) {
    case 'insertOobCode':
      await client.query('INSERT INTO oob_codes (code_hash, project_id, expires_at, record) VALUES ($1, $2, $3, $4)', [m.code.codeHash, m.code.projectId, m.code.expiresAt, JSON.stringify(m.code)]);
      return;
    case 'deleteOobCode':
      return changeOne(client, 'DELETE FROM oob_codes WHERE code_hash = $1', [m.codeHash], 'code-used');
    case 'deleteExpiredOobCodes':
      await client.query('DELETE FROM oob_codes WHERE expires_at < $1', [m.expiredBefore]);
      return;
    case 'putHandlerSession':
      await client.query(
        'INSERT INTO handler_sessions (id, expires_at, record) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at, record = EXCLUDED.record',
        [m.session.id, m.session.expiresAt, JSON.stringify(m.session)],
      );
      return;
    case 'updateHandlerSession':
      return changeOne(client, 'UPDATE handler_sessions SET expires_at = $1, record = $2 WHERE id = $3', [m.session.expiresAt, JSON.stringify(m.session), m.session.id], 'code-used');
    case 'deleteHandlerSession':
      return changeOne(client, 'DELETE FROM handler_sessions WHERE id = $1', [m.id], 'code-used');
    case 'deleteExpiredHandlerSessions':
      await client.query('DELETE FROM handler_sessions WHERE expires_at < $1', [m.expiredBefore]);
      return;
    case 'putThrottleRecord':
      await client.query(
        'INSERT INTO throttle_state (scope, key_hash, expires_at, state) VALUES ($1, $2, $3, $4) ON CONFLICT (scope, key_hash) DO UPDATE SET expires_at = EXCLUDED.expires_at, state = EXCLUDED.state',
        [m.record.scope, m.record.keyHash, m.record.expiresAt, m.record.state],
      );
      return;
    case 'deleteThrottleRecord':
      await client.query('DELETE FROM throttle_state WHERE scope = $1 AND key_hash = $2', [m.scope, m.keyHash]);
      return;
    case 'deleteExpiredThrottleRecords':
      await client.query('DELETE FROM throttle_state WHERE expires_at < $1', [m.expiredBefore]);
      return;
    case 'insertHumanCheck':
      return changeOne(
        client,
        'INSERT INTO human_checks (key_hash, project_id, expires_at, used_at) VALUES ($1, $2, $3, $4) ON CONFLICT (key_hash) DO NOTHING',
        [m.record.keyHash, m.record.projectId, m.record.expiresAt, m.record.usedAt ?? null],
        'code-used',
      );
    case 'useHumanCheck':
      // Checked and marked in one statement: two concurrent uses cannot both see it unused.
      return changeOne(client, 'UPDATE human_checks SET used_at = $1 WHERE key_hash = $2 AND used_at IS NULL', [m.usedAt, m.keyHash], 'code-used');
    case 'deleteExpiredHumanChecks':
      await client.query('DELETE FROM human_checks WHERE expires_at < $1', [m.expiredBefore]);
      return;
    case 'insertPhoneVerification':
      await client.query('INSERT INTO phone_verifications (session_hash, project_id, expires_at, attempts_left, record) VALUES ($1, $2, $3, $4, $5)', [
        m.record.sessionHash,
        m.record.projectId,
        m.record.expiresAt,
        m.record.attemptsLeft,
        JSON.stringify(m.record),
      ]);
      return;
    case 'spendPhoneVerificationAttempt':
      return changeOne(client, 'UPDATE phone_verifications SET attempts_left = attempts_left - 1 WHERE session_hash = $1 AND attempts_left > 0', [m.sessionHash], 'code-used');
    case 'deletePhoneVerification':
      return changeOne(client, 'DELETE FROM phone_verifications WHERE session_hash = $1', [m.sessionHash], 'code-used');
    case 'deleteExpiredPhoneVerifications':
      await client.query('DELETE FROM phone_verifications WHERE expires_at < $1', [m.expiredBefore]);
      return;
    case 'insertSmsOutboxMessage':
      await client.query('INSERT INTO sms_outbox (project_id, created_at, message) VALUES ($1, $2, $3)', [m.message.projectId, m.message.createdAt, JSON.stringify(m.message)]);
      return;
    case 'clearSmsOutbox':
      await client.query('DELETE FROM sms_outbox WHERE project_id = $1', [m.projectId]);
      return;
    case 'pruneSmsOutbox':
      await client.query('DELETE FROM sms_outbox WHERE created_at < $1', [m.olderThan]);
      return;
  }
}
