import {
  OAuthProvider,
  linkWithPopup,
  linkWithRedirect,
  reauthenticateWithPopup,
  reauthenticateWithRedirect,
  signInWithPopup,
  signInWithRedirect,
  type Auth,
  type User,
  type UserCredential,
} from 'firebase/auth';
import { errorCode } from './auth-errors';
import type { ProviderInfo } from './firebase';
import { forgetResume, keepForResume, type ResumableAction } from './pages/resume-store';

/**
 * Federated sign-in, linking and reauthentication: in a popup, or, when the browser blocks the
 * popup, by sending this tab to the provider. A redirect never resolves here (the page goes
 * away); its outcome is read when the app starts again (see redirect.ts).
 */
async function popupOrRedirect(popup: () => Promise<UserCredential>, redirect: () => Promise<void>): Promise<UserCredential | null> {
  try {
    return await popup();
  } catch (error: unknown) {
    if (errorCode(error) !== 'auth/popup-blocked') throw error;
  }
  await redirect();
  return null;
}

export function signInWithProvider(auth: Auth, providerId: string): Promise<UserCredential | null> {
  const provider = new OAuthProvider(providerId);
  return popupOrRedirect(
    () => signInWithPopup(auth, provider),
    () => signInWithRedirect(auth, provider),
  );
}

export function linkProvider(user: User, providerId: string): Promise<UserCredential | null> {
  const provider = new OAuthProvider(providerId);
  return popupOrRedirect(
    () => linkWithPopup(user, provider),
    () => linkWithRedirect(user, provider),
  );
}

/**
 * Proves the user again with one of its providers: true once done by popup; false when the tab is
 * being sent to the provider instead. Before a redirect, `action` is kept for resuming and the
 * page's address becomes the account page that resumes it (the SDK comes back to the address the
 * redirect left from); redirect.ts forgets it if the reauthentication fails.
 */
export async function reauthenticateWithProvider(user: User, providerId: string, action: ResumableAction): Promise<boolean> {
  const provider = new OAuthProvider(providerId);
  const result = await popupOrRedirect(
    () => reauthenticateWithPopup(user, provider),
    async () => {
      const left = window.location.href;
      window.history.replaceState(window.history.state, '', keepForResume(user.uid, action));
      try {
        await reauthenticateWithRedirect(user, provider);
      } catch (error: unknown) {
        forgetResume();
        window.history.replaceState(window.history.state, '', left);
        throw error;
      }
    },
  );
  return result !== null;
}

/** Providers that sign in through the handler (not the password or phone ones). */
export function isFederated(providerId: string): boolean {
  return providerId !== 'password' && providerId !== 'phone' && providerId !== 'emailLink';
}

/** What the app calls a sign-in method. */
export function methodName(providerId: string, providers: readonly ProviderInfo[]): string {
  if (providerId === 'password') return 'Email and password';
  if (providerId === 'phone') return 'Phone';
  if (providerId === 'anonymous') return 'Guest';
  // A provider no longer offered keeps a readable name: `oidc.acme` reads "Acme".
  const offered = providers.find((p) => p.providerId === providerId)?.displayName;
  if (offered) return offered;
  const bare = providerId.replace(/^(oidc|saml)\./, '').replace(/\.com$/, '');
  return bare.charAt(0).toUpperCase() + bare.slice(1);
}
