import { Secret, TOTP } from 'otpauth';
import type { TotpFactorRecord } from '../../storage/store.js';
import type { BackoffLimits, BackoffThrottle } from '../core/throttle.js';
import { authError } from '../errors.js';

export type TotpFormat = Pick<TotpFactorRecord, 'hashingAlgorithm' | 'verificationCodeLength' | 'periodSec'>;

/** A new shared secret: 160 random bits (RFC 4226's recommendation), base32 as authenticator apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/**
 * The time step (RFC 6238's counter) a code belongs to, within `adjacentIntervals` steps either
 * side of `now`, or undefined when it matches none. Only digits of the format's length are tried.
 */
export function totpStepOf(secret: string, code: string, format: TotpFormat, adjacentIntervals: number, now: number): number | undefined {
  if (!new RegExp(`^\\d{${format.verificationCodeLength}}$`).test(code)) return undefined;
  const options = { secret: Secret.fromBase32(secret), algorithm: format.hashingAlgorithm, digits: format.verificationCodeLength, period: format.periodSec };
  const delta = TOTP.validate({ ...options, token: code, timestamp: now, window: adjacentIntervals });
  return delta === null ? undefined : TOTP.counter({ period: format.periodSec, timestamp: now }) + delta;
}

/**
 * Checks TOTP codes against brute force and replay: per key (an enrolment), a few free wrong
 * codes, then doubling waits, so the million six-digit codes cannot be tried; and a code is
 * accepted only for a time step after the last accepted one, so a seen code is worth nothing.
 * Check, verify and count happen in one synchronous stretch: concurrent guesses cannot slip past.
 * With instances sharing a database, what the others counted for the key is read first, and a
 * wrong code's count is written before the answer: guesses spread over instances share one limit
 * (at most one guess per instance can slip in while two decide at the same moment).
 */
export class TotpVerifier {
  constructor(
    private readonly throttle: BackoffThrottle,
    private readonly clock: () => number,
  ) {}

  /** The accepted code's time step; MISSING_CODE, TOO_MANY_ATTEMPTS_TRY_LATER or INVALID_CODE otherwise. */
  async verify(key: string, secret: string, code: string | undefined, format: TotpFormat, adjacentIntervals: number, lastUsedStep?: number): Promise<number> {
    if (!code) throw authError('MISSING_CODE');
    await this.throttle.refresh([key], this.clock());
    const now = this.clock();
    if (this.throttle.blockedUntil(key, now)) throw authError('TOO_MANY_ATTEMPTS_TRY_LATER', 'Too many wrong codes for this second factor; try again later.');
    const step = totpStepOf(secret, code, format, adjacentIntervals, now);
    if (step === undefined || (lastUsedStep !== undefined && step <= lastUsedStep)) {
      this.throttle.recordFailure(key, now);
      await this.throttle.flushed();
      throw authError('INVALID_CODE');
    }
    this.throttle.clear(key);
    return step;
  }
}

/** Wrong TOTP codes: five free, then waits of 1, 2, 4 ... minutes up to an hour; forgotten after a quiet day. */
export const totpCodeLimits: BackoffLimits = { freeFailures: 5, firstWaitMs: 60_000, maxWaitMs: 3600_000, forgetAfterMs: 24 * 3600_000 };
