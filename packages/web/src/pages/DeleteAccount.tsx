import { deleteUser, type User } from 'firebase/auth';
import { useState } from 'react';
import { providerErrorOverrides } from '../auth-errors';
import { useAuthState } from '../auth-context';
import { ErrorAlert } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction } from '../components/useAction';
import { isFederated, methodName, reauthenticateToDelete } from '../federated';
import { hasPassword, reauthenticateWithPassword } from './reauthenticate';

/**
 * Deletes the account after a fresh proof of identity: the password if the account has one,
 * else a sign-in with one of its providers (popup, or redirect when popups are blocked; the
 * deletion then finishes when the app starts again, see redirect.ts).
 */
export function DeleteAccount({ user, onDeleting }: { user: User; onDeleting: (deleting: boolean) => void }) {
  const { providers } = useAuthState();
  const [password, setPassword] = useState('');
  const [confirmed, setConfirmed] = useState(false);
  const withPassword = hasPassword(user);
  // Prefer a provider the server still offers; any linked one is worth a try.
  const federated = user.providerData.map((info) => info.providerId).filter(isFederated);
  const providerId = federated.find((id) => providers.some((p) => p.providerId === id)) ?? federated[0];

  const remove = async () => {
    onDeleting(true);
    try {
      // On success the user signs out, and Account's guard sends us home.
      await deleteUser(user);
    } catch (error: unknown) {
      onDeleting(false);
      throw error;
    }
  };
  const { busy, error, onSubmit } = useAction(async () => {
    if (withPassword) {
      await reauthenticateWithPassword(user, password);
      await remove();
    } else if (providerId !== undefined) {
      await reauthenticateToDelete(user, providerId, remove);
    } else {
      await remove();
    }
  });
  return (
    <section className="card danger" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete account</h2>
      <form onSubmit={onSubmit}>
        <p>This removes your account for good. It cannot be undone.</p>
        {withPassword ? (
          <Field label="Password" type="password" autoComplete="current-password" required value={password} onChange={setPassword} />
        ) : providerId !== undefined ? (
          <p>To make sure it is you, we will ask you to sign in with {methodName(providerId, providers)} first.</p>
        ) : null}
        <label className="choice">
          <input type="checkbox" checked={confirmed} onChange={(event) => setConfirmed(event.target.checked)} />I understand my account will be deleted
        </label>
        <ErrorAlert error={error} overrides={withPassword ? undefined : providerErrorOverrides} />
        <button type="submit" className="danger" disabled={busy || !confirmed}>
          Delete account
        </button>
      </form>
    </section>
  );
}
