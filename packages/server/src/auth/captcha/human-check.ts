import type { Challenge, Solution } from 'altcha-lib';
import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../../storage/store.js';
import { StoreConflict } from '../../storage/store.js';
import { FailureThrottle, type ThrottleLimits } from '../core/throttle.js';
import { throttleRowReaderOf } from '../../storage/throttle-reader.js';
import type { HumanCheck } from '../core/verification.js';
import { authError } from '../errors.js';
import { requestErrors } from '../../http/api-error.js';
import { defaultProofOfWorkCost, ProofOfWork, type ProofOfWorkCost, type ProofRefusal } from './challenges.js';

export interface HumanCheckOptions extends ProofOfWorkCost {
  /** How long a token may wait before an identity call spends it (reCAPTCHA's are good for two minutes). */
  tokenLifetimeMs: number;
  /** Challenges handed to one client address. */
  challengesPerAddress: ThrottleLimits;
}

export const defaultHumanCheckOptions: HumanCheckOptions = {
  ...defaultProofOfWorkCost,
  tokenLifetimeMs: 2 * 60_000,
  challengesPerAddress: { maxFailures: 60, windowMs: 10 * 60_000 },
};

/** What the page gets for an answered challenge: the "reCAPTCHA response" the SDK sends as `recaptchaToken`. */
export interface RedeemedToken {
  token: string;
  /** Seconds: when the page should call `expired-callback`. */
  expiresIn: number;
}

/** Used and expired rows are kept this long after expiry, so a late second use is named as such. */
const keepExpiredMs = 3600_000;
const tokenPattern = /^hc1_[A-Za-z0-9_-]{43}$/;

/**
 * Hearth's reCAPTCHA stand-in on the server: challenges for pages, a token for each answered one,
 * and the check identity calls make on that token (HumanCheck).
 *
 * Tokens are random, stored hashed with their project and expiry (the token itself is never
 * stored or logged). Single use is a row update that succeeds once (`useHumanCheck`), and an
 * answered challenge is stored as used in the same commit as its token, so one proof of work buys
 * one token; both hold across restarts because they are rows in the store, not memory. Challenges
 * themselves are stateless (signed); only their count per address is kept (see the constructor).
 */
export class HumanChecks implements HumanCheck {
  private readonly proofOfWork: ProofOfWork;
  private readonly challengeThrottle: FailureThrottle;

  constructor(
    private readonly store: Store,
    instanceKey: Buffer,
    private readonly options: HumanCheckOptions & { dev: boolean },
  ) {
    this.proofOfWork = new ProofOfWork(instanceKey, options);
    // Counted in the store only when other instances share it (PostgreSQL): there a flood spread
    // over the instances meets one limit. One process alone keeps the count in memory, so handing
    // out a challenge costs no write.
    this.challengeThrottle = throttleRowReaderOf(store)
      ? new FailureThrottle(options.challengesPerAddress, { store, scope: 'captcha-challenges' })
      : new FailureThrottle(options.challengesPerAddress);
  }

  siteKey(projectId: string): string {
    return this.proofOfWork.siteKey(projectId);
  }

  /** A challenge for the project a site key names; floods from one address are cut off. */
  async challenge(siteKey: string, clientAddress: string): Promise<Challenge> {
    const projectId = this.proofOfWork.projectOfSiteKey(siteKey);
    if (projectId === undefined) throw requestErrors.invalidArgument('Invalid site key.');
    await this.challengeThrottle.refresh([clientAddress]);
    if (this.challengeThrottle.isBlocked(clientAddress)) {
      throw authError('TOO_MANY_ATTEMPTS_TRY_LATER', 'Too many verification challenges from this address. Try again later.');
    }
    this.challengeThrottle.recordFailure(clientAddress);
    // Written before the challenge is handed out, so the other instances count it (nothing to wait for in memory).
    await this.challengeThrottle.flushed();
    return this.proofOfWork.issue(projectId);
  }

  /** Exchanges a correct answer for a token, once per challenge. */
  async redeem(challenge: Challenge, solution: Solution, now = Date.now()): Promise<RedeemedToken> {
    const outcome = await this.proofOfWork.check(challenge, solution);
    if (!outcome.ok) throw checkFailed(outcome.reason);
    const token = `hc1_${randomBytes(32).toString('base64url')}`;
    const expiresAt = now + this.options.tokenLifetimeMs;
    try {
      await this.store.commit([
        // The challenge's signature names it: it is stored as used until it could no longer be answered.
        { kind: 'insertHumanCheck', record: { keyHash: hashOf('challenge', challenge.signature ?? ''), projectId: outcome.projectId, expiresAt: outcome.expiresAt, usedAt: now } },
        { kind: 'insertHumanCheck', record: { keyHash: hashOf('token', token), projectId: outcome.projectId, expiresAt } },
      ]);
    } catch (error) {
      if (error instanceof StoreConflict) throw checkFailed('DUPLICATE');
      throw error;
    }
    return { token, expiresIn: this.options.tokenLifetimeMs / 1000 };
  }

  async verify(projectId: string, token: string | undefined): Promise<void> {
    if (token === undefined || token === '') throw authError('MISSING_RECAPTCHA_TOKEN');
    // As Google's Auth emulator: the SDK's appVerificationDisabledForTesting sends a made-up token.
    if (this.options.dev) return;
    if (!tokenPattern.test(token)) throw checkFailed('MALFORMED');
    const keyHash = hashOf('token', token);
    const record = await this.store.getHumanCheck(keyHash);
    if (!record) throw checkFailed('MALFORMED');
    if (record.projectId !== projectId) throw checkFailed('SITE_MISMATCH');
    if (record.usedAt !== undefined) throw checkFailed('DUPLICATE');
    const now = Date.now();
    if (record.expiresAt <= now) throw checkFailed('EXPIRED');
    try {
      await this.store.commit([{ kind: 'useHumanCheck', keyHash, usedAt: now }]);
    } catch (error) {
      if (error instanceof StoreConflict) throw checkFailed('DUPLICATE'); // a concurrent call used it first
      throw error;
    }
  }

  /** Drops rows long expired (the hourly sweep). */
  async sweep(now = Date.now()): Promise<void> {
    await this.store.commit([{ kind: 'deleteExpiredHumanChecks', expiredBefore: now - keepExpiredMs }]);
  }
}

type CheckFailure = ProofRefusal | 'DUPLICATE' | 'SITE_MISMATCH';

/** CAPTCHA_CHECK_FAILED with the reason, in Google's words ("Recaptcha verification failed - EXPIRED"). */
function checkFailed(reason: CheckFailure) {
  return authError('CAPTCHA_CHECK_FAILED', `Recaptcha verification failed - ${reason}`);
}

function hashOf(kind: 'challenge' | 'token', value: string): string {
  return createHash('sha256').update(kind).update('\u0000').update(value).digest('base64url');
}
