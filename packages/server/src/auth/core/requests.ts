import type { AdminEnrollment } from '../mfa/enrollments.js';

/**
 * Request bodies as the identity API receives them (v1 names; the v3 legacy calls use the same
 * fields). The HTTP layer validates types and unknown fields before these reach the core.
 */
export interface SignUpRequest {
  email?: string;
  password?: string;
  displayName?: string;
  photoUrl?: string;
  idToken?: string;
  returnSecureToken?: boolean;
  // administrator fields
  localId?: string;
  emailVerified?: boolean;
  disabled?: boolean;
  phoneNumber?: string;
  /** Second factors to create the account with (firebase-admin's createUser({multiFactor})). */
  mfaInfo?: AdminEnrollment[];
}

export interface SignInWithPasswordRequest {
  email?: string;
  password?: string;
  returnSecureToken?: boolean;
}

export interface LookupRequest {
  idToken?: string;
  localId?: string[];
  email?: string[];
  phoneNumber?: string[];
}

export type DeletableAttribute = 'DISPLAY_NAME' | 'PHOTO_URL' | 'EMAIL' | 'PASSWORD' | 'PHONE_NUMBER';

export interface UpdateRequest {
  idToken?: string;
  email?: string;
  password?: string;
  displayName?: string;
  photoUrl?: string;
  deleteAttribute?: DeletableAttribute[];
  deleteProvider?: string[];
  /** Credential ids of passkeys to remove. */
  deletePasskey?: string[];
  returnSecureToken?: boolean;
  oobCode?: string;
  // administrator fields
  localId?: string;
  emailVerified?: boolean;
  disableUser?: boolean;
  customAttributes?: string;
  validSince?: string | number;
  phoneNumber?: string;
  /** The account's second factors, replaced (firebase-admin's updateUser({multiFactor})); `{}` removes them all. */
  mfa?: { enrollments?: AdminEnrollment[] };
}

export interface DeleteRequest {
  idToken?: string;
  localId?: string;
}

export interface CreateAuthUriRequest {
  identifier?: string;
  continueUri?: string;
  providerId?: string;
}

export interface RefreshRequest {
  grant_type?: string;
  refresh_token?: string;
  /** Optional (the SDK sends none): the tenant the caller expects the session to be in. */
  tenantId?: string | null;
}

export interface BatchDeleteRequest {
  localIds?: string[];
  force?: boolean;
}

export interface SendOobCodeRequest {
  requestType?: string;
  email?: string;
  idToken?: string;
  newEmail?: string;
  continueUrl?: string;
  canHandleCodeInApp?: boolean;
  /** Administrators: answer with the link instead of mailing it. */
  returnOobLink?: boolean;
}

export interface ResetPasswordRequest {
  oobCode?: string;
  newPassword?: string;
  email?: string;
}

export interface EmailLinkSignInRequest {
  email?: string;
  oobCode?: string;
  idToken?: string;
}

/** Who is calling: where they act (the project their key or path names, or one of its tenants), and whether they hold the admin credential. */
export interface Caller {
  /**
   * The realm the call acts in (auth/tenants/realm.ts): the project's id, or its tenant's key when
   * the request names a tenant. Accounts, codes and settings are read and written there;
   * `projectOf(realm)` is the project that tokens name.
   */
  realm: string;
  isAdmin: boolean;
  /**
   * The administrator of every project: the admin key (or `Bearer owner` in --dev) or a console
   * operator, as opposed to a service account, the administrator of its own project only. Only the
   * owner manages operator accounts (core/operator-claim.ts). Absent: not the owner.
   */
  isOwner?: boolean;
  /** The client address limits count: an IPv4 address, or an IPv6 /64 (http/address-key.ts). */
  clientIp: string;
  /** The API key the request carried, for links mailed back to the same app. */
  apiKey?: string;
  /** From `X-Firebase-Locale`: the language of mails sent on this request. */
  languageCode?: string;
}
