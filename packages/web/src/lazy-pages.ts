import { lazy, type ComponentType } from 'react';

/**
 * Pages loaded on demand, so the first visit downloads only the shell, the Auth SDK and the home
 * page: the Firestore SDK comes with Notes, the QR code library with the account page, and the
 * hosted action page only when a mailed link is opened.
 */
function page<Name extends string>(load: () => Promise<Record<Name, ComponentType>>, name: Name) {
  return lazy(async () => ({ default: (await load())[name] }));
}

export const Account = page(() => import('./pages/Account'), 'Account');
export const ActionPage = page(() => import('./action/ActionPage'), 'ActionPage');
export const EmailLink = page(() => import('./pages/EmailLink'), 'EmailLink');
export const ForgotPassword = page(() => import('./pages/ForgotPassword'), 'ForgotPassword');
export const Notes = page(() => import('./notes/Notes'), 'Notes');
export const PhoneSignIn = page(() => import('./pages/PhoneSignIn'), 'PhoneSignIn');
export const SecondFactor = page(() => import('./second-factor/SecondFactor'), 'SecondFactor');
export const SignIn = page(() => import('./pages/SignIn'), 'SignIn');
export const SignUp = page(() => import('./pages/SignUp'), 'SignUp');
