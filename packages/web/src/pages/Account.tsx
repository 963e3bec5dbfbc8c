import { signOut, updatePassword, updateProfile, type User } from 'firebase/auth';
import { useEffect, useState } from 'react';
import { Navigate, useLocation, useNavigate, useSearchParams } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction, useStatus } from '../components/useAction';
import { ChangeEmailSection, VerifyEmailSection } from './AccountEmail';
import { DeleteAccount } from './DeleteAccount';
import { ProfilePhoto } from '../files/ProfilePhoto';
import { accountHasPassword, forgetResume, pendingResume, reauthenticateWithPassword, resumeParam, type ResumableAction } from './recent-sign-in';
import { SetPassword } from './SetPassword';
import { Passkeys } from './Passkeys';
import { SignInMethods } from './SignInMethods';
import { TwoStep } from '../second-factor/TwoStep';
import { PasswordRules } from '../components/PasswordRules';
import { useRecentSignInTask } from './recent-sign-in-task';

export function Account() {
  const { user } = useAuthState();
  const location = useLocation();
  // Set while the account is being deleted: the user then vanishes on purpose, so go home.
  const [deleting, setDeleting] = useState(false);
  if (user === undefined) return <p>Loading…</p>;
  if (user === null) return deleting ? <Navigate to="/" replace state={{ notice: 'Your account was deleted.' }} /> : <Navigate to="/signin" replace state={{ from: location.pathname }} />;
  return <AccountOf user={user} onDeleting={setDeleting} />;
}

function AccountOf({ user, onDeleting }: { user: User; onDeleting: (deleting: boolean) => void }) {
  const { auth } = useAuthState();
  const [params, setParams] = useSearchParams();
  // Set when a sign-in link mailed to confirm it is them, or a provider's redirect, brought the user back here.
  const [resume] = useState<ResumableAction | null>(() => pendingResume(user.uid, params.get(resumeParam)));
  useEffect(() => {
    if (!params.has(resumeParam)) return;
    forgetResume();
    setParams((current) => {
      current.delete(resumeParam);
      return current;
    }, { replace: true });
  }, [params, setParams]);
  // undefined until the server says whether the account has a password of its own.
  const [ownPassword, setOwnPassword] = useState<boolean | undefined>(undefined);
  const [passwordNotice, setPasswordNotice] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    accountHasPassword(auth, user).then(
      (has) => current && setOwnPassword(has),
      () => current && setOwnPassword(undefined),
    );
    return () => {
      current = false;
    };
  }, [auth, user]);
  // Back from a second factor that finished confirming it is them: the SDK's user for that sign-in
  // reaches this page a moment later (onIdTokenChanged), and the change resumed with the one
  // before would be refused as stale.
  if (resume && user !== auth.currentUser) return <p className="loading">Finishing…</p>;
  return (
    <section>
      <h1>Your account</h1>
      <dl className="facts">
        <dt>Email</dt>
        <dd data-testid="account-email">{user.email ?? '(none)'}</dd>
        {user.phoneNumber && (
          <>
            <dt>Phone</dt>
            <dd data-testid="account-phone">{user.phoneNumber}</dd>
          </>
        )}
        <dt>Email verified</dt>
        <dd data-testid="account-email-verified">{user.emailVerified ? 'Yes' : 'No'}</dd>
        <dt>Display name</dt>
        <dd data-testid="account-name">{user.displayName || '(none)'}</dd>
        <dt>User ID</dt>
        <dd data-testid="account-uid">
          <code>{user.uid}</code>
        </dd>
      </dl>
      <VerifyEmailSection user={user} />
      <ProfilePhoto user={user} />
      <NameForm user={user} />
      <SignInMethods user={user} />
      <Passkeys user={user} />
      <TwoStep user={user} resume={resume} />
      <ChangeEmailSection user={user} resume={resume} />
      {ownPassword === true && <PasswordForm user={user} notice={passwordNotice} resume={resume} />}
      {ownPassword === false && (
        <SetPassword
          user={user}
          resume={resume}
          onSet={() => {
            setPasswordNotice('Your password was set. You can now sign in with your email and this password.');
            setOwnPassword(true);
          }}
        />
      )}
      <DeleteAccount user={user} onDeleting={onDeleting} resume={resume} />
      <SignOutSection />
    </section>
  );
}

