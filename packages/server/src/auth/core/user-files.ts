import { csvColumnCount, csvProviderColumns } from './user-export.js';
import type { ImportedAccount, ImportedProviderInfo } from './user-import.js';

/**
 * Reading account files in the Firebase CLI's `auth:export` / `auth:import` formats: JSON
 * (`{"users": [...]}`) and CSV (28 columns: see user-export.ts). A file that cannot be read as a
 * whole is refused with the line or account at fault, before anything is imported, as the
 * Firebase CLI does.
 */

export class AccountFileError extends Error {}

const jsonKeys = new Set([
  'localId',
  'email',
  'emailVerified',
  'passwordHash',
  'salt',
  'displayName',
  'photoUrl',
  'createdAt',
  'lastSignedInAt',
  'providerUserInfo',
  'phoneNumber',
  'disabled',
  'customAttributes',
  'mfaInfo',
  'passkeys',
]);
const providerKeys = new Set(['providerId', 'rawId', 'email', 'displayName', 'photoUrl']);

export type AccountFileFormat = 'json' | 'csv';

/** The format a file name says (.json, .csv), else the one given. */
export function formatOf(file: string, given?: string): AccountFileFormat {
  const lower = file.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.json')) return 'json';
  const format = given?.toLowerCase();
  if (format === 'csv' || format === 'json') return format;
  throw new AccountFileError('Name the file .json or .csv, or give --format json|csv');
}

export function parseAccountFile(text: string, format: AccountFileFormat): ImportedAccount[] {
  return format === 'csv' ? parseCsvAccounts(text) : parseJsonAccounts(text);
}

export function parseJsonAccounts(text: string): ImportedAccount[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new AccountFileError(`The file is not JSON: ${(error as Error).message}`);
  }
  const users = (parsed as { users?: unknown } | null)?.users;
  if (!Array.isArray(users)) throw new AccountFileError('The file has no "users" array');
  return users.map((user: unknown, index) => jsonAccount(user, index));
}

function jsonAccount(user: unknown, index: number): ImportedAccount {
  const where = `Account ${index + 1}`;
  if (user === null || typeof user !== 'object' || Array.isArray(user)) throw new AccountFileError(`${where} is not an object`);
  const record = user as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !jsonKeys.has(key));
  if (unknown.length) throw new AccountFileError(`${where} has unsupported keys: ${unknown.join(', ')}`);
  const text = (key: string): string | undefined => {
    const value = record[key];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw new AccountFileError(`${where}: ${key} must be text`);
    return value;
  };
  const flag = (key: string): boolean | undefined => {
    const value = record[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === 'false') return value === 'true';
    throw new AccountFileError(`${where}: ${key} must be true or false`);
  };
  const time = (key: string): string | undefined => {
    const value = record[key];
    if (value === undefined || value === null || value === '') return undefined;
    if ((typeof value === 'number' && Number.isSafeInteger(value)) || (typeof value === 'string' && /^\d+$/.test(value))) return String(value);
    throw new AccountFileError(`${where}: ${key} must be milliseconds since the epoch`);
  };
  const account = compact<ImportedAccount>({
    localId: text('localId'),
    email: text('email'),
    emailVerified: flag('emailVerified'),
    passwordHash: base64(text('passwordHash'), `${where}: passwordHash`),
    salt: base64(text('salt'), `${where}: salt`),
    displayName: text('displayName'),
    photoUrl: text('photoUrl'),
    createdAt: time('createdAt'),
    lastLoginAt: time('lastSignedInAt'),
    phoneNumber: text('phoneNumber'),
    disabled: flag('disabled'),
    customAttributes: text('customAttributes'),
  });
  const providers = record.providerUserInfo;
  if (providers !== undefined && providers !== null) {
    if (!Array.isArray(providers)) throw new AccountFileError(`${where}: providerUserInfo must be a list`);
    account.providerUserInfo = providers.map((info: unknown) => jsonProvider(info, where));
  }
  const mfaInfo = record.mfaInfo;
  if (mfaInfo !== undefined && mfaInfo !== null) {
    // Entries are checked by the import itself (phone factors on a verified email, as Google's).
    if (!Array.isArray(mfaInfo)) throw new AccountFileError(`${where}: mfaInfo must be a list`);
    account.mfaInfo = mfaInfo;
  }
  const passkeys = record.passkeys;
  if (passkeys !== undefined && passkeys !== null) {
    // Entries are checked by the import itself (passkey-transfer.ts).
    if (!Array.isArray(passkeys)) throw new AccountFileError(`${where}: passkeys must be a list`);
    account.passkeys = passkeys;
  }
  return account;
}

