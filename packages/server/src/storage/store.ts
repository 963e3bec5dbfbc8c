/**
 * The one storage interface. Callers read with the getters and write only through `commit`,
 * which applies a list of mutations atomically: all of them or none (SQLite or PostgreSQL).
 *
 * Identity rows are keyed by `projectId`, which is a realm key (auth/tenants/realm.ts): a
 * project's id, or `<project>/tenants/<tenant>` for one of its tenants, whose rows are apart.
 */

import type { MailDeliveryStatus, OobCodeRecord, OutboxMessage } from './mail-records.js';
import type { PhoneVerificationRecord, SmsOutboxMessage } from './phone-records.js';
import type { PasskeyRecord } from './passkey-records.js';
import type { TriggerEventMutation } from './trigger-events.js';
export type { PasskeyRecord } from './passkey-records.js';

export type { PhoneVerificationRecord, SmsOutboxMessage };
export type { MailDeliveryStatus, MailState, OobCodeRecord, OobRequestType, OutboxMessage } from './mail-records.js';

export interface ProviderUserInfo {
  providerId: string;
  rawId: string;
  federatedId?: string;
  email?: string;
  displayName?: string;
  photoUrl?: string;
  phoneNumber?: string;
}

export interface UserRecord {
  localId: string;
  email?: string;
  emailVerified: boolean;
  displayName?: string;
  photoUrl?: string;
  phoneNumber?: string;
  /** `scrypt$N$r$p$salt$hash`; never leaves the server. */
  passwordHash?: string;
  passwordUpdatedAt?: number;
  providerUserInfo: ProviderUserInfo[];
  /** JSON object text of custom claims, as firebase-admin sends it. */
  customAttributes?: string;
  disabled: boolean;
  /** Milliseconds since the epoch. */
  createdAt: number;
  lastLoginAt?: number;
  lastRefreshAt?: number;
  /** Signed in (or verified) through an email link: counts as the password provider without a password. */
  emailLinkSignin?: boolean;
  /** The tenant the account belongs to (set when it is made in a tenant's realm). */
  tenantId?: string;
  /** Second factors (multi-factor authentication), in enrolment order. */
  mfaInfo?: MfaEnrollmentRecord[];
  /** Pending credentials already turned into a session: each works once (see auth/mfa/pending-credentials.ts). */
  usedMfaPendingCredentials?: UsedPendingCredential[];
  /** WebAuthn credentials (passkeys), in enrolment order (see auth/passkeys/). */
  passkeys?: PasskeyRecord[];
  /** Passkey challenges already answered: each works once (kept until it would have expired). */
  usedPasskeyChallenges?: UsedPendingCredential[];
  /** One-time recovery codes for the second step, kept as keyed hashes (see auth/mfa/recovery-codes.ts). */
  recoveryCodes?: RecoveryCodeSet;
  /** Seconds since the epoch; tokens issued before it are revoked. */
  validSince: number;
  /** Optimistic concurrency: bumped on every write. */
  version: number;
}

/** One enrolled second factor: an SMS number or a TOTP authenticator. */
export interface MfaEnrollmentRecord {
  /** Opaque, unique within the account (the SDK's `MultiFactorInfo.uid`). */
  mfaEnrollmentId: string;
  displayName?: string;
  /** Milliseconds since the epoch. */
  enrolledAt: number;
  /** SMS factor: the E.164 number codes are sent to. */
  phoneInfo?: string;
  /** TOTP factor. */
  totpInfo?: TotpFactorRecord;
}

export interface TotpFactorRecord {
  /** The shared secret sealed with the data folder's MFA key (never stored or logged in the clear). */
  sealedSecret: string;
  hashingAlgorithm: 'SHA1' | 'SHA256' | 'SHA512';
  verificationCodeLength: number;
  periodSec: number;
  /** The time step of the last accepted code: it and earlier ones are refused (RFC 6238 section 5.2). */
  lastUsedStep?: number;
}

/** The account's unused recovery codes: a used one's hash is removed in the commit of the sign-in it made. */
export interface RecoveryCodeSet {
  /** HMAC-SHA-256 of each unused code (base64url); never the codes themselves. */
  hashes: string[];
  /** Milliseconds since the epoch: when this set was made (bound into its hashes). */
  generatedAt: number;
}

