import { requestErrors } from '../../http/api-error.js';
import type { Store, UserRecord } from '../../storage/store.js';
import type { UserListing } from '../../storage/user-listing.js';
import { phoneLookupKey } from '../phone/numbers.js';
import { requireAdmin } from './auth-context.js';
import { normalizeEmail } from './validation.js';
import type { Caller } from './requests.js';

/** accounts:query (Identity Platform's QueryUserInfoRequest). */
export interface QueryAccountsRequest {
  returnUserInfo?: boolean;
  limit?: string | number;
  offset?: string | number;
  sortBy?: 'SORT_BY_FIELD_UNSPECIFIED' | 'USER_ID' | 'NAME' | 'CREATED_AT' | 'LAST_LOGIN_AT' | 'USER_EMAIL';
  order?: 'ORDER_UNSPECIFIED' | 'ASC' | 'DESC';
  expression?: Array<{ email?: string; userId?: string; phoneNumber?: string }>;
  tenantId?: string;
}

export interface QueryAccountsResult {
  recordsCount: number;
  users?: UserRecord[];
}

const maxLimit = 500;
const scanPage = 1000;

/**
 * Filters (the first expression counts; within it, the first of email, userId, phoneNumber), sort
 * and paging by offset, as Identity Platform answers accounts:query. Matches are found by scanning
 * the project's accounts in pages, and an exact email, uid or phone number by its index.
 */
export class AccountQuery {
  constructor(
    private readonly store: Store,
    private readonly listing: UserListing,
  ) {}

  async query(caller: Caller, request: QueryAccountsRequest): Promise<QueryAccountsResult> {
    requireAdmin(caller);
    const limit = integer(request.limit, maxLimit, 'limit');
    const offset = integer(request.offset, 0, 'offset');
    if (limit < 1 || limit > maxLimit) throw requestErrors.invalidArgument(`limit must be between 1 and ${maxLimit}.`);
    const filter = request.expression?.[0];
    const sortBy = request.sortBy && request.sortBy !== 'SORT_BY_FIELD_UNSPECIFIED' ? request.sortBy : 'USER_ID';
    const descending = request.order === 'DESC';
    const unfiltered = filter?.email === undefined && filter?.userId === undefined && filter?.phoneNumber === undefined;
    if (unfiltered && (request.returnUserInfo === false || sortBy === 'USER_ID')) {
      // Every account, by uid or only counted: by the store's key, not every account read, decoded
      // and sorted for each page (about 200 ms of the server's main thread at 100k accounts).
      const recordsCount = await this.listing.userTotal(caller.realm);
      if (request.returnUserInfo === false) return { recordsCount };
      return { recordsCount, users: await this.listing.usersByUid(caller.realm, offset, limit, descending) };
    }
    const matches = await this.matching(caller.realm, filter);
    matches.sort((a, b) => {
      const order = compare(sortKey(a, sortBy), sortKey(b, sortBy)) || compare(a.localId, b.localId);
      return descending ? -order : order;
    });
    if (request.returnUserInfo === false) return { recordsCount: matches.length };
    return { recordsCount: matches.length, users: matches.slice(offset, offset + limit) };
  }

  private async matching(projectId: string, expression: NonNullable<QueryAccountsRequest['expression']>[number] | undefined): Promise<UserRecord[]> {
    if (expression?.email !== undefined) {
      const user = await this.store.getUserByEmail(projectId, normalizeEmail(expression.email));
      return user ? [user] : [];
    }
    if (expression?.userId !== undefined) {
      const user = await this.store.getUser(projectId, expression.userId);
      return user ? [user] : [];
    }
    if (expression?.phoneNumber !== undefined) {
      const user = await this.store.getUserByPhone(projectId, phoneLookupKey(expression.phoneNumber));
      return user ? [user] : [];
    }
    const all: UserRecord[] = [];
    let after: string | undefined;
    do {
      const page = await this.store.listUsers(projectId, scanPage, after);
      all.push(...page.users);
      after = page.nextPageToken;
    } while (after !== undefined);
    return all;
  }
}

function integer(value: string | number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw requestErrors.invalidArgument(`Invalid value at '${name}' (TYPE_INT64), "${String(value)}"`);
  return n;
}

function sortKey(user: UserRecord, sortBy: string): string | number {
  switch (sortBy) {
    case 'NAME':
      return user.displayName ?? '';
    case 'CREATED_AT':
      return user.createdAt;
    case 'LAST_LOGIN_AT':
      return user.lastLoginAt ?? 0;
    case 'USER_EMAIL':
      return user.email ?? '';
    default:
      return user.localId;
  }
}

function compare(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
