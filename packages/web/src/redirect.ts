import { deleteUser, getRedirectResult, type Auth } from 'firebase/auth';
import { isSilentAuthError } from './auth-errors';
import { takeDeleteAfterReauth } from './federated';
import { secondFactorPath, secondFactorResolver, type PendingSecondFactor } from './second-factor/resolver';

/** What came of a sign-in, link or reauthentication by redirect that brought this page back. */
export interface RedirectOutcome {
  /** Its error (shown on the sign-in and account pages), or null. */
  error: unknown;
  /** A sentence saying what it did, or null. */
  notice: string | null;
  /** A sign-in that needs its second factor (the app opens on the second-factor page), or null. */
  secondFactor: PendingSecondFactor | null;
}

const signInPaths = new Set(['/signin', '/signup']);

/**
 * Runs once when the app starts, before the first render: reads the redirect result (the SDK
 * completes it while it starts) and finishes what the redirect was for. A sign-in lands on the
 * home page; a reauthentication started to delete the account deletes it.
 */
export async function completeRedirect(auth: Auth): Promise<RedirectOutcome> {
  const deleteUid = takeDeleteAfterReauth();
  try {
    const result = await getRedirectResult(auth);
    if (!result) return { error: null, notice: null, secondFactor: null };
    if (result.operationType === 'signIn') {
      if (signInPaths.has(window.location.pathname)) window.history.replaceState(null, '', '/');
      return { error: null, notice: null, secondFactor: null };
    }
    if (result.operationType === 'link') return { error: null, notice: 'The sign-in method was linked to your account.', secondFactor: null };
    if (deleteUid !== null && deleteUid === result.user.uid) {
      await deleteUser(result.user);
      window.history.replaceState(null, '', '/');
      return { error: null, notice: 'Your account was deleted.', secondFactor: null };
    }
    return { error: null, notice: null, secondFactor: null };
  } catch (error: unknown) {
    const resolver = secondFactorResolver(auth, error);
    if (resolver) {
      window.history.replaceState(null, '', secondFactorPath);
      return { error: null, notice: null, secondFactor: { resolver, returnTo: '/' } };
    }
    return { error: isSilentAuthError(error) ? null : error, notice: null, secondFactor: null };
  }
}
