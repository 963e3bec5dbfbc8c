import { StoreConflict, type MfaEnrollmentRecord, type Mutation, type ProviderUserInfo, type Store, type UserRecord } from '../../storage/store.js';
import { ApiError, requestErrors } from '../../http/api-error.js';
import { enrollmentsFromAdmin, type AdminEnrollment } from '../mfa/enrollments.js';
import { withDerivedProviders } from './account-view.js';
import { requireAdmin } from './auth-context.js';
import { isBcryptHash } from './bcrypt.js';
import { decodeBase64, importedHash, readHashOptions, type ImportHashOptions, type WireHashOptions } from './imported-passwords.js';
import { normalizePhoneNumber } from '../phone/numbers.js';
import { holdsOperatorClaim, operatorClaimChanged, operatorsOnlyMessage } from './operator-claim.js';
import type { Caller } from './requests.js';
import { reservedClaims } from './tokens.js';
import { isValidEmail, normalizeEmail } from './validation.js';
import { tenantField, tenantOf } from '../tenants/realm.js';
import { importedPasskeys } from '../passkeys/passkey-transfer.js';
import { passkeyIndexProvider } from '../../storage/passkey-records.js';

export const maxImportBatch = 1000;
const maxLocalIdLength = 128;
const maxClaimsLength = 1000;

/** One account of accounts:batchCreate, as firebase-admin's importUsers and the Firebase CLI send it. */
export interface ImportedAccount {
  localId?: string;
  email?: string;
  emailVerified?: boolean;
  displayName?: string;
  photoUrl?: string;
  phoneNumber?: string;
  disabled?: boolean;
  /** Web-safe or standard base64. */
  passwordHash?: string;
  salt?: string;
  /** Milliseconds since the epoch, as a number or decimal text. */
  createdAt?: number | string;
  lastLoginAt?: number | string;
  customAttributes?: string;
  providerUserInfo?: ImportedProviderInfo[];
  mfaInfo?: unknown[];
  /** Hearth's own (passkey-transfer.ts); firebase-admin's importUsers has no such field. */
  passkeys?: unknown[];
  tenantId?: string;
}

export interface ImportedProviderInfo {
  providerId?: string;
  rawId?: string;
  email?: string;
  displayName?: string;
  photoUrl?: string;
  phoneNumber?: string;
  federatedId?: string;
}

export interface BatchCreateRequest extends WireHashOptions {
  users?: ImportedAccount[];
  sanityCheck?: boolean;
  allowOverwrite?: boolean;
}

/** Google's answer lists only the refused accounts, by their index in the request. */
export interface ImportError {
  index: number;
  message: string;
}

export interface ImportResult {
  errors: ImportError[];
  imported: number;
}

/** A refusal of one account; the others are imported all the same. */
class AccountRefused extends Error {}

/**
 * Imports accounts into a project (accounts:batchCreate, `hearth users import`). An account whose
 * uid exists replaces it (its sessions end), as an import re-run expects; an email, or a provider
 * identity, held by another account refuses that one account. Passwords come as hashes in the
 * request's algorithm and stay so until their owner signs in (imported-passwords.ts).
 */
