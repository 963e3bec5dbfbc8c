import { applyActionCode } from 'firebase/auth';
import { Link } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { ActionCard } from './ActionCard';
import { ContinueLink } from './ContinueLink';
import { withLinkSettings, type ActionLink } from './link';
import { refreshSignedInUser } from './refresh-user';
import { useOnce } from './useOnce';

/** mode=verifyEmail: apply the code; a signed-in user sees the change at once. */
export function VerifyEmail({ link }: { link: ActionLink }) {
  const { auth, refresh } = useAuthState();
  const result = useOnce(`apply:${link.code}`, async () => {
    await withLinkSettings(auth, link, () => applyActionCode(auth, link.code));
    if (auth.currentUser && !auth.currentUser.emailVerified) await refreshSignedInUser(auth, undefined);
    refresh();
  });
  return (
    <ActionCard title="Verify your email">
      {result.status === 'failed' ? (
        <ErrorAlert error={result.error} />
      ) : result.status === 'done' ? (
        <>
          <StatusMessage>Your email has been verified.</StatusMessage>
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
