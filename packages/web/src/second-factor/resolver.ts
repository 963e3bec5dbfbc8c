import { getMultiFactorResolver, type Auth, type MultiFactorError, type MultiFactorResolver } from 'firebase/auth';
import { errorCode } from '../auth-errors';

/** A first factor that succeeded on an account with second factors: what the second-factor page finishes. */
export interface PendingSecondFactor {
  resolver: MultiFactorResolver;
  /** Where to go once signed in. */
  returnTo: string;
}

/** The resolver for a sign-in that needs a second factor, or null for any other outcome. */
export function secondFactorResolver(auth: Auth, error: unknown): MultiFactorResolver | null {
  if (errorCode(error) !== 'auth/multi-factor-auth-required') return null;
  return getMultiFactorResolver(auth, error as MultiFactorError);
}

export const secondFactorPath = '/signin/second-factor';
