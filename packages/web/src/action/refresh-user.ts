import { reload, type Auth } from 'firebase/auth';

/**
 * After a link changed an account, brings the signed-in user up to date when it is that account
 * (`email` is the address it had). A change of address also ends the account's sessions on the
 * server; the SDK then signs the user out, which is the expected outcome, so errors are not shown.
 */
export async function refreshSignedInUser(auth: Auth, email: string | null | undefined): Promise<void> {
  const user = auth.currentUser;
  if (!user || (email != null && user.email?.toLowerCase() !== email.toLowerCase())) return;
  try {
    await reload(user);
  } catch {
    // signed out by the SDK (session ended), or offline: the account page catches up later
  }
}
