import { applyActionCode, reload } from 'firebase/auth';
import { Link } from 'react-router';
import { errorCode } from '../auth-errors';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { ActionCard } from './ActionCard';
import { ContinueLink } from './ContinueLink';
import { withLinkSettings, type ActionLink } from './link';
import { refreshSignedInUser } from './refresh-user';
import { useOnce } from './useOnce';

/**
 * mode=verifyEmail: apply the code; a signed-in user sees the change at once. A link used before
 * (or a second one) fails, but when the signed-in account is verified by now that is the news.
 */
export function VerifyEmail({ link }: { link: ActionLink }) {
  const { auth, refresh } = useAuthState();
  const result = useOnce(`apply:${link.code}`, async (): Promise<'verified' | 'already'> => {
    try {
      await withLinkSettings(auth, link, () => applyActionCode(auth, link.code));
    } catch (error: unknown) {
      const user = auth.currentUser;
      if (errorCode(error) !== 'auth/invalid-action-code' || !user) throw error;
      await reload(user).catch(() => undefined);
      refresh();
      if (user.emailVerified) return 'already';
      throw error;
    }
    if (auth.currentUser && !auth.currentUser.emailVerified) await refreshSignedInUser(auth, undefined);
    refresh();
    return 'verified';
  });
  return (
    <ActionCard title="Verify your email">
      {result.status === 'failed' ? (
        <>
          <ErrorAlert error={result.error} />
          <p>
            A verification link works once and for an hour. <Link to="/account">Send a new one from your account page</Link>.
          </p>
        </>
      ) : result.status === 'done' ? (
        <>
          <StatusMessage>{result.value === 'already' ? 'Your email address is already verified. There is nothing more to do.' : 'Your email has been verified.'}</StatusMessage>
          <ContinueLink continueUrl={link.continueUrl} />
          <p>
            <Link to="/account">Go to your account</Link>
          </p>
        </>
      ) : (
        <p className="loading">Verifying your email…</p>
      )}
    </ActionCard>
  );
}
