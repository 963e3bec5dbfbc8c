import { sendEmailVerification, verifyBeforeUpdateEmail, type User } from 'firebase/auth';
import { useState } from 'react';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction, useStatus } from '../components/useAction';
import { useRecentSignInTask, useResumeOnce } from './recent-sign-in-task';
import type { ResumableAction } from './recent-sign-in';

/** Whether the address is proven, and a button that mails the proof link when it is not. */
export function VerifyEmailSection({ user }: { user: User }) {
  const [sent, setSent] = useStatus();
  const { busy, error, onSubmit } = useAction(async () => {
    setSent(null);
    await sendEmailVerification(user);
    setSent(`We sent a verification link to ${user.email ?? 'your address'}.`);
  });
  if (!user.email) return null;
  return (
    <section className="card" aria-labelledby="verify-heading">
      <h2 id="verify-heading">Email verification</h2>
      {user.emailVerified ? (
        <p>Your email address is verified.</p>
      ) : (
        <form onSubmit={onSubmit}>
          <p>Your email address is not verified yet.</p>
          <ErrorAlert error={error} />
          <StatusMessage>{sent}</StatusMessage>
          <button type="submit" disabled={busy}>
            Send verification email
          </button>
        </form>
      )}
    </section>
  );
}

/** Changes the sign-in address only once a link mailed to the new address is followed. */
export function ChangeEmailSection({ user, resume }: { user: User; resume: ResumableAction | null }) {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useStatus();
  const { busy, error, run, panel } = useRecentSignInTask(user);
  const send = (address: string) =>
    run({ kind: 'change-email', address }, async () => {
      await verifyBeforeUpdateEmail(user, address);
      setEmail('');
      setSent(`Check ${address} for a link to confirm the change. Until you open it, you keep signing in with ${user.email ?? 'your current address'}.`);
    });
  const onSubmit = (event: React.FormEvent) => {
    event.preventDefault();
    setSent(null);
    void send(email.trim());
  };
  // Back from a sign-in link mailed to confirm it is them: send the confirmation they asked for.
  useResumeOnce(resume, 'change-email', ({ address }) => void send(address));
  return (
    <section className="card" aria-labelledby="change-email-heading">
      <h2 id="change-email-heading">Change email</h2>
      <form onSubmit={onSubmit}>
        <Field label="New email" type="email" autoComplete="email" required value={email} onChange={setEmail} />
        <ErrorAlert error={error} />
        <StatusMessage>{sent}</StatusMessage>
        <button type="submit" disabled={busy || panel !== null}>
          Send confirmation link
        </button>
      </form>
      {panel}
    </section>
  );
}
