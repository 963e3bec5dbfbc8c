import { Secret, TOTP } from 'otpauth';
import type { TotpFactorRecord } from '../../storage/store.js';

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
