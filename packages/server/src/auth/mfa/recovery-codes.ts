import { randomInt, timingSafeEqual } from 'node:crypto';
import { addressKey } from '../../http/address-key.js';
import type { AuditLog } from '../../storage/audit-log.js';
import type { RecoveryCodeSet, SecondFactorClaim, UserRecord } from '../../storage/store.js';
import { authenticate, requireRecentLogin } from '../core/auth-context.js';
import type { Caller } from '../core/requests.js';
import { passedSecondStep } from '../core/tokens.js';
import { authError } from '../errors.js';
import { mfaEnabled } from './mfa-config.js';
import type { MfaDeps } from './mfa-deps.js';
import type { SealingKeys } from './sealing.js';
import type { TotpThrottles } from './totp.js';

/**
 * One-time recovery codes: a way through the second step for someone who lost the phone or the
 * authenticator app. Ten codes of 12 characters from Crockford's base32 (no i, l, o, u; 60 random
 * bits each), shown once, kept only as keyed hashes, each good for one sign-in.
 *
 * Why HMAC-SHA-256 under a server key (HKDF from the data folder's mfa-key, as the sealing keys)
 * and not scrypt: the codes are random, not chosen by people, so a slow hash buys nothing against
 * guessing 2^60 values, while a fast one lets a sign-in compute one hash and compare it with every
 * stored one in constant time (scrypt would need a salt per code and ten slow hashes per guess, a
 * gift to anyone flooding the endpoint). The key keeps a copy of the database alone from testing
 * guesses offline; the account, the realm and the set's time are bound in, so a hash means nothing
 * on another account or in another set.
 */
export const recoveryCodeCount = 10;
const codeLength = 12;
const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
/** Anything longer is not a code (spaces and dashes included), and is not hashed. */
const maxInputLength = 64;

/** What a session that passed the second step with a recovery code carries as its second factor. */
export const recoveryCodeFactor: SecondFactorClaim = { factorId: 'recovery_code', enrollmentId: 'recovery-code' };

/** A new code as shown to the user: `xxxx-xxxx-xxxx`. */
export function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < codeLength; i++) code += alphabet[randomInt(alphabet.length)];
  return `${code.slice(0, 4)}-${code.slice(4, 8)}-${code.slice(8)}`;
}

/** The code as hashed: lower case, without spaces or dashes, Crockford's look-alikes read as digits; undefined if it cannot be one. */
export function normalizeRecoveryCode(input: string): string | undefined {
  if (input.length > maxInputLength) return undefined;
  const code = input.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  return /^[0-9a-hjkmnp-tv-z]{12}$/.test(code) ? code : undefined;
}

/** The unused codes an account has; none counts while it has no second factor (codes are for the second step only). */
export function remainingRecoveryCodes(user: UserRecord): number {
  return user.mfaInfo?.length ? (user.recoveryCodes?.hashes.length ?? 0) : 0;
}

/** Hashing, checking (with the second step's wrong-code limits) and recording the use of recovery codes. */
export class RecoveryCodes {
  constructor(
    private readonly keys: SealingKeys,
    private readonly throttles: TotpThrottles,
    private readonly clock: () => number,
    private readonly auditLog?: AuditLog,
  ) {}

  /** A new set for the account: the codes (to show once) and what is stored. */
  newSet(realm: string, localId: string): { codes: string[]; set: RecoveryCodeSet } {
    const generatedAt = this.clock();
    const codes = Array.from({ length: recoveryCodeCount }, newRecoveryCode);
    return { codes, set: { generatedAt, hashes: codes.map((code) => this.hash(realm, localId, generatedAt, normalizeRecoveryCode(code)!)) } };
  }

  /**
   * The stored hash the code matches, or MISSING_CODE, TOO_MANY_ATTEMPTS_TRY_LATER or INVALID_CODE.
   * Wrong codes (malformed, used, another account's) count as wrong TOTP codes do: per account and
   * address (5 free, then doubling waits) and per account from every address (25 free).
   */
  async check(realm: string, user: UserRecord, clientIp: string, code: string | undefined): Promise<string> {
    if (!code) throw authError('MISSING_CODE');
    const { perFactorAndAddress, perFactor } = this.throttles;
    const key = `${realm}\u0000${user.localId}\u0000recovery-codes`;
    const pairKey = `${key}\u0000${addressKey(clientIp)}`;
    await Promise.all([perFactorAndAddress.refresh([pairKey], this.clock()), perFactor.refresh([key], this.clock())]);
    const now = this.clock();
    if (perFactorAndAddress.blockedUntil(pairKey, now) || perFactor.blockedUntil(key, now)) {
      throw authError('TOO_MANY_ATTEMPTS_TRY_LATER', 'Too many wrong recovery codes; try again later.');
    }
    const normalized = normalizeRecoveryCode(code);
    const set = remainingRecoveryCodes(user) > 0 ? user.recoveryCodes : undefined;
    const found = normalized !== undefined && set ? matching(set.hashes, this.hash(realm, user.localId, set.generatedAt, normalized)) : undefined;
    if (found === undefined) {
      perFactorAndAddress.recordFailure(pairKey, now);
      perFactor.recordFailure(key, now);
      await Promise.all([perFactorAndAddress.flushed(), perFactor.flushed()]);
      throw authError('INVALID_CODE', 'That recovery code is not right, or it was used already.');
    }
    perFactorAndAddress.clear(pairKey);
    return found;
  }

