import Database from 'better-sqlite3';
import { SqliteTriggerEvents, triggerEventWriter } from './sqlite-trigger-events.js';
import {
  StoreConflict,
  type AccountErasure,
  type HandlerSessionRecord,
  type HumanCheckRecord,
  type Mutation,
  type OobCodeRecord,
  type OutboxMessage,
  type PhoneVerificationRecord,
  type ProjectRecord,
  type RefreshTokenRecord,
  type RefreshTokenWithUser,
  type ServiceAccountKeyRecord,
  type ServiceAccountTokenRecord,
  type SmsOutboxMessage,
  type Store,
  type ThrottleRecord,
  type UserPage,
  type UserRecord,
} from '../store.js';
import { openDatabaseFile } from './sqlite-file.js';
import { indexedIdentities, passkeyIndexProvider } from '../passkey-records.js';
import { SqliteDocumentStore, type SharedFile } from './sqlite-document-store.js';
import { SqliteChangeLog } from './sqlite-change-log.js';
import { LogChangeFeed } from '../log-change-feed.js';
import { randomUUID } from 'node:crypto';
import { withWriteLock } from './sqlite-write-lock.js';
import { isPhoneMutation, SqlitePhoneRows } from './sqlite-phone-rows.js';
import { isOutboxMutation } from '../outbox-mutation.js';
import { isErasureMutation } from '../erasure-mutation.js';
import { SqliteErasureRows } from './sqlite-erasure-rows.js';
import { sqliteCounts } from './sqlite-counts.js';
import type { OverviewCounts } from '../overview-counts.js';
import type { UserListing } from '../user-listing.js';
import { SqliteOutboxRows } from './sqlite-outbox-rows.js';
import { SqliteFilesStore } from './sqlite-files-store.js';
import { SqliteAuditLog } from './sqlite-audit-log.js';
import { SqliteRulesStore } from './sqlite-rules-store.js';
import { SqliteHumanChecks } from './sqlite-human-checks.js';
import { SqliteHandlerSessions } from './sqlite-handler-sessions.js';
import { identityStatements, parseUser, refreshTokenOf, translateConstraint } from './sqlite-identity-rows.js';

/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a commit that has
 * resolved is on disk and survives a crash of the process or the machine.
 */
export class SqliteStore implements Store {
  protected readonly db: Database.Database;
  private readonly statements;
  private readonly humanChecks: SqliteHumanChecks;
  private readonly handlerSessions: SqliteHandlerSessions;
  private readonly phone: SqlitePhoneRows;
  private readonly outbox: SqliteOutboxRows;
  private readonly erasures: SqliteErasureRows;
  private readonly writeTriggerEvents: ReturnType<typeof triggerEventWriter>;
  private documentStore: SqliteDocumentStore | undefined;
  /** Set when other processes write the file too (--workers). */
  private readonly sharedFile: SharedFile | undefined;
  /** Who holds the mails this process is sending (--workers). */
  private readonly mailOwner = randomUUID();

  constructor(
    private readonly file: string,
    private readonly options: {
      /** Tests only: see holdForTest in sqlite-writer-thread.ts. */
      writerLatch?: Int32Array;
      /** Groups up to this many bytes are written on the main thread (defaultInlineWriteBytes; 0: every group on the writer thread). */
      inlineWriteBytes?: number;
      /**
       * Other processes write the file too (the workers of --workers): document commits are logged
       * for their change feeds, and `announce` tells them how far a database's log reaches.
       */
      shared?: { announce: (db: string, seq: number) => void };
    } = {},
  ) {
    this.db = openDatabaseFile(file);
    const db = this.db;
    this.humanChecks = new SqliteHumanChecks(db);
    this.handlerSessions = new SqliteHandlerSessions(db);
    this.phone = new SqlitePhoneRows(db);
    this.outbox = new SqliteOutboxRows(db);
    this.erasures = new SqliteErasureRows(db);
    this.writeTriggerEvents = triggerEventWriter(db);
    this.statements = identityStatements(db);
    if (options.shared) {
      const log = new SqliteChangeLog(db, file);
      this.sharedFile = { log, feed: new LogChangeFeed(log), announce: options.shared.announce };
    }
  }

