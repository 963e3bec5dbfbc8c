/** Plain sentences for the Auth SDK's error codes. Every message the UI shows comes from here. */
const messages: Record<string, string> = {
  'auth/invalid-email': 'That email address is not valid.',
  'auth/missing-email': 'Please enter your email address.',
  'auth/missing-password': 'Please enter your password.',
  'auth/weak-password': 'That password is too weak. Use at least 6 characters.',
  'auth/email-already-in-use': 'An account with that email address already exists.',
  'auth/wrong-password': 'Wrong password.',
  'auth/invalid-credential': 'Wrong email or password.',
  'auth/invalid-login-credentials': 'Wrong email or password.',
  'auth/user-not-found': 'There is no account with that email address.',
  'auth/user-disabled': 'This account has been disabled.',
  'auth/too-many-requests': 'Too many attempts. Please wait a while and try again.',
  'auth/requires-recent-login': 'For your security, please sign in again before doing that.',
  'auth/operation-not-allowed': 'Signing in this way is turned off for this site.',
  'auth/network-request-failed': 'Could not reach the server. Check your connection and try again.',
  'auth/invalid-api-key': 'This site is set up with an API key the server does not accept.',
  'auth/api-key-not-valid.-please-pass-a-valid-api-key.': 'This site is set up with an API key the server does not accept.',
  'auth/admin-restricted-operation': 'New accounts cannot be created here right now.',
  'auth/user-token-expired': 'Your session has expired. Please sign in again.',
  'auth/invalid-user-token': 'Your session is no longer valid. Please sign in again.',
  'auth/user-mismatch': 'Those sign-in details belong to a different account than the one signed in here.',
  'auth/quota-exceeded': 'The server is busy. Please try again later.',
  'auth/internal-error': 'Something went wrong on the server. Please try again.',
  'auth/password-does-not-meet-requirements': 'That password does not meet this site’s password rules.',
  // Sign-in with a provider (popup or redirect), linking and unlinking.
  'auth/popup-closed-by-user': 'The sign-in window was closed before finishing.',
  'auth/popup-blocked': 'The browser blocked the sign-in window. Allow pop-ups for this site and try again.',
  'auth/cancelled-popup-request': 'Another sign-in window was opened, so this one was stopped.',
  'auth/user-cancelled': 'Signing in was cancelled at the provider.',
  'auth/account-exists-with-different-credential':
    'An account already exists with this email. Sign in with your password, then link this provider from your account page.',
  'auth/credential-already-in-use': 'That account at the provider is already linked to another user of this site.',
  'auth/provider-already-linked': 'That sign-in method is already linked to your account.',
  'auth/no-such-provider': 'That sign-in method is not linked to your account.',
  'auth/unauthorized-domain': 'This site’s address is not allowed to sign in with a provider. Open the site at its usual address, or ask its administrator to authorize this one.',
  'auth/missing-or-invalid-nonce': 'The provider’s answer could not be verified. Please try again.',
  'auth/web-storage-unsupported': 'This browser blocks the storage that signing in with a provider needs. Allow site data and try again.',
  'auth/invalid-auth-event': 'The sign-in window sent an answer this page did not expect. Please try again.',
  // Passkeys (passkeys.ts).
  'auth/passkey-not-found': 'This passkey is not registered for any account here. It may have been removed.',
  'auth/passkey-refused': 'The passkey could not be verified. Please try again.',
  'auth/passkey-cancelled': 'No passkey was used. The request was cancelled or timed out.',
  'auth/passkey-already-added': 'This passkey is already on your account.',
  'auth/passkey-limit': 'Your account has as many passkeys as it can hold. Remove one first.',
  'auth/passkey-other-account': 'That passkey belongs to another account. Use a passkey of the account you are signed in to; confirming cannot switch accounts.',
  // Phone numbers, text-message codes and the human check.
  'auth/invalid-phone-number': 'That phone number is not valid. Include the country code, like +1 555 010 0123.',
  'auth/missing-phone-number': 'Please enter your phone number.',
  'auth/invalid-verification-code': 'That code is not right. Check the message and try again.',
  'auth/missing-verification-code': 'Please enter the code.',
  'auth/code-expired': 'That code has expired. Ask for a new one.',
  'auth/invalid-verification-id': 'That code request is no longer valid. Ask for a new code.',
  'auth/missing-verification-id': 'Ask for a code first.',
  'auth/captcha-check-failed': 'The check that you are a person did not pass. Please try again.',
  'auth/missing-recaptcha-token': 'The check that you are a person did not run. Please try again.',
  'auth/invalid-recaptcha-token': 'The check that you are a person did not pass. Please try again.',
  // Two-step verification.
  'auth/unverified-email': 'Verify your email address before turning on two-step verification.',
  'auth/second-factor-already-in-use': 'That second step is already on your account.',
  'auth/maximum-second-factor-count-exceeded': 'Your account has as many second steps as it can have. Remove one first.',
  'auth/invalid-multi-factor-session': 'This sign-in took too long. Please start again.',
  'auth/missing-multi-factor-session': 'This sign-in took too long. Please start again.',
  'auth/multi-factor-info-not-found': 'That second step is no longer on your account.',
  'auth/unsupported-first-factor': 'Two-step verification cannot be used with this way of signing in.',
  // Email actions: mailed links and the hosted action page.
  'auth/expired-action-code': 'This link has expired. Ask for a new one.',
  'auth/invalid-action-code': 'This link is invalid or has already been used.',
  'auth/argument-error': 'This link is incomplete or broken.',
  'auth/unauthorized-continue-uri': 'The page this link should return to is not on this site’s list of allowed addresses.',
  'auth/invalid-continue-uri': 'The page this link should return to is not a valid web address.',
  'auth/missing-continue-uri': 'The request did not say which page the link should return to.',
  'auth/missing-new-email': 'Please enter the new email address.',
  'auth/unsupported-tenant-operation': 'This link belongs to a tenant, and this server does not support tenants.',
  'auth/invalid-tenant-id': 'This link belongs to a tenant this server does not know.',
  'auth/tenant-id-mismatch': 'This link belongs to a different tenant than the one you are signed in to.',
};

const fallback = 'Something went wrong. Please try again.';

/** Outcomes that are not failures worth a sentence: "no redirect happened". */
const silentCodes = new Set(['auth/no-auth-event']);

/** The error's auth/* code, lower case, if it has one. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const code = (error as { code: unknown }).code;
  return typeof code === 'string' ? code.toLowerCase() : undefined;
}

/** Whether the UI should say nothing about this error. */
export function isSilentAuthError(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && silentCodes.has(code);
}

/** Sentences that say more than the general one where a page knows the context, by code. */
export type ErrorOverrides = Readonly<Record<string, string>>;

/** With a provider, "invalid credential" means its answer failed checks, not a wrong password. */
export const providerErrorOverrides: ErrorOverrides = {
  'auth/invalid-credential': 'The provider’s answer could not be verified. Please try again.',
  'auth/user-mismatch': 'You signed in at the provider as someone else. Use the account linked here and try again.',
};

/** A sentence for a FirebaseError (or anything thrown); never the raw code. */
export function describeAuthError(error: unknown, overrides: ErrorOverrides = {}): string {
  const code = errorCode(error);
  return (code !== undefined && (overrides[code] ?? messages[code])) || fallback;
}
