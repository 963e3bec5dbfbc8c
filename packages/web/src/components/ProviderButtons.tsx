import { providerErrorOverrides } from '../auth-errors';
import { useAuthState } from '../auth-context';
import { signInWithProvider } from '../federated';
import { ErrorAlert } from './ErrorAlert';
import { useSignInGate } from '../second-factor/gate';
import { useTask } from './useAction';

export interface ProviderButtonsProps {
  /** Runs first (the sign-in page applies its "remember me" choice; a redirect cannot carry it). */
  before?: () => Promise<void>;
  /** Runs after a sign-in in a popup. */
  onSignedIn: () => void | Promise<void>;
  /** Where the second-factor page goes when the account needs one (default: home). */
  returnTo?: string;
}

/**
 * "Sign in with …" for each provider the server offers: a popup, or this tab goes to the
 * provider when the browser blocks popups. Also says what went wrong with a sign-in by redirect
 * that brought this page back.
 */
export function ProviderButtons({ before, onSignedIn, returnTo = '/' }: ProviderButtonsProps) {
  const { auth, providers, redirect, dismissRedirect } = useAuthState();
  const { busy, error, run } = useTask();
  const gate = useSignInGate();
  if (providers.length === 0 && !redirect.error) return null;
  const signIn = (providerId: string) =>
    run(async () => {
      dismissRedirect();
      await before?.();
      // A popup answers here; a redirect leaves the page (its outcome is read on return).
      let signedInHere = false;
      const complete = await gate(returnTo, async () => {
        signedInHere = (await signInWithProvider(auth, providerId)) !== null;
      });
      if (complete && signedInHere) await onSignedIn();
    });
  return (
    <div className="providers" role="group" aria-label="Sign in with a provider">
      {providers.length > 0 && <p className="divider">or</p>}
      {providers.map((provider) => (
        <button key={provider.providerId} type="button" className="provider" disabled={busy} onClick={() => void signIn(provider.providerId)}>
          Sign in with {provider.displayName}
        </button>
      ))}
      <ErrorAlert error={error ?? redirect.error} overrides={providerErrorOverrides} />
    </div>
  );
}
