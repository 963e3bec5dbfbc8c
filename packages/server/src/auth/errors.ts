import { ApiError } from '../http/api-error.js';

/**
 * The identity error catalogue: every message the identity API can answer with, and its HTTP status.
 * The messages are the ones Google's Identity Toolkit sends, so the official SDK maps them to the
 * same `auth/*` codes (see shared/research/sdk-protocols.md §A.2).
 */
const catalogue = {
  // input
  INVALID_EMAIL: 400, // auth/invalid-email
  MISSING_EMAIL: 400, // auth/missing-email
  MISSING_PASSWORD: 400, // auth/missing-password
  WEAK_PASSWORD: 400, // auth/weak-password
  INVALID_IDENTIFIER: 400, // auth/invalid-email (createAuthUri)
  MISSING_IDENTIFIER: 400,
  MISSING_CONTINUE_URI: 400,
  INVALID_CONTINUE_URI: 400,
  MISSING_LOCAL_ID: 400,
  INVALID_LOCAL_ID: 400,
  MISSING_ID_TOKEN: 400,
  MISSING_REFRESH_TOKEN: 400,
  MISSING_GRANT_TYPE: 400,
  INVALID_GRANT_TYPE: 400,
  INVALID_PHOTO_URL: 400,
  INVALID_DISPLAY_NAME: 400,
  INVALID_CLAIMS: 400,
  CLAIMS_TOO_LARGE: 400,
  FORBIDDEN_CLAIM: 400,
  INVALID_PROVIDER_ID: 400,
  DUPLICATE_LOCAL_ID: 400,
  INVALID_PAGE_SELECTION: 400,
  // accounts and credentials
  EMAIL_EXISTS: 400, // auth/email-already-in-use
  EMAIL_NOT_FOUND: 400, // auth/user-not-found
  USER_NOT_FOUND: 400, // auth/user-token-expired (the user behind a token is gone)
  INVALID_PASSWORD: 400, // auth/wrong-password
  INVALID_LOGIN_CREDENTIALS: 400, // auth/invalid-credential (email enumeration protection on)
  USER_DISABLED: 400, // auth/user-disabled
  BLOCKING_FUNCTION_ERROR_RESPONSE: 400, // auth/internal-error with the function's message (a blocking function refused)
  CREDENTIAL_TOO_OLD_LOGIN_AGAIN: 400, // auth/requires-recent-login
  // action codes (email links)
  MISSING_REQ_TYPE: 400,
  INVALID_REQ_TYPE: 400, // auth/invalid-req-type
  MISSING_OOB_CODE: 400,
  INVALID_OOB_CODE: 400, // auth/invalid-action-code
  EXPIRED_OOB_CODE: 400, // auth/expired-action-code
  UNAUTHORIZED_DOMAIN: 400, // auth/unauthorized-continue-uri
  MISSING_NEW_EMAIL: 400,
  RESET_PASSWORD_EXCEED_LIMIT: 400, // auth/too-many-requests
  QUOTA_EXCEEDED: 400, // auth/quota-exceeded
  // federated sign-in
  FEDERATED_USER_ID_ALREADY_LINKED: 400, // auth/credential-already-in-use
  PROVIDER_ALREADY_LINKED: 400, // auth/provider-already-linked
  MISSING_REQUEST_URI: 400,
  // provider configuration (admin)
  CONFIGURATION_EXISTS: 409, // firebase-admin auth/configuration-exists
  CONFIGURATION_NOT_FOUND: 404, // firebase-admin auth/configuration-not-found
  INVALID_CONFIG: 400, // firebase-admin auth/invalid-config
  INVALID_CONFIG_ID: 400, // firebase-admin auth/invalid-provider-id
  INVALID_IDP_RESPONSE: 400, // auth/invalid-credential
  MISSING_OR_INVALID_NONCE: 400, // auth/missing-or-invalid-nonce
  INVALID_PENDING_TOKEN: 400, // auth/invalid-credential
  // tokens
  INVALID_ID_TOKEN: 400, // auth/invalid-user-token
  TOKEN_EXPIRED: 400, // auth/user-token-expired
  INVALID_REFRESH_TOKEN: 400, // auth/invalid-user-token... via fallback auth/invalid-refresh-token
  MISSING_CUSTOM_TOKEN: 400, // auth/internal-error (the SDK always sends one)
  INVALID_CUSTOM_TOKEN: 400, // auth/invalid-custom-token
  CREDENTIAL_MISMATCH: 400, // auth/custom-token-mismatch
  INVALID_SESSION_COOKIE_DURATION: 400, // firebase-admin auth/invalid-session-cookie-duration
  // password policy
  PASSWORD_DOES_NOT_MEET_REQUIREMENTS: 400, // auth/password-does-not-meet-requirements
  // project and permissions
  OPERATION_NOT_ALLOWED: 400, // auth/operation-not-allowed
  PASSWORD_LOGIN_DISABLED: 400, // auth/operation-not-allowed
  ADMIN_ONLY_OPERATION: 400, // auth/admin-restricted-operation
  INVALID_API_KEY: 400, // auth/invalid-api-key
  PROJECT_NOT_FOUND: 400,
  INSUFFICIENT_PERMISSION: 403,
  UNSUPPORTED_TENANT_OPERATION: 400, // auth/unsupported-tenant-operation
  // tenants (Identity Platform multi-tenancy)
  TENANT_NOT_FOUND: 400, // auth/tenant-not-found (firebase-admin: the same)
  TENANT_ID_MISMATCH: 400, // auth/tenant-id-mismatch (firebase-admin: auth/mismatching-tenant-id)
  INVALID_TENANT_ID: 400, // auth/invalid-tenant-id
  PROJECT_DISABLED: 400, // auth/project-disabled: a tenant with disableAuth
  // throttling
  TOO_MANY_ATTEMPTS_TRY_LATER: 400, // auth/too-many-requests
  // phone numbers and SMS codes (TOTP codes too)
  INVALID_PHONE_NUMBER: 400, // auth/invalid-phone-number (firebase-admin: the same)
  MISSING_PHONE_NUMBER: 400, // auth/missing-phone-number
  PHONE_NUMBER_EXISTS: 400, // firebase-admin auth/phone-number-already-exists
  MISSING_CODE: 400, // auth/missing-code (the SDK always sends one)
  INVALID_CODE: 400, // auth/invalid-verification-code
  SESSION_EXPIRED: 400, // auth/code-expired
  MISSING_SESSION_INFO: 400, // auth/missing-verification-id
  INVALID_SESSION_INFO: 400, // auth/invalid-verification-id
  INVALID_TEMPORARY_PROOF: 400, // auth/invalid-credential
  // proof of a person (Hearth's reCAPTCHA stand-in)
  MISSING_RECAPTCHA_TOKEN: 400, // auth/missing-recaptcha-token
  CAPTCHA_CHECK_FAILED: 400, // auth/captcha-check-failed
  // multi-factor authentication
  INVALID_ARGUMENT: 400, // auth/invalid-argument
  UNVERIFIED_EMAIL: 400, // auth/unverified-email
  UNSUPPORTED_FIRST_FACTOR: 400, // auth/unsupported-first-factor
  SECOND_FACTOR_EXISTS: 400, // auth/second-factor-already-in-use
  SECOND_FACTOR_LIMIT_EXCEEDED: 400, // auth/maximum-second-factor-count-exceeded
  MISSING_MFA_PENDING_CREDENTIAL: 400, // auth/missing-multi-factor-session
  MISSING_CREDENTIAL: 400, // (mfaSignIn:finalize without a pending credential, as Google answers)
  INVALID_MFA_PENDING_CREDENTIAL: 400, // auth/invalid-multi-factor-session
  MISSING_MFA_ENROLLMENT_ID: 400, // auth/missing-multi-factor-info
  MFA_ENROLLMENT_NOT_FOUND: 400, // auth/multi-factor-info-not-found
  INVALID_MFA_PHONE_NUMBER: 400, // firebase-admin auth/invalid-phone-number (admin-set factors)
  INVALID_MFA_ENROLLMENT_ID: 400, // firebase-admin auth/invalid-uid
  DUPLICATE_MFA_ENROLLMENT_ID: 400,
  // passkeys (the names of Google's Auth emulator where it has one)
  MISSING_AUTHENTICATOR_RESPONSE: 400,
  INVALID_AUTHENTICATOR_RESPONSE: 400,
  INVALID_CREDENTIAL_ID: 400,
  CREDENTIAL_ALREADY_IN_USE: 400,
  PASSKEY_CREDENTIAL_NOT_FOUND: 400,
  INVALID_CHALLENGE: 400,
  INVALID_ORIGIN: 400,
  PASSKEY_LIMIT_EXCEEDED: 400,
  INVALID_ENROLLMENT_TIME: 400, // firebase-admin auth/invalid-enrollment-time
} as const;

