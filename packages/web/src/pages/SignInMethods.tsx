import { unlink, type User } from 'firebase/auth';
import { useState } from 'react';
import { providerErrorOverrides } from '../auth-errors';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { useStatus, useTask } from '../components/useAction';
import { linkProvider, methodName } from '../federated';

/**
 * The ways this account can sign in (its providerData): unlink any while another remains, and
 * link each provider the server offers that is not linked yet (popup, or redirect if blocked).
 */
export function SignInMethods({ user }: { user: User }) {
  const { providers, refresh, redirect, dismissRedirect } = useAuthState();
  const { busy, error, run } = useTask();
  const [done, setDone] = useStatus();
  const linked = new Set(user.providerData.map((info) => info.providerId));
  const linkable = providers.filter((provider) => !linked.has(provider.providerId));
  const canUnlink = user.providerData.length > 1;

  const start = (work: () => Promise<string | null>) =>
    run(async () => {
      setDone(null);
      dismissRedirect();
      const said = await work();
      refresh();
      setDone(said);
    });
  const onUnlink = (providerId: string) =>
    start(async () => {
      await unlink(user, providerId);
      return `${methodName(providerId, providers)} was unlinked from your account.`;
    });
  const onLink = (providerId: string) =>
    start(async () => {
      const result = await linkProvider(user, providerId);
      return result ? `${methodName(providerId, providers)} was linked to your account.` : null;
    });

  return (
    <section className="card" aria-labelledby="methods-heading">
      <h2 id="methods-heading">Sign-in methods</h2>
      <ul className="methods">
        {user.providerData.map((info) => {
          const name = methodName(info.providerId, providers);
          return (
            <li key={info.providerId} data-testid={`sign-in-method-${info.providerId}`}>
              <span>
                {name}
                {info.email && info.providerId !== 'password' ? <span className="muted"> · {info.email}</span> : null}
              </span>
              {canUnlink && (
                <button type="button" className="secondary" aria-label={`Unlink ${name}`} disabled={busy} onClick={() => void onUnlink(info.providerId)}>
                  Unlink
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {user.providerData.length === 0 && <p>This account has no sign-in method yet.</p>}
      {linkable.map((provider) => (
        <button key={provider.providerId} type="button" className="provider" disabled={busy} onClick={() => void onLink(provider.providerId)}>
          Link {provider.displayName}
        </button>
      ))}
      <ErrorAlert error={error ?? redirect.error} overrides={providerErrorOverrides} />
      <StatusMessage>{done ?? redirect.notice}</StatusMessage>
    </section>
  );
}
