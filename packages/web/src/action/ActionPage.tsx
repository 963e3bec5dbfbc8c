import { ActionCodeOperation } from 'firebase/auth';
import { useMemo } from 'react';
import { useLocation } from 'react-router';
import { ActionCard } from './ActionCard';
import { EmailLinkSignIn } from './EmailLinkSignIn';
import { RecoverEmail, VerifyAndChangeEmail } from './EmailChange';
import { ResetPassword } from './ResetPassword';
import { VerifyEmail } from './VerifyEmail';
import { parseActionLink } from './link';

/**
 * The hosted action page, `/__/auth/action`: the page every mailed link opens. The link says
 * what to do (mode), with which single-use code (oobCode), for which project (apiKey), and
 * optionally where to go afterwards (continueUrl), in which language (lang) and tenant. Sign-in
 * links for an app elsewhere never reach this page: the server hands them back to the app.
 */
export function ActionPage() {
  const location = useLocation();
  // The whole address, as the SDK parses mailed links; recomputed if the query changes in place.
  const href = useMemo(() => window.location.href, [location.search, location.hash]);
  const link = useMemo(() => parseActionLink(href), [href]);
  if (!link) {
    return (
      <ActionCard title="Broken link">
        <p role="alert" className="alert">
          This link is incomplete or broken.
        </p>
        <p>Copy the whole link from the email into the address bar, or ask for a new one.</p>
      </ActionCard>
    );
  }
  switch (link.operation) {
    case ActionCodeOperation.PASSWORD_RESET:
      return <ResetPassword key={link.code} link={link} />;
    case ActionCodeOperation.VERIFY_EMAIL:
      return <VerifyEmail key={link.code} link={link} />;
    case ActionCodeOperation.RECOVER_EMAIL:
      return <RecoverEmail key={link.code} link={link} />;
    case ActionCodeOperation.VERIFY_AND_CHANGE_EMAIL:
      return <VerifyAndChangeEmail key={link.code} link={link} />;
    case ActionCodeOperation.EMAIL_SIGNIN:
      return <EmailLinkSignIn key={link.code} link={link} href={href} />;
    case ActionCodeOperation.REVERT_SECOND_FACTOR_ADDITION:
      return (
        <ActionCard title="Remove a second factor">
          <p role="alert" className="alert">
            Second factors are not supported yet.
          </p>
        </ActionCard>
      );
    default:
      return (
        <ActionCard title="Broken link">
          <p role="alert" className="alert">
            This link is incomplete or broken.
          </p>
        </ActionCard>
      );
  }
}
