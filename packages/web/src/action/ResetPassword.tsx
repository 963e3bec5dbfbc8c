import { confirmPasswordReset, verifyPasswordResetCode } from 'firebase/auth';
import { useState } from 'react';
import { Link } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction } from '../components/useAction';
import { ActionCard } from './ActionCard';
import { ContinueLink } from './ContinueLink';
import { withLinkSettings, type ActionLink } from './link';
import { useOnce } from './useOnce';

/** mode=resetPassword: show whose password this is, take a new one, then confirm the reset. */
export function ResetPassword({ link }: { link: ActionLink }) {
  const { auth } = useAuthState();
  const check = useOnce(`verify-reset:${link.code}`, () => withLinkSettings(auth, link, () => verifyPasswordResetCode(auth, link.code)));
  const [password, setPassword] = useState('');
  const [changed, setChanged] = useState(false);
  const { busy, error, onSubmit } = useAction(async () => {
    await withLinkSettings(auth, link, () => confirmPasswordReset(auth, link.code, password));
    setPassword('');
    setChanged(true);
  });

  if (check.status === 'failed') {
    return (
      <ActionCard title="Reset your password">
        <ErrorAlert error={check.error} />
        <p>
          <Link to="/forgot-password">Ask for a new link</Link>
        </p>
      </ActionCard>
    );
  }
  if (check.status !== 'done') {
    return (
      <ActionCard title="Reset your password">
        <p className="loading">Checking your link…</p>
      </ActionCard>
    );
  }
  if (changed) {
    return (
      <ActionCard title="Reset your password">
        <StatusMessage>Your password has been changed.</StatusMessage>
        <p>
          You can now <Link to="/signin">sign in</Link> with your new password.
        </p>
        <ContinueLink continueUrl={link.continueUrl} />
      </ActionCard>
    );
  }
  return (
    <ActionCard title="Reset your password">
      <p>
        Choose a new password for <strong data-testid="action-email">{check.value}</strong>.
      </p>
      <form onSubmit={onSubmit}>
        {/* Lets password managers file the new password under the right account. */}
        <input type="email" name="username" autoComplete="username" value={check.value} readOnly hidden />
        <Field label="New password" type="password" autoComplete="new-password" required value={password} onChange={setPassword} />
        <ErrorAlert error={error} />
        <button type="submit" disabled={busy}>
          Save password
        </button>
      </form>
    </ActionCard>
  );
}
