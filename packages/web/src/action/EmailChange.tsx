import { applyActionCode, checkActionCode, sendPasswordResetEmail, type ActionCodeInfo, type Auth } from 'firebase/auth';
import { useState } from 'react';
import { Link } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { useAction, useStatus } from '../components/useAction';
import { ActionCard } from './ActionCard';
import { ContinueLink } from './ContinueLink';
import { withLinkSettings, type ActionLink } from './link';
import { refreshSignedInUser } from './refresh-user';
import { useOnce, type TaskState } from './useOnce';

/**
 * Reads what the code changes (checkActionCode), then applies it. `data.email` is the address
 * the account ends up with, `data.previousEmail` the one it replaces.
 */
function useEmailChange(auth: Auth, link: ActionLink, refresh: () => void): TaskState<{ info: ActionCodeInfo; signedOut: boolean }> {
  return useOnce(`apply:${link.code}`, async () => {
    const info = await withLinkSettings(auth, link, () => checkActionCode(auth, link.code));
    const previous = info.data.previousEmail?.toLowerCase();
    const wasSignedIn = previous !== undefined && auth.currentUser?.email?.toLowerCase() === previous;
    await withLinkSettings(auth, link, () => applyActionCode(auth, link.code));
    await refreshSignedInUser(auth, info.data.previousEmail);
    refresh();
    // Changing the address ends the account's sessions: this browser too, if it was signed in to it.
    return { info, signedOut: wasSignedIn && auth.currentUser === null };
  });
}

/** mode=verifyAndChangeEmail: the link mailed to the new address makes it the sign-in address. */
export function VerifyAndChangeEmail({ link }: { link: ActionLink }) {
  const { auth, refresh } = useAuthState();
  const result = useEmailChange(auth, link, refresh);
  return (
    <ActionCard title="Confirm your new email">
      {result.status === 'failed' ? (
        <ErrorAlert error={result.error} />
      ) : result.status === 'done' ? (
        <>
          <StatusMessage>{`Your sign-in email is now ${result.value.info.data.email ?? ''}.`}</StatusMessage>
          {result.value.signedOut ? (
            <p>
              For your security, changing the address signed you out everywhere, in this browser too. <Link to="/signin">Sign in</Link> with your new
              email.
            </p>
          ) : (
            <p>
              Use it the next time you <Link to="/signin">sign in</Link>.
            </p>
          )}
          <ContinueLink continueUrl={link.continueUrl} />
        </>
      ) : (
        <p className="loading">Changing your email…</p>
      )}
    </ActionCard>
  );
}

/** mode=recoverEmail: the link mailed to the old address undoes a change, and offers a password reset. */
export function RecoverEmail({ link }: { link: ActionLink }) {
  const { auth, refresh } = useAuthState();
  const result = useEmailChange(auth, link, refresh);
  return (
    <ActionCard title="Restore your sign-in email">
      {result.status === 'failed' ? (
        <ErrorAlert error={result.error} />
      ) : result.status === 'done' ? (
        <Restored link={link} email={result.value.info.data.email ?? ''} />
      ) : (
        <p className="loading">Restoring your email…</p>
      )}
    </ActionCard>
  );
}

function Restored({ link, email }: { link: ActionLink; email: string }) {
  const { auth } = useAuthState();
  const [sent, setSent] = useStatus();
  const { busy, error, onSubmit } = useAction(async () => {
    setSent(null);
    await withLinkSettings(auth, link, () => sendPasswordResetEmail(auth, email));
    setSent(`Check ${email} for a link to reset your password.`);
  });
  return (
    <>
      <StatusMessage>{`Your sign-in email has been changed back to ${email}.`}</StatusMessage>
      <p>If you did not ask for the change, someone else may know your password. Reset it now to keep your account safe.</p>
      <form onSubmit={onSubmit}>
        <ErrorAlert error={error} />
        <StatusMessage>{sent}</StatusMessage>
        <button type="submit" disabled={busy || sent !== null}>
          Reset your password
        </button>
      </form>
    </>
  );
}
