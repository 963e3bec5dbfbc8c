import { sendPasswordResetEmail } from 'firebase/auth';
import { useState } from 'react';
import { Link } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction, useStatus } from '../components/useAction';

/**
 * Asks for a password reset link. The answer is the same whether or not an account exists for
 * the address (the server's email enumeration protection), so the page says nothing more.
 */
export function ForgotPassword() {
  const { auth } = useAuthState();
  const [email, setEmail] = useState('');
  const [sent, setSent] = useStatus();
  const { busy, error, onSubmit } = useAction(async () => {
    setSent(null);
    await sendPasswordResetEmail(auth, email.trim());
    setSent('If an account exists for that address, we sent a link.');
  });
  return (
    <section className="card">
      <h1>Forgot your password?</h1>
      <p>Enter your email address and we will send you a link to choose a new password.</p>
      <form onSubmit={onSubmit}>
        <Field label="Email" type="email" autoComplete="email" required value={email} onChange={setEmail} />
        <ErrorAlert error={error} />
        <StatusMessage>{sent}</StatusMessage>
        <button type="submit" disabled={busy}>
          Send reset link
        </button>
      </form>
      <p>
        Remembered it? <Link to="/signin">Sign in</Link>
      </p>
    </section>
  );
}