  /** The account without the used code's hash (run on the stored record in the sign-in's commit: a concurrent use of it loses). */
  consume(user: UserRecord, hash: string): UserRecord {
    const hashes = user.recoveryCodes?.hashes ?? [];
    if (!hashes.includes(hash)) throw authError('INVALID_CODE', 'That recovery code is not right, or it was used already.');
    return { ...user, recoveryCodes: { ...user.recoveryCodes!, hashes: hashes.filter((h) => h !== hash) } };
  }

  /** A line in the console's audit log: who used a code or made new ones, from where, how many are left. */
  async audit(caller: Caller, user: UserRecord, what: string, call: 'mfaSignIn:finalize' | 'recoveryCodes:generate'): Promise<void> {
    if (!this.auditLog) return;
    await this.auditLog
      .append({
        at: this.clock(),
        operator: `user ${user.email ?? user.localId}`,
        address: caller.clientIp,
        userAgent: '',
        method: 'POST',
        path: `/identitytoolkit.googleapis.com/v2/accounts/${call}`,
        status: 200,
        summary: `${what} (account ${user.localId} of ${caller.realm}; ${remainingRecoveryCodes(user)} recovery codes left)`,
      })
      .catch(() => undefined);
  }

  private hash(realm: string, localId: string, generatedAt: number, normalized: string): string {
    return this.keys.mac('recovery-code', `${realm}\u0000${localId}\u0000${generatedAt}\u0000${normalized}`);
  }
}

/** The stored hash equal to `candidate`, every one compared in constant time (no early exit). */
function matching(hashes: readonly string[], candidate: string): string | undefined {
  const wanted = Buffer.from(candidate);
  let found: string | undefined;
  for (const hash of hashes) {
    const stored = Buffer.from(hash);
    if (stored.length === wanted.length && timingSafeEqual(stored, wanted) && found === undefined) found = hash;
  }
  return found;
}

export interface RecoveryCodesAnswer {
  /** Shown once: only their hashes are kept. */
  recoveryCodes: string[];
  remainingCount: number;
  generateTime: string;
}

export interface RecoveryCodesStatus {
  remainingCount: number;
  /** When the current set was made (absent: none). */
  generateTime?: string;
}

/**
 * Hearth's v2 accounts/recoveryCodes:generate and :lookup (no Google counterpart). Making a set is
 * as sensitive as enrolling a factor (a code passes the second step): it needs a recent sign-in
 * that passed the second step (CREDENTIAL_TOO_OLD_LOGIN_AGAIN otherwise, the SDK's
 * auth/requires-recent-login), on an account with a second factor. A new set replaces the old one.
 */
export class RecoveryCodeService {
  constructor(
    private readonly deps: MfaDeps,
    private readonly codes: RecoveryCodes,
  ) {}

  async generate(caller: Caller, request: { idToken?: string }): Promise<RecoveryCodesAnswer> {
    if (!mfaEnabled((await this.deps.auth.projects.config(caller.realm)).mfa)) {
      throw authError('OPERATION_NOT_ALLOWED', 'Multi-factor authentication is not enabled for this project.');
    }
    const { user, claims } = await authenticate(this.deps.auth, caller, request.idToken);
    if (!user.mfaInfo?.length) throw noSecondFactor();
    requireRecentLogin(this.deps.auth, claims);
    if (!passedSecondStep(claims)) {
      throw authError('CREDENTIAL_TOO_OLD_LOGIN_AGAIN', 'Making recovery codes needs a sign-in that passed the second step: sign in again.');
    }
    const { codes, set } = this.codes.newSet(caller.realm, user.localId);
    const updated = await this.deps.auth.users.update(caller.realm, user.localId, (u) => {
      if (!u.mfaInfo?.length) throw noSecondFactor();
      return { ...u, recoveryCodes: set };
    });
    await this.codes.audit(caller, updated, 'New recovery codes made', 'recoveryCodes:generate');
    return { recoveryCodes: codes, remainingCount: codes.length, generateTime: new Date(set.generatedAt).toISOString() };
  }

  async lookup(caller: Caller, request: { idToken?: string }): Promise<RecoveryCodesStatus> {
    const { user } = await authenticate(this.deps.auth, caller, request.idToken);
    const remainingCount = remainingRecoveryCodes(user);
    return user.recoveryCodes && user.mfaInfo?.length ? { remainingCount, generateTime: new Date(user.recoveryCodes.generatedAt).toISOString() } : { remainingCount };
  }
}

function noSecondFactor() {
  return authError('MFA_ENROLLMENT_NOT_FOUND', 'Recovery codes are for accounts with two-step verification: add a second factor first.');
}
