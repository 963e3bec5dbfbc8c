import { createUserWithEmailAndPassword, updateProfile } from 'firebase/auth';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { PasswordRules } from '../components/PasswordRules';
import { ProviderButtons } from '../components/ProviderButtons';
import { useAction } from '../components/useAction';

export function SignUp() {
  const { auth, refresh } = useAuthState();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [displayName, setDisplayName] = useState('');
  const { busy, error, onSubmit } = useAction(async () => {
    const { user } = await createUserWithEmailAndPassword(auth, email.trim(), password);
    const name = displayName.trim();
    if (name) {
      await updateProfile(user, { displayName: name });
      refresh();
    }
    await navigate('/');
  });

  return (
    <section className="card">
      <h1>Create an account</h1>
      <form onSubmit={onSubmit}>
        <Field label="Email" type="email" autoComplete="email" required value={email} onChange={setEmail} />
        <Field label="Password" type="password" autoComplete="new-password" required value={password} onChange={setPassword} />
        <PasswordRules auth={auth} password={password} />
        <Field label="Display name" type="text" autoComplete="name" value={displayName} onChange={setDisplayName} />
        <ErrorAlert error={error} />
        <button type="submit" disabled={busy}>
          Create account
        </button>
      </form>
      <ProviderButtons onSignedIn={() => navigate('/')} />
      <p>
        Already have an account? <Link to="/signin">Sign in</Link>
      </p>
    </section>
  );
}
