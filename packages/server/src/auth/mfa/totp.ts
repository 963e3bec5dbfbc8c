import { Secret, TOTP } from 'otpauth';
import type { TotpFactorRecord } from '../../storage/store.js';
import type { BackoffLimits, BackoffThrottle } from '../core/throttle.js';
import { addressKey } from '../../http/address-key.js';
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

/** Wrong TOTP codes counted twice: per factor and client address, and per factor from every address. */
export interface TotpThrottles {
  /** One address against one factor: the few free wrong codes, then doubling waits. */
  perFactorAndAddress: BackoffThrottle;
  /** One factor from all addresses together: a higher ceiling, against guesses spread over many addresses. */
  perFactor: BackoffThrottle;
}

/**
 * Checks TOTP codes against brute force and replay. Wrong codes slow down the address sending
 * them, on that factor: a few free, then doubling waits, so the million six-digit codes cannot be
 * tried; whoever has the password cannot keep the owner's own second step refused from another
 * address. All addresses together have a ceiling five times higher, with the same waits beyond it,
 * so spreading guesses over many addresses buys little more. A code is accepted only for a time
 * step after the last accepted one, so a seen code is worth nothing.
 * Check, verify and count happen in one synchronous stretch: concurrent guesses cannot slip past.
 * With instances sharing a database, what the others counted for the keys is read first, and a
 * wrong code's count is written before the answer: guesses spread over instances share the limits
 * (at most one guess per instance can slip in while two decide at the same moment).
 */
export class TotpVerifier {
  constructor(
    private readonly throttles: TotpThrottles,
    private readonly clock: () => number,
  ) {}

  /**
   * The accepted code's time step; MISSING_CODE, TOO_MANY_ATTEMPTS_TRY_LATER or INVALID_CODE
   * otherwise. `factorKey` names the factor (or the enrolment being finished), `clientIp` the caller.
   */
  async verify(factorKey: string, clientIp: string, secret: string, code: string | undefined, format: TotpFormat, adjacentIntervals: number, lastUsedStep?: number): Promise<number> {
    if (!code) throw authError('MISSING_CODE');
    const { perFactorAndAddress, perFactor } = this.throttles;
    const pairKey = `${factorKey}\u0000${addressKey(clientIp)}`;
    await Promise.all([perFactorAndAddress.refresh([pairKey], this.clock()), perFactor.refresh([factorKey], this.clock())]);
    const now = this.clock();
    if (perFactorAndAddress.blockedUntil(pairKey, now) || perFactor.blockedUntil(factorKey, now)) {
      throw authError('TOO_MANY_ATTEMPTS_TRY_LATER', 'Too many wrong codes for this second factor; try again later.');
    }
    const step = totpStepOf(secret, code, format, adjacentIntervals, now);
    if (step === undefined || (lastUsedStep !== undefined && step <= lastUsedStep)) {
      perFactorAndAddress.recordFailure(pairKey, now);
      perFactor.recordFailure(factorKey, now);
      await Promise.all([perFactorAndAddress.flushed(), perFactor.flushed()]);
      throw authError('INVALID_CODE');
    }
    // The address that knew the code is forgiven; the factor's count is not (the owner's success
    // must not hand a guesser elsewhere a new allowance): it fades after a quiet day.
    perFactorAndAddress.clear(pairKey);
    return step;
  }
}

/** Wrong TOTP codes from one address: five free, then waits of 1, 2, 4 ... minutes up to an hour; forgotten after a quiet day. */
export const totpCodeLimits: BackoffLimits = { freeFailures: 5, firstWaitMs: 60_000, maxWaitMs: 3600_000, forgetAfterMs: 24 * 3600_000 };

/** Wrong TOTP codes for one factor from every address together: 25 free, then the same waits. */
export const totpFactorLimits: BackoffLimits = { ...totpCodeLimits, freeFailures: 25 };