export interface UsedPendingCredential {
  id: string;
  /** Milliseconds since the epoch: after it the credential is dead anyway and the entry is dropped. */
  expiresAt: number;
}

/** The second factor a session passed, carried into every ID token of that session. */
export interface SecondFactorClaim {
  /** `firebase.sign_in_second_factor`: 'phone' or 'totp'. */
  factorId: string;
  /** `firebase.second_factor_identifier`: the enrolment's mfaEnrollmentId. */
  enrollmentId: string;
}

export interface RefreshTokenRecord {
  /** SHA-256 of the opaque token, hex. The token itself is never stored. */
  tokenHash: string;
  projectId: string;
  localId: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  /** The account's createdAt (ms): a token never speaks for a later account that reuses the uid. */
  userCreatedAt: number;
  /** The original sign-in time carried into refreshed ID tokens (auth_time). */
  authTime: number;
  signInProvider: string;
  /** JSON object text: a custom token's developer claims, carried into every ID token of the session. */
  developerClaims?: string;
  /** The second factor the session passed (multi-factor sign-in or enrolment). */
  secondFactor?: SecondFactorClaim;
}

/** The public half of a service-account key; the private key is never stored. */
export interface ServiceAccountKeyRecord {
  projectId: string;
  /** The key file's `private_key_id`. */
  keyId: string;
  clientEmail: string;
  /** SPKI PEM. */
  publicKey: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/** An access token exchanged for a key's signed assertion: admin for its project until it expires. */
export interface ServiceAccountTokenRecord {
  /** SHA-256 of the opaque token, hex. */
  tokenHash: string;
  projectId: string;
  keyId: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** A stored throttle counter (see auth/core/throttle.ts); keys are hashed, never addresses. */
export interface ThrottleRecord {
  scope: string;
  keyHash: string;
  /** JSON; its shape belongs to the throttle. */
  state: string;
  /** Milliseconds since the epoch: after it the counter has decayed to nothing. */
  expiresAt: number;
}

/** A federated sign-in in flight, from the handler page to signInWithIdp; its id is the OAuth state. */
export interface HandlerSessionRecord {
  id: string;
  projectId: string;
  providerId: string;
  apiKey: string;
  appName: string;
  authType: string;
  eventId?: string;
  redirectUrl: string;
  /** Hash of the cookie that ties the flow to the browser that started it. */
  browserBindingHash: string;
  /** OpenID Connect: the nonce and PKCE verifier sent with the authorization request. */
  nonce?: string;
  codeVerifier?: string;
  /** SAML: the AuthnRequest's ID (the answer must be InResponseTo it) and the posted answer. */
  samlRequestId?: string;
  samlResponse?: string;
  /** Set once the provider answered: the handler's own URL with the provider's response. */
  callbackUrl?: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  expiresAt: number;
}

/**
 * A proof from Hearth's reCAPTCHA stand-in (auth/captcha/), named by a hash: a redeemed
 * proof-of-work challenge (used as it is stored, so it buys one token) or a token handed to the page
 * (used when an identity call verifies it). Rows outlive their use until they expire, so a second
 * use is told apart from a made-up token.
 */
export interface HumanCheckRecord {
  keyHash: string;
  projectId: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  usedAt?: number;
}

/**
 * A deleted account whose data (documents under users/{uid}, files under users/{uid}/) is still to
 * be erased: queued in the deletion's own commit, removed once the erasure is done, so an erasure
 * cut short by a crash is finished after the restart.
 */
export interface AccountErasure {
  /** The realm the account was in (the project id, or `<project>/tenants/<tenant>`). */
  projectId: string;
  localId: string;
  /** Milliseconds since the epoch. */
  requestedAt: number;
}

export interface ProjectRecord {
  projectId: string;
  /** JSON configuration; its shape belongs to the auth domain. */
  config: string;
}

export type Mutation =
  | { kind: 'insertUser'; projectId: string; user: UserRecord }
  /** Fails with a conflict when the stored version is not `expectedVersion`. */
  | { kind: 'updateUser'; projectId: string; user: UserRecord; expectedVersion: number }
  /**
   * Leaves the user's refresh tokens: refreshing one then answers USER_NOT_FOUND, as Firebase does.
   * With `mustExist`, fails with a 'not-found' conflict when there was no account to delete (a
   * concurrent delete got there first): only the delete that deleted records its onDelete event.
   */
  | { kind: 'deleteUser'; projectId: string; localId: string; mustExist?: boolean }
  | { kind: 'deleteAllUsers'; projectId: string }
  | { kind: 'insertRefreshToken'; token: RefreshTokenRecord }
  | { kind: 'deleteRefreshToken'; tokenHash: string }
  | { kind: 'putProject'; project: ProjectRecord }
  /** Writes the project only if it has no row yet: instances that make a project together keep one config. */
  | { kind: 'createProject'; project: ProjectRecord }
  /**
   * A realm goes (a deleted tenant): its settings row, accounts, sessions, action and SMS codes and
   * kept mails and texts. Fails with `code-used` when there is no settings row.
   */
  | { kind: 'deleteRealm'; projectId: string }
  | { kind: 'insertOobCode'; code: OobCodeRecord }
  /** Fails with a `code-used` conflict when the code is already gone: codes are single use. */
  | { kind: 'deleteOobCode'; codeHash: string }
  | { kind: 'deleteExpiredOobCodes'; expiredBefore: number }
  /**
   * A decoy is stored like a mail (enumeration protection: the same write for unknown addresses)
   * but never listed or sent; the delivery loop deletes it.
   */
  | { kind: 'insertOutboxMessage'; message: Omit<OutboxMessage, 'id'>; decoy?: boolean }
  | { kind: 'updateMailDelivery'; id: number; delivery: MailDeliveryStatus }
  | { kind: 'deleteOutboxMessage'; id: number }
  /** Decoys that were never queued (outbox delivery: they are stored exactly like real mails). */
  | { kind: 'deleteOutboxDecoys'; createdBefore: number }
  | { kind: 'clearOutbox'; projectId: string }
  | { kind: 'pruneOutbox'; olderThan: number }
  | { kind: 'putHandlerSession'; session: HandlerSessionRecord }
  /** Fails with a `code-used` conflict when the session is gone (used): it never comes back. */
  | { kind: 'updateHandlerSession'; session: HandlerSessionRecord }
  /** Fails with a `code-used` conflict when the session is already gone: each is used once. */
  | { kind: 'deleteHandlerSession'; id: string }
  | { kind: 'deleteExpiredHandlerSessions'; expiredBefore: number }
  | { kind: 'putThrottleRecord'; record: ThrottleRecord }
  | { kind: 'deleteThrottleRecord'; scope: string; keyHash: string }
  | { kind: 'deleteExpiredThrottleRecords'; expiredBefore: number }
  | { kind: 'insertServiceAccountKey'; key: ServiceAccountKeyRecord }
  /** Also deletes the access tokens issued for the key. Fails with `code-used` when there is no such key. */
  | { kind: 'deleteServiceAccountKey'; projectId: string; keyId: string }
  | { kind: 'insertServiceAccountToken'; token: ServiceAccountTokenRecord }
  | { kind: 'deleteExpiredServiceAccountTokens'; expiredBefore: number }
  /** Fails with a `code-used` conflict when the key is already stored. */
  | { kind: 'insertHumanCheck'; record: HumanCheckRecord }
  /** Fails with a `code-used` conflict when the key is unknown or already used: each is used once. */
  | { kind: 'useHumanCheck'; keyHash: string; usedAt: number }
  | { kind: 'deleteExpiredHumanChecks'; expiredBefore: number }
  | { kind: 'insertPhoneVerification'; record: PhoneVerificationRecord }
  /** Takes one try; fails with `code-used` when none is left or the session is gone (counted before the code is compared). */
  | { kind: 'spendPhoneVerificationAttempt'; sessionHash: string }
  /** Fails with `code-used` when the session is already gone: each code and proof is used once. */
  | { kind: 'deletePhoneVerification'; sessionHash: string }
  | { kind: 'deleteExpiredPhoneVerifications'; expiredBefore: number }
  | { kind: 'insertSmsOutboxMessage'; message: Omit<SmsOutboxMessage, 'id'> }
  | { kind: 'clearSmsOutbox'; projectId: string }
  | { kind: 'pruneSmsOutbox'; olderThan: number }
  /** Queues a deleted account's data for erasure (kept once if queued twice). */
  | { kind: 'insertAccountErasure'; erasure: AccountErasure }
  | { kind: 'deleteAccountErasure'; projectId: string; localId: string }
  | TriggerEventMutation;

export type ConflictReason = 'email-taken' | 'phone-taken' | 'local-id-taken' | 'federated-id-taken' | 'passkey-taken' | 'version-mismatch' | 'code-used' | 'not-found';

/** Raised by `commit` when a precondition fails; nothing of the commit is applied. */
export class StoreConflict extends Error {
  constructor(readonly reason: ConflictReason) {
    super(`store conflict: ${reason}`);
    this.name = 'StoreConflict';
  }
}

export interface RefreshTokenWithUser {
  token: RefreshTokenRecord;
  user: UserRecord | undefined;
}

export interface UserPage {
  users: UserRecord[];
  nextPageToken?: string;
}

export interface Store {
  getUser(projectId: string, localId: string): Promise<UserRecord | undefined>;
  getUserByEmail(projectId: string, email: string): Promise<UserRecord | undefined>;
  getUserByPhone(projectId: string, phoneNumber: string): Promise<UserRecord | undefined>;
  /** The account a federated identity (provider id + the provider's subject) is linked to. */
  getUserByFederatedId(projectId: string, providerId: string, rawId: string): Promise<UserRecord | undefined>;
  listUsers(projectId: string, limit: number, afterLocalId?: string): Promise<UserPage>;
  getRefreshToken(tokenHash: string): Promise<RefreshTokenRecord | undefined>;
  /**
   * A refresh token and the account it names (undefined when that account is gone), read in one
   * statement: a token refresh needs both, and one read instead of two is one lock (SQLite) or one
   * round trip (PostgreSQL) less on the most frequent identity call.
   */
  getRefreshTokenWithUser(tokenHash: string): Promise<RefreshTokenWithUser | undefined>;
  getOobCode(codeHash: string): Promise<OobCodeRecord | undefined>;
  getHandlerSession(id: string): Promise<HandlerSessionRecord | undefined>;
  /** Newest last. */
  listOutbox(projectId: string, limit: number): Promise<OutboxMessage[]>;
  /** Mails (and decoys, flagged) waiting for delivery whose next attempt is due at `now`; oldest first. */
  listDueMail(now: number, limit: number): Promise<Array<OutboxMessage & { decoy: boolean }>>;
  /** When the next queued mail or decoy is due, if any. */
  nextMailDueAt(): Promise<number | undefined>;
  /** A scope's stored throttle counters that have not decayed by `now`, newest last. */
  listThrottleRecords(scope: string, now: number, limit: number): Promise<ThrottleRecord[]>;
  listProjects(): Promise<ProjectRecord[]>;
  /** A project's service-account keys, oldest first; with `clientEmail`, only that account's. */
  listServiceAccountKeys(projectId: string, clientEmail?: string): Promise<ServiceAccountKeyRecord[]>;
  getServiceAccountToken(tokenHash: string): Promise<ServiceAccountTokenRecord | undefined>;
  getHumanCheck(keyHash: string): Promise<HumanCheckRecord | undefined>;
  getPhoneVerification(sessionHash: string): Promise<PhoneVerificationRecord | undefined>;
  /** The project's kept SMS, newest last. */
  listSmsOutbox(projectId: string, limit: number): Promise<SmsOutboxMessage[]>;
  /** Deleted accounts whose data is still to be erased, oldest first. */
  listAccountErasures(limit: number): Promise<AccountErasure[]>;
  /** Applies every mutation or none, durably, before resolving. */
  commit(mutations: Mutation[]): Promise<void>;
  close(): Promise<void>;
}
