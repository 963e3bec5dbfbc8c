import { consoleRequest, identityPath } from '../api';

/** An account as the admin API answers it (AccountInfo). */
export interface Account {
  localId: string;
  email?: string;
  emailVerified?: boolean;
  displayName?: string;
  phoneNumber?: string;
  photoUrl?: string;
  disabled?: boolean;
  createdAt?: string;
  lastLoginAt?: string;
  lastRefreshAt?: string;
  customAttributes?: string;
  passwordHash?: string;
  salt?: string;
  providerUserInfo?: { providerId: string; rawId?: string; email?: string; displayName?: string; phoneNumber?: string; federatedId?: string }[];
  mfaInfo?: { mfaEnrollmentId: string; displayName?: string; phoneInfo?: string; totpInfo?: unknown; enrolledAt?: string }[];
  /** Hearth's: unused recovery codes (the count only; the codes are never shown), when the account has a set. */
  recoveryCodesRemaining?: number;
  validSince?: string;
  passkeyInfo?: { credentialId: string; name?: string; createdAt?: string; lastUsedAt?: string }[];
}

export type SearchField = 'email' | 'phoneNumber' | 'userId' | 'provider';

const providerNames: Record<string, string> = {
  password: 'Email and password',
  phone: 'Phone',
  anonymous: 'Anonymous',
  'google.com': 'Google',
  'apple.com': 'Apple',
  'github.com': 'GitHub',
  'microsoft.com': 'Microsoft',
  'facebook.com': 'Facebook',
  'twitter.com': 'X (Twitter)',
  'yahoo.com': 'Yahoo',
  emailLink: 'Email link',
};

/** A provider id as people call it (`oidc.acme` -> "OIDC: acme"). */
export function providerName(providerId: string): string {
  if (providerNames[providerId]) return providerNames[providerId];
  if (providerId.startsWith('oidc.')) return `OIDC: ${providerId.slice(5)}`;
  if (providerId.startsWith('saml.')) return `SAML: ${providerId.slice(5)}`;
  return providerId;
}

export function providersOf(account: Account): string[] {
  const ids = (account.providerUserInfo ?? []).map((info) => info.providerId);
  return ids.length ? ids : ['anonymous'];
}

export interface AccountPage {
  users: Account[];
  total: number;
}

/**
 * One page of accounts (by user id), optionally narrowed to one exact email, phone number or uid
 * (accounts:query). Provider has no server-side filter: pages are read until enough match.
 */
export async function queryAccounts(projectId: string, field: SearchField, value: string, offset: number, limit: number): Promise<AccountPage & { nextOffset?: number }> {
  const term = value.trim();
  if (field === 'provider' && term) {
    const users: Account[] = [];
    let scan = offset;
    const batch = 500;
    for (;;) {
      const page = await consoleRequest<{ recordsCount: string; userInfo?: Account[] }>(identityPath(projectId, 'accounts:query'), {
        // By uid, as the plain list: the server pages that by its key (sorted by another field, every
        // page of the scan would sort all the accounts again).
        body: { returnUserInfo: true, limit: batch, offset: scan, sortBy: 'USER_ID', order: 'ASC' },
      });
      const found = page.userInfo ?? [];
      for (let i = 0; i < found.length; i += 1) {
        if (providersOf(found[i]!).some((id) => id.toLowerCase().includes(term.toLowerCase()))) users.push(found[i]!);
        if (users.length === limit) return { users, total: Number(page.recordsCount), nextOffset: scan + i + 1 };
      }
      if (found.length < batch) return { users, total: users.length };
      scan += batch;
    }
  }
  if (!term) return listAccounts(projectId, offset, limit);
  // An exact email, phone or uid is at most one account: accounts:lookup finds it by index.
  const lookupField = field === 'email' ? 'email' : field === 'phoneNumber' ? 'phoneNumber' : 'localId';
  const answer = await consoleRequest<{ users?: Account[] }>(identityPath(projectId, 'accounts:lookup'), { body: { [lookupField]: [term] } });
  const users = answer.users ?? [];
  return { users, total: users.length };
}

/**
 * The plain list, by user id, through accounts:batchGet: it seeks straight to the page (1 ms at 100k
 * accounts) where accounts:query counts and sorts every account first (about a second). Pages past
 * the first are reached with the tokens seen on the way, kept by offset.
 */
const pageTokens = new Map<string, string>();

async function listAccounts(projectId: string, offset: number, limit: number): Promise<AccountPage & { nextOffset?: number }> {
  const token = offset === 0 ? undefined : pageTokens.get(`${projectId}|${limit}|${offset}`);
  if (offset > 0 && token === undefined) {
    // Arrived by a link to a later page: the query API can skip there by offset.
    const page = await consoleRequest<{ recordsCount: string; userInfo?: Account[] }>(identityPath(projectId, 'accounts:query'), { body: { returnUserInfo: true, limit, offset, sortBy: 'USER_ID', order: 'ASC' } });
    const users = page.userInfo ?? [];
    return { users, total: Number(page.recordsCount), ...(users.length === limit ? { nextOffset: offset + limit } : {}) };
  }
  const query = new URLSearchParams({ maxResults: String(limit), ...(token ? { nextPageToken: token } : {}) });
  const page = await consoleRequest<{ users?: Account[]; nextPageToken?: string }>(`${identityPath(projectId, 'accounts:batchGet')}?${query}`);
  const users = page.users ?? [];
  if (page.nextPageToken) pageTokens.set(`${projectId}|${limit}|${offset + limit}`, page.nextPageToken);
  return { users, total: -1, ...(page.nextPageToken && users.length === limit ? { nextOffset: offset + limit } : {}) };
}