export type AuthErrorCode = keyof typeof catalogue;

/** Optional human text the SDK shows after ` : ` (e.g. for WEAK_PASSWORD). */
const details: Partial<Record<AuthErrorCode, string>> = {
  WEAK_PASSWORD: 'Password should be at least 6 characters',
  INVALID_API_KEY: 'API key not valid. Please pass a valid API key.',
  CREDENTIAL_MISMATCH: 'The custom token corresponds to a different audience.',
  TOO_MANY_ATTEMPTS_TRY_LATER:
    'Access to this account has been temporarily disabled due to many failed login attempts. You can immediately restore it by resetting your password or you can try again later.',
};

/** The SDK's own text for auth/too-many-requests: TOO_MANY_ATTEMPTS' default speaks of failed sign-ins. */
const tooManySmsDetail = 'We have blocked all requests from this device due to unusual activity. Try again later.';

/** Too many requests of one kind from one client address (auth/too-many-requests), in Google's words. */
export function tooManyRequestsFromDevice(): ApiError {
  return authError('TOO_MANY_ATTEMPTS_TRY_LATER', tooManySmsDetail);
}

/** Too many SMS sent from one client address (auth/too-many-requests). */
export function tooManySmsRequests(): ApiError {
  return authError('TOO_MANY_ATTEMPTS_TRY_LATER', tooManySmsDetail);
}

/**
 * The SMS provider could not take a message (down, or refusing Hearth's credentials): a 503 the
 * SDK shows as auth/internal-error with this text, not the caller's fault.
 */
export function smsNotDelivered(detail: string): ApiError {
  return new ApiError(503, `INTERNAL_ERROR : The text message could not be sent (${detail}); try again later.`, 'UNAVAILABLE', true);
}

/**
 * An identity route Hearth does not serve: Google's error JSON with a message the SDK maps to
 * auth/operation-not-allowed (a bare "not found" would surface as auth/no-route-for-post-...).
 */
export function unservedIdentityRoute(method: string, path: string): ApiError {
  const shown = path.length > 200 ? `${path.slice(0, 200)}...` : path;
  return new ApiError(404, `OPERATION_NOT_ALLOWED : Hearth does not serve ${method} ${shown}.`, 'NOT_FOUND', true);
}

export function authError(code: AuthErrorCode, detail?: string): ApiError {
  const text = detail ?? details[code];
  const message = text ? `${code} : ${text}` : code;
  return new ApiError(catalogue[code], message, undefined, true);
}
