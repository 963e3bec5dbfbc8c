import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  StoreConflict,
  type HandlerSessionRecord,
  type Mutation,
  type OobCodeRecord,
  type OutboxMessage,
  type ProjectRecord,
  type RefreshTokenRecord,
  type Store,
  type UserPage,
  type UserRecord,
} from '../store.js';
import { migrate } from './migrations.js';
import { SqliteDocumentStore } from './sqlite-document-store.js';

interface UserRow {
  record: string;
}
interface TokenRow {
  token_hash: string;
  project_id: string;
  local_id: string;
  user_created_at: number;
  issued_at: number;
  auth_time: number;
  sign_in_provider: string;
}
interface ProjectRow {
  project_id: string;
  config: string;
}

/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a commit that has
 * resolved is on disk and survives a crash of the process or the machine.
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly statements;

  constructor(file: string) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('foreign_keys = ON');
    migrate(this.db);
    const db = this.db;
    this.statements = {
      getUser: db.prepare<[string, string], UserRow>('SELECT record FROM users WHERE project_id = ? AND local_id = ?'),
      getUserByEmail: db.prepare<[string, string], UserRow>('SELECT record FROM users WHERE project_id = ? AND email = ?'),
      getUserByPhone: db.prepare<[string, string], UserRow>(
        'SELECT record FROM users WHERE project_id = ? AND phone_number = ?',
      ),
      getUserByFederatedId: db.prepare<[string, string, string], UserRow>(
        'SELECT u.record FROM user_providers p JOIN users u ON u.project_id = p.project_id AND u.local_id = p.local_id WHERE p.project_id = ? AND p.provider_id = ? AND p.raw_id = ?',
      ),
      insertProvider: db.prepare('INSERT INTO user_providers (project_id, provider_id, raw_id, local_id) VALUES (?, ?, ?, ?)'),
      deleteProvidersOf: db.prepare('DELETE FROM user_providers WHERE project_id = ? AND local_id = ?'),
      deleteAllProviders: db.prepare('DELETE FROM user_providers WHERE project_id = ?'),
      listUsers: db.prepare<[string, string, number], UserRow>(
        'SELECT record FROM users WHERE project_id = ? AND local_id > ? ORDER BY local_id LIMIT ?',
      ),
      insertUser: db.prepare(
        'INSERT INTO users (project_id, local_id, email, phone_number, version, record) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      updateUser: db.prepare(
        'UPDATE users SET email = ?, phone_number = ?, version = ?, record = ? WHERE project_id = ? AND local_id = ? AND version = ?',
      ),
      deleteUser: db.prepare('DELETE FROM users WHERE project_id = ? AND local_id = ?'),
      deleteAllUsers: db.prepare('DELETE FROM users WHERE project_id = ?'),
      deleteAllTokens: db.prepare('DELETE FROM refresh_tokens WHERE project_id = ?'),
      getToken: db.prepare<[string], TokenRow>('SELECT * FROM refresh_tokens WHERE token_hash = ?'),
      insertToken: db.prepare(
        'INSERT INTO refresh_tokens (token_hash, project_id, local_id, user_created_at, issued_at, auth_time, sign_in_provider) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      deleteToken: db.prepare('DELETE FROM refresh_tokens WHERE token_hash = ?'),
      listProjects: db.prepare<[], ProjectRow>('SELECT * FROM projects ORDER BY project_id'),
      getOobCode: db.prepare<[string], { record: string }>('SELECT record FROM oob_codes WHERE code_hash = ?'),
      insertOobCode: db.prepare('INSERT INTO oob_codes (code_hash, project_id, expires_at, record) VALUES (?, ?, ?, ?)'),
      deleteOobCode: db.prepare('DELETE FROM oob_codes WHERE code_hash = ?'),
      deleteExpiredOobCodes: db.prepare('DELETE FROM oob_codes WHERE expires_at < ?'),
      listOutbox: db.prepare<[string, number], { id: number; message: string }>(
        'SELECT id, message FROM (SELECT id, message FROM outbox WHERE project_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id',
      ),
      insertOutbox: db.prepare('INSERT INTO outbox (project_id, created_at, message) VALUES (?, ?, ?)'),
      clearOutbox: db.prepare('DELETE FROM outbox WHERE project_id = ?'),
      pruneOutbox: db.prepare('DELETE FROM outbox WHERE created_at < ?'),
      getHandlerSession: db.prepare<[string], { record: string }>('SELECT record FROM handler_sessions WHERE id = ?'),
      putHandlerSession: db.prepare(
        'INSERT INTO handler_sessions (id, expires_at, record) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, record = excluded.record',
      ),
      deleteHandlerSession: db.prepare('DELETE FROM handler_sessions WHERE id = ?'),
      updateHandlerSession: db.prepare('UPDATE handler_sessions SET expires_at = ?, record = ? WHERE id = ?'),
      deleteExpiredHandlerSessions: db.prepare('DELETE FROM handler_sessions WHERE expires_at < ?'),
      putProject: db.prepare(
        'INSERT INTO projects (project_id, config) VALUES (?, ?) ON CONFLICT (project_id) DO UPDATE SET config = excluded.config',
      ),
    };
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
    if (!row) return undefined;
    return {
      tokenHash: row.token_hash,
      projectId: row.project_id,
      localId: row.local_id,
      userCreatedAt: row.user_created_at,
      issuedAt: row.issued_at,
      authTime: row.auth_time,
      signInProvider: row.sign_in_provider,
    };
  }

  async getOobCode(codeHash: string): Promise<OobCodeRecord | undefined> {
    const row = this.statements.getOobCode.get(codeHash);
    return row ? (JSON.parse(row.record) as OobCodeRecord) : undefined;
  }

  async getHandlerSession(id: string): Promise<HandlerSessionRecord | undefined> {
    const row = this.statements.getHandlerSession.get(id);
    return row ? (JSON.parse(row.record) as HandlerSessionRecord) : undefined;
  }

  async listOutbox(projectId: string, limit: number): Promise<OutboxMessage[]> {
    return this.statements.listOutbox.all(projectId, limit).map((row) => ({ ...(JSON.parse(row.message) as Omit<OutboxMessage, 'id'>), id: row.id }));
  }

  async listProjects(): Promise<ProjectRecord[]> {
    return this.statements.listProjects.all().map((row) => ({ projectId: row.project_id, config: row.config }));
  }

  async commit(mutations: Mutation[]): Promise<void> {
    this.db.transaction(() => {
      for (const mutation of mutations) this.apply(mutation);
    })();
  }

  private apply(m: Mutation): void {
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
        s.deleteUser.run(m.projectId, m.localId);
        s.deleteProvidersOf.run(m.projectId, m.localId);
        return;
      case 'deleteAllUsers':
        s.deleteAllUsers.run(m.projectId);
        s.deleteAllProviders.run(m.projectId);
        s.deleteAllTokens.run(m.projectId);
        return;
      case 'insertRefreshToken':
        s.insertToken.run(m.token.tokenHash, m.token.projectId, m.token.localId, m.token.userCreatedAt, m.token.issuedAt, m.token.authTime, m.token.signInProvider);
        return;
      case 'deleteRefreshToken':
        s.deleteToken.run(m.tokenHash);
        return;
      case 'putProject':
        s.putProject.run(m.project.projectId, m.project.config);
        return;
      case 'insertOobCode':
        s.insertOobCode.run(m.code.codeHash, m.code.projectId, m.code.expiresAt, JSON.stringify(m.code));
        return;
      case 'deleteOobCode':
        if (s.deleteOobCode.run(m.codeHash).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'deleteExpiredOobCodes':
        s.deleteExpiredOobCodes.run(m.expiredBefore);
        return;
      case 'insertOutboxMessage':
        s.insertOutbox.run(m.message.projectId, m.message.createdAt, JSON.stringify(m.message));
        return;
      case 'clearOutbox':
        s.clearOutbox.run(m.projectId);
        return;
      case 'pruneOutbox':
        s.pruneOutbox.run(m.olderThan);
        return;
      case 'putHandlerSession':
        s.putHandlerSession.run(m.session.id, m.session.expiresAt, JSON.stringify(m.session));
        return;
      case 'updateHandlerSession':
        if (s.updateHandlerSession.run(m.session.expiresAt, JSON.stringify(m.session), m.session.id).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'deleteHandlerSession':
        if (s.deleteHandlerSession.run(m.id).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'deleteExpiredHandlerSessions':
        s.deleteExpiredHandlerSessions.run(m.expiredBefore);
        return;
    }
  }

  /** Rewrites the federated-identity index rows of one user (inside the commit's transaction). */
  private indexProviders(projectId: string, user: UserRecord): void {
    this.statements.deleteProvidersOf.run(projectId, user.localId);
    for (const info of user.providerUserInfo) {
      if (info.providerId === 'password' || info.providerId === 'phone') continue;
      try {
        this.statements.insertProvider.run(projectId, info.providerId, info.rawId, user.localId);
      } catch (error) {
        throw translateConstraint(error);
      }
    }
  }

  /** The document database's storage, in the same file and connection. */
  documents(): SqliteDocumentStore {
    return new SqliteDocumentStore(this.db);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function parseUser(row: UserRow | undefined): UserRecord | undefined {
  return row ? (JSON.parse(row.record) as UserRecord) : undefined;
}

function translateConstraint(error: unknown): unknown {
  if (error instanceof Database.SqliteError && error.code.startsWith('SQLITE_CONSTRAINT')) {
    if (error.message.includes('user_providers')) return new StoreConflict('federated-id-taken');
    return new StoreConflict(error.message.includes('users.email') ? 'email-taken' : 'local-id-taken');
  }
  return error;
}
