import type { User } from 'firebase/auth';
import { useEffect, useState, type ReactNode } from 'react';
import { providerErrorOverrides } from '../auth-errors';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useTask } from '../components/useAction';
import { deleteAfterReauth, isFederated, methodName, reauthenticateWithProvider } from '../federated';
import { accountHasPassword, needsRecentSignIn, reauthenticateWithPassword, sendReauthenticationLink, type ResumableAction } from './recent-sign-in';

interface ConfirmIdentityProps {
  user: User;
  action: ResumableAction;
  onConfirmed: () => void;
  onCancel: () => void;
}

/**
 * "Confirm it's you", inline where a change needed a recent sign-in: by the account's own ways
 * of signing in (its password if it has one, a link mailed to its address, each linked provider),
 * after which the page runs the change again.
 */
export function ConfirmIdentity({ user, action, onConfirmed, onCancel }: ConfirmIdentityProps) {
  const { auth, providers } = useAuthState();
  const [hasPassword, setHasPassword] = useState<boolean | undefined>(undefined);
  const [password, setPassword] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const { busy, error, run } = useTask();
  // A provider's refusal reads differently from a wrong password (the same SDK code).
  const [byProvider, setByProvider] = useState(false);
  useEffect(() => {
    let current = true;
    accountHasPassword(auth, user).then(
      (has) => current && setHasPassword(has),
      () => current && setHasPassword(false),
    );
    return () => {
      current = false;
    };
  }, [auth, user]);
  const linked = user.providerData.map((info) => info.providerId);
  const federated = linked.filter(isFederated);
  const byEmailLink = Boolean(user.email) && linked.includes('password');

  const confirm = (work: () => Promise<boolean>, withProvider = false) =>
    run(async () => {
      setSent(null);
      setByProvider(withProvider);
      if (await work()) onConfirmed();
    });
  return (
    <div className="confirm-identity" role="group" aria-label="Confirm it’s you">
      <p>
        <strong>Confirm it’s you.</strong> You signed in a while ago; to {purpose(action)}, sign in again here.
      </p>
      {hasPassword === undefined ? <p className="loading">Loading your sign-in methods…</p> : null}
      {hasPassword && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void confirm(async () => {
              await reauthenticateWithPassword(user, password);
              setPassword('');
              return true;
            });
          }}
        >
          <Field label="Your password" type="password" autoComplete="current-password" required value={password} onChange={setPassword} />
          <button type="submit" disabled={busy}>
            Confirm with password
          </button>
        </form>
      )}
      <Choices>
        {byEmailLink && hasPassword !== undefined && (
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                setSent(null);
                await sendReauthenticationLink(auth, user, action);
                setSent(`We sent a sign-in link to ${user.email ?? 'your address'}. Open it in this browser to finish.`);
              })
            }
          >
            Email me a sign-in link
          </button>
        )}
        {hasPassword !== undefined && federated.map((providerId) => (
          <button
            key={providerId}
            type="button"
            className="provider"
            disabled={busy}
            onClick={() => void confirm(() => reauthenticateWithProvider(user, providerId, () => action.kind === 'delete' && deleteAfterReauth(user.uid)), true)}
          >
            Continue with {methodName(providerId, providers)}
          </button>
        ))}
        <button type="button" className="secondary" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </Choices>
      <ErrorAlert error={error} overrides={byProvider ? providerErrorOverrides : undefined} />
      <StatusMessage>{sent}</StatusMessage>
    </div>
  );
}

function Choices({ children }: { children: ReactNode }) {
  return <div className="choices">{children}</div>;
}

function purpose(action: ResumableAction): string {
  if (action.kind === 'delete') return 'delete your account';
  if (action.kind === 'change-email') return `change your email to ${action.address}`;
  return 'set a password';
}

/**
 * Runs account changes; one refused for want of a recent sign-in opens ConfirmIdentity (`panel`)
 * and is run again once the user has confirmed.
 */
export function useRecentSignInTask(user: User) {
  const task = useTask();
  const [waiting, setWaiting] = useState<{ action: ResumableAction; work: () => Promise<void> } | null>(null);
  const run = (action: ResumableAction, work: () => Promise<void>) =>
    task.run(async () => {
      try {
        await work();
        setWaiting(null);
      } catch (error: unknown) {
        if (!needsRecentSignIn(error)) throw error;
        setWaiting({ action, work });
      }
    });
  const panel = waiting ? (
    <ConfirmIdentity user={user} action={waiting.action} onConfirmed={() => void run(waiting.action, waiting.work)} onCancel={() => setWaiting(null)} />
  ) : null;
  return { busy: task.busy, error: task.error, run, panel };
}
