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

/**
 * A passkey's row in the identity index (user_providers): a credential id names one account of a
 * project, so a second enrolment of it (on any account) is a conflict the store refuses atomically,
 * and a sign-in can find the account from the credential alone. No identity provider can be named
 * this (configured ones are google.com, oidc.*, saml.* and the like).
 */
export const passkeyIndexProvider = 'passkey';

export interface IndexedIdentity {
  providerId: string;
  rawId: string;
}

/** The index rows of an account: its federated identities, then its passkeys. */
export function indexedIdentities(user: { providerUserInfo: { providerId: string; rawId: string }[]; passkeys?: PasskeyRecord[] }): IndexedIdentity[] {
  const rows: IndexedIdentity[] = [];
  for (const info of user.providerUserInfo) if (info.providerId !== 'password' && info.providerId !== 'phone') rows.push({ providerId: info.providerId, rawId: info.rawId });
  for (const passkey of user.passkeys ?? []) rows.push({ providerId: passkeyIndexProvider, rawId: passkey.credentialId });
  return rows;
}
