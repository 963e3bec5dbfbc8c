import { onAuthStateChanged, onIdTokenChanged, type Auth, type User } from 'firebase/auth';
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { onActionStart } from './components/page-activity';
import type { ProviderInfo } from './firebase';
import type { RedirectOutcome } from './redirect';
import type { PendingSecondFactor } from './second-factor/resolver';

export interface AuthState {
  auth: Auth;
  /** undefined while the SDK is still restoring a saved session. */
  user: User | null | undefined;
  /** Re-renders after the current user changed in place (updateProfile does not fire onAuthStateChanged). */
  refresh: () => void;
  /** Federated providers the server offers ("Sign in with …" buttons). */
  providers: readonly ProviderInfo[];
  /** What the redirect that brought this page back did, until dismissed. */
  redirect: RedirectOutcome;
  /** Forgets the redirect's outcome (a new attempt starts). */
  dismissRedirect: () => void;
  /** A sign-in waiting for its second factor (the second-factor page finishes it), or null. */
  secondFactor: PendingSecondFactor | null;
  startSecondFactor: (pending: PendingSecondFactor | null) => void;
}

const AuthContext = createContext<AuthState | null>(null);

const nothing: RedirectOutcome = { error: null, notice: null, secondFactor: null };

export interface AuthProviderProps {
  auth: Auth;
  providers: readonly ProviderInfo[];
  redirect: RedirectOutcome;
  children: ReactNode;
}

export function AuthProvider({ auth, providers, redirect: initialRedirect, children }: AuthProviderProps) {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [redirect, setRedirect] = useState<RedirectOutcome>(initialRedirect);
  // A sign-in by redirect may itself come back needing a second factor.
  const [secondFactor, startSecondFactor] = useState<PendingSecondFactor | null>(initialRedirect.secondFactor);
  const [, setRevision] = useState(0);
  useEffect(() => {
    // The redirect's outcome describes the user the app started with; a later change makes it stale.
    let first = true;
    return onAuthStateChanged(auth, (next) => {
      setUser(next);
      setRevision((r) => r + 1);
      if (!first) setRedirect(nothing);
      first = false;
    });
  }, [auth]);
  useEffect(
    () =>
      // Signing in again as the same account (an email link opened to confirm it is them) makes a
      // new User object without an auth state change; pages must act with the new one's tokens.
      onIdTokenChanged(auth, (next) => {
        if (next) setUser((current) => (current && current.uid === next.uid ? next : current));
      }),
    [auth],
  );
  // The redirect's outcome is a message like any other: the next action on the page clears it.
  useEffect(() => onActionStart(() => setRedirect(nothing)), []);
  const refresh = useCallback(() => setRevision((r) => r + 1), []);
  const dismissRedirect = useCallback(() => setRedirect(nothing), []);
  return <AuthContext.Provider value={{ auth, user, refresh, providers, redirect, dismissRedirect, secondFactor, startSecondFactor }}>{children}</AuthContext.Provider>;
}

export function useAuthState(): AuthState {
  const state = useContext(AuthContext);
  if (!state) throw new Error('useAuthState outside AuthProvider');
  return state;
}
