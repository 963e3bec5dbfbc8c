import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { StoreConflict, type Mutation, type PhoneVerificationRecord, type Store } from '../../storage/store.js';
import type { ProjectDirectory } from '../core/project-config.js';
import type { FailureThrottle, ThrottleLimits } from '../core/throttle.js';
import type { PhoneCodes } from '../core/verification.js';
import { authError, tooManySmsRequests } from '../errors.js';
import { normalizePhoneNumber } from './numbers.js';
import { projectOf, tenantField } from '../tenants/realm.js';
import { smsBody, type SmsMessage, type SmsSender } from './sms-sender.js';

export interface SmsCodeOptions {
  /** How long a code can be used (Google: about five minutes). */
  codeLifetimeMs: number;
  /** Wrong codes allowed per code before it is spent. */
  attemptsPerCode: number;
  /** How long the proof handed back for a number owned by another account can be used. */
  proofLifetimeMs: number;
}

export const defaultSmsCodeOptions: SmsCodeOptions = { codeLifetimeMs: 5 * 60_000, attemptsPerCode: 5, proofLifetimeMs: 60 * 60_000 };

export interface SmsLimits {
  /** Codes sent to one number (QUOTA_EXCEEDED beyond). */
  perNumber: ThrottleLimits;
  /** Codes sent on behalf of one client address, to any numbers (TOO_MANY_ATTEMPTS_TRY_LATER beyond). */
  perAddress: ThrottleLimits;
}

export const defaultSmsLimits: SmsLimits = {
  perNumber: { maxFailures: 5, windowMs: 60 * 60_000 },
  perAddress: { maxFailures: 50, windowMs: 60 * 60_000 },
};

export interface SmsThrottles {
  perNumber: FailureThrottle;
  perAddress: FailureThrottle;
}

/** Longer than any sessionInfo or proof Hearth hands out: not worth hashing. */
const maxOpaqueLength = 512;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Keyed by the sessionInfo (32 random bytes the store never sees), so the stored hash cannot be brute-forced over the million codes. */
function codeHash(sessionInfo: string, code: string): Buffer {
  return createHmac('sha256', sessionInfo).update(code).digest();
}

/**
 * Six-digit SMS codes (Hearth's `PhoneCodes`): drawn from crypto randomness, named by an opaque
 * sessionInfo, stored hashed, expiring, and used once. Each try is counted in the store before the
 * code is compared, so concurrent guesses on one session get no more tries than sequential ones.
 * Also the temporary proofs signInWithPhoneNumber hands back when a verified number belongs to
 * another account (the SDK signs in with one later).
 */
export class SmsCodes implements PhoneCodes {
  constructor(
    private readonly store: Store,
    private readonly projects: ProjectDirectory,
    /** Undefined when Hearth has no way to send a text (production without a provider or --sms-outbox). */
    private readonly sender: SmsSender | undefined,
    private readonly throttles: SmsThrottles,
    private readonly options: SmsCodeOptions = defaultSmsCodeOptions,
  ) {}

  /** Refuses (OPERATION_NOT_ALLOWED) when no text can be sent: callers check before spending a person's token. */
  requireDelivery(): SmsSender {
    if (!this.sender) throw authError('OPERATION_NOT_ALLOWED', 'This server has no SMS provider configured, so it cannot send verification codes.');
    return this.sender;
  }

  async send(projectId: string, phoneNumber: string, clientAddress: string): Promise<string> {
    const sender = this.requireDelivery();
    // Per project, not per tenant (`projectId` is a realm): its tenants do not multiply the texts a number or an address gets.
    const addressKey = `${projectOf(projectId)}\u0000${clientAddress}`;
    const numberKey = `${projectOf(projectId)}\u0000${phoneNumber}`;
    await Promise.all([this.throttles.perAddress.refresh([addressKey]), this.throttles.perNumber.refresh([numberKey])]);
    // Checked and counted in one synchronous step: concurrent requests cannot all slip under a limit.
    if (this.throttles.perAddress.isBlocked(addressKey)) throw tooManySmsRequests();
    if (this.throttles.perNumber.isBlocked(numberKey)) throw authError('QUOTA_EXCEEDED', 'Too many codes were sent to this phone number; try again later.');
    this.throttles.perAddress.recordFailure(addressKey);
    this.throttles.perNumber.recordFailure(numberKey);

    const sessionInfo = randomBytes(32).toString('base64url');
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const now = Date.now();
    const record: PhoneVerificationRecord = {
      sessionHash: sha256(sessionInfo),
      projectId,
      kind: 'code',
      phoneNumber,
      codeHash: codeHash(sessionInfo, code).toString('hex'),
      attemptsLeft: this.options.attemptsPerCode,
      createdAt: now,
      expiresAt: now + this.options.codeLifetimeMs,
    };
    const projectName = (await this.projects.config(projectId)).mail.projectName;
    const message: SmsMessage = { projectId, ...tenantField(projectId), phoneNumber, body: smsBody(code, projectName), code, sessionInfo, createdAt: now };
    // On disk before the answer: a crash after it keeps the code usable.
    await this.store.commit([{ kind: 'insertPhoneVerification', record }, ...sender.keep(message)]);
    await sender.send(message);
    return sessionInfo;
  }

