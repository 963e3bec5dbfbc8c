import { isSignInWithEmailLink, signInWithEmailLink } from 'firebase/auth';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction } from '../components/useAction';
import { ActionCard } from './ActionCard';
import { readEmailForSignIn, sameOriginPath, withLinkSettings, writeEmailForSignIn, type ActionLink } from './link';
import { useOnce } from './useOnce';
import { useSignInGate } from '../second-factor/gate';

/** In this flow the server's "invalid email" means the address is not the one the link went to. */
const overrides = { 'auth/invalid-email': 'That is not the email address this link was sent to.' };

/**
 * mode=signIn: sign in with the address kept by the "send me a link" page in this browser, or
 * ask for it (the link may be opened on another device). Then go to the continueUrl if it is on
 * this site, else to the account page.
 */
export function EmailLinkSignIn({ link, href }: { link: ActionLink; href: string }) {
  const { auth } = useAuthState();
  const navigate = useNavigate();
  const [stored] = useState(readEmailForSignIn);
  const [email, setEmail] = useState(stored ?? '');
  const valid = isSignInWithEmailLink(auth, href);

  const gate = useSignInGate();

  async function complete(address: string): Promise<void> {
    const returnTo = sameOriginPath(link.continueUrl, window.location.origin) ?? '/account';
    const signedIn = await gate(returnTo, () => withLinkSettings(auth, link, () => signInWithEmailLink(auth, address, href)));
    writeEmailForSignIn(null);
    if (signedIn) await navigate(returnTo, { replace: true });
  }

  const automatic = useOnce(valid && stored ? `email-link:${link.code}` : null, () => complete(stored ?? ''));
  // Once the visitor submits the form, its outcome replaces the automatic attempt's.
  const [submitted, setSubmitted] = useState(false);
  const { busy, error, onSubmit } = useAction(() => {
    setSubmitted(true);
    return complete(email.trim());
  });

  if (!valid) {
    return (
      <ActionCard title="Sign in with a link">
        <p role="alert" className="alert">
          This link is incomplete or broken.
        </p>
      </ActionCard>
    );
  }
  if (automatic.status === 'pending' || automatic.status === 'done') {
    return (
      <ActionCard title="Sign in with a link">
        <p className="loading">Signing you in…</p>
      </ActionCard>
    );
  }
  const failure = submitted ? error : automatic.status === 'failed' ? automatic.error : null;
  return (
    <ActionCard title="Sign in with a link">
      <p>Enter the email address this link was sent to.</p>
      <form onSubmit={onSubmit}>
        <Field label="Email" type="email" autoComplete="email" required value={email} onChange={setEmail} />
        <ErrorAlert error={failure} overrides={overrides} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p>
        <Link to="/email-link">Ask for a new link</Link>
      </p>
    </ActionCard>
  );
}