/** How many accounts the project has (accounts:query counts them all, so it is asked apart from the page). */
export async function countAccounts(projectId: string): Promise<number> {
  const answer = await consoleRequest<{ recordsCount: string }>(identityPath(projectId, 'accounts:query'), { body: { returnUserInfo: false } });
  return Number(answer.recordsCount);
}

export async function lookupAccount(projectId: string, uid: string): Promise<Account | null> {
  const answer = await consoleRequest<{ users?: Account[] }>(identityPath(projectId, 'accounts:lookup'), { body: { localId: [uid] } });
  return answer.users?.[0] ?? null;
}

export function updateAccount(projectId: string, changes: Record<string, unknown> & { localId: string }): Promise<unknown> {
  return consoleRequest(identityPath(projectId, 'accounts:update'), { body: changes });
}

export function deleteAccount(projectId: string, uid: string): Promise<unknown> {
  return consoleRequest(identityPath(projectId, 'accounts:delete'), { body: { localId: uid } });
}

export function sendMail(projectId: string, requestType: 'PASSWORD_RESET' | 'VERIFY_EMAIL', email: string): Promise<unknown> {
  return consoleRequest(identityPath(projectId, 'accounts:sendOobCode'), { body: { requestType, email } });
}

export function createAccount(projectId: string, fields: { email?: string; password?: string; displayName?: string; phoneNumber?: string }): Promise<{ localId: string }> {
  return consoleRequest(identityPath(projectId, 'accounts'), { body: fields });
}

/** Every account in the Firebase CLI's `auth:export` JSON shape, read in pages (accounts:batchGet). */
export async function exportAccounts(projectId: string): Promise<{ users: Account[] }> {
  const users: Account[] = [];
  let pageToken: string | undefined;
  do {
    const query = new URLSearchParams({ maxResults: '1000', ...(pageToken ? { nextPageToken: pageToken } : {}) });
    const page = await consoleRequest<{ users?: Account[]; nextPageToken?: string }>(`${identityPath(projectId, 'accounts:batchGet')}?${query}`);
    users.push(...(page.users ?? []));
    pageToken = page.nextPageToken;
  } while (pageToken);
  return { users };
}

const importable = ['localId', 'email', 'emailVerified', 'displayName', 'photoUrl', 'phoneNumber', 'disabled', 'passwordHash', 'salt', 'createdAt', 'lastLoginAt', 'customAttributes', 'mfaInfo', 'providerUserInfo'] as const;
const providerFields = ['providerId', 'rawId', 'email', 'displayName', 'photoUrl', 'phoneNumber', 'federatedId', 'screenName'];

export interface HashParameters {
  hashAlgorithm: string;
  signerKey?: string;
  saltSeparator?: string;
  rounds?: number;
  memoryCost?: number;
}

/** Imports a Firebase CLI JSON export (accounts:batchCreate, 1000 at a time); answers how many went in and the errors. */
export async function importAccounts(projectId: string, text: string, hash: HashParameters | null): Promise<{ imported: number; errors: string[] }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('The file is not JSON. Export it with `firebase auth:export users.json --format=json`.');
  }
  const list = typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as { users?: unknown }).users) ? ((parsed as { users: unknown[] }).users) : null;
  if (!list) throw new Error('The file has no "users" list. It should look like {"users": [{"localId": ...}]}.');
  const users = list.map((raw) => {
    const source = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const user: Record<string, unknown> = {};
    for (const key of importable) if (source[key] !== undefined) user[key] = source[key];
    if (Array.isArray(user.providerUserInfo)) {
      user.providerUserInfo = (user.providerUserInfo as Record<string, unknown>[]).map((info) => Object.fromEntries(Object.entries(info).filter(([key]) => providerFields.includes(key))));
    }
    return user;
  });
  const needsHash = users.some((user) => user.passwordHash !== undefined);
  if (needsHash && !hash) throw new Error('Some accounts have password hashes: give the hash algorithm and its parameters (from the Firebase console’s password hash settings).');
  let imported = 0;
  const errors: string[] = [];
  for (let start = 0; start < users.length; start += 1000) {
    const chunk = users.slice(start, start + 1000);
    const answer = await consoleRequest<{ error?: { index: number; message: string }[] }>(identityPath(projectId, 'accounts:batchCreate'), {
      body: { users: chunk, ...(needsHash && hash ? hash : {}) },
    });
    const failed = answer.error ?? [];
    imported += chunk.length - failed.length;
    for (const failure of failed) errors.push(`Account ${start + failure.index + 1}: ${failure.message}`);
  }
  return { imported, errors };
}
