import { lazy, type ComponentType } from 'react';
import { secondFactorPath } from './second-factor/resolver';

/**
 * Pages loaded on demand, so the first visit downloads only the shell, the Auth SDK and the home
 * page: the Firestore SDK comes with Notes, the QR code library with the account page, the
 * console with its own pages, and the hosted action page only when a mailed link is opened.
 */

type Module = Record<string, unknown>;

/** A page's module: fetched once, and kept once in so that it renders without suspending. */
interface Source {
  load(): Promise<Module>;
  loaded(): Module | undefined;
}

function source(fetchModule: () => Promise<Module>): Source {
  let module: Module | undefined;
  let pending: Promise<Module> | undefined;
  return {
    load: () =>
      (pending ??= fetchModule().then(
        (loaded) => (module = loaded),
        (error: unknown) => {
          pending = undefined; // a later visit tries again
          throw error;
        },
      )),
    loaded: () => module,
  };
}

/**
 * A module already in is handed to React through a thenable that resolves at once: React.lazy then
 * renders the page in the same pass. Through a promise it would suspend once, show the fallback,
 * and (React holds content back for 300 ms after a fallback was shown) the page came 300 ms late.
 */
function page(from: Source, name: string) {
  return lazy(() => {
    const loaded = from.loaded();
    const pick = (module: Module) => ({ default: module[name] as ComponentType });
    if (loaded) return { then: (resolve: (value: { default: ComponentType }) => void) => resolve(pick(loaded)) } as unknown as Promise<{ default: ComponentType }>;
    return from.load().then(pick);
  });
}

/** A page of the app's own routes whose code loads on demand: its path, where it comes from, what renders it. */
interface LazyPage {
  path: string;
  from: Source;
  Page: ComponentType;
}

function lazyPage(path: string, fetchModule: () => Promise<Module>, name: string): LazyPage {
  const from = source(fetchModule);
  return { path, from, Page: page(from, name) };
}

/** App.tsx routes each of these; the same table says which module a path waits for. */
export const lazyPages: readonly LazyPage[] = [
  lazyPage('/signup', () => import('./pages/SignUp'), 'SignUp'),
  lazyPage('/signin', () => import('./pages/SignIn'), 'SignIn'),
  lazyPage('/signin/phone', () => import('./pages/PhoneSignIn'), 'PhoneSignIn'),
  lazyPage(secondFactorPath, () => import('./second-factor/SecondFactor'), 'SecondFactor'),
  lazyPage('/account', () => import('./pages/Account'), 'Account'),
  lazyPage('/notes', () => import('./notes/Notes'), 'Notes'),
  lazyPage('/forgot-password', () => import('./pages/ForgotPassword'), 'ForgotPassword'),
  lazyPage('/email-link', () => import('./pages/EmailLink'), 'EmailLink'),
  lazyPage('/__/auth/action', () => import('./action/ActionPage'), 'ActionPage'),
];
const sourcesByPath = new Map(lazyPages.map(({ path, from }) => [path, from]));

// The operator console is its own bundle: end users never download it.
const consoleApp = source(() => import('./console/ConsoleApp'));
export const Console = page(consoleApp, 'default');

/** The module a path's page comes from; none for the pages in the shell (home, not found). */
function sourceFor(pathname: string): Source | undefined {
  if (pathname === '/console' || pathname.startsWith('/console/')) return consoleApp;
  return sourcesByPath.get(pathname);
}

/**
 * Fetches a path's page. main.tsx waits for the page a direct visit lands on while the app is still
 * starting (settings, saved session), so the two waits overlap and the page shows in the first
 * render, with no "Loading" step; page-router.tsx keeps the current page up while the next
 * one's module comes. Resolves either way (a failed load shows the page's own error when it is rendered).
 */
export function preloadPageFor(pathname: string): Promise<void> {
  const from = sourceFor(pathname);
  return from ? from.load().then(() => undefined, () => undefined) : Promise.resolve();
}

/** Whether a path's page renders without suspending: in the shell, or its module is in. */
export function pageReady(pathname: string): boolean {
  const from = sourceFor(pathname);
  return !from || from.loaded() !== undefined;
}
