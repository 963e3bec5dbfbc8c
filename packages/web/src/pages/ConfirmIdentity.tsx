import { signedInAgo } from '../site-features';
import type { MultiFactorResolver, User } from 'firebase/auth';
import { useEffect, useState, type ReactNode } from 'react';
import { providerErrorOverrides } from '../auth-errors';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useStatus, useTask } from '../components/useAction';
import { isFederated, methodName, reauthenticateWithProvider } from '../federated';
import { ResolveSecondFactor } from '../second-factor/ResolveSecondFactor';
import { secondFactorResolver } from '../second-factor/resolver';
import { ConfirmByPhone } from './ConfirmByPhone';
import { confirmWithPasskey, passkeysSupported } from '../passkeys';
import { accountSignInFacts, reauthenticateWithPassword, sendReauthenticationLink, type ResumableAction } from './recent-sign-in';

export interface ConfirmIdentityProps {
  user: User;
  action: ResumableAction;
  /** Set when the first step already passed and the account's second factor is what is left. */
  resolver?: MultiFactorResolver | null;
  onConfirmed: () => void;
  onCancel: () => void;
}

/**
 * "Confirm it's you", inline where a change needed a recent sign-in: by the account's own ways
 * of signing in (its password if it has one, a link mailed to its address, each linked provider,
 * a code texted to its phone number, one of its passkeys), then, on an account with two-step verification, its second
 * factor (the SDK's multi-factor-auth-required -> getMultiFactorResolver); after which the page
 * runs the change again.
 */
export function ConfirmIdentity({ user, action, resolver: firstResolver = null, onConfirmed, onCancel }: ConfirmIdentityProps) {
  const { auth, providers } = useAuthState();
  const [hasPassword, setHasPassword] = useState<boolean | undefined>(undefined);
  const [hasPasskey, setHasPasskey] = useState(false);
  const [password, setPassword] = useState('');
  const [sent, setSent] = useStatus();
  const [resolver, setResolver] = useState<MultiFactorResolver | null>(firstResolver);
  const { busy, error, run } = useTask();
  // A provider's refusal reads differently from a wrong password (the same SDK code).
  const [byProvider, setByProvider] = useState(false);
  useEffect(() => {
    let current = true;
    accountSignInFacts(auth, user).then(
      (facts) => {
        if (!current) return;
        setHasPassword(facts.password);
        setHasPasskey(facts.passkey && passkeysSupported());
      },
      () => current && setHasPassword(false),
    );
    return () => {
      current = false;
    };
  }, [auth, user]);
  const linked = user.providerData.map((info) => info.providerId);
  const federated = linked.filter(isFederated);
  const byEmailLink = Boolean(user.email) && linked.includes('password');
  const phoneNumber = linked.includes('phone') ? user.phoneNumber : null;

  /** Runs a first step; false means a redirect is under way. A second factor still to prove opens its step. */
  const confirm = (work: () => Promise<unknown>, withProvider = false) =>
    run(async () => {
      setByProvider(withProvider);
      try {
        if ((await work()) === false) return;
      } catch (caught: unknown) {
        const next = secondFactorResolver(auth, caught);
        if (!next) throw caught;
        setResolver(next);
        return;
      }
      onConfirmed();
    });

  if (resolver) {
    return (
      <Panel user={user} action={action}>
        <ResolveSecondFactor resolver={resolver} lead="That was right. Now confirm with your second step, one of these:" onResolved={onConfirmed} />
        <Choices>
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        </Choices>
      </Panel>
    );
  }
  return (
    <Panel user={user} action={action}>
      {hasPassword === undefined ? <p className="loading">Loading your sign-in methods…</p> : null}
      {hasPassword && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void confirm(async () => {
              await reauthenticateWithPassword(user, password);
              setPassword('');
            });
          }}
        >
          <Field label="Your password" type="password" autoComplete="current-password" required value={password} onChange={setPassword} />
          <button type="submit" disabled={busy}>
            Confirm with password
          </button>
        </form>
      )}
      {hasPassword !== undefined && phoneNumber && <ConfirmByPhone user={user} phoneNumber={phoneNumber} disabled={busy} confirm={(work) => confirm(work)} />}
      <Choices>
        {hasPasskey && (
          <button
            type="button"
            className="provider"
            disabled={busy}
            // A passkey is a whole sign-in (no second step after it); the page reloads to resume the change.
            onClick={() => void run(() => confirmWithPasskey(auth, user, action))}
          >
            Use a passkey
          </button>
        )}
        {byEmailLink && hasPassword !== undefined && (
          <button
            type="button"
            className="secondary"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                await sendReauthenticationLink(auth, user, action);
                setSent(`We sent a sign-in link to ${user.email ?? 'your address'}. Open it in this browser to finish.`);
              })
            }
          >
            Email me a sign-in link
          </button>
        )}
        {hasPassword !== undefined &&
          federated.map((providerId) => (
            <button
              key={providerId}
              type="button"
              className="provider"
              disabled={busy}
              onClick={() => void confirm(() => reauthenticateWithProvider(user, providerId, action), true)}
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
    </Panel>
  );
}

function Panel({ user, action, children }: { user: User; action: ResumableAction; children: ReactNode }) {
  return (
    <div className="confirm-identity" role="group" aria-label="Confirm it’s you">
      <p data-testid="signed-in-ago">
        <strong>Confirm it’s you.</strong> {signedInAgo(user.metadata.lastSignInTime)}; to {purpose(action)}, sign in again here.
      </p>
      {children}
    </div>
  );
}

function Choices({ children }: { children: ReactNode }) {
  return <div className="choices">{children}</div>;
}

function purpose(action: ResumableAction): string {
  if (action.kind === 'delete') return 'delete your account';
  if (action.kind === 'change-email') return `change your email to ${action.address}`;
  if (action.kind === 'change-password') return 'change your password';
  if (action.kind === 'recovery-codes') return 'make new recovery codes';
  if (action.kind === 'remove-factor') return `remove ${action.label} from two-step verification`;
  return 'set a password';
}
