import { EmailAuthProvider, reauthenticateWithCredential, sendSignInLinkToEmail, type Auth, type User } from 'firebase/auth';
import { writeEmailForSignIn } from '../action/link';
import { errorCode } from '../auth-errors';

/** What an account page was doing when it asked for a fresh sign-in by email link. */
export type ResumableAction = { kind: 'delete' } | { kind: 'change-email'; address: string } | { kind: 'set-password' };

interface PendingResume {
  uid: string;
  nonce: string;
  action: ResumableAction;
  at: number;
}

const resumeKey = 'hearth:resumeAfterSignIn';
/** A link is good for six hours; the action it was sent for is not kept longer than one. */
const resumeForMs = 60 * 60_000;
export const resumeParam = 'resume';

export function needsRecentSignIn(error: unknown): boolean {
  return errorCode(error) === 'auth/requires-recent-login';
}

/**
 * Whether the account has a password of its own. An account made by email link also lists the
 * `password` provider, so providerData cannot tell; Google's getAccountInfo answers
 * `passwordUpdatedAt` only for an account whose password was ever set.
 */
export async function accountHasPassword(auth: Auth, user: User): Promise<boolean> {
  const apiKey = auth.app.options.apiKey ?? '';
  const response = await fetch(`/identitytoolkit.googleapis.com/v1/accounts:lookup?key=${encodeURIComponent(apiKey)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ idToken: await user.getIdToken() }),
  });
  if (!response.ok) throw new Error(`accounts:lookup answered ${response.status}`);
  const body = (await response.json()) as { users?: { passwordUpdatedAt?: unknown }[] };
  return body.users?.[0]?.passwordUpdatedAt !== undefined;
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
  const nonce = crypto.randomUUID();
  const pending: PendingResume = { uid: user.uid, nonce, action, at: Date.now() };
  await sendSignInLinkToEmail(auth, email, { url: `${window.location.origin}/account?${resumeParam}=${nonce}`, handleCodeInApp: true });
  window.localStorage.setItem(resumeKey, JSON.stringify(pending));
  writeEmailForSignIn(email);
}

/** The action to resume for `uid` if this page was opened by its link (the nonce matches). */
export function pendingResume(uid: string, nonce: string | null): ResumableAction | null {
  if (!nonce) return null;
  try {
    const text = window.localStorage.getItem(resumeKey);
    if (!text) return null;
    const pending = JSON.parse(text) as PendingResume;
    if (pending.nonce !== nonce || pending.uid !== uid || Date.now() - pending.at > resumeForMs) return null;
    return pending.action;
  } catch {
    return null;
  }
}

/** Once resumed, the action is never resumed again (the link cannot be opened twice anyway). */
export function forgetResume(): void {
  window.localStorage.removeItem(resumeKey);
}