  async redeem(projectId: string, sessionInfo: string | undefined, code: string | undefined): Promise<string> {
    if (!sessionInfo) throw authError('MISSING_SESSION_INFO');
    if (!code) throw authError('MISSING_CODE');
    if (sessionInfo.length > maxOpaqueLength) throw authError('INVALID_SESSION_INFO');
    const sessionHash = sha256(sessionInfo);
    const record = await this.store.getPhoneVerification(sessionHash);
    if (!record || record.projectId !== projectId || record.kind !== 'code' || !record.codeHash) throw authError('INVALID_SESSION_INFO');
    // A session whose tries are spent is as good as expired: the way on is a new code.
    if (Date.now() >= record.expiresAt || record.attemptsLeft <= 0) throw authError('SESSION_EXPIRED');
    await this.commitOrRefuse({ kind: 'spendPhoneVerificationAttempt', sessionHash }, 'INVALID_SESSION_INFO');
    const expected = Buffer.from(record.codeHash, 'hex');
    if (!/^\d{6}$/.test(code) || !timingSafeEqual(codeHash(sessionInfo, code), expected)) throw authError('INVALID_CODE');
    await this.commitOrRefuse({ kind: 'deletePhoneVerification', sessionHash }, 'INVALID_SESSION_INFO');
    return record.phoneNumber;
  }

  /** Proof that `phoneNumber` was verified, for the SDK to sign in with (Google's temporaryProof). */
  async issueProof(projectId: string, phoneNumber: string): Promise<{ proof: string; expiresInSeconds: number }> {
    const proof = randomBytes(32).toString('base64url');
    const now = Date.now();
    const record: PhoneVerificationRecord = {
      sessionHash: sha256(proof),
      projectId,
      kind: 'proof',
      phoneNumber,
      attemptsLeft: 1,
      createdAt: now,
      expiresAt: now + this.options.proofLifetimeMs,
    };
    await this.store.commit([{ kind: 'insertPhoneVerification', record }]);
    return { proof, expiresInSeconds: Math.floor(this.options.proofLifetimeMs / 1000) };
  }

  /** The number a temporary proof speaks for, once; it must be the number the request names. */
  async redeemProof(projectId: string, proof: string, phoneNumber: string | undefined): Promise<string> {
    if (!phoneNumber) throw authError('MISSING_PHONE_NUMBER');
    if (proof.length > maxOpaqueLength) throw authError('INVALID_TEMPORARY_PROOF');
    const sessionHash = sha256(proof);
    const record = await this.store.getPhoneVerification(sessionHash);
    const valid = record && record.projectId === projectId && record.kind === 'proof' && Date.now() < record.expiresAt;
    if (!valid || normalizePhoneNumber(phoneNumber) !== record.phoneNumber) throw authError('INVALID_TEMPORARY_PROOF');
    await this.commitOrRefuse({ kind: 'deletePhoneVerification', sessionHash }, 'INVALID_TEMPORARY_PROOF');
    return record.phoneNumber;
  }

  /** Drops codes and proofs a day past their expiry (until then an old code still says "expired"). */
  async sweep(now = Date.now()): Promise<void> {
    await this.store.commit([{ kind: 'deleteExpiredPhoneVerifications', expiredBefore: now - 24 * 3600_000 }]);
  }

  private async commitOrRefuse(mutation: Mutation, refusal: 'INVALID_SESSION_INFO' | 'INVALID_TEMPORARY_PROOF'): Promise<void> {
    try {
      await this.store.commit([mutation]);
    } catch (error) {
      // Another request used (or spent) it between our read and this write.
      if (error instanceof StoreConflict) throw authError(refusal);
      throw error;
    }
  }
}