function NameForm({ user }: { user: User }) {
  const { refresh } = useAuthState();
  const [name, setName] = useState(user.displayName ?? '');
  const [done, setDone] = useStatus();
  const { busy, error, onSubmit } = useAction(async () => {
    setDone(null);
    const trimmed = name.trim();
    await updateProfile(user, { displayName: trimmed || null });
    refresh();
    setDone(trimmed ? 'Your name was saved.' : 'Your name was removed.');
  });
  return (
    <section className="card" aria-labelledby="name-heading">
      <h2 id="name-heading">Display name</h2>
      <form onSubmit={onSubmit}>
        <Field label="Display name" type="text" autoComplete="name" value={name} onChange={setName} />
        <ErrorAlert error={error} />
        <StatusMessage>{done}</StatusMessage>
        <button type="submit" disabled={busy}>
          Save name
        </button>
      </form>
    </section>
  );
}

/**
 * Changes the password: with the current one (a reauthentication that, on an account with two-step
 * verification, goes on to its second step inline), or, for a user who does not remember it, after
 * confirming another way (a mailed link, a provider, a texted code), which may come back here by
 * link or redirect: the form then asks only for the new password.
 */
function PasswordForm({ user, notice, resume }: { user: User; notice: string | null; resume: ResumableAction | null }) {
  const { auth } = useAuthState();
  const resumed = resume?.kind === 'change-password';
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useStatus(notice ?? (resumed ? 'You signed in again. Enter your new password to change it.' : null));
  // Set once the user confirmed another way: the current password is not asked for again.
  const [confirmed, setConfirmed] = useState(resumed);
  const { busy, error, run, ask, panel } = useRecentSignInTask(user);
  const change = async () => {
    await updatePassword(user, next);
    setCurrent('');
    setNext('');
    setConfirmed(false);
    setDone('Your password was changed.');
  };
  const onSubmit = (event: React.FormEvent) => {
    event.preventDefault();
    void run({ kind: 'change-password' }, change, confirmed ? undefined : () => reauthenticateWithPassword(user, current));
  };
  return (
    <section className="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      <form onSubmit={onSubmit}>
        {!confirmed && <Field label="Current password" type="password" autoComplete="current-password" required value={current} onChange={setCurrent} />}
        <Field label="New password" type="password" autoComplete="new-password" required value={next} onChange={setNext} />
        <PasswordRules auth={auth} password={next} />
        <ErrorAlert error={error} />
        <StatusMessage>{done}</StatusMessage>
        <button type="submit" disabled={busy || panel !== null}>
          Change password
        </button>
        {!confirmed && (
          <button
            type="button"
            className="link"
            disabled={busy || panel !== null}
            onClick={() =>
              ask({ kind: 'change-password' }, async () => {
                setConfirmed(true);
                setDone('You confirmed it’s you. Enter your new password to change it.');
              })
            }
          >
            Forgot your current password?
          </button>
        )}
      </form>
      {panel}
    </section>
  );
}

function SignOutSection() {
  const { auth } = useAuthState();
  const navigate = useNavigate();
  const { busy, error, onSubmit } = useAction(async () => {
    // Leave first, or the account page's guard would send us to /signin.
    await navigate('/');
    await signOut(auth);
  });
  return (
    <section className="card" aria-labelledby="signout-heading">
      <h2 id="signout-heading">Sign out</h2>
      <form onSubmit={onSubmit}>
        <ErrorAlert error={error} />
        <button type="submit" disabled={busy}>
          Sign out
        </button>
      </form>
    </section>
  );
}
