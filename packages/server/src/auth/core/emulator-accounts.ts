import { randomBytes, scrypt } from 'node:crypto';
import { exportHashOptions, type ExportedAccount } from './user-export.js';
import type { WireHashOptions } from './imported-passwords.js';
import type { ImportedAccount, ImportedProviderInfo } from './user-import.js';

/**
 * The Auth emulator's export (`auth_export/accounts.json` of `firebase emulators:export`) in and
 * out. The emulator keeps passwords in plain text (`passwordHash: "fakeHash:salt=S:password=P"`);
 * as the Firebase CLI's own import does with them, each is hashed on the way in: here with Hearth's
 * scrypt parameters (STANDARD_SCRYPT, exportHashOptions), so the accounts sign in with their
 * passwords and the plain text is never stored.
 */

export class EmulatorAccountsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmulatorAccountsError';
  }
}

/** The hash options of the accounts `fromEmulatorAccounts` returns (batchCreate's). */
export const emulatorImportHashOptions: WireHashOptions = {
  hashAlgorithm: 'STANDARD_SCRYPT',
  cpuMemCost: exportHashOptions.memCost,
  blockSize: exportHashOptions.blockSize,
  parallelization: exportHashOptions.parallelization,
  dkLen: exportHashOptions.dkLen,
};

const fakeHashPrefix = 'fakeHash:';

function scryptHash(password: string, salt: Buffer): Promise<Buffer> {
  const { memCost: N, blockSize: r, parallelization: p, dkLen } = exportHashOptions;
  return new Promise((resolve, reject) =>
    scrypt(password, salt, dkLen, { N, r, p, maxmem: 256 * N * r + (1 << 20) }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** The plain password inside an emulator hash (`fakeHash:salt=S:password=P`; P may hold colons). */
function plainPassword(hash: string): string | undefined {
  if (!hash.startsWith(fakeHashPrefix)) return undefined;
  const at = hash.indexOf(':password=');
  return at < 0 ? undefined : hash.slice(at + ':password='.length);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

function provider(raw: unknown): ImportedProviderInfo {
  const record = (raw ?? {}) as Record<string, unknown>;
  const info: ImportedProviderInfo = {};
  for (const key of ['providerId', 'rawId', 'email', 'displayName', 'photoUrl', 'phoneNumber', 'federatedId'] as const) {
    const value = text(record[key]);
    if (value !== undefined) info[key] = value;
  }
  return info;
}

/** accounts.json's text as batchCreate accounts (in `emulatorImportHashOptions`), with how many had a password. */
export async function fromEmulatorAccounts(json: string): Promise<{ users: ImportedAccount[]; withPassword: number }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new EmulatorAccountsError(`accounts.json is not JSON: ${(error as Error).message}`);
  }
  const users = (parsed as { users?: unknown } | null)?.users;
  if (!Array.isArray(users)) throw new EmulatorAccountsError('accounts.json has no "users" list');
  let withPassword = 0;
  const accounts: ImportedAccount[] = [];
  for (const [index, raw] of users.entries()) {
    if (raw === null || typeof raw !== 'object') throw new EmulatorAccountsError(`accounts.json: user ${index + 1} is not an object`);
    const record = raw as Record<string, unknown>;
    const account: ImportedAccount = {};
    for (const key of ['localId', 'email', 'displayName', 'photoUrl', 'phoneNumber', 'customAttributes', 'tenantId'] as const) {
      const value = text(record[key]);
      if (value !== undefined) account[key] = value;
    }
    if (typeof record.emailVerified === 'boolean') account.emailVerified = record.emailVerified;
    if (typeof record.disabled === 'boolean') account.disabled = record.disabled;
    const createdAt = text(record.createdAt);
    if (createdAt !== undefined) account.createdAt = createdAt;
    const lastLoginAt = text(record.lastLoginAt);
    if (lastLoginAt !== undefined) account.lastLoginAt = lastLoginAt;
    if (Array.isArray(record.providerUserInfo)) account.providerUserInfo = record.providerUserInfo.map(provider);
    // Phone factors move (as in the Firebase CLI's format); a TOTP secret is in no export to move.
    const phoneFactors = Array.isArray(record.mfaInfo) ? record.mfaInfo.filter((factor: unknown) => typeof (factor as { phoneInfo?: unknown } | null)?.phoneInfo === 'string') : [];
    if (phoneFactors.length > 0) account.mfaInfo = phoneFactors;
    const password = typeof record.passwordHash === 'string' ? plainPassword(record.passwordHash) : undefined;
    if (password !== undefined) {
      const salt = randomBytes(16);
      account.passwordHash = (await scryptHash(password, salt)).toString('base64');
      account.salt = salt.toString('base64');
      withPassword++;
    } else if (typeof record.passwordHash === 'string' && typeof record.salt === 'string') {
      // Not the emulator's plain text: a hash in Hearth's parameters, from `hearth export` (toEmulatorAccounts).
      account.passwordHash = record.passwordHash;
      account.salt = record.salt;
      withPassword++;
    }
    accounts.push(account);
  }
  return { users: accounts, withPassword };
}

/**
 * Hearth's accounts (the Firebase CLI's auth:export shape) as the Auth emulator's accounts.json.
 * Hashes stay Hearth's scrypt: the emulator compares only its own plain-text form, so these
 * accounts sign in there after a password reset (as after any move of hashes it cannot check).
 */
export function toEmulatorAccounts(accounts: readonly ExportedAccount[]): string {
  const users = accounts.map(({ lastSignedInAt, ...account }) => ({
    ...account,
    ...(lastSignedInAt !== undefined && { lastLoginAt: lastSignedInAt }),
    providerUserInfo: account.providerUserInfo.map((info) => ({ ...info, ...(info.providerId === 'password' ? { federatedId: info.rawId } : {}) })),
  }));
  return `${JSON.stringify({ kind: 'identitytoolkit#DownloadAccountResponse', users }, null, 2)}\n`;
}
