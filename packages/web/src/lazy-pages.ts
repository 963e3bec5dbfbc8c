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

const account = source(() => import('./pages/Account'));
const actionPage = source(() => import('./action/ActionPage'));
const emailLink = source(() => import('./pages/EmailLink'));
const forgotPassword = source(() => import('./pages/ForgotPassword'));
const notes = source(() => import('./notes/Notes'));
const phoneSignIn = source(() => import('./pages/PhoneSignIn'));
const secondFactor = source(() => import('./second-factor/SecondFactor'));
const signIn = source(() => import('./pages/SignIn'));
const signUp = source(() => import('./pages/SignUp'));
// The operator console is its own bundle: end users never download it.
const consoleApp = source(() => import('./console/ConsoleApp'));

const sourcesByPath = new Map<string, Source>([
  ['/account', account],
  ['/__/auth/action', actionPage],
  ['/email-link', emailLink],
  ['/forgot-password', forgotPassword],
  ['/notes', notes],
  ['/signin/phone', phoneSignIn],
  [secondFactorPath, secondFactor],
  ['/signin', signIn],
  ['/signup', signUp],
]);

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

export const Account = page(account, 'Account');
export const ActionPage = page(actionPage, 'ActionPage');
export const Console = page(consoleApp, 'default');
export const EmailLink = page(emailLink, 'EmailLink');
export const ForgotPassword = page(forgotPassword, 'ForgotPassword');
export const Notes = page(notes, 'Notes');
export const PhoneSignIn = page(phoneSignIn, 'PhoneSignIn');
export const SecondFactor = page(secondFactor, 'SecondFactor');
export const SignIn = page(signIn, 'SignIn');
export const SignUp = page(signUp, 'SignUp');
