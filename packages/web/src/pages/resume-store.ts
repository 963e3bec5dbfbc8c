/**
 * An account change waiting for the user to confirm it is them somewhere else (a mailed sign-in
 * link, an identity provider by redirect) or across a page load (a passkey, whose session the
 * reloaded page adopts), kept in this browser under a nonce. The page the
 * confirmation comes back to (/account?resume=<nonce>) resumes it; a nonce that does not match,
 * another account, or an hour's wait resumes nothing. No Firebase imports: the app's first chunk
 * (redirect.ts) reads it too.
 */

/** What an account page was doing when it asked the user to confirm it is them. */
export type ResumableAction =
  | { kind: 'delete' }
  | { kind: 'change-email'; address: string }
  | { kind: 'set-password' }
  | { kind: 'change-password' }
  | { kind: 'recovery-codes' }
  | { kind: 'remove-factor'; mfaEnrollmentId: string; label: string };

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

/** Keeps `action` for `uid` and answers the address of the account page that resumes it. */
export function keepForResume(uid: string, action: ResumableAction): string {
  const nonce = crypto.randomUUID();
  const pending: PendingResume = { uid, nonce, action, at: Date.now() };
  window.localStorage.setItem(resumeKey, JSON.stringify(pending));
  return `/account?${resumeParam}=${nonce}`;
}

/** The action to resume for `uid` if this page was opened to resume it (the nonce matches). */
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

/** Once resumed (or given up), the action is never resumed again. */
export function forgetResume(): void {
  try {
    window.localStorage.removeItem(resumeKey);
  } catch {
    // Storage blocked: nothing was kept either.
  }
}
