import { Link, Navigate, useNavigate } from 'react-router';
import { useAuthState } from '../auth-context';
import { forgetResume } from '../pages/resume-store';
import { ResolveSecondFactor } from './ResolveSecondFactor';

/**
 * The second step of a sign-in on an account with two-step verification, as its own page: the
 * SDK's resolver completes the sign-in the first step started, then the page goes where the
 * sign-in was headed. (Inline reauthentication uses the same ResolveSecondFactor.)
 */
export function SecondFactor() {
  const { secondFactor, startSecondFactor } = useAuthState();
  const navigate = useNavigate();
  if (!secondFactor) return <Navigate to="/signin" replace />;
  const { resolver, returnTo } = secondFactor;
  // Confirming a change (returnTo is the account page resuming it): Cancel gives the change up and
  // goes back to the account, where the user is still signed in; a sign-in goes back to sign-in.
  const confirmingChange = returnTo.startsWith('/account');
  return (
    <section className="card">
      <h1>Two-step verification</h1>
      <ResolveSecondFactor
        resolver={resolver}
        lead="The first step was right. Now prove it is you with one of these:"
        onResolved={async (byRecoveryCode) => {
          startSecondFactor(null);
          // A recovery code often means a lost phone or app: say what to do next (the home page shows it).
          const notice = byRecoveryCode ? 'You signed in with a recovery code; it will not work again. If you lost your phone or authenticator app, remove it under Two-step verification in your account and add a new one.' : undefined;
          await navigate(returnTo, { replace: true, ...(notice ? { state: { notice } } : {}) });
        }}
      />
      <p>
        <Link
          to={confirmingChange ? '/account' : '/signin'}
          onClick={() => {
            if (confirmingChange) forgetResume();
            startSecondFactor(null);
          }}
        >
          Cancel
        </Link>
      </p>
    </section>
  );
}
