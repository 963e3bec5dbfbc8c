import { getRedirectResult, type Auth } from 'firebase/auth';
import { isSilentAuthError } from './auth-errors';
import { forgetResume, resumeParam } from './pages/resume-store';
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
 * home page; a reauthentication came back to the account page that resumes the change it was for
 * (any of them: see resume-store.ts), which is forgotten if the reauthentication failed, and
 * which waits behind the second-factor page when the account has one.
 */
export async function completeRedirect(auth: Auth): Promise<RedirectOutcome> {
  try {
    const result = await getRedirectResult(auth);
    if (!result) return { error: null, notice: null, secondFactor: null };
    if (result.operationType === 'signIn') {
      if (signInPaths.has(window.location.pathname)) window.history.replaceState(null, '', '/');
      return { error: null, notice: null, secondFactor: null };
    }
    if (result.operationType === 'link') return { error: null, notice: 'The sign-in method was linked to your account.', secondFactor: null };
    return { error: null, notice: null, secondFactor: null };
  } catch (error: unknown) {
    const resolver = secondFactorResolver(auth, error);
    if (resolver) {
      // A reauthentication needing its second factor goes back to resume its change once done.
      const resuming = new URLSearchParams(window.location.search).has(resumeParam);
      const returnTo = resuming ? `${window.location.pathname}${window.location.search}` : '/';
      window.history.replaceState(null, '', secondFactorPath);
      return { error: null, notice: null, secondFactor: { resolver, returnTo } };
    }
    if (isSilentAuthError(error)) return { error: null, notice: null, secondFactor: null };
    // Nothing was confirmed: the account page must not try the change again.
    forgetResume();
    return { error, notice: null, secondFactor: null };
  }
}
