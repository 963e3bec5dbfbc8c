import { EmailAuthProvider, linkWithCredential, updatePassword, type User } from 'firebase/auth';
import { useState } from 'react';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { PasswordRules } from '../components/PasswordRules';
import { useStatus } from '../components/useAction';
import { useRecentSignInTask } from './recent-sign-in-task';
import type { ResumableAction } from './recent-sign-in';

/**
 * For an account without a password (made by email link, a provider or a phone): adds one. An
 * account that already signs in by email link (its `password` provider) gets it by updatePassword;
 * any other links an email-and-password credential, keeping its uid.
 */
export function SetPassword({ user, onSet, resume }: { user: User; onSet: () => void; resume: ResumableAction | null }) {
  const { auth, refresh } = useAuthState();
  const [email, setEmail] = useState(user.email ?? '');
  const [password, setPassword] = useState('');
  const { busy, error, run, panel } = useRecentSignInTask(user);
  const [resumed] = useStatus(resume?.kind === 'set-password' ? 'You signed in again. Enter your new password once more to set it.' : null);
  const onSubmit = (event: React.FormEvent) => {
    event.preventDefault();
    void run({ kind: 'set-password' }, async () => {
      if (user.providerData.some((info) => info.providerId === 'password')) await updatePassword(user, password);
      else await linkWithCredential(user, EmailAuthProvider.credential(email.trim(), password));
      setPassword('');
      refresh();
      // The card becomes the change-password form, which says it was set.
      onSet();
    });
  };
  return (
    <section className="card" aria-labelledby="set-password-heading">
      <h2 id="set-password-heading">Password</h2>
      <p>
        {user.isAnonymous
          ? 'You are using a guest account. Add an email and a password to keep it, and your notes, and to sign in from anywhere.'
          : 'This account has no password yet. Add one to sign in with your email and password too.'}
      </p>
      <StatusMessage>{resumed}</StatusMessage>
      <form onSubmit={onSubmit}>
        {!user.email && <Field label="Email" type="email" autoComplete="email" required value={email} onChange={setEmail} />}
        <Field label="New password" type="password" autoComplete="new-password" required value={password} onChange={setPassword} />
        <PasswordRules auth={auth} password={password} />
        <ErrorAlert error={error} />
        <button type="submit" disabled={busy || panel !== null}>
          Set password
        </button>
      </form>
      {panel}
    </section>
  );
}
