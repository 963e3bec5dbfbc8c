import { lazy, type ComponentType } from 'react';

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
const notes = source(() => import('./notes/Notes'));
// The operator console is its own bundle: end users never download it.
const consoleApp = source(() => import('./console/ConsoleApp'));

/**
 * Fetches the page a direct visit lands on while the app is still starting (settings, saved
 * session), rather than after: on a slow connection the two waits then overlap. main.tsx renders
 * once it is in, so the page shows in the first render, with no "Loading" step. Resolves either
 * way (a failed load shows the page's own error when it is rendered).
 */
export function preloadPageFor(pathname: string): Promise<void> {
  const landing =
    pathname === '/notes' ? notes : pathname === '/account' ? account : pathname === '/__/auth/action' ? actionPage : pathname === '/console' || pathname.startsWith('/console/') ? consoleApp : null;
  return landing ? landing.load().then(() => undefined, () => undefined) : Promise.resolve();
}

export const Account = page(account, 'Account');
export const ActionPage = page(actionPage, 'ActionPage');
export const Console = page(consoleApp, 'default');
export const EmailLink = page(source(() => import('./pages/EmailLink')), 'EmailLink');
export const ForgotPassword = page(source(() => import('./pages/ForgotPassword')), 'ForgotPassword');
export const Notes = page(notes, 'Notes');
export const PhoneSignIn = page(source(() => import('./pages/PhoneSignIn')), 'PhoneSignIn');
export const SecondFactor = page(source(() => import('./second-factor/SecondFactor')), 'SecondFactor');
export const SignIn = page(source(() => import('./pages/SignIn')), 'SignIn');
export const SignUp = page(source(() => import('./pages/SignUp')), 'SignUp');
