import type {
  AccountErasure,
  HandlerSessionRecord,
  HumanCheckRecord,
  Mutation,
  OobCodeRecord,
  OutboxMessage,
  PhoneVerificationRecord,
  ProjectRecord,
  RefreshTokenRecord,
  RefreshTokenWithUser,
  ServiceAccountKeyRecord,
  ServiceAccountTokenRecord,
  SmsOutboxMessage,
  Store,
  ThrottleRecord,
  UserPage,
  UserRecord,
} from '../store.js';
import { applyPgMigrations, inPgTransaction, type PgClient, type PgPool } from './pg-connection.js';
import { applyCodeMutation, codeReads, deleteRealmCodeRows, isCodeMutation } from './pg-code-rows.js';
import { identitySchemaSteps } from './pg-identity-schema.js';
import { isErasureMutation } from '../erasure-mutation.js';
import { isOutboxMutation } from '../outbox-mutation.js';
import { applyErasureMutation, listAccountErasures } from './pg-erasure-rows.js';
import { applyOutboxMutation, outboxReads } from './pg-outbox-rows.js';
import { applyTriggerEventMutation } from './pg-trigger-events.js';
import type { ThrottleRowReader } from '../throttle-reader.js';
import { PgMailClaims } from './pg-mail-claims.js';
import { isRetryable } from './pg-rows.js';
import { applyUserMutation, deleteRealmUserRows, isUserMutation, userReads } from './pg-user-rows.js';

/** A commit that lost a deadlock or serialization race runs again this many times before failing. */
const maxCommitAttempts = 5;

/**
 * The identity store on PostgreSQL, shared by every Hearth instance on the database. A commit is
 * one transaction (READ COMMITTED): preconditions are conditional statements and unique indexes,
 * so an instance racing another for the same row waits for the row lock and then sees the
 * winner's write, exactly as two requests in one SQLite process would one after the other.
 * The pool belongs to the caller (server.ts, which ends it), unless `ownsPool` hands it over.
 */
export class PgStore implements Store, ThrottleRowReader {
  private readonly mailClaims: PgMailClaims;

  private constructor(
    private readonly pool: PgPool,
    private readonly ownsPool: boolean,
  ) {
    this.mailClaims = new PgMailClaims(pool);
  }

  static async open(pool: PgPool, options: { ownsPool?: boolean } = {}): Promise<PgStore> {
    await applyPgMigrations(pool, 'identity', identitySchemaSteps);
    return new PgStore(pool, options.ownsPool === true);
  }

  getUser(projectId: string, localId: string): Promise<UserRecord | undefined> {
    return userReads.getUser(this.pool, projectId, localId);
  }

  getUserByEmail(projectId: string, email: string): Promise<UserRecord | undefined> {
    return userReads.getUserByEmail(this.pool, projectId, email);
  }

  getUserByPhone(projectId: string, phoneNumber: string): Promise<UserRecord | undefined> {
    return userReads.getUserByPhone(this.pool, projectId, phoneNumber);
  }

  getUserByFederatedId(projectId: string, providerId: string, rawId: string): Promise<UserRecord | undefined> {
    return userReads.getUserByFederatedId(this.pool, projectId, providerId, rawId);
  }

  listUsers(projectId: string, limit: number, afterLocalId?: string): Promise<UserPage> {
    return userReads.listUsers(this.pool, projectId, limit, afterLocalId);
  }

  getRefreshToken(tokenHash: string): Promise<RefreshTokenRecord | undefined> {
    return userReads.getRefreshToken(this.pool, tokenHash);
  }

  getRefreshTokenWithUser(tokenHash: string): Promise<RefreshTokenWithUser | undefined> {
    return userReads.getRefreshTokenWithUser(this.pool, tokenHash);
  }

  getOobCode(codeHash: string): Promise<OobCodeRecord | undefined> {
    return codeReads.getOobCode(this.pool, codeHash);
  }

  getHandlerSession(id: string): Promise<HandlerSessionRecord | undefined> {
    return codeReads.getHandlerSession(this.pool, id);
  }

  listOutbox(projectId: string, limit: number): Promise<OutboxMessage[]> {
    return outboxReads.list(this.pool, projectId, limit);
  }

  /** Claims what it lists (see PgMailClaims): with several instances each mail goes out once. */
  listDueMail(now: number, limit: number): Promise<Array<OutboxMessage & { decoy: boolean }>> {
    return this.mailClaims.claimDue(now, limit);
  }

  nextMailDueAt(): Promise<number | undefined> {
    return outboxReads.nextDueAt(this.pool);
  }

  listThrottleRecords(scope: string, now: number, limit: number): Promise<ThrottleRecord[]> {
    return codeReads.listThrottleRecords(this.pool, scope, now, limit);
  }

  getThrottleRecords(scope: string, keyHashes: string[], now: number): Promise<ThrottleRecord[]> {
    return codeReads.getThrottleRecords(this.pool, scope, keyHashes, now);
  }

  listProjects(): Promise<ProjectRecord[]> {
    return userReads.listProjects(this.pool);
  }

  listServiceAccountKeys(projectId: string, clientEmail?: string): Promise<ServiceAccountKeyRecord[]> {
    return userReads.listServiceAccountKeys(this.pool, projectId, clientEmail);
  }

  getServiceAccountToken(tokenHash: string): Promise<ServiceAccountTokenRecord | undefined> {
    return userReads.getServiceAccountToken(this.pool, tokenHash);
  }

  getHumanCheck(keyHash: string): Promise<HumanCheckRecord | undefined> {
    return codeReads.getHumanCheck(this.pool, keyHash);
  }

  getPhoneVerification(sessionHash: string): Promise<PhoneVerificationRecord | undefined> {
    return codeReads.getPhoneVerification(this.pool, sessionHash);
  }

  listSmsOutbox(projectId: string, limit: number): Promise<SmsOutboxMessage[]> {
    return codeReads.listSmsOutbox(this.pool, projectId, limit);
  }

  listAccountErasures(limit: number): Promise<AccountErasure[]> {
    return listAccountErasures(this.pool, limit);
  }

  async commit(mutations: Mutation[]): Promise<void> {
    if (mutations.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      try {
        await inPgTransaction(this.pool, async (client) => {
          for (const mutation of mutations) await apply(client, mutation);
        });
        await this.mailClaims.settled(mutations);
        return;
      } catch (error) {
        if (attempt >= maxCommitAttempts || !isRetryable(error)) throw error;
      }
    }
  }

  async close(): Promise<void> {
    await this.mailClaims.close();
    if (this.ownsPool && !this.pool.ended) await this.pool.end();
  }
}

async function apply(client: PgClient, m: Mutation): Promise<void> {
  if (isUserMutation(m)) return applyUserMutation(client, m);
  if (isCodeMutation(m)) return applyCodeMutation(client, m);
  if (isOutboxMutation(m)) return applyOutboxMutation(client, m);
  if (isErasureMutation(m)) return applyErasureMutation(client, m);
  if (m.kind === 'insertTriggerEvents') return applyTriggerEventMutation(client, m);
  switch (m.kind) {
    case 'deleteRealm':
      await deleteRealmUserRows(client, m.projectId);
      await applyOutboxMutation(client, { kind: 'clearOutbox', projectId: m.projectId });
      await deleteRealmCodeRows(client, m.projectId);
      return;
  }
}
