/**
 * The phone rows of the one storage interface (store.ts): SMS codes in flight and the texts kept in
 * the outbox. Their own file because they are their own subject, not a store of their own: they
 * are read with Store's getters and written through its commit like every other row.
 */

/**
 * A six-digit SMS code in flight (`code`), or the proof a code was verified that the SDK brings back
 * when the number turned out to belong to another account (`proof`, Google's temporaryProof). Only
 * hashes are kept: of the opaque sessionInfo (or proof), and of the code keyed by the sessionInfo.
 */
export interface PhoneVerificationRecord {
  /** SHA-256 of the sessionInfo or temporary proof, hex. */
  sessionHash: string;
  projectId: string;
  kind: 'code' | 'proof';
  /** E.164. */
  phoneNumber: string;
  /** HMAC-SHA-256 of the code keyed by the sessionInfo, hex; proofs have none. */
  codeHash?: string;
  /** Wrong codes still allowed; at 0 the session is spent. */
  attemptsLeft: number;
  /** Milliseconds since the epoch. */
  createdAt: number;
  expiresAt: number;
}

/** An SMS kept in the outbox (always in --dev): what developers and the emulator's verificationCodes read. */
export interface SmsOutboxMessage {
  id: number;
  projectId: string;
  /** The tenant whose sign-in the text is for, if any. */
  tenantId?: string;
  /** E.164. */
  phoneNumber: string;
  body: string;
  code: string;
  sessionInfo: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
}
