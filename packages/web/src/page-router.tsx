import { useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { Router, UNSAFE_createBrowserHistory as createBrowserHistory, type Location, type NavigationType } from 'react-router';
import { pageReady, preloadPageFor } from './lazy-pages';

interface Shown {
  action: NavigationType;
  location: Location;
}

/**
 * React Router's BrowserRouter (plain, non-transition updates), except that a location whose page's
 * module is not in yet is taken up only once it is: until then the whole app stays on the current
 * location, rather than showing the Suspense fallback (after which React holds the page back a
 * further 300 ms). Nothing renders for a held location, so a page that redirects while its
 * target loads (<Navigate>, re-rendered) cannot loop. A location whose page is in, and the shell's
 * own pages, are taken up at once, in the same update as the navigation (sign-out relies on that
 * order). While a location is held a loading bar shows (styles.css fades it in past 200 ms: on a
 * slow connection the click still answers); the routes, the same element, are not rendered again.
 */
export function PageRouter({ children }: { children: ReactNode }) {
  const historyRef = useRef<ReturnType<typeof createBrowserHistory>>(undefined);
  historyRef.current ??= createBrowserHistory({ v5Compat: true });
  const history = historyRef.current;
  const [shown, setShown] = useState<Shown>({ action: history.action, location: history.location });
  const [pending, setPending] = useState(false);
  useLayoutEffect(
    () =>
      history.listen(({ action, location }) => {
        if (pageReady(location.pathname)) {
          setPending(false);
          setShown({ action, location });
          return;
        }
        setPending(true);
        // Settled either way: a module that failed to load is rendered, and shows its own error.
        void preloadPageFor(location.pathname).then(() => {
          if (history.location.key !== location.key) return; // gone on elsewhere meanwhile
          setPending(false);
          setShown({ action, location });
        });
      }),
    [history],
  );
  return (
    <>
      {pending && <div className="page-pending" role="progressbar" aria-label="Loading the page" />}
      <Router location={shown.location} navigationType={shown.action} navigator={history} useTransitions={false}>
        {children}
      </Router>
    </>
  );
}
