import { onAuthStateChanged, type Auth, type User } from 'firebase/auth';
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import type { ProviderInfo } from './firebase';
import type { RedirectOutcome } from './redirect';

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
}

const AuthContext = createContext<AuthState | null>(null);

const nothing: RedirectOutcome = { error: null, notice: null };

export interface AuthProviderProps {
  auth: Auth;
  providers: readonly ProviderInfo[];
  redirect: RedirectOutcome;
  children: ReactNode;
}

export function AuthProvider({ auth, providers, redirect: initialRedirect, children }: AuthProviderProps) {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [redirect, setRedirect] = useState<RedirectOutcome>(initialRedirect);
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
  const refresh = useCallback(() => setRevision((r) => r + 1), []);
  const dismissRedirect = useCallback(() => setRedirect(nothing), []);
  return <AuthContext.Provider value={{ auth, user, refresh, providers, redirect, dismissRedirect }}>{children}</AuthContext.Provider>;
}

export function useAuthState(): AuthState {
  const state = useContext(AuthContext);
  if (!state) throw new Error('useAuthState outside AuthProvider');
  return state;
}