  async getUser(projectId: string, localId: string): Promise<UserRecord | undefined> {
    return parseUser(this.statements.getUser.get(projectId, localId));
  }

  async getUserByEmail(projectId: string, email: string): Promise<UserRecord | undefined> {
    return parseUser(this.statements.getUserByEmail.get(projectId, email));
  }

  async getUserByPhone(projectId: string, phoneNumber: string): Promise<UserRecord | undefined> {
    return parseUser(this.statements.getUserByPhone.get(projectId, phoneNumber));
  }

  async getUserByFederatedId(projectId: string, providerId: string, rawId: string): Promise<UserRecord | undefined> {
    return parseUser(this.statements.getUserByFederatedId.get(projectId, providerId, rawId));
  }

  async listUsers(projectId: string, limit: number, afterLocalId = ''): Promise<UserPage> {
    const rows = this.statements.listUsers.all(projectId, afterLocalId, limit + 1);
    const users = rows.slice(0, limit).map((row) => JSON.parse(row.record) as UserRecord);
    const page: UserPage = { users };
    if (rows.length > limit) page.nextPageToken = users[users.length - 1]!.localId;
    return page;
  }

  async getRefreshToken(tokenHash: string): Promise<RefreshTokenRecord | undefined> {
    const row = this.statements.getToken.get(tokenHash);
    return row ? refreshTokenOf(row) : undefined;
  }

  async getRefreshTokenWithUser(tokenHash: string): Promise<RefreshTokenWithUser | undefined> {
    const row = this.statements.getTokenWithUser.get(tokenHash);
    return row ? { token: refreshTokenOf(row), user: row.record === null ? undefined : (JSON.parse(row.record) as UserRecord) } : undefined;
  }

  async listServiceAccountKeys(projectId: string, clientEmail?: string): Promise<ServiceAccountKeyRecord[]> {
    return this.statements.listServiceAccountKeys
      .all(projectId)
      .filter((row) => clientEmail === undefined || row.client_email === clientEmail)
      .map((row) => ({ projectId: row.project_id, keyId: row.key_id, clientEmail: row.client_email, publicKey: row.public_key, createdAt: row.created_at }));
  }

  async getServiceAccountToken(tokenHash: string): Promise<ServiceAccountTokenRecord | undefined> {
    const row = this.statements.getServiceAccountToken.get(tokenHash);
    return row ? { tokenHash: row.token_hash, projectId: row.project_id, keyId: row.key_id, expiresAt: row.expires_at } : undefined;
  }

  async getHumanCheck(keyHash: string): Promise<HumanCheckRecord | undefined> {
    return this.humanChecks.get(keyHash);
  }

  async getOobCode(codeHash: string): Promise<OobCodeRecord | undefined> {
    const row = this.statements.getOobCode.get(codeHash);
    return row ? (JSON.parse(row.record) as OobCodeRecord) : undefined;
  }

  async getHandlerSession(id: string): Promise<HandlerSessionRecord | undefined> {
    return this.handlerSessions.get(id);
  }

  async listOutbox(projectId: string, limit: number): Promise<OutboxMessage[]> {
    return this.outbox.list(projectId, limit);
  }

  /** With other processes on the file, each mail listed is claimed: it goes out once. */
  async listDueMail(now: number, limit: number): Promise<Array<OutboxMessage & { decoy: boolean }>> {
    if (!this.sharedFile) return this.outbox.listDue(now, limit);
    await this.writeTurn();
    return this.outbox.claimDue(this.mailOwner, now, limit);
  }

  async nextMailDueAt(): Promise<number | undefined> {
    return this.outbox.nextDueAt();
  }

  async listThrottleRecords(scope: string, now: number, limit: number): Promise<ThrottleRecord[]> {
    return this.statements.listThrottle.all(scope, now, limit).map((row) => ({ scope: row.scope, keyHash: row.key_hash, expiresAt: row.expires_at, state: row.state }));
  }

  async getPhoneVerification(sessionHash: string): Promise<PhoneVerificationRecord | undefined> {
    return this.phone.getVerification(sessionHash);
  }