export async function importAccounts(store: Store, projectId: string, request: BatchCreateRequest, importer: Caller | 'owner', now = Date.now()): Promise<ImportResult> {
  const asOwner = importer === 'owner' || importer.isOwner === true;
  const accounts = request.users ?? [];
  if (accounts.length > maxImportBatch) throw requestErrors.invalidArgument(`A maximum of ${maxImportBatch} accounts can be imported at once.`);
  const hashOptions = readHashOptions(request);
  if (!hashOptions && accounts.some((a) => a?.passwordHash)) {
    throw requestErrors.invalidArgument('hashAlgorithm is required to import accounts with a passwordHash.');
  }
  const errors: ImportError[] = [];
  const planned: Array<{ index: number; mutation: Mutation }> = [];
  const seenIds = new Set<string>();
  const seenEmails = new Set<string>();
  const seenPhones = new Set<string>();
  const seenPasskeys = new Set<string>();
  for (const [index, account] of accounts.entries()) {
    try {
      const user = toUserRecord(account, hashOptions, now, projectId);
      if (seenIds.has(user.localId)) throw new AccountRefused('localId is given twice in this request');
      if (user.email && seenEmails.has(user.email)) throw new AccountRefused('email is given twice in this request');
      if (user.phoneNumber && seenPhones.has(user.phoneNumber)) throw new AccountRefused('phone number is given twice in this request');
      const existing = await store.getUser(projectId, user.localId);
      if (!asOwner) refuseOperatorChange(existing, user);
      if (user.email) {
        const holder = await store.getUserByEmail(projectId, user.email);
        if (holder && holder.localId !== user.localId) throw new AccountRefused('email exists in other account in database');
      }
      if (user.phoneNumber) {
        const holder = await store.getUserByPhone(projectId, user.phoneNumber);
        if (holder && holder.localId !== user.localId) throw new AccountRefused('phone number exists in other account in database');
      }
      for (const info of user.providerUserInfo) {
        const holder = await store.getUserByFederatedId(projectId, info.providerId, info.rawId);
        if (holder && holder.localId !== user.localId) throw new AccountRefused(`raw id of ${info.providerId} exists in other account in database`);
      }
      for (const { credentialId } of user.passkeys ?? []) {
        if (seenPasskeys.has(credentialId)) throw new AccountRefused('a passkey is given twice in this request');
        const holder = await store.getUserByFederatedId(projectId, passkeyIndexProvider, credentialId);
        if (holder && holder.localId !== user.localId) throw new AccountRefused(passkeyTakenImportMessage);
      }
      for (const { credentialId } of user.passkeys ?? []) seenPasskeys.add(credentialId);
      seenIds.add(user.localId);
      if (user.email) seenEmails.add(user.email);
      if (user.phoneNumber) seenPhones.add(user.phoneNumber);
      const mutation: Mutation = existing
        ? { kind: 'updateUser', projectId, user: { ...user, version: existing.version + 1 }, expectedVersion: existing.version }
        : { kind: 'insertUser', projectId, user };
      planned.push({ index, mutation });
    } catch (error) {
      if (!(error instanceof AccountRefused)) throw error;
      errors.push({ index, message: error.message });
    }
  }
  try {
    await store.commit(planned.map((p) => p.mutation));
  } catch (error) {
    if (!(error instanceof StoreConflict)) throw error;
    // Another writer got in between the checks and the commit: find the accounts it touched, one by one.
    for (const { index, mutation } of planned) {
      try {
        await store.commit([mutation]);
      } catch (single) {
        if (!(single instanceof StoreConflict)) throw single;
        errors.push({ index, message: conflictMessage(single) });
      }
    }
  }
  errors.sort((a, b) => a.index - b.index);
  return { errors, imported: accounts.length - errors.length };
}

/** accounts:batchCreate for the admin credential. */
export class UserImportService {
  constructor(private readonly store: Store) {}

  async batchCreate(caller: Caller, request: BatchCreateRequest): Promise<ImportResult> {
    requireAdmin(caller);
    return importAccounts(this.store, caller.realm, request, caller);
  }
}

/** A service account imports no operator (operator-claim.ts): it neither sets the claim nor replaces an account holding it. */
function refuseOperatorChange(existing: UserRecord | undefined, imported: UserRecord): void {
  if (holdsOperatorClaim(existing?.customAttributes)) throw new AccountRefused(operatorsOnlyMessage('replace a console operator account'));
  if (operatorClaimChanged(existing?.customAttributes, imported.customAttributes)) throw new AccountRefused(operatorsOnlyMessage('set or change the hearthOperator claim'));
}

const passkeyTakenImportMessage = 'a passkey exists in other account in database';

function conflictMessage(conflict: StoreConflict): string {
  if (conflict.reason === 'email-taken') return 'email exists in other account in database';
  if (conflict.reason === 'phone-taken') return 'phone number exists in other account in database';
  if (conflict.reason === 'federated-id-taken') return 'raw id exists in other account in database';
  if (conflict.reason === 'passkey-taken') return passkeyTakenImportMessage;
  return 'the account was changed by another request during the import; import it again';
}

/** proto3 JSON: a null field is an absent one, at any depth. */
function withoutNulls<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null)) as T;
}

