import { createHash, randomBytes } from 'node:crypto';
import type { Mutation, OobCodeRecord, OobRequestType, Store, UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';

export interface OobLifetimes {
  /** Password reset, email verification, email change and recovery codes. Default one hour. */
  defaultMs: number;
  /** Email sign-in links. Default six hours. */
  emailSignInMs: number;
}

/** The `mode` of an action link for each request type, as ActionCodeURL.parseLink reads it. */
export const modeFor: Record<OobRequestType, string> = {
  PASSWORD_RESET: 'resetPassword',
  VERIFY_EMAIL: 'verifyEmail',
  EMAIL_SIGNIN: 'signIn',
  VERIFY_AND_CHANGE_EMAIL: 'verifyAndChangeEmail',
  RECOVER_EMAIL: 'recoverEmail',
};

export function hashOobCode(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

export interface IssuedCode {
  code: string;
  record: OobCodeRecord;
  mutation: Mutation;
}

/** Action codes: random, single use, stored hashed, expiring, and bound to the account's state. */
export class OobCodes {
  constructor(
    private readonly store: Store,
    private readonly lifetimes: OobLifetimes,
  ) {}

  issue(projectId: string, requestType: OobRequestType, email: string, user: UserRecord | undefined, newEmail?: string): IssuedCode {
    const code = randomBytes(24).toString('base64url');
    const now = Date.now();
    const lifetime = requestType === 'EMAIL_SIGNIN' ? this.lifetimes.emailSignInMs : this.lifetimes.defaultMs;
    const record: OobCodeRecord = { codeHash: hashOobCode(code), projectId, requestType, email, createdAt: now, expiresAt: now + lifetime };
    if (newEmail !== undefined) record.newEmail = newEmail;
    if (user) {
      record.localId = user.localId;
      if (user.passwordUpdatedAt !== undefined) record.passwordUpdatedAt = user.passwordUpdatedAt;
    }
    return { code, record, mutation: { kind: 'insertOobCode', code: record } };
  }

  /**
   * The live code behind `code`, with its account if it has one: INVALID_OOB_CODE for unknown, used,
   * foreign or stale codes (the password or email changed since), EXPIRED_OOB_CODE past its time.
   */
  async find(projectId: string, code: string | undefined): Promise<{ record: OobCodeRecord; user?: UserRecord }> {
    if (!code) throw authError('MISSING_OOB_CODE');
    const record = await this.store.getOobCode(hashOobCode(code));
    if (!record || record.projectId !== projectId) throw authError('INVALID_OOB_CODE');
    if (Date.now() >= record.expiresAt) throw authError('EXPIRED_OOB_CODE');
    if (!record.localId) return { record };
    const user = await this.store.getUser(projectId, record.localId);
    if (!user) throw authError('INVALID_OOB_CODE');
    // A recovery must survive whatever a hijacker does next (another change, a new password).
    if (record.requestType === 'RECOVER_EMAIL') return { record, user };
    if (user.passwordUpdatedAt !== record.passwordUpdatedAt || (user.email ?? '') !== record.email) throw authError('INVALID_OOB_CODE');
    return { record, user };
  }

  async save(issued: IssuedCode): Promise<void> {
    await this.store.commit([issued.mutation]);
  }

  consume(record: OobCodeRecord): Mutation {
    return { kind: 'deleteOobCode', codeHash: record.codeHash };
  }

  /** Drops codes that expired a week ago: until then an old link still says "expired", not "invalid". */
  async sweep(now = Date.now()): Promise<void> {
    await this.store.commit([{ kind: 'deleteExpiredOobCodes', expiredBefore: now - 7 * 24 * 3600_000 }]);
  }
}
