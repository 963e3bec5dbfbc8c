import type { ProviderUserInfo, Store, UserRecord } from '../../storage/store.js';
import { exportedPasskeys, type ExportedPasskey } from '../passkeys/passkey-transfer.js';
import { parseImportedHash } from './imported-passwords.js';
import { defaultScryptParams, keyLength } from './passwords.js';

/**
 * Accounts out of a project in the Firebase CLI's `auth:export` formats (JSON and CSV), so they
 * can be imported into another Hearth, or into Firebase, with their passwords.
 *
 * Hearth's password hashes are plain scrypt, which Firebase calls STANDARD_SCRYPT: an export is
 * imported with `exportHashOptions` (`hearth users import --hash-algo HEARTH_SCRYPT` for short).
 * Hashes that are not in those parameters (imported ones not yet re-hashed by a sign-in) are left
 * out, as Firebase leaves out hashes not in its own scrypt; such accounts sign in after a
 * password reset.
 */
export const exportHashOptions = {
  hashAlgo: 'STANDARD_SCRYPT',
  memCost: defaultScryptParams.N,
  blockSize: defaultScryptParams.r,
  parallelization: defaultScryptParams.p,
  dkLen: keyLength,
} as const;

/** One account as `firebase auth:export` writes it to JSON. */
export interface ExportedAccount {
  localId: string;
  email?: string;
  emailVerified: boolean;
  /** Standard base64. */
  passwordHash?: string;
  salt?: string;
  displayName?: string;
  photoUrl?: string;
  /** Milliseconds since the epoch, as decimal text. */
  lastSignedInAt?: string;
  createdAt: string;
  phoneNumber?: string;
  disabled: boolean;
  customAttributes?: string;
  providerUserInfo: ExportedProviderInfo[];
  /** Phone second factors (TOTP secrets are not exported, as Firebase's export leaves them out). */
  mfaInfo?: Array<{ mfaEnrollmentId: string; displayName?: string; phoneInfo: string; enrolledAt: string }>;
  /** Hearth's own field (passkey-transfer.ts): JSON only, the CSV has no column for it. */
  passkeys?: ExportedPasskey[];
}

export interface ExportedProviderInfo {
  providerId: string;
  rawId: string;
  email?: string;
  displayName?: string;
  photoUrl?: string;
}

/** The providers the Firebase CLI's CSV has columns for, and where they start. */
const csvProviderColumns = new Map([
  ['google.com', 7],
  ['facebook.com', 11],
  ['twitter.com', 15],
  ['github.com', 19],
]);
export const csvColumnCount = 28;

/** Every account of the project, page by page (by uid), and whether its password hash had to be left out. */
export async function* exportAccounts(store: Store, projectId: string, pageSize = 1000): AsyncGenerator<{ account: ExportedAccount; passwordLeftOut: boolean }> {
  let after: string | undefined;
  for (;;) {
    const page = await store.listUsers(projectId, pageSize, after);
    for (const user of page.users) {
      const account = toExportedAccount(user);
      yield { account, passwordLeftOut: user.passwordHash !== undefined && account.passwordHash === undefined };
    }
    if (!page.nextPageToken) return;
    after = page.nextPageToken;
  }
}

export function toExportedAccount(user: UserRecord): ExportedAccount {
  const account: ExportedAccount = {
    localId: user.localId,
    emailVerified: user.emailVerified,
    createdAt: String(user.createdAt),
    disabled: user.disabled,
    providerUserInfo: user.providerUserInfo.filter((p) => p.providerId !== 'password' && p.providerId !== 'phone').map(exportedProvider),
  };
  if (user.email) account.email = user.email;
  const password = user.passwordHash ? exportablePassword(user.passwordHash) : undefined;
  if (password) Object.assign(account, password);
  if (user.displayName) account.displayName = user.displayName;
  if (user.photoUrl) account.photoUrl = user.photoUrl;
  if (user.lastLoginAt) account.lastSignedInAt = String(user.lastLoginAt);
  if (user.phoneNumber) account.phoneNumber = user.phoneNumber;
  if (user.customAttributes) account.customAttributes = user.customAttributes;
  const phoneFactors = (user.mfaInfo ?? []).flatMap((factor) =>
    factor.phoneInfo
      ? [{ mfaEnrollmentId: factor.mfaEnrollmentId, ...(factor.displayName ? { displayName: factor.displayName } : {}), phoneInfo: factor.phoneInfo, enrolledAt: new Date(factor.enrolledAt).toISOString() }]
      : [],
  );
  if (phoneFactors.length) account.mfaInfo = phoneFactors;
  if (user.passkeys?.length) account.passkeys = exportedPasskeys(user.passkeys);
  return account;
}

function exportedProvider(info: ProviderUserInfo): ExportedProviderInfo {
  const entry: ExportedProviderInfo = { providerId: info.providerId, rawId: info.rawId };
  if (info.email) entry.email = info.email;
  if (info.displayName) entry.displayName = info.displayName;
  if (info.photoUrl) entry.photoUrl = info.photoUrl;
  return entry;
}

/** The hash and salt in `exportHashOptions`, or nothing when the stored hash is in other parameters. */
function exportablePassword(stored: string): { passwordHash: string; salt: string } | undefined {
  const { N, r, p } = defaultScryptParams;
  const [scheme, n, blockSize, parallelization, salt, hash] = stored.split('$');
  if (scheme === 'scrypt' && Number(n) === N && Number(blockSize) === r && Number(parallelization) === p && salt && hash && Buffer.from(hash, 'base64').length === keyLength) {
    return { passwordHash: hash, salt };
  }
  const imported = parseImportedHash(stored);
  const o = imported?.options;
  if (o?.algorithm === 'STANDARD_SCRYPT' && o.cpuMemCost === N && o.blockSize === r && o.parallelization === p && (o.dkLen ?? imported!.hash.length) === keyLength) {
    return { passwordHash: imported!.hash.toString('base64'), salt: imported!.salt.toString('base64') };
  }
  return undefined;
}

/** One CSV line as the Firebase CLI writes it (its 28 columns, then a trailing comma). */
export function toCsvLine(account: ExportedAccount): string {
  const cells: string[] = new Array<string>(csvColumnCount).fill('');
  cells[0] = account.localId;
  cells[1] = account.email ?? '';
  cells[2] = String(account.emailVerified);
  cells[3] = account.passwordHash ?? '';
  cells[4] = account.salt ?? '';
  cells[5] = account.displayName ?? '';
  cells[6] = account.photoUrl ?? '';
  for (const info of account.providerUserInfo) {
    const start = csvProviderColumns.get(info.providerId);
    if (start === undefined) continue;
    cells[start] = info.rawId;
    cells[start + 1] = info.email ?? '';
    cells[start + 2] = info.displayName ?? '';
    cells[start + 3] = info.photoUrl ?? '';
  }
  cells[23] = account.createdAt;
  cells[24] = account.lastSignedInAt ?? '';
  cells[25] = account.phoneNumber ?? '';
  cells[26] = String(account.disabled);
  cells[27] = account.customAttributes ?? '';
  return `${cells.map(csvCell).join(',')},`;
}

/** RFC 4180 quoting, which the Firebase CLI's reader (csv-parse) takes back. */
function csvCell(value: string): string {
  return /[",\r\n]/.test(value) || /^\s|\s$/.test(value) || /^['"]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export { csvProviderColumns };
