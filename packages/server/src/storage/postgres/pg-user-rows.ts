import {
  StoreConflict,
  type Mutation,
  type ProjectRecord,
  type RefreshTokenRecord,
  type RefreshTokenWithUser,
  type SecondFactorClaim,
  type ServiceAccountKeyRecord,
  type ServiceAccountTokenRecord,
  type UserPage,
  type UserRecord,
} from '../store.js';
import { indexedIdentities, passkeyIndexProvider } from '../passkey-records.js';
import { changeOne, num, translateUniqueViolation, type PgQueryable } from './pg-rows.js';

/** Accounts, their federated identities, refresh tokens, service accounts and project settings. */
export type UserMutation = Extract<
  Mutation,
  {
    kind:
      | 'insertUser'
      | 'updateUser'
      | 'deleteUser'
      | 'deleteAllUsers'
      | 'insertRefreshToken'
      | 'deleteRefreshToken'
      | 'putProject'
      | 'createProject'
      | 'insertServiceAccountKey'
      | 'deleteServiceAccountKey'
      | 'insertServiceAccountToken'
      | 'deleteExpiredServiceAccountTokens';
  }
>;

const userMutationKinds = new Set<string>([
  'insertUser',
  'updateUser',
  'deleteUser',
  'deleteAllUsers',
  'insertRefreshToken',
  'deleteRefreshToken',
  'putProject',
  'createProject',
  'insertServiceAccountKey',
  'deleteServiceAccountKey',
  'insertServiceAccountToken',
  'deleteExpiredServiceAccountTokens',
]);

export function isUserMutation(mutation: Mutation): mutation is UserMutation {
  return userMutationKinds.has(mutation.kind);
}

interface TokenRow {
  token_hash: string;
  project_id: string;
  local_id: string;
  user_created_at: string;
  issued_at: string;
  auth_time: string;
  sign_in_provider: string;
  developer_claims: string | null;
  second_factor: string | null;
}

interface ServiceAccountKeyRow {
  project_id: string;
  key_id: string;
  client_email: string;
  public_key: string;
  created_at: string;
}

function refreshTokenOf(row: TokenRow): RefreshTokenRecord {
  return {
    tokenHash: row.token_hash,
    projectId: row.project_id,
    localId: row.local_id,
    userCreatedAt: num(row.user_created_at),
    issuedAt: num(row.issued_at),
    authTime: num(row.auth_time),
    signInProvider: row.sign_in_provider,
    ...(row.developer_claims !== null ? { developerClaims: row.developer_claims } : {}),
    ...(row.second_factor !== null ? { secondFactor: JSON.parse(row.second_factor) as SecondFactorClaim } : {}),
  };
}

async function oneUser(db: PgQueryable, sql: string, values: unknown[]): Promise<UserRecord | undefined> {
  const { rows } = await db.query<{ record: string }>(sql, values);
  return rows[0] ? (JSON.parse(rows[0].record) as UserRecord) : undefined;
}

