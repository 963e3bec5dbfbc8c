import { sendSignInLinkToEmail } from 'firebase/auth';
import { useState } from 'react';
import { Link } from 'react-router';
import { writeEmailForSignIn } from '../action/link';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction, useStatus } from '../components/useAction';

/**
 * Passwordless sign-in: mails a link that signs in (or creates) the account for the address.
 * The address is kept in this browser so that opening the link here needs no typing.
 */
export function EmailLink() {
  const { auth } = useAuthState();
  const [email, setEmail] = useState('');
  const [sent, setSent] = useStatus();
  const { busy, error, onSubmit } = useAction(async () => {
    setSent(null);
    const address = email.trim();
    await sendSignInLinkToEmail(auth, address, { url: `${window.location.origin}/account`, handleCodeInApp: true });
    writeEmailForSignIn(address);
    setSent(`Check ${address} for a sign-in link, and open it in this browser.`);
  });
  return (
    <section className="card">
      <h1>Sign in with a link</h1>
      <p>No password needed: we email you a link that signs you in, and creates your account if you are new.</p>
      <form onSubmit={onSubmit}>
        <Field label="Email" type="email" autoComplete="email" required value={email} onChange={setEmail} />
        <ErrorAlert error={error} />
        <StatusMessage>{sent}</StatusMessage>
        <button type="submit" disabled={busy}>
          Send sign-in link
        </button>
      </form>
      <p>
        Prefer a password? <Link to="/signin">Sign in with your password</Link>
      </p>
    </section>
  );
}
