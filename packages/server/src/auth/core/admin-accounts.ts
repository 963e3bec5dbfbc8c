import type { Store, UserPage, UserRecord } from '../../storage/store.js';
import { requestErrors } from '../../http/api-error.js';
import { authError } from '../errors.js';
import { requireAdmin } from './auth-context.js';
import { holdsOperatorClaim, operatorsOnlyMessage } from './operator-claim.js';
import { accountDeletion } from './user-repository.js';
import type { BatchDeleteRequest, Caller } from './requests.js';

const maxPageSize = 1000;
const maxBatchDelete = 1000;

export interface BatchDeleteResult {
  errors: Array<{ index: number; localId: string; message: string }>;
}

/** Operations only the admin credential may perform over a whole project. */
export class AdminAccountService {
  /** Told after accounts were deleted (the composition wakes the erasure of their data). */
  afterDelete: () => void = () => undefined;

  constructor(private readonly store: Store) {}

  async list(caller: Caller, maxResults: number | undefined, pageToken: string | undefined): Promise<UserPage> {
    requireAdmin(caller);
    const limit = maxResults ?? maxPageSize;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > maxPageSize) {
      throw requestErrors.invalidArgument(`maxResults must be between 1 and ${maxPageSize}.`);
    }
    return this.store.listUsers(caller.realm, limit, pageToken);
  }

  /** --dev: every account of the realm, page after page (the CLI's export asks maxResults=-1). */
  async listAll(caller: Caller): Promise<UserRecord[]> {
    requireAdmin(caller);
    const users: UserRecord[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.store.listUsers(caller.realm, maxPageSize, pageToken);
      users.push(...page.users);
      pageToken = page.nextPageToken;
    } while (pageToken);
    return users;
  }

  async batchDelete(caller: Caller, request: BatchDeleteRequest): Promise<BatchDeleteResult> {
    requireAdmin(caller);
    const ids = request.localIds ?? [];
    if (ids.length > maxBatchDelete) throw requestErrors.invalidArgument(`At most ${maxBatchDelete} accounts can be deleted at once.`);
    const errors: BatchDeleteResult['errors'] = [];
    const existing: string[] = [];
    for (const [index, localId] of ids.entries()) {
      const user = await this.store.getUser(caller.realm, localId);
      if (!user) continue;
      if (!caller.isOwner && holdsOperatorClaim(user.customAttributes)) {
        errors.push({ index, localId, message: operatorsOnlyMessage('delete a console operator account') });
        continue;
      }
      if (!user.disabled && !request.force) {
        errors.push({ index, localId, message: 'NOT_DISABLED : Disable the account before batch deletion.' });
        continue;
      }
      existing.push(localId);
    }
    const now = Date.now();
    await this.store.commit(existing.flatMap((localId) => accountDeletion(caller.realm, localId, now)));
    if (existing.length) this.afterDelete();
    return { errors };
  }

  /**
   * `DELETE /emulator/v1/projects/{p}/accounts`, which the SDK's own test suites call between tests:
   * an administrator's call, or (--dev, where the route opens it as the emulator does) a realm's.
   */
  async deleteAll(target: Caller | string): Promise<void> {
    if (typeof target !== 'string') {
      requireAdmin(target);
      // Every account goes, operators included: the owner's call alone (operator-claim.ts).
      if (!target.isOwner) throw authError('INSUFFICIENT_PERMISSION', 'Only the admin key or a console operator may delete every account of a project.');
    }
    await this.store.commit([{ kind: 'deleteAllUsers', projectId: typeof target === 'string' ? target : target.realm }]);
  }
}