export const userReads = {
  getUser: (db: PgQueryable, projectId: string, localId: string) => oneUser(db, 'SELECT record FROM users WHERE project_id = $1 AND local_id = $2', [projectId, localId]),
  getUserByEmail: (db: PgQueryable, projectId: string, email: string) => oneUser(db, 'SELECT record FROM users WHERE project_id = $1 AND email = $2', [projectId, email]),
  getUserByPhone: (db: PgQueryable, projectId: string, phoneNumber: string) =>
    oneUser(db, 'SELECT record FROM users WHERE project_id = $1 AND phone_number = $2', [projectId, phoneNumber]),
  getUserByFederatedId: (db: PgQueryable, projectId: string, providerId: string, rawId: string) =>
    oneUser(
      db,
      'SELECT u.record FROM user_providers p JOIN users u ON u.project_id = p.project_id AND u.local_id = p.local_id WHERE p.project_id = $1 AND p.provider_id = $2 AND p.raw_id = $3',
      [projectId, providerId, rawId],
    ),

  /** By uid in byte order (the column is COLLATE "C"), as SQLite compares text. */
  async listUsers(db: PgQueryable, projectId: string, limit: number, afterLocalId = ''): Promise<UserPage> {
    const { rows } = await db.query<{ record: string }>(
      'SELECT record FROM users WHERE project_id = $1 AND local_id > $2 ORDER BY local_id LIMIT $3',
      [projectId, afterLocalId, limit + 1],
    );
    const users = rows.slice(0, limit).map((row) => JSON.parse(row.record) as UserRecord);
    const page: UserPage = { users };
    if (rows.length > limit) page.nextPageToken = users[users.length - 1]!.localId;
    return page;
  },

  async getRefreshToken(db: PgQueryable, tokenHash: string): Promise<RefreshTokenRecord | undefined> {
    const { rows } = await db.query<TokenRow>('SELECT * FROM refresh_tokens WHERE token_hash = $1', [tokenHash]);
    return rows[0] ? refreshTokenOf(rows[0]) : undefined;
  },

  async getRefreshTokenWithUser(db: PgQueryable, tokenHash: string): Promise<RefreshTokenWithUser | undefined> {
    const { rows } = await db.query<TokenRow & { record: string | null }>(
      'SELECT t.*, u.record FROM refresh_tokens t LEFT JOIN users u ON u.project_id = t.project_id AND u.local_id = t.local_id WHERE t.token_hash = $1',
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return undefined;
    return { token: refreshTokenOf(row), user: row.record === null ? undefined : (JSON.parse(row.record) as UserRecord) };
  },

  async listServiceAccountKeys(db: PgQueryable, projectId: string, clientEmail?: string): Promise<ServiceAccountKeyRecord[]> {
    const { rows } = await db.query<ServiceAccountKeyRow>(
      'SELECT * FROM service_account_keys WHERE project_id = $1 AND ($2::text IS NULL OR client_email = $2) ORDER BY created_at, key_id',
      [projectId, clientEmail ?? null],
    );
    return rows.map((row) => ({ projectId: row.project_id, keyId: row.key_id, clientEmail: row.client_email, publicKey: row.public_key, createdAt: num(row.created_at) }));
  },

  async getServiceAccountToken(db: PgQueryable, tokenHash: string): Promise<ServiceAccountTokenRecord | undefined> {
    const { rows } = await db.query<{ token_hash: string; project_id: string; key_id: string; expires_at: string }>(
      'SELECT * FROM service_account_tokens WHERE token_hash = $1',
      [tokenHash],
    );
    const row = rows[0];
    return row ? { tokenHash: row.token_hash, projectId: row.project_id, keyId: row.key_id, expiresAt: num(row.expires_at) } : undefined;
  },

  async listProjects(db: PgQueryable): Promise<ProjectRecord[]> {
    const { rows } = await db.query<{ project_id: string; config: string }>('SELECT project_id, config FROM projects ORDER BY project_id');
    return rows.map((row) => ({ projectId: row.project_id, config: row.config }));
  },
};

/** Rows a deleted realm takes with it (beside the outbox and phone rows). */
export async function deleteRealmUserRows(client: PgQueryable, projectId: string): Promise<void> {
  await changeOne(client, 'DELETE FROM projects WHERE project_id = $1', [projectId], 'code-used');
  for (const table of ['users', 'user_providers', 'refresh_tokens', 'oob_codes']) {
    await client.query(`DELETE FROM ${table} WHERE project_id = $1`, [projectId]);
  }
}

/** Inside the store's commit transaction. */
export async function applyUserMutation(client: PgQueryable, m: UserMutation): Promise<void> {
  switch (m.kind) {
    case 'insertUser':
      try {
        await client.query('INSERT INTO users (project_id, local_id, email, phone_number, version, record) VALUES ($1, $2, $3, $4, $5, $6)', [
          m.projectId,
          m.user.localId,
          m.user.email ?? null,
          m.user.phoneNumber ?? null,
          m.user.version,
          JSON.stringify(m.user),
        ]);
      } catch (error) {
        throw translateUniqueViolation(error);
      }
      await indexProviders(client, m.projectId, m.user);
      return;
    case 'updateUser': {
      // Another instance's update of the same row waits for ours and then finds the version moved on.
      let changed: number | null;
      try {
        changed = (
          await client.query('UPDATE users SET email = $1, phone_number = $2, version = $3, record = $4 WHERE project_id = $5 AND local_id = $6 AND version = $7', [
            m.user.email ?? null,
            m.user.phoneNumber ?? null,
            m.user.version,
            JSON.stringify(m.user),
            m.projectId,
            m.user.localId,
            m.expectedVersion,
          ])
        ).rowCount;
      } catch (error) {
        throw translateUniqueViolation(error);
      }
      if (changed !== 1) throw new StoreConflict('version-mismatch');
      await indexProviders(client, m.projectId, m.user);
      return;
    }
    case 'deleteUser': {
      // Under READ COMMITTED a concurrent delete of the row makes this one wait, then delete nothing.
      const deleted = (await client.query('DELETE FROM users WHERE project_id = $1 AND local_id = $2', [m.projectId, m.localId])).rowCount;
      if (deleted !== 1 && m.mustExist) throw new StoreConflict('not-found');
      await client.query('DELETE FROM user_providers WHERE project_id = $1 AND local_id = $2', [m.projectId, m.localId]);
      return;
    }
    case 'deleteAllUsers':
      for (const table of ['users', 'user_providers', 'refresh_tokens']) await client.query(`DELETE FROM ${table} WHERE project_id = $1`, [m.projectId]);
      return;
    case 'insertRefreshToken': {
      const t = m.token;
      await client.query(
        'INSERT INTO refresh_tokens (token_hash, project_id, local_id, user_created_at, issued_at, auth_time, sign_in_provider, developer_claims, second_factor) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        [t.tokenHash, t.projectId, t.localId, t.userCreatedAt, t.issuedAt, t.authTime, t.signInProvider, t.developerClaims ?? null, t.secondFactor ? JSON.stringify(t.secondFactor) : null],
      );
      return;
    }
    case 'deleteRefreshToken':
      await client.query('DELETE FROM refresh_tokens WHERE token_hash = $1', [m.tokenHash]);
      return;
    case 'putProject':
      await client.query('INSERT INTO projects (project_id, config) VALUES ($1, $2) ON CONFLICT (project_id) DO UPDATE SET config = EXCLUDED.config', [
        m.project.projectId,
        m.project.config,
      ]);
      return;
    case 'createProject':
      await client.query('INSERT INTO projects (project_id, config) VALUES ($1, $2) ON CONFLICT (project_id) DO NOTHING', [m.project.projectId, m.project.config]);
      return;
    case 'insertServiceAccountKey':
      await client.query('INSERT INTO service_account_keys (project_id, key_id, client_email, public_key, created_at) VALUES ($1, $2, $3, $4, $5)', [
        m.key.projectId,
        m.key.keyId,
        m.key.clientEmail,
        m.key.publicKey,
        m.key.createdAt,
      ]);
      return;
    case 'deleteServiceAccountKey':
      await changeOne(client, 'DELETE FROM service_account_keys WHERE project_id = $1 AND key_id = $2', [m.projectId, m.keyId], 'code-used');
      await client.query('DELETE FROM service_account_tokens WHERE project_id = $1 AND key_id = $2', [m.projectId, m.keyId]);
      return;
    case 'insertServiceAccountToken':
      await client.query('INSERT INTO service_account_tokens (token_hash, project_id, key_id, expires_at) VALUES ($1, $2, $3, $4)', [
        m.token.tokenHash,
        m.token.projectId,
        m.token.keyId,
        m.token.expiresAt,
      ]);
      return;
    case 'deleteExpiredServiceAccountTokens':
      await client.query('DELETE FROM service_account_tokens WHERE expires_at < $1', [m.expiredBefore]);
      return;
  }
}

/** Rewrites the federated-identity and passkey index rows of one user (inside the commit's transaction). */
async function indexProviders(client: PgQueryable, projectId: string, user: UserRecord): Promise<void> {
  await client.query('DELETE FROM user_providers WHERE project_id = $1 AND local_id = $2', [projectId, user.localId]);
  for (const row of indexedIdentities(user)) {
    try {
      await client.query('INSERT INTO user_providers (project_id, provider_id, raw_id, local_id) VALUES ($1, $2, $3, $4)', [projectId, row.providerId, row.rawId, user.localId]);
    } catch (error) {
      const conflict = translateUniqueViolation(error);
      throw row.providerId === passkeyIndexProvider && conflict instanceof StoreConflict ? new StoreConflict('passkey-taken') : conflict;
    }
  }
}
