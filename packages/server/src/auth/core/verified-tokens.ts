import type { IdTokenClaims } from './tokens.js';

/** A token whose RS256 signature one of the ring's keys checked, and what it says. */
export interface VerifiedToken {
  kid: string;
  claims: Readonly<IdTokenClaims>;
}

/**
 * ID tokens whose signature was already checked, by their exact text, until they expire. A client
 * presents the same token for up to an hour (every lookup, update and Firestore call), and checking
 * an RS256 signature and re-parsing the claims cost more than the rest of such a request.
 *
 * Only the signature check is remembered. Everything that can change during a token's life is
 * checked again on every use by the caller: that its key is still published (a retired key's tokens
 * stop verifying when the key is dropped), issuer, audience and tenant, expiry, and the account's
 * revocation (validSince), disabling and deletion (auth-context.ts).
 *
 * Bounded: past `capacity` entries the oldest is dropped, so a flood of distinct valid tokens costs
 * a fixed amount of memory (and forged ones are never stored).
 */
export class VerifiedTokenCache {
  private readonly entries = new Map<string, VerifiedToken>();

  constructor(private readonly capacity = 10_000) {}

  /** The verified token with exactly this text, unless it has expired by `now` (seconds). */
  get(token: string, now: number): VerifiedToken | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.claims.exp <= now) {
      this.entries.delete(token);
      return undefined;
    }
    return entry;
  }

  remember(token: string, kid: string, claims: IdTokenClaims): void {
    if (this.capacity <= 0) return;
    if (this.entries.size >= this.capacity && !this.entries.has(token)) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { kid, claims: deepFreeze(claims) });
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Callers share one claims object per token: none may change it for the next. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
