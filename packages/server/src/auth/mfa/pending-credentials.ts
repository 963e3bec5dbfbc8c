import { randomBytes } from 'node:crypto';
import type { UsedPendingCredential, UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import type { SealingKeys } from './sealing.js';

/** Google's pending credentials last a few minutes. */
export const pendingCredentialLifetimeMs = 5 * 60_000;
/** A credential that long is not one Hearth made. */
const maxCredentialLength = 4096;

/** What a pending credential stands for: a proven first factor, waiting for the second. */
export interface PendingSignIn {
  id: string;
  projectId: string;
  localId: string;
  /** The account's createdAt: a credential never speaks for a later account that reuses the uid. */
  userCreatedAt: number;
  /** The first factor, which the final ID token names as its sign_in_provider. */
  provider: string;
  /** A custom token's claims, carried into the final session. */
  developerClaims?: string;
  issuedAt: number;
  expiresAt: number;
}

interface SealedPayload {
  i: string;
  u: string;
  c: number;
  f: string;
  d?: string;
  t: number;
  e: number;
}

/**
 * mfaPendingCredential: the state is sealed into the credential itself (opaque to the client,
 * unforgeable, bound to its project), so nothing is stored until it is used; a used one is
 * remembered on the account until it would have expired, so each works once.
 */
export class PendingCredentials {
  constructor(
    private readonly keys: SealingKeys,
    private readonly clock: () => number,
    private readonly lifetimeMs = pendingCredentialLifetimeMs,
  ) {}

  issue(projectId: string, account: Pick<UserRecord, 'localId' | 'createdAt'>, provider: string, developerClaims?: string): string {
    const now = this.clock();
    const payload: SealedPayload = { i: randomBytes(12).toString('base64url'), u: account.localId, c: account.createdAt, f: provider, t: now, e: now + this.lifetimeMs };
    if (developerClaims) payload.d = developerClaims;
    return this.keys.seal('mfa-pending', JSON.stringify(payload), projectId);
  }

  /** The sign-in a credential stands for: MISSING_ / INVALID_MFA_PENDING_CREDENTIAL otherwise (forged, foreign, expired). */
  read(projectId: string, credential: string | undefined, missing: 'MISSING_MFA_PENDING_CREDENTIAL' | 'MISSING_CREDENTIAL' = 'MISSING_MFA_PENDING_CREDENTIAL'): PendingSignIn {
    if (!credential) {
      throw missing === 'MISSING_CREDENTIAL' ? authError('MISSING_CREDENTIAL', 'Please set MFA Pending Credential.') : authError('MISSING_MFA_PENDING_CREDENTIAL', 'Request does not have MFA pending credential.');
    }
    const text = credential.length <= maxCredentialLength ? this.keys.unseal('mfa-pending', credential, projectId) : undefined;
    if (text === undefined) throw authError('INVALID_MFA_PENDING_CREDENTIAL');
    const payload = JSON.parse(text) as SealedPayload;
    if (this.clock() >= payload.e) throw authError('INVALID_MFA_PENDING_CREDENTIAL', 'The MFA pending credential has expired; sign in again.');
    const pending: PendingSignIn = { id: payload.i, projectId, localId: payload.u, userCreatedAt: payload.c, provider: payload.f, issuedAt: payload.t, expiresAt: payload.e };
    if (payload.d !== undefined) pending.developerClaims = payload.d;
    return pending;
  }

  /**
   * Refuses a credential the account no longer honours: deleted (or made again under the uid),
   * disabled, sessions revoked since the first factor (a password change, a withdrawn factor), or
   * already used.
   */
  check(pending: PendingSignIn, user: UserRecord | undefined): UserRecord {
    if (!user || user.createdAt !== pending.userCreatedAt) throw authError('INVALID_MFA_PENDING_CREDENTIAL', 'The account is gone.');
    if (user.disabled) throw authError('USER_DISABLED');
    if (Math.floor(pending.issuedAt / 1000) < user.validSince) throw authError('INVALID_MFA_PENDING_CREDENTIAL', "The account's sessions were revoked; sign in again.");
    if (user.usedMfaPendingCredentials?.some((used) => used.id === pending.id)) throw authError('INVALID_MFA_PENDING_CREDENTIAL', 'The MFA pending credential was already used.');
    return user;
  }

  /** The account's list of used credentials with this one added and the expired ones dropped. */
  markUsed(user: UserRecord, pending: PendingSignIn): UsedPendingCredential[] {
    const now = this.clock();
    return [...(user.usedMfaPendingCredentials ?? []).filter((used) => used.expiresAt > now), { id: pending.id, expiresAt: pending.expiresAt }];
  }
}
