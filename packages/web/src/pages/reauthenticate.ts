import { EmailAuthProvider, reauthenticateWithCredential, type User } from 'firebase/auth';

/** Sensitive changes need a fresh sign-in: prove the password again first. */
export async function reauthenticateWithPassword(user: User, password: string): Promise<void> {
  await reauthenticateWithCredential(user, EmailAuthProvider.credential(user.email ?? '', password));
}

export function hasPassword(user: User): boolean {
  return user.providerData.some((info) => info.providerId === 'password');
}
