import { lazy, type ComponentType } from 'react';

/**
 * Pages loaded on demand, so the first visit downloads only the shell, the Auth SDK and the home
 * page: the Firestore SDK comes with Notes, the QR code library with the account page, and the
 * hosted action page only when a mailed link is opened.
 */
function page<Name extends string>(load: () => Promise<Record<Name, ComponentType>>, name: Name) {
  return lazy(async () => ({ default: (await load())[name] }));
}

const loadAccount = () => import('./pages/Account');
const loadActionPage = () => import('./action/ActionPage');
const loadNotes = () => import('./notes/Notes');

/**
 * Starts fetching the page a direct visit lands on while the app is still starting (settings,
 * saved session), rather than after: on a slow connection the two waits then overlap.
 */
export function preloadPageFor(pathname: string): void {
  const load = pathname === '/notes' ? loadNotes : pathname === '/account' ? loadAccount : pathname === '/__/auth/action' ? loadActionPage : null;
  void load?.().catch(() => undefined);
}

export const Account = page(loadAccount, 'Account');
export const ActionPage = page(loadActionPage, 'ActionPage');
export const EmailLink = page(() => import('./pages/EmailLink'), 'EmailLink');
export const ForgotPassword = page(() => import('./pages/ForgotPassword'), 'ForgotPassword');
export const Notes = page(loadNotes, 'Notes');
export const PhoneSignIn = page(() => import('./pages/PhoneSignIn'), 'PhoneSignIn');
export const SecondFactor = page(() => import('./second-factor/SecondFactor'), 'SecondFactor');
export const SignIn = page(() => import('./pages/SignIn'), 'SignIn');
export const SignUp = page(() => import('./pages/SignUp'), 'SignUp');
