import { signInWithPhoneNumber, type ConfirmationResult } from 'firebase/auth';
import { useRef, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction } from '../components/useAction';
import { useSignInGate } from '../second-factor/gate';
import { withHumanCheck } from '../second-factor/human-check';
import { noTextMessages, siteFeatures } from '../site-features';

function returnPath(state: unknown): string {
  if (typeof state === 'object' && state !== null && 'from' in state) {
    const from = (state as { from: unknown }).from;
    if (typeof from === 'string' && from.startsWith('/')) return from;
  }
  return '/';
}

/**
 * Sign in (or sign up) with a phone number: a code goes by text message, after a human check
 * that Hearth runs in this page (no Google service involved).
 */
export function PhoneSignIn() {
  const { auth } = useAuthState();
  const navigate = useNavigate();
  const location = useLocation();
  const returnTo = returnPath(location.state);
  const gate = useSignInGate();
  const check = useRef<HTMLDivElement>(null);
  const [phoneNumber, setPhoneNumber] = useState('');
  const [code, setCode] = useState('');
  const [confirmation, setConfirmation] = useState<ConfirmationResult | null>(null);
  const [sentTo, setSentTo] = useState<string | null>(null);

  const send = useAction(async () => {
    const number = phoneNumber.replace(/[\s()-]/g, '');
    setConfirmation(await withHumanCheck(auth, check.current, (verifier) => signInWithPhoneNumber(auth, number, verifier)));
    setSentTo(number);
    setCode('');
  });
  const confirm = useAction(async () => {
    if (!confirmation) return;
    if (await gate(returnTo, () => confirmation.confirm(code.trim()))) await navigate(returnTo, { replace: true });
  });

  if (!siteFeatures().phoneSignIn) {
    return (
      <section className="card">
        <h1>Sign in with a phone number</h1>
        <p role="status" data-testid="no-phone-sign-in">
          {siteFeatures().textMessages ? 'Phone sign-in is turned off for this site.' : noTextMessages}
        </p>
        <p>
          <Link to="/signin">Sign in another way</Link>
        </p>
      </section>
    );
  }
  return (
    <section className="card">
      <h1>Sign in with a phone number</h1>
      <form onSubmit={send.onSubmit}>
        <Field
          label="Phone number, with country code"
          type="tel"
          autoComplete="tel"
          placeholder="+1 555 010 0123"
          required
          value={phoneNumber}
          onChange={setPhoneNumber}
        />
        <div ref={check} />
        <ErrorAlert error={send.error} />
        <button type="submit" className={confirmation ? 'secondary' : undefined} disabled={send.busy}>
          {confirmation ? 'Send a new code' : 'Send code'}
        </button>
      </form>
      {confirmation && (
        <form onSubmit={confirm.onSubmit}>
          <StatusMessage>{sentTo ? `We sent a code to ${sentTo}.` : null}</StatusMessage>
          <Field label="Code from the text message" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={setCode} />
          <ErrorAlert error={confirm.error} />
          <button type="submit" disabled={confirm.busy}>
            Sign in
          </button>
        </form>
      )}
      <p>
        <Link to="/signin" state={location.state}>
          Sign in with email instead
        </Link>
      </p>
    </section>
  );
}
