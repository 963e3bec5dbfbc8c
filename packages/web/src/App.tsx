import type { Auth } from 'firebase/auth';
import { signOut } from 'firebase/auth';
import { Suspense, useEffect, useState } from 'react';
import { BrowserRouter, Link, NavLink, Route, Routes, useLocation, useNavigate, type Location } from 'react-router';
import { AuthProvider, useAuthState } from './auth-context';
import type { ProviderInfo } from './firebase';
import type { RedirectOutcome } from './redirect';
import { ErrorAlert } from './components/ErrorAlert';
import { Home } from './pages/Home';
import { Account, ActionPage, Console, EmailLink, ForgotPassword, Notes, PhoneSignIn, SecondFactor, SignIn, SignUp, pageReady, preloadPageFor } from './lazy-pages';
import { secondFactorPath } from './second-factor/resolver';

export interface AppProps {
  auth: Auth;
  providers: readonly ProviderInfo[];
  redirect: RedirectOutcome;
}

export function App({ auth, providers, redirect }: AppProps) {
  return (
    <AuthProvider auth={auth} providers={providers} redirect={redirect}>
      {/* Plain (non-transition) navigation, so leaving a page and signing out land in one predictable order. */}
      <BrowserRouter useTransitions={false}>
        <ShownPage />
      </BrowserRouter>
    </AuthProvider>
  );
}

/**
 * The page of the location whose module is in: navigating to a page not loaded yet keeps the
 * current one up until its module comes, rather than showing the Suspense fallback (after which
 * React holds the page back a further 300 ms). A page already loaded, and the shell's own pages,
 * show at once, in the same render as the navigation (sign-out relies on that order).
 */
function useShownLocation(): { location: Location; pending: boolean } {
  const location = useLocation();
  const [shown, setShown] = useState(location);
  const [settled, setSettled] = useState<string | null>(null);
  const ready = pageReady(location.pathname) || settled === location.key;
  if (ready && shown !== location) setShown(location);
  useEffect(() => {
    if (ready) return;
    let current = true;
    // Settled either way: a module that failed to load is rendered, and shows its own error.
    void preloadPageFor(location.pathname).then(() => current && setSettled(location.key));
    return () => {
      current = false;
    };
  }, [location, ready]);
  return ready ? { location, pending: false } : { location: shown, pending: true };
}

function ShownPage() {
  const { location, pending } = useShownLocation();
  return (
    <>
      {/* Shown only past 200 ms (styles.css): on a slow connection the click still answers. */}
      {pending && <div className="page-pending" role="progressbar" aria-label="Loading the page" />}
      <Routes location={location}>
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
    </>
  );
}

function Pages() {
  const { user } = useAuthState();
  if (user === undefined) return <p className="loading">Loading…</p>;
  return (
    <Suspense fallback={<p className="loading">Loading…</p>}>
      <Routes>
        <Route path="/" element={<Home />} />
        <Route path="/signup" element={<SignUp />} />
        <Route path="/signin" element={<SignIn />} />
        <Route path="/signin/phone" element={<PhoneSignIn />} />
        <Route path={secondFactorPath} element={<SecondFactor />} />
        <Route path="/account" element={<Account />} />
        <Route path="/notes" element={<Notes />} />
        <Route path="/forgot-password" element={<ForgotPassword />} />
        <Route path="/email-link" element={<EmailLink />} />
        <Route path="/__/auth/action" element={<ActionPage />} />
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
