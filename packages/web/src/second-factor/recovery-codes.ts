import type { Auth, MultiFactorAssertion, User } from 'firebase/auth';

/**
 * Recovery codes: Hearth's own calls (docs/IDENTITY.md), which the Firebase SDK does not make.
 *
 * Signing in with one goes through the SDK's MultiFactorResolver all the same: the server takes
 * the code on the very call a factor finishes on (v2 accounts/mfaSignIn:finalize, with
 * `recoveryCodeVerificationInfo`) and answers the same idToken and refreshToken, so an assertion
 * that makes that call lets resolver.resolveSignIn do the rest exactly as for an authenticator
 * code: the SDK builds the user, makes it the current one (or, when confirming it is them,
 * checks it is the same account), and persists it. The SDK has no public way to take tokens got
 * outside it; signInWithCustomToken would need a custom token only a service account's private
 * key can sign, would name `custom` as the sign-in method, and could not finish a reauthentication.
 * The resolver calls `_process(auth, session)` on the assertion: the one SDK-internal name this
 * relies on (firebase 12), covered by the Chromium test that signs in with a code.
 */
export const recoveryCodeFactorId = 'recovery_code';

interface IdentityError extends Error {
  code: string;
}

/** Server messages -> the SDK's codes, so the page's sentences (auth-errors.ts) and recent-sign-in handling apply. */
const codes: Record<string, string> = {
  INVALID_CODE: 'auth/invalid-verification-code',
  MISSING_CODE: 'auth/missing-code',
  TOO_MANY_ATTEMPTS_TRY_LATER: 'auth/too-many-requests',
  INVALID_MFA_PENDING_CREDENTIAL: 'auth/invalid-multi-factor-session',
  MISSING_CREDENTIAL: 'auth/missing-multi-factor-session',
  CREDENTIAL_TOO_OLD_LOGIN_AGAIN: 'auth/requires-recent-login',
  MFA_ENROLLMENT_NOT_FOUND: 'auth/multi-factor-info-not-found',
  OPERATION_NOT_ALLOWED: 'auth/operation-not-allowed',
  USER_DISABLED: 'auth/user-disabled',
  TOKEN_EXPIRED: 'auth/user-token-expired',
};

async function call<T>(auth: Auth, path: string, body: Record<string, unknown>): Promise<T> {
  const apiKey = auth.app.options.apiKey ?? '';
  let response: Response;
  try {
    response = await fetch(`/identitytoolkit.googleapis.com/v2/accounts/${path}?key=${encodeURIComponent(apiKey)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(auth.tenantId ? { ...body, tenantId: auth.tenantId } : body),
    });
  } catch {
    throw identityError('auth/network-request-failed');
  }
  const answer = (await response.json().catch(() => ({}))) as T & { error?: { message?: string } };
  if (!response.ok) {
    const message = answer.error?.message ?? '';
    throw identityError(codes[message.split(' : ')[0]!.trim()] ?? 'auth/internal-error', message);
  }
  return answer;
}

function identityError(code: string, message = code): IdentityError {
  return Object.assign(new Error(message), { code });
}

/** For resolver.resolveSignIn: finishes the second step with a recovery code instead of a factor. */
export function recoveryCodeAssertion(code: string): MultiFactorAssertion {
  const assertion = {
    factorId: recoveryCodeFactorId,
    _process: (auth: Auth, session: { credential: string }) =>
      call<{ idToken: string; refreshToken: string }>(auth, 'mfaSignIn:finalize', { mfaPendingCredential: session.credential, recoveryCodeVerificationInfo: { recoveryCode: code } }),
  };
  return assertion as unknown as MultiFactorAssertion;
}

export interface RecoveryCodesStatus {
  remainingCount: number;
  generateTime?: string;
}

/** A new set (replacing any old one): shown once. Needs a recent sign-in that passed the second step. */
export async function generateRecoveryCodes(auth: Auth, user: User): Promise<string[]> {
  const answer = await call<{ recoveryCodes: string[] }>(auth, 'recoveryCodes:generate', { idToken: await user.getIdToken() });
  return answer.recoveryCodes;
}

/** How many unused codes the account has. */
export async function recoveryCodesStatus(auth: Auth, user: User): Promise<RecoveryCodesStatus> {
  return call<RecoveryCodesStatus>(auth, 'recoveryCodes:lookup', { idToken: await user.getIdToken() });
}
