import { useCallback } from 'react';
import { useNavigate } from 'react-router';
import { useAuthState } from '../auth-context';
import { secondFactorPath, secondFactorResolver } from './resolver';

/**
 * Wraps a first-factor sign-in: when the account has second factors, the SDK's
 * multi-factor-auth-required becomes the second-factor page (which then goes to `returnTo`);
 * answers whether the sign-in is complete here. Any other error is thrown on.
 */
export function useSignInGate(): (returnTo: string, signIn: () => Promise<unknown>) => Promise<boolean> {
  const { auth, startSecondFactor } = useAuthState();
  const navigate = useNavigate();
  return useCallback(
    async (returnTo, signIn) => {
      try {
        await signIn();
        return true;
      } catch (error: unknown) {
        const resolver = secondFactorResolver(auth, error);
        if (!resolver) throw error;
        startSecondFactor({ resolver, returnTo });
        await navigate(secondFactorPath);
        return false;
      }
    },
    [auth, startSecondFactor, navigate],
  );
}
