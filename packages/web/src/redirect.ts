import { deleteUser, getRedirectResult, type Auth } from 'firebase/auth';
import { isSilentAuthError } from './auth-errors';
import { takeDeleteAfterReauth } from './federated';

/** What came of a sign-in, link or reauthentication by redirect that brought this page back. */
export interface RedirectOutcome {
  /** Its error (shown on the sign-in and account pages), or null. */
  error: unknown;
  /** A sentence saying what it did, or null. */
  notice: string | null;
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
    if (!result) return { error: null, notice: null };
    if (result.operationType === 'signIn') {
      if (signInPaths.has(window.location.pathname)) window.history.replaceState(null, '', '/');
      return { error: null, notice: null };
    }
    if (result.operationType === 'link') return { error: null, notice: 'The sign-in method was linked to your account.' };
    if (deleteUid !== null && deleteUid === result.user.uid) {
      await deleteUser(result.user);
      window.history.replaceState(null, '', '/');
      return { error: null, notice: 'Your account was deleted.' };
    }
    return { error: null, notice: null };
  } catch (error: unknown) {
    return { error: isSilentAuthError(error) ? null : error, notice: null };
  }
}