  async listSmsOutbox(projectId: string, limit: number): Promise<SmsOutboxMessage[]> {
    return this.phone.listSmsOutbox(projectId, limit);
  }

  counts(): OverviewCounts & UserListing {
    return sqliteCounts(this.db);
  }

  async listAccountErasures(limit: number): Promise<AccountErasure[]> {
    return this.erasures.list(limit);
  }

  async listProjects(): Promise<ProjectRecord[]> {
    return this.statements.listProjects.all().map((row) => ({ projectId: row.project_id, config: row.config }));
  }

  async commit(mutations: Mutation[]): Promise<void> {
    await this.exclusive(() => {
      for (const mutation of mutations) this.apply(mutation);
    });
  }

  private apply(m: Mutation): void {
    if (isPhoneMutation(m)) return this.phone.apply(m);
    if (isOutboxMutation(m)) return this.outbox.apply(m);
    if (isErasureMutation(m)) return this.erasures.apply(m);
    if (m.kind === 'insertTriggerEvents') return this.writeTriggerEvents(m);
    const s = this.statements;
    switch (m.kind) {
      case 'insertUser':
        try {
          s.insertUser.run(m.projectId, m.user.localId, m.user.email ?? null, m.user.phoneNumber ?? null, m.user.version, JSON.stringify(m.user));
        } catch (error) {
          throw translateConstraint(error);
        }
        this.indexProviders(m.projectId, m.user);
        return;
      case 'updateUser': {
        let changes: number;
        try {
          changes = s.updateUser.run(
            m.user.email ?? null,
            m.user.phoneNumber ?? null,
            m.user.version,
            JSON.stringify(m.user),
            m.projectId,
            m.user.localId,
            m.expectedVersion,
          ).changes;
        } catch (error) {
          throw translateConstraint(error);
        }
        if (changes !== 1) throw new StoreConflict('version-mismatch');
        this.indexProviders(m.projectId, m.user);
        return;
      }
      case 'deleteUser':
        if (s.deleteUser.run(m.projectId, m.localId).changes !== 1 && m.mustExist) throw new StoreConflict('not-found');
        s.deleteProvidersOf.run(m.projectId, m.localId);
        return;
      case 'deleteAllUsers':
        s.deleteAllUsers.run(m.projectId);
        s.deleteAllProviders.run(m.projectId);
        s.deleteAllTokens.run(m.projectId);
        return;
      case 'insertRefreshToken':
        s.insertToken.run(m.token.tokenHash, m.token.projectId, m.token.localId, m.token.userCreatedAt, m.token.issuedAt, m.token.authTime, m.token.signInProvider, m.token.developerClaims ?? null, m.token.secondFactor ? JSON.stringify(m.token.secondFactor) : null);
        return;
      case 'insertServiceAccountKey':
        s.insertServiceAccountKey.run(m.key.projectId, m.key.keyId, m.key.clientEmail, m.key.publicKey, m.key.createdAt);
        return;
      case 'deleteServiceAccountKey':
        if (s.deleteServiceAccountKey.run(m.projectId, m.keyId).changes !== 1) throw new StoreConflict('code-used');
        s.deleteServiceAccountTokensOf.run(m.projectId, m.keyId);
        return;
      case 'insertServiceAccountToken':
        s.insertServiceAccountToken.run(m.token.tokenHash, m.token.projectId, m.token.keyId, m.token.expiresAt);
        return;
      case 'deleteExpiredServiceAccountTokens':
        s.deleteExpiredServiceAccountTokens.run(m.expiredBefore);
        return;
      case 'deleteRefreshToken':
        s.deleteToken.run(m.tokenHash);
        return;
      case 'putProject':
        s.putProject.run(m.project.projectId, m.project.config);
        return;
      case 'createProject':
        s.createProject.run(m.project.projectId, m.project.config);
        return;
      case 'deleteRealm': {
        const [settings, ...data] = s.deleteRealm;
        if (settings!.run(m.projectId).changes !== 1) throw new StoreConflict('code-used');
        for (const statement of data) statement.run(m.projectId);
        this.outbox.apply({ kind: 'clearOutbox', projectId: m.projectId });
        this.phone.deleteRealm(m.projectId);
        return;
      }
      case 'insertOobCode':
        s.insertOobCode.run(m.code.codeHash, m.code.projectId, m.code.expiresAt, JSON.stringify(m.code));
        return;
      case 'deleteOobCode':
        if (s.deleteOobCode.run(m.codeHash).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'deleteExpiredOobCodes':
        s.deleteExpiredOobCodes.run(m.expiredBefore);
        return;
      case 'putThrottleRecord':
        s.putThrottle.run(m.record.scope, m.record.keyHash, m.record.expiresAt, m.record.state);
        return;
      case 'deleteThrottleRecord':
        s.deleteThrottle.run(m.scope, m.keyHash);
        return;
      case 'deleteExpiredThrottleRecords':
        s.deleteExpiredThrottle.run(m.expiredBefore);
        return;
      case 'putHandlerSession':
      case 'updateHandlerSession':
      case 'deleteHandlerSession':
      case 'deleteExpiredHandlerSessions':
        this.handlerSessions.apply(m);
        return;
      case 'insertHumanCheck':
      case 'useHumanCheck':
      case 'deleteExpiredHumanChecks':
        this.humanChecks.apply(m);
        return;
    }
  }

  /** Rewrites the federated-identity and passkey index rows of one user (inside the commit's transaction). */
  private indexProviders(projectId: string, user: UserRecord): void {
    this.statements.deleteProvidersOf.run(projectId, user.localId);
    for (const row of indexedIdentities(user)) {
      try {
        this.statements.insertProvider.run(projectId, row.providerId, row.rawId, user.localId);
      } catch (error) {
        const conflict = translateConstraint(error);
        throw row.providerId === passkeyIndexProvider && conflict instanceof StoreConflict ? new StoreConflict('passkey-taken') : conflict;
      }
    }
  }

  /**
   * The document database's storage, in the same file: it reads on this connection and writes on
   * its own writer thread. One per store (one writer per file).
   */
  documents(): SqliteDocumentStore {
    this.documentStore ??= new SqliteDocumentStore(this.db, { file: this.file, ...this.options }, this.sharedFile);
    return this.documentStore;
  }

  /** Every process's document commits, where others write the file too (start it before use). */
  changeFeed(): LogChangeFeed | undefined {
    return this.sharedFile?.feed;
  }

  /**
   * Runs `run` in one transaction holding the file's write lock (a commit, a key ring's update):
   * `run` is synchronous, so nothing else of this process can come between. Where other processes
   * write too (--workers), the lock is waited for without blocking the event loop.
   */
  async exclusive<T>(run: () => T): Promise<T> {
    await this.writeTurn();
    return this.sharedFile ? withWriteLock(this.db, run) : this.db.transaction(run).immediate();
  }

  /** Security rulesets and releases, in the same file and connection. */
  rules(): SqliteRulesStore {
    return new SqliteRulesStore(this.db, () => this.writeTurn());
  }

  /** Cloud Storage objects' metadata and upload sessions, in the same file and connection. */
  files(): SqliteFilesStore {
    return new SqliteFilesStore(this.db, () => this.writeTurn());
  }

  /** Trigger events (functions/), in the same file: commits insert them on the writer thread. */
  triggerEvents(): SqliteTriggerEvents {
    return new SqliteTriggerEvents(this.db, () => this.writeTurn(), this.sharedFile !== undefined);
  }

  /** The operator console's audit log, in the same file and connection. */
  auditLog(): SqliteAuditLog {
    return new SqliteAuditLog(this.db, () => this.writeTurn());
  }

  /**
   * Before any write on this connection: the document writer thread takes SQLite's write lock while
   * it writes a group, and waiting for it here (busy timeout) would block the event loop.
   */
  private async writeTurn(): Promise<void> {
    if (this.documentStore) await this.documentStore.mainWriteTurn();
  }

  async close(): Promise<void> {
    // The writer thread first: what it has in flight settles, then its connection closes.
    await this.documentStore?.close();
    await this.sharedFile?.feed.close();
    this.sharedFile?.log.close();
    if (this.db.open) this.db.close();
  }
}
