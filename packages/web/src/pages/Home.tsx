import { sendEmailVerification, signInAnonymously } from 'firebase/auth';
import { useState } from 'react';
import { Link, useLocation } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { useStatus, useTask } from '../components/useAction';

export function Home() {
  const { user, redirect } = useAuthState();
  const location = useLocation();
  // What the page that sent us here did (e.g. deleted the account).
  const notice = (location.state as { notice?: unknown } | null)?.notice;
  if (!user) {
    return (
      <section>
        <h1>Welcome to Hearth</h1>
        <StatusMessage>{redirect.notice ?? (typeof notice === 'string' ? notice : null)}</StatusMessage>
        <p>You are not signed in.</p>
        <p>
          <Link to="/signin">Sign in</Link> or <Link to="/signup">create an account</Link>.
        </p>
        <GuestEntry />
      </section>
    );
  }
  return (
    <section>
      <h1>Welcome{user.displayName ? `, ${user.displayName}` : ''}</h1>
      <p>
        Signed in as <strong data-testid="signed-in-email">{user.email ?? user.phoneNumber ?? 'a guest'}</strong>.
      </p>
      {/* e.g. signed in with a recovery code (second-factor/SecondFactor.tsx) */}
      {typeof notice === 'string' && <StatusMessage>{notice}</StatusMessage>}
      {user.email && !user.emailVerified && <VerifyNudge />}
      {user.isAnonymous && (
        <p className="hint" data-testid="guest-nudge">
          Your notes are kept for this guest account in this browser only. <Link to="/account">Add an email and password or link a provider</Link> to keep them
          and sign in anywhere; your notes stay yours.
        </p>
      )}
      <p>
        <Link to="/notes">Open your notes</Link> · <Link to="/account">Manage your account</Link>
      </p>
    </section>
  );
}

/** An unverified address: say so where the user lands, with the link one click away. */
function VerifyNudge() {
  const { user } = useAuthState();
  const [sent, setSent] = useStatus();
  const { busy, error, run } = useTask();
  if (!user?.email) return null;
  return (
    <div className="card" data-testid="verify-nudge">
      <p>
        Please verify <strong>{user.email}</strong>: it lets you recover your account and turn on two-step verification.
      </p>
      <button
        type="button"
        className="secondary"
        disabled={busy || sent !== null}
        onClick={() =>
          void run(async () => {
            await sendEmailVerification(user);
            setSent(`We sent a verification link to ${user.email ?? 'your address'}.`);
          })
        }
      >
        Send the verification link
      </button>
      <ErrorAlert error={error} />
      <StatusMessage>{sent}</StatusMessage>
    </div>
  );
}

/** Try the app without an account: an anonymous account, upgradable later from the account page (same uid, same data). */
function GuestEntry() {
  const { auth } = useAuthState();
  const { busy, error, run } = useTask();
  return (
    <div className="guest">
      <p>Just looking?</p>
      <button type="button" className="secondary" disabled={busy} onClick={() => void run(async () => void (await signInAnonymously(auth)))}>
        Continue as a guest
      </button>
      <ErrorAlert error={error} />
    </div>
  );
}
