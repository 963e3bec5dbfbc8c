import { siteFeatures } from '../site-features';
import {
  browserLocalPersistence,
  browserSessionPersistence,
  inMemoryPersistence,
  setPersistence,
  signInWithEmailAndPassword,
  type Persistence,
} from 'firebase/auth';
import { useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { ProviderButtons } from '../components/ProviderButtons';
import { useAction } from '../components/useAction';
import { useSignInGate } from '../second-factor/gate';
import { passkeysSupported, signInWithPasskey } from '../passkeys';
import { usePasskeyAutofill } from '../passkey-autofill';

type Remember = 'local' | 'session' | 'none';

const rememberChoices: { value: Remember; label: string; persistence: Persistence }[] = [
  { value: 'local', label: 'On this device', persistence: browserLocalPersistence },
  { value: 'session', label: 'Until I close the browser', persistence: browserSessionPersistence },
  { value: 'none', label: "Don't remember me", persistence: inMemoryPersistence },
];

/** Where the account page sent us from, if it did. */
function returnPath(state: unknown): string {
  if (typeof state === 'object' && state !== null && 'from' in state) {
    const from = (state as { from: unknown }).from;
    if (typeof from === 'string' && from.startsWith('/')) return from;
  }
  return '/';
}

export function SignIn() {
  const { auth, user } = useAuthState();
  const navigate = useNavigate();
  const location = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState<Remember>('local');
  const applyRemember = async () => {
    const choice = rememberChoices.find((c) => c.value === remember) ?? rememberChoices[0]!;
    await setPersistence(auth, choice.persistence);
  };
  const gate = useSignInGate();
  const returnTo = returnPath(location.state);
  // Set once a provider's sign-in starts (a popup or a redirect): the autofill is not offered again here.
  const [leaving, setLeaving] = useState(false);
  // The autofill's request and the other ways never overlap: each aborts it, and waits for it to end, first.
  const { busy, error, onSubmit } = useAction(async () => {
    await autofill.stop();
    await applyRemember();
    if (await gate(returnTo, () => signInWithEmailAndPassword(auth, email.trim(), password))) await navigate(returnTo, { replace: true });
  });

  const passkey = useAction(async () => {
    await autofill.stop();
    await signInWithPasskey(auth, returnTo);
  });
  // Offered to someone signed out (for a signed-in one it would switch accounts), while no other way is under way.
  const autofill = usePasskeyAutofill(auth, returnTo, user === null && passkeysSupported() && !busy && !passkey.busy && !leaving);
  const beforeProvider = async () => {
    setLeaving(true);
    await autofill.stop();
    await applyRemember();
  };

  return (
    <section className="card">
      <h1>Sign in</h1>
      {user && <p>You are signed in as {user.email}. Signing in again switches accounts.</p>}
      <form onSubmit={onSubmit}>
        <Field label="Email" type="email" autoComplete="username webauthn" required value={email} onChange={setEmail} />
        <Field label="Password" type="password" autoComplete="current-password" required value={password} onChange={setPassword} />
        <fieldset>
          <legend>Remember me</legend>
          {rememberChoices.map((choice) => (
            <label key={choice.value} className="choice">
              <input type="radio" name="remember" value={choice.value} checked={remember === choice.value} onChange={() => setRemember(choice.value)} />
              {choice.label}
            </label>
          ))}
        </fieldset>
        <ErrorAlert error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      {passkeysSupported() && (
        <form onSubmit={passkey.onSubmit}>
          <ErrorAlert error={passkey.error ?? autofill.error} />
          <button type="submit" className="provider" disabled={passkey.busy}>
            Sign in with a passkey
          </button>
        </form>
      )}
      <ProviderButtons before={beforeProvider} returnTo={returnTo} onSignedIn={() => navigate(returnTo, { replace: true })} />
      <p>
        <Link to="/forgot-password">Forgot password?</Link>
      </p>
      {siteFeatures().phoneSignIn && (
        <p>
          <Link to="/signin/phone" state={location.state}>
            Sign in with a phone number
          </Link>
        </p>
      )}
      <p>
        No password? <Link to="/email-link">Get a sign-in link by email</Link>
      </p>
      <p>
        New here? <Link to="/signup">Create an account</Link>
      </p>
    </section>
  );
}
