import type { Auth } from 'firebase/auth';
import { signOut } from 'firebase/auth';
import { Suspense, useState } from 'react';
import { Link, NavLink, Route, Routes, useNavigate } from 'react-router';
import { AuthProvider, useAuthState } from './auth-context';
import type { ProviderInfo } from './firebase';
import type { RedirectOutcome } from './redirect';
import { ErrorAlert } from './components/ErrorAlert';
import { Home } from './pages/Home';
import { Console, lazyPages } from './lazy-pages';
import { PageRouter } from './page-router';

export interface AppProps {
  auth: Auth;
  providers: readonly ProviderInfo[];
  redirect: RedirectOutcome;
}

export function App({ auth, providers, redirect }: AppProps) {
  return (
    <AuthProvider auth={auth} providers={providers} redirect={redirect}>
      {/* Plain (non-transition) navigation, so leaving a page and signing out land in one predictable
          order; a page whose code is still coming is waited for on the current one (page-router.tsx). */}
      <PageRouter>
        <Routes>
          <Route
            path="/console/*"
            element={
              <Suspense fallback={<p className="loading">Loading the console…</p>}>
                <Console />
              </Suspense>
            }
          />
          <Route
            path="*"
            element={
              <>
                <Header />
                <main>
                  <Pages />
                </main>
              </>
            }
          />
        </Routes>
      </PageRouter>
    </AuthProvider>
  );
}

function Pages() {
  const { user } = useAuthState();
  if (user === undefined) return <p className="loading">Loading…</p>;
  return (
    <Suspense fallback={<p className="loading">Loading…</p>}>
      <Routes>
        <Route path="/" element={<Home />} />
        {lazyPages.map(({ path, Page }) => (
          <Route key={path} path={path} element={<Page />} />
        ))}
        <Route path="*" element={<NotFound />} />
      </Routes>
    </Suspense>
  );
}

function Header() {
  const { auth, user } = useAuthState();
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>(null);
  async function onSignOut() {
    setError(null);
    // Leave first: a page that needs a user would otherwise see it vanish and send us to /signin.
    await navigate('/');
    try {
      await signOut(auth);
    } catch (caught: unknown) {
      setError(caught);
    }
  }
  return (
    <header>
      <Link to="/" className="brand">
        Hearth
      </Link>
      <nav aria-label="Main">
        <NavLink to="/" end>
          Home
        </NavLink>
        {user ? (
          <>
            <NavLink to="/notes">Notes</NavLink>
            <NavLink to="/account">Account</NavLink>
            <button type="button" onClick={() => void onSignOut()}>
              Sign out
            </button>
          </>
        ) : user === null ? (
          <>
            <NavLink to="/signin">Sign in</NavLink>
            <NavLink to="/signup">Create account</NavLink>
          </>
        ) : null}
      </nav>
      <ErrorAlert error={error} />
    </header>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        <Link to="/">Go home</Link>
      </p>
    </section>
  );
}
