/**
 * The v2 multi-factor calls' bodies (the SDK's StartPhoneMfaEnrollmentRequest, ... in
 * packages/auth/src/api/account_management/mfa.ts and authentication/mfa.ts), after the HTTP
 * layer checked types and refused unknown fields.
 */
export interface PhoneVerificationInfo {
  sessionInfo?: string;
  code?: string;
}

export interface StartMfaEnrollmentRequest {
  idToken?: string;
  phoneEnrollmentInfo?: { phoneNumber?: string; recaptchaToken?: string };
  totpEnrollmentInfo?: Record<string, never>;
}

export interface FinalizeMfaEnrollmentRequest {
  idToken?: string;
  displayName?: string;
  phoneVerificationInfo?: PhoneVerificationInfo;
  totpVerificationInfo?: { sessionInfo?: string; verificationCode?: string };
}

export interface WithdrawMfaRequest {
  idToken?: string;
  mfaEnrollmentId?: string;
}

export interface StartMfaSignInRequest {
  mfaPendingCredential?: string;
  mfaEnrollmentId?: string;
  phoneSignInInfo?: { recaptchaToken?: string };
}

export interface FinalizeMfaSignInRequest {
  mfaPendingCredential?: string;
  mfaEnrollmentId?: string;
  phoneVerificationInfo?: PhoneVerificationInfo;
  totpVerificationInfo?: { verificationCode?: string };
  /** Hearth's: one of the account's recovery codes instead of a factor (no mfaEnrollmentId then). */
  recoveryCodeVerificationInfo?: { recoveryCode?: string };
}

/** What enrolment finalize, withdraw and sign-in finalize answer: the session's new tokens. */
export interface MfaTokens {
  idToken: string;
  refreshToken: string;
}

export interface TotpSessionInfo {
  sharedSecretKey: string;
  verificationCodeLength: number;
  hashingAlgorithm: string;
  periodSec: number;
  sessionInfo: string;
  /** RFC 3339: the enrolment must be finished by then. */
  finalizeEnrollmentTime: string;
}

export type StartMfaEnrollmentResponse = { phoneSessionInfo: { sessionInfo: string } } | { totpSessionInfo: TotpSessionInfo };
