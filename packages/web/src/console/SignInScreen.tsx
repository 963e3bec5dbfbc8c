import { signInWithEmailAndPassword, signOut } from 'firebase/auth';
import { useState, type FormEvent } from 'react';
import { startSession, type ConsoleSession } from './api';
import type { ConsoleFirebase } from './console-firebase';
import { describeAuthError } from '../auth-errors';
import { describeError } from './ui';

type Method = 'adminKey' | 'account';

/**
 * The admin key is sent once, in the session request, and kept nowhere (the field is cleared); an
 * operator account signs in through the firebase SDK and its ID token is traded for the session.
 */
export function SignInScreen({ firebase, expired, onSignedIn }: { firebase: ConsoleFirebase; expired: boolean; onSignedIn: (session: ConsoleSession) => void }) {
  const [method, setMethod] = useState<Method>('adminKey');
  const [adminKey, setAdminKey] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (method === 'adminKey') {
        const key = adminKey;
        setAdminKey('');
        onSignedIn(await startSession({ adminKey: key }));
      } else {
        let idToken: string;
        try {
          const credential = await signInWithEmailAndPassword(firebase.auth, email, password);
          idToken = await credential.user.getIdToken();
        } catch (caught) {
          throw new Error(describeAuthError(caught));
        }
        // The console works with its cookie; the account's own sign-in is not kept.
        await signOut(firebase.auth).catch(() => undefined);
        setPassword('');
        onSignedIn(await startSession({ idToken }));
      }
    } catch (caught) {
      setError(describeSignInError(caught, method));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="console-signin" onSubmit={(event) => void submit(event)} aria-labelledby="console-signin-title">
      <h1 id="console-signin-title">Sign in to the Hearth console</h1>
      {expired && <p role="status">Your session has ended. Sign in again to continue.</p>}
      <fieldset>
        <legend>Sign in with</legend>
        <label>
          <input type="radio" name="method" checked={method === 'adminKey'} onChange={() => setMethod('adminKey')} /> The admin key
        </label>
        <label>
          <input type="radio" name="method" checked={method === 'account'} onChange={() => setMethod('account')} /> An operator account
        </label>
      </fieldset>
      {method === 'adminKey' ? (
        <label>
          Admin key
          <input type="password" autoComplete="off" required value={adminKey} onChange={(event) => setAdminKey(event.target.value)} autoFocus />
        </label>
      ) : (
        <>
          <label>
            Email
            <input type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} autoFocus />
          </label>
          <label>
            Password
            <input type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
          </label>
          <p className="console-hint">The account needs the custom claim <code>hearthOperator: true</code>.</p>
        </>
      )}
      {error && (
        <p role="alert" className="console-alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

function describeSignInError(error: unknown, method: Method): string {
  const text = describeError(error);
  if (method === 'adminKey' && /401|credential|key/i.test(text)) return `That admin key was not accepted (${text}). Check the key the server printed at start, or HEARTH_ADMIN_KEY.`;
  if (method === 'account' && /401|operator/i.test(text)) return `${text} The account must carry the custom claim hearthOperator: true.`;
  return text;
}
