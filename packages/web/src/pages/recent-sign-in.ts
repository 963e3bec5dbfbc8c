import { EmailAuthProvider, reauthenticateWithCredential, sendSignInLinkToEmail, type Auth, type User } from 'firebase/auth';
import { writeEmailForSignIn } from '../action/link';
import { errorCode } from '../auth-errors';
import { forgetResume, keepForResume, type ResumableAction } from './resume-store';

export type { ResumableAction } from './resume-store';
export { forgetResume, pendingResume, resumeParam } from './resume-store';

export function needsRecentSignIn(error: unknown): boolean {
  return errorCode(error) === 'auth/requires-recent-login';
}

/**
 * What the account can confirm it's you with besides its providers: a password of its own, a
 * passkey. An account made by email link also lists the `password` provider, so providerData
 * cannot tell; Google's getAccountInfo answers `passwordUpdatedAt` only for an account whose
 * password was ever set, and Hearth's lists its passkeys in `passkeyInfo`.
 */
export async function accountSignInFacts(auth: Auth, user: User): Promise<{ password: boolean; passkey: boolean }> {
  const apiKey = auth.app.options.apiKey ?? '';
  const response = await fetch(`/identitytoolkit.googleapis.com/v1/accounts:lookup?key=${encodeURIComponent(apiKey)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ idToken: await user.getIdToken() }),
  });
  if (!response.ok) throw new Error(`accounts:lookup answered ${response.status}`);
  const body = (await response.json()) as { users?: { passwordUpdatedAt?: unknown; passkeyInfo?: unknown[] }[] };
  const account = body.users?.[0];
  return { password: account?.passwordUpdatedAt !== undefined, passkey: (account?.passkeyInfo?.length ?? 0) > 0 };
}

/** Whether the account has a password of its own (see accountSignInFacts). */
export async function accountHasPassword(auth: Auth, user: User): Promise<boolean> {
  return (await accountSignInFacts(auth, user)).password;
}

export async function reauthenticateWithPassword(user: User, password: string): Promise<void> {
  await reauthenticateWithCredential(user, EmailAuthProvider.credential(user.email ?? '', password));
}

/**
 * Mails a sign-in link that comes back to the account page with a nonce; the action is kept in
 * this browser under that nonce and resumed only by the page the link opens, so a link never used
 * cannot make a later visit delete anything.
 */
export async function sendReauthenticationLink(auth: Auth, user: User, action: ResumableAction): Promise<void> {
  const email = user.email;
  if (!email) throw new Error('this account has no email address');
  const back = keepForResume(user.uid, action);
  try {
    await sendSignInLinkToEmail(auth, email, { url: `${window.location.origin}${back}`, handleCodeInApp: true });
  } catch (error: unknown) {
    forgetResume();
    throw error;
  }
  writeEmailForSignIn(email);
}
