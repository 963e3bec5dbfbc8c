import { pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { BatchCreateRequest, ImportedAccount } from './user-import.js';

/**
 * --dev: the accounts file of the Firebase CLI's emulator export (`emulators:export` writes what
 * `accounts:batchGet?maxResults=-1` answers, `emulators:start --import` posts it back whole to
 * `accounts:batchCreate`): a DownloadAccountResponse (`kind`, `users`, `nextPageToken`) whose users
 * carry the read-only fields of an account (validSince, lastRefreshAt, ...). They are dropped here,
 * and the Auth emulator's own password "hashes" (`fakeHash:salt=S:password=P`, the password in
 * plain text) become real ones, so its users sign in with their passwords after the import.
 */

/** The ImportedAccount fields batchCreate takes; the rest of an exported account is output only. */
const importedFields = [
  'localId', 'email', 'emailVerified', 'displayName', 'photoUrl', 'phoneNumber', 'disabled',
  'passwordHash', 'salt', 'createdAt', 'lastLoginAt', 'customAttributes', 'providerUserInfo', 'mfaInfo', 'passkeys', 'tenantId',
] as const;

/** The Auth emulator's stand-in hash: `fakeHash:salt=<salt>:password=<password>`. */
const fakeHash = /^fakeHash:salt=(.*?):password=(.*)$/s;
/** Imported hashes are re-hashed at their owner's first sign-in (imported-passwords.ts); this only has to hold until then. */
const importRounds = 1000;

const pbkdf2Async = promisify(pbkdf2);

export async function fromEmulatorExport(body: BatchCreateRequest & { kind?: unknown; nextPageToken?: unknown }): Promise<BatchCreateRequest> {
  const { kind: _kind, nextPageToken: _next, users, ...request } = body;
  const accounts = (users ?? []).map((user) => pick(user as Record<string, unknown>));
  if (request.hashAlgorithm !== undefined || !accounts.some((account) => fakeHash.test(account.passwordHash ?? ''))) return { ...request, users: accounts };
  // One algorithm per request: PBKDF2 over each plain password with a salt of its own (on the libuv pool).
  await Promise.all(
    accounts.map(async (account) => {
      const password = fakeHash.exec(account.passwordHash ?? '')?.[2];
      delete account.passwordHash;
      delete account.salt;
      if (password === undefined) return;
      const salt = randomBytes(16);
      account.salt = salt.toString('base64');
      account.passwordHash = (await pbkdf2Async(password, salt, importRounds, 32, 'sha256')).toString('base64');
    }),
  );
  return { ...request, users: accounts, hashAlgorithm: 'PBKDF2_SHA256', rounds: importRounds };
}

function pick(user: Record<string, unknown>): ImportedAccount {
  const account: Record<string, unknown> = {};
  for (const field of importedFields) if (user[field] !== undefined && user[field] !== null) account[field] = user[field];
  return account as ImportedAccount;
}
