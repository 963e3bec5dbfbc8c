import type Database from 'better-sqlite3';
import { StoreConflict, type Mutation, type PhoneVerificationRecord, type SmsOutboxMessage } from '../store.js';

type PhoneMutation = Extract<
  Mutation,
  {
    kind:
      | 'insertPhoneVerification'
      | 'spendPhoneVerificationAttempt'
      | 'deletePhoneVerification'
      | 'deleteExpiredPhoneVerifications'
      | 'insertSmsOutboxMessage'
      | 'clearSmsOutbox'
      | 'pruneSmsOutbox';
  }
>;

const phoneMutationKinds = new Set<string>([
  'insertPhoneVerification',
  'spendPhoneVerificationAttempt',
  'deletePhoneVerification',
  'deleteExpiredPhoneVerifications',
  'insertSmsOutboxMessage',
  'clearSmsOutbox',
  'pruneSmsOutbox',
]);

export function isPhoneMutation(mutation: Mutation): mutation is PhoneMutation {
  return phoneMutationKinds.has(mutation.kind);
}

interface VerificationRow {
  attempts_left: number;
  record: string;
}
interface SmsRow {
  id: number;
  message: string;
}

/** SMS codes, temporary proofs and the SMS outbox, in the store's file and transactions. */
export class SqlitePhoneRows {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      getVerification: db.prepare<[string], VerificationRow>('SELECT attempts_left, record FROM phone_verifications WHERE session_hash = ?'),
      insertVerification: db.prepare('INSERT INTO phone_verifications (session_hash, project_id, expires_at, attempts_left, record) VALUES (?, ?, ?, ?, ?)'),
      spendAttempt: db.prepare('UPDATE phone_verifications SET attempts_left = attempts_left - 1 WHERE session_hash = ? AND attempts_left > 0'),
      deleteVerification: db.prepare('DELETE FROM phone_verifications WHERE session_hash = ?'),
      deleteExpiredVerifications: db.prepare('DELETE FROM phone_verifications WHERE expires_at < ?'),
      listSms: db.prepare<[string, number], SmsRow>('SELECT * FROM (SELECT id, message FROM sms_outbox WHERE project_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id'),
      insertSms: db.prepare('INSERT INTO sms_outbox (project_id, created_at, message) VALUES (?, ?, ?)'),
      clearSms: db.prepare('DELETE FROM sms_outbox WHERE project_id = ?'),
      pruneSms: db.prepare('DELETE FROM sms_outbox WHERE created_at < ?'),
    };
  }

  getVerification(sessionHash: string): PhoneVerificationRecord | undefined {
    const row = this.statements.getVerification.get(sessionHash);
    // The column is the truth for tries: it is what the conditional update changes.
    return row ? { ...(JSON.parse(row.record) as PhoneVerificationRecord), attemptsLeft: row.attempts_left } : undefined;
  }

  listSmsOutbox(projectId: string, limit: number): SmsOutboxMessage[] {
    return this.statements.listSms.all(projectId, limit).map((row) => ({ ...(JSON.parse(row.message) as Omit<SmsOutboxMessage, 'id'>), id: row.id }));
  }

  /** Inside the store's commit transaction. */
  apply(m: PhoneMutation): void {
    const s = this.statements;
    switch (m.kind) {
      case 'insertPhoneVerification':
        s.insertVerification.run(m.record.sessionHash, m.record.projectId, m.record.expiresAt, m.record.attemptsLeft, JSON.stringify(m.record));
        return;
      case 'spendPhoneVerificationAttempt':
        if (s.spendAttempt.run(m.sessionHash).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'deletePhoneVerification':
        if (s.deleteVerification.run(m.sessionHash).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'deleteExpiredPhoneVerifications':
        s.deleteExpiredVerifications.run(m.expiredBefore);
        return;
      case 'insertSmsOutboxMessage':
        s.insertSms.run(m.message.projectId, m.message.createdAt, JSON.stringify(m.message));
        return;
      case 'clearSmsOutbox':
        s.clearSms.run(m.projectId);
        return;
      case 'pruneSmsOutbox':
        s.pruneSms.run(m.olderThan);
        return;
    }
  }
}
