import { randomInt } from 'node:crypto';
import { StoreConflict, type Mutation, type Store, type UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import { withDerivedProviders } from './account-view.js';
import { tenantField } from '../tenants/realm.js';

const maxAttempts = 8;
const localIdAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new account signing in for the first time at `now` (ms), with what its first sign-in knows about it. */
export function newSignedInAccount(now: number, known: Partial<UserRecord> = {}): UserRecord {
  return {
    localId: newLocalId(),
    emailVerified: false,
    providerUserInfo: [],
    disabled: false,
    createdAt: now,
    lastLoginAt: now,
    validSince: Math.floor(now / 1000),
    version: 1,
    ...known,
  };
}

/** 28 characters from [A-Za-z0-9], the look of Firebase uids. */
export function newLocalId(): string {
  let id = '';
  for (let i = 0; i < 28; i++) id += localIdAlphabet[randomInt(localIdAlphabet.length)];
  return id;
}

/** An account made or deleted through the repository (what v1 auth onCreate / onDelete functions hear of). */
export interface AccountChange {
  kind: 'create' | 'delete';
  /** The realm key. */
  realm: string;
  user: UserRecord;
}

/**
 * Who records account changes (the functions domain: v1 Auth trigger events). `record` runs just
 * before the change's commit and what it answers is committed with the account, atomically: an
 * account acknowledged to its client always has its events, a crash loses neither. It must be cheap
 * and synchronous, and answer nothing for a change it does not care about.
 */
export interface AccountChangeRecorder {
  record(change: AccountChange): Mutation[];
  /** After a commit that held some of `record`'s mutations (wakes their delivery). */
  committed(): void;
}

/**
 * Accounts over the store: every write is one atomic commit, and updates are read-modify-write
 * with an optimistic version check, retried when another request wrote in between.
 */
export class UserRepository {
  private readonly recorders = new Set<AccountChangeRecorder>();
  /** Told after accounts were deleted (the composition wakes the erasure of their data). */
  afterDelete: () => void = () => undefined;

  constructor(private readonly store: Store) {}

  /**
   * Each account made or deleted here is recorded in its own commit (not accounts:batchCreate
   * imports, nor batch deletes, which Google's triggers do not hear of either).
   */
  onAccountChange(recorder: AccountChangeRecorder): () => void {
    this.recorders.add(recorder);
    return () => this.recorders.delete(recorder);
  }

  private record(change: AccountChange): Mutation[] {
    if (!this.recorders.size) return [];
    return [...this.recorders].flatMap((recorder) => recorder.record(change));
  }

  private committed(recorded: readonly Mutation[]): void {
    if (recorded.length) for (const recorder of this.recorders) recorder.committed();
  }

  get(projectId: string, localId: string): Promise<UserRecord | undefined> {
    return this.store.getUser(projectId, localId);
  }

  getByEmail(projectId: string, email: string): Promise<UserRecord | undefined> {
    return this.store.getUserByEmail(projectId, email);
  }

  getByPhone(projectId: string, phoneNumber: string): Promise<UserRecord | undefined> {
    return this.store.getUserByPhone(projectId, phoneNumber);
  }

  getByFederatedId(projectId: string, providerId: string, rawId: string): Promise<UserRecord | undefined> {
    return this.store.getUserByFederatedId(projectId, providerId, rawId);
  }

  /**
   * A new account of the realm (`projectId` is a realm key); a tenant's accounts name their tenant.
   * `unheard`: no onCreate event (a custom token's first sign-in, which Google's triggers do not hear of).
   */
  async insert(projectId: string, user: UserRecord, alongside: Mutation[] = [], unheard = false): Promise<UserRecord> {
    const stored = withDerivedProviders({ ...user, ...tenantField(projectId) });
    const recorded = unheard ? [] : this.record({ kind: 'create', realm: projectId, user: stored });
    try {
      await this.store.commit([{ kind: 'insertUser', projectId, user: stored }, ...alongside, ...recorded]);
    } catch (error) {
      throw translateConflict(error);
    }
    this.committed(recorded);
    return stored;
  }

  /**
   * Applies `change` to the current record and commits it with `alongside`, atomically.
   * `change` may run more than once (after a concurrent write), so it must not have side effects.
   */
  async update(
    projectId: string,
    localId: string,
    change: (current: UserRecord) => UserRecord | Promise<UserRecord>,
    alongside: (updated: UserRecord) => Mutation[] = () => [],
  ): Promise<UserRecord> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.store.getUser(projectId, localId);
      if (!current) throw authError('USER_NOT_FOUND');
      const updated = withDerivedProviders({ ...(await change(current)), version: current.version + 1 });
      try {
        await this.store.commit([
          { kind: 'updateUser', projectId, user: updated, expectedVersion: current.version },
          ...alongside(updated),
        ]);
        return updated;
      } catch (error) {
        if (error instanceof StoreConflict && error.reason === 'version-mismatch' && attempt < maxAttempts) continue;
        throw translateConflict(error);
      }
    }
  }

  /** Deletes the account and, in the same commit, queues its data for erasure (account-erasure.ts). */
  async delete(projectId: string, localId: string): Promise<void> {
    // The account as it was goes into its onDelete event: read only when someone records deletions.
    const before = this.recorders.size ? await this.store.getUser(projectId, localId) : undefined;
    const recorded = before ? this.record({ kind: 'delete', realm: projectId, user: before }) : [];
    if (recorded.length) {
      // Its event only if this commit is the one that deleted the account: of two concurrent deletes
      // the second finds nothing, commits nothing and, as before, succeeds (the first queued the erasure).
      try {
        await this.store.commit([...accountDeletion(projectId, localId, Date.now(), true), ...recorded]);
      } catch (error) {
        if (error instanceof StoreConflict && error.reason === 'not-found') return;
        throw error;
      }
    } else {
      await this.store.commit(accountDeletion(projectId, localId, Date.now()));
    }
    this.afterDelete();
    this.committed(recorded);
  }
}

/** The mutations that delete an account: the account, and its documents and files queued for erasure. */
export function accountDeletion(projectId: string, localId: string, now: number, mustExist = false): Mutation[] {
  return [
    { kind: 'deleteUser', projectId, localId, ...(mustExist ? { mustExist } : {}) },
    { kind: 'insertAccountErasure', erasure: { projectId, localId, requestedAt: now } },
  ];
}

/** Why a passkey's enrolment is refused when its credential already belongs to an account. */
export const passkeyTakenMessage = 'This passkey is already registered to an account of this project.';

function translateConflict(error: unknown): unknown {
  if (!(error instanceof StoreConflict)) return error;
  if (error.reason === 'email-taken') return authError('EMAIL_EXISTS');
  if (error.reason === 'phone-taken') return authError('PHONE_NUMBER_EXISTS');
  if (error.reason === 'local-id-taken') return authError('DUPLICATE_LOCAL_ID');
  if (error.reason === 'code-used') return authError('INVALID_OOB_CODE');
  if (error.reason === 'federated-id-taken') return authError('FEDERATED_USER_ID_ALREADY_LINKED');
  if (error.reason === 'passkey-taken') return authError('CREDENTIAL_ALREADY_IN_USE', passkeyTakenMessage);
  return authError('TOO_MANY_ATTEMPTS_TRY_LATER', 'The account is being changed by another request; try again.');
}
