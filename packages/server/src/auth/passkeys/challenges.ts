import { randomBytes } from 'node:crypto';
import type { UsedPendingCredential, UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import type { SealingKeys } from '../mfa/sealing.js';

/** How long a passkey ceremony may take from start to finalize. */
export const challengeLifetimeMs = 5 * 60_000;
/** A challenge that long is not one Hearth made. */
const maxChallengeLength = 2048;

export type Ceremony = 'enroll' | 'sign-in';

/** What a challenge stands for, sealed into its bytes (so nothing is stored until it is answered). */
export interface Challenge {
  /** Unique: an answered one is remembered on the account until it expires, so each works once. */
  id: string;
  /** Enrolment only: the account it was given to and that account's creation time. */
  localId?: string;
  userCreatedAt?: number;
  expiresAt: number;
}

interface Sealed {
  i: string;
  u?: string;
  c?: number;
  e: number;
}

/**
 * WebAuthn challenges as sealed values: the challenge the authenticator signs is the sealed
 * payload's bytes, bound (as associated data) to the realm (project or tenant) and the ceremony, so
 * one from another project, another tenant or the other ceremony does not open here.
 */
export class PasskeyChallenges {
  constructor(
    private readonly keys: SealingKeys,
    private readonly clock: () => number,
  ) {}

  issue(realm: string, ceremony: Ceremony, account?: Pick<UserRecord, 'localId' | 'createdAt'>): Uint8Array<ArrayBuffer> {
    const payload: Sealed = { i: randomBytes(12).toString('base64url'), e: this.clock() + challengeLifetimeMs };
    if (account) {
      payload.u = account.localId;
      payload.c = account.createdAt;
    }
    return new TextEncoder().encode(this.keys.seal('passkey-challenge', JSON.stringify(payload), `${realm}/${ceremony}`));
  }

  /** The challenge a client's data names (base64url): INVALID_CHALLENGE for forged, foreign or expired ones. */
  read(realm: string, ceremony: Ceremony, challenge: string): Challenge {
    const sealed = challenge.length <= maxChallengeLength ? Buffer.from(challenge, 'base64url').toString('utf8') : '';
    const text = sealed ? this.keys.unseal('passkey-challenge', sealed, `${realm}/${ceremony}`) : undefined;
    if (text === undefined) throw authError('INVALID_CHALLENGE', 'The challenge was not issued by this project for this call.');
    const payload = JSON.parse(text) as Sealed;
    if (this.clock() >= payload.e) throw authError('INVALID_CHALLENGE', 'The challenge has expired; start again.');
    const result: Challenge = { id: payload.i, expiresAt: payload.e };
    if (payload.u !== undefined) result.localId = payload.u;
    if (payload.c !== undefined) result.userCreatedAt = payload.c;
    return result;
  }

  /** Refuses a challenge the account has already answered. */
  checkUnused(user: UserRecord, challenge: Challenge): void {
    if (user.usedPasskeyChallenges?.some((used) => used.id === challenge.id)) throw authError('INVALID_CHALLENGE', 'The challenge was already used.');
  }

  /** The account's answered challenges with this one added and the expired ones dropped. */
  markUsed(user: UserRecord, challenge: Challenge): UsedPendingCredential[] {
    const now = this.clock();
    return [...(user.usedPasskeyChallenges ?? []).filter((used) => used.expiresAt > now), { id: challenge.id, expiresAt: challenge.expiresAt }];
  }
}