/** `realm`: where the account goes; an account naming another tenant is refused (Google's message). */
function toUserRecord(given: ImportedAccount, hashOptions: ImportHashOptions | undefined, now: number, realm: string): UserRecord {
  const account = withoutNulls(given);
  if (account.tenantId && account.tenantId !== tenantOf(realm)) throw new AccountRefused('Tenant id in userInfo does not match the tenant id in request.');
  const localId = account.localId;
  if (!localId) throw new AccountRefused('localId is missing');
  if (localId.length > maxLocalIdLength) throw new AccountRefused(`localId is longer than ${maxLocalIdLength} characters`);
  const createdAt = account.createdAt !== undefined ? milliseconds(account.createdAt, 'createdAt') : now;
  const user: UserRecord = {
    localId,
    emailVerified: account.emailVerified ?? false,
    providerUserInfo: (account.providerUserInfo ?? []).flatMap(providerInfo),
    disabled: account.disabled ?? false,
    createdAt,
    // An imported (or re-imported) account starts with no live sessions.
    validSince: Math.floor(now / 1000),
    version: 1,
    ...tenantField(realm),
  };
  if (account.email !== undefined && account.email !== '') {
    const email = normalizeEmail(account.email);
    if (!isValidEmail(email)) throw new AccountRefused(`invalid email: ${account.email}`);
    user.email = email;
  }
  if (account.mfaInfo?.length) user.mfaInfo = importedEnrollments(account.mfaInfo, user, now);
  if (account.passkeys?.length) {
    const passkeys = importedPasskeys(account.passkeys, now);
    if (typeof passkeys === 'string') throw new AccountRefused(passkeys);
    user.passkeys = passkeys;
  }
  if (account.displayName) user.displayName = account.displayName.slice(0, 256);
  if (account.photoUrl) user.photoUrl = account.photoUrl;
  if (account.phoneNumber) {
    const phoneNumber = normalizePhoneNumber(account.phoneNumber);
    if (phoneNumber === undefined) throw new AccountRefused(`invalid phone number: ${account.phoneNumber.slice(0, 40)} (E.164 expected)`);
    user.phoneNumber = phoneNumber;
  }
  if (account.lastLoginAt !== undefined) user.lastLoginAt = milliseconds(account.lastLoginAt, 'lastLoginAt');
  const claims = account.customAttributes ? checkClaims(account.customAttributes) : '';
  if (claims) user.customAttributes = claims;
  if (account.passwordHash) {
    user.passwordHash = passwordHashOf(account, hashOptions!);
    user.passwordUpdatedAt = now;
  }
  return withDerivedProviders(user);
}

/** Phone second factors (TOTP secrets cannot be exported from Google, so none come in); as Google, only on a verified email. */
function importedEnrollments(given: unknown[], user: UserRecord, now: number): MfaEnrollmentRecord[] {
  if (!user.email) throw new AccountRefused('Second factor account requires email to be presented.');
  if (!user.emailVerified) throw new AccountRefused('Second factor account requires email to be verified.');
  const fields = ['mfaEnrollmentId', 'displayName', 'phoneInfo', 'enrolledAt'] as const;
  const entries = given.map((item): AdminEnrollment => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new AccountRefused('each mfaInfo entry must be an object');
    const entry: AdminEnrollment = {};
    for (const field of fields) {
      const value = (item as Record<string, unknown>)[field];
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string') throw new AccountRefused(`mfaInfo.${field} must be text`);
      entry[field] = value;
    }
    if (entry.phoneInfo === undefined) throw new AccountRefused('Second factor not supported (a phone number is needed).');
    return entry;
  });
  try {
    return enrollmentsFromAdmin(entries, [], now);
  } catch (error) {
    if (error instanceof ApiError) throw new AccountRefused(error.wireMessage);
    throw error;
  }
}

function passwordHashOf(account: ImportedAccount, options: ImportHashOptions): string {
  const hash = decodeBase64(account.passwordHash!);
  const salt = account.salt ? decodeBase64(account.salt) : Buffer.alloc(0);
  if (hash.length === 0) throw new AccountRefused('passwordHash is not base64');
  if (options.algorithm === 'BCRYPT' && !isBcryptHash(hash.toString('latin1'))) {
    throw new AccountRefused('passwordHash is not a bcrypt hash ($2a$, $2b$ or $2y$, cost 4 to 20)');
  }
  return importedHash(options, hash, salt);
}

function providerInfo(given: ImportedProviderInfo): ProviderUserInfo[] {
  const info = withoutNulls(given);
  if (!info.providerId || !info.rawId) throw new AccountRefused('each providerUserInfo needs a providerId and a rawId');
  // The password and phone entries follow from the account's own fields.
  if (info.providerId === 'password' || info.providerId === 'phone') return [];
  const entry: ProviderUserInfo = { providerId: info.providerId, rawId: info.rawId, federatedId: info.federatedId ?? info.rawId };
  if (info.email) entry.email = normalizeEmail(info.email);
  if (info.displayName) entry.displayName = info.displayName;
  if (info.photoUrl) entry.photoUrl = info.photoUrl;
  if (info.phoneNumber) entry.phoneNumber = info.phoneNumber;
  return [entry];
}

function milliseconds(value: number | string, field: string): number {
  const number = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < 0) throw new AccountRefused(`${field} must be milliseconds since the epoch`);
  return number;
}

function checkClaims(text: string): string {
  if (text.length > maxClaimsLength) throw new AccountRefused(`customAttributes are longer than ${maxClaimsLength} characters`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AccountRefused('customAttributes are not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new AccountRefused('customAttributes must be a JSON object');
  for (const name of Object.keys(parsed)) if (reservedClaims.has(name)) throw new AccountRefused(`customAttributes use the reserved claim ${name}`);
  const normalized = JSON.stringify(parsed);
  return normalized === '{}' ? '' : normalized;
}
