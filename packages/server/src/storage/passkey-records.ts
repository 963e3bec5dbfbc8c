/**
 * An account's passkeys (UserRecord.passkeys, in store.ts): kept in the account's record like its
 * second factors, so they need no table or migration of their own. Their own file to keep store.ts
 * short; written only through the account's update like every other field of it.
 */

/** One passkey: a WebAuthn credential's public key, as verified at enrolment. */
export interface PasskeyRecord {
  /** base64url, as the authenticator names it. */
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  /** The authenticator's signature counter at the last use (0 when it keeps none). */
  counter: number;
  transports?: string[];
  name?: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  lastUsedAt?: number;
}
