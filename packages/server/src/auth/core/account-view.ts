import type { ProviderUserInfo, UserRecord } from '../../storage/store.js';
import { enrollmentsForWire, type MfaEnrollmentWire } from '../mfa/enrollments.js';
import { passkeyInfoOf } from '../passkeys/passkeys.js';
import { remainingRecoveryCodes } from '../mfa/recovery-codes.js';

/** What a caller learns about an account: everything but secrets (no password hash, no salt). */
export interface AccountInfo {
  localId: string;
  email?: string;
  emailVerified: boolean;
  displayName?: string;
  photoUrl?: string;
  phoneNumber?: string;
  passwordUpdatedAt?: number;
  providerUserInfo: ProviderUserInfo[];
  validSince: string;
  disabled: boolean;
  lastLoginAt?: string;
  createdAt: string;
  customAttributes?: string;
  lastRefreshAt?: string;
  /** The SDK takes the user's tenant from here (and refuses a user of another tenant). */
  tenantId?: string;
  /** Second factors: to the owner and administrators in full (numbers unmasked, TOTP secrets never). */
  mfaInfo?: MfaEnrollmentWire[];
  /** Passkeys: their credential ids and names (never their public keys). */
  passkeyInfo?: ReturnType<typeof passkeyInfoOf>;
  /** Hearth's: how many unused recovery codes the account has (never the codes), when it has a set. */
  recoveryCodesRemaining?: number;
}

export function toAccountInfo(user: UserRecord): AccountInfo {
  const info: AccountInfo = {
    localId: user.localId,
    emailVerified: user.emailVerified,
    providerUserInfo: user.providerUserInfo,
    validSince: String(user.validSince),
    disabled: user.disabled,
    createdAt: String(user.createdAt),
  };
  if (user.email) info.email = user.email;
  if (user.displayName) info.displayName = user.displayName;
  if (user.photoUrl) info.photoUrl = user.photoUrl;
  if (user.phoneNumber) info.phoneNumber = user.phoneNumber;
  if (user.passwordUpdatedAt) info.passwordUpdatedAt = user.passwordUpdatedAt;
  if (user.lastLoginAt) info.lastLoginAt = String(user.lastLoginAt);
  if (user.customAttributes) info.customAttributes = user.customAttributes;
  if (user.lastRefreshAt) info.lastRefreshAt = new Date(user.lastRefreshAt).toISOString();
  if (user.tenantId) info.tenantId = user.tenantId;
  if (user.mfaInfo?.length) info.mfaInfo = enrollmentsForWire(user.mfaInfo, { obfuscatePhone: false });
  if (user.passkeys?.length) info.passkeyInfo = passkeyInfoOf(user.passkeys);
  if (user.recoveryCodes && user.mfaInfo?.length) info.recoveryCodesRemaining = remainingRecoveryCodes(user);
  return info;
}

/** The provider entries a user's own fields imply (password, phone), kept in step with them. */
export function withDerivedProviders(user: UserRecord): UserRecord {
  const others = user.providerUserInfo.filter((p) => p.providerId !== 'password' && p.providerId !== 'phone');
  const derived: ProviderUserInfo[] = [];
  if ((user.passwordHash || user.emailLinkSignin) && user.email) {
    const entry: ProviderUserInfo = { providerId: 'password', rawId: user.email, federatedId: user.email, email: user.email };
    if (user.displayName) entry.displayName = user.displayName;
    if (user.photoUrl) entry.photoUrl = user.photoUrl;
    derived.push(entry);
  }
  if (user.phoneNumber) derived.push({ providerId: 'phone', rawId: user.phoneNumber, phoneNumber: user.phoneNumber });
  return { ...user, providerUserInfo: [...derived, ...others] };
}

/** The sign-in methods createAuthUri reports for an email. */
export function signInMethods(user: UserRecord): string[] {
  const methods: string[] = [];
  if (user.passwordHash) methods.push('password');
  if (user.emailLinkSignin) methods.push('emailLink');
  for (const p of user.providerUserInfo) if (p.providerId !== 'password' && p.providerId !== 'phone') methods.push(p.providerId);
  return methods;
}