function jsonProvider(info: unknown, where: string): ImportedProviderInfo {
  if (info === null || typeof info !== 'object' || Array.isArray(info)) throw new AccountFileError(`${where}: a providerUserInfo entry is not an object`);
  const record = info as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !providerKeys.has(key));
  if (unknown.length) throw new AccountFileError(`${where}: providerUserInfo has unsupported keys: ${unknown.join(', ')}`);
  for (const [key, value] of Object.entries(record)) {
    if (value !== null && value !== undefined && typeof value !== 'string') throw new AccountFileError(`${where}: providerUserInfo ${key} must be text`);
  }
  return compact<ImportedProviderInfo>(record as ImportedProviderInfo);
}

export function parseCsvAccounts(text: string): ImportedAccount[] {
  return csvRecords(text).map(({ cells, line }) => csvAccount(cells, line));
}

function csvAccount(cells: string[], line: number): ImportedAccount {
  const where = `Line ${line}`;
  if (cells.length < 1 || cells.length > csvColumnCount + 1) throw new AccountFileError(`${where} has ${cells.length} columns; the format has ${csvColumnCount}`);
  const cell = (index: number): string | undefined => (cells[index] === undefined || cells[index] === '' ? undefined : cells[index]);
  const time = (index: number): string | undefined => {
    const value = cell(index);
    if (value !== undefined && !/^\d+$/.test(value)) throw new AccountFileError(`${where}: column ${index + 1} must be milliseconds since the epoch`);
    return value;
  };
  const account = compact<ImportedAccount>({
    localId: cell(0),
    email: cell(1),
    emailVerified: cell(2) === 'true',
    passwordHash: base64(cell(3), `${where}: passwordHash`),
    salt: base64(cell(4), `${where}: salt`),
    displayName: cell(5),
    photoUrl: cell(6),
    createdAt: time(23),
    lastLoginAt: time(24),
    phoneNumber: cell(25),
    disabled: cell(26) === 'true',
    customAttributes: cell(27),
  });
  const providers: ImportedProviderInfo[] = [];
  for (const [providerId, start] of csvProviderColumns) {
    const rawId = cell(start);
    if (rawId) providers.push(compact<ImportedProviderInfo>({ providerId, rawId, email: cell(start + 1), displayName: cell(start + 2), photoUrl: cell(start + 3) }));
  }
  if (providers.length) account.providerUserInfo = providers;
  return account;
}

/**
 * RFC 4180 records: quoted cells may hold commas, doubled quotes and line breaks; a quote inside an
 * unquoted cell is kept as text (the Firebase CLI writes display names with quotes unquoted).
 * Blank lines are skipped.
 */
export function csvRecords(text: string): Array<{ cells: string[]; line: number }> {
  const records: Array<{ cells: string[]; line: number }> = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let cellStarted = false;
  const endRecord = () => {
    cells.push(cell);
    if (!(cells.length === 1 && cells[0] === '')) records.push({ cells, line: recordLine });
    cells = [];
    cell = '';
    cellStarted = false;
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else {
        if (char === '\n') line++;
        cell += char;
      }
      continue;
    }
    if (char === '"' && !cellStarted) {
      quoted = true;
      cellStarted = true;
    } else if (char === ',') {
      cells.push(cell);
      cell = '';
      cellStarted = false;
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      endRecord();
      line++;
      recordLine = line;
    } else {
      cell += char;
      cellStarted = true;
    }
  }
  if (quoted) throw new AccountFileError(`Line ${recordLine}: a quoted cell is not closed`);
  if (cell !== '' || cells.length) endRecord();
  return records;
}

function base64(value: string | undefined, what: string): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) throw new AccountFileError(`${what} should be base64 encoded`);
  return value;
}

/** Drops absent fields, so the request carries only what the file had. */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as T;
}
