import { onAuthStateChanged, type Auth, type User } from 'firebase/auth';
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';

export interface AuthState {
  auth: Auth;
  /** undefined while the SDK is still restoring a saved session. */
  user: User | null | undefined;
  /** Re-renders after the current user changed in place (updateProfile does not fire onAuthStateChanged). */
  refresh: () => void;
}

const AuthContext = createContext<AuthState | null>(null);

export function AuthProvider({ auth, children }: { auth: Auth; children: ReactNode }) {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [, setRevision] = useState(0);
  useEffect(() => onAuthStateChanged(auth, (next) => {
    setUser(next);
    setRevision((r) => r + 1);
  }), [auth]);
  const refresh = useCallback(() => setRevision((r) => r + 1), []);
  return <AuthContext.Provider value={{ auth, user, refresh }}>{children}</AuthContext.Provider>;
}

export function useAuthState(): AuthState {
  const state = useContext(AuthContext);
  if (!state) throw new Error('useAuthState outside AuthProvider');
  return state;
}
