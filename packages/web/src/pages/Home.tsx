import { Link, useLocation } from 'react-router';
import { useAuthState } from '../auth-context';
import { StatusMessage } from '../components/ErrorAlert';

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
      </section>
    );
  }
  return (
    <section>
      <h1>Welcome{user.displayName ? `, ${user.displayName}` : ''}</h1>
      <p>
        Signed in as <strong data-testid="signed-in-email">{user.email ?? user.phoneNumber ?? 'an anonymous user'}</strong>.
      </p>
      <p>
        <Link to="/account">Manage your account</Link>
      </p>
    </section>
  );
}
