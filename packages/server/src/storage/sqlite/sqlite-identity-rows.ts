import Database from 'better-sqlite3';
import { StoreConflict, type RefreshTokenRecord, type SecondFactorClaim, type UserRecord } from '../store.js';

/** SqliteStore's rows as SELECTed, and what they become. */

export interface UserRow {
  record: string;
}
export interface TokenRow {
  token_hash: string;
  project_id: string;
  local_id: string;
  user_created_at: number;
  issued_at: number;
  auth_time: number;
  sign_in_provider: string;
  developer_claims: string | null;
  second_factor: string | null;
}
export interface ServiceAccountKeyRow {
  project_id: string;
  key_id: string;
  client_email: string;
  public_key: string;
  created_at: number;
}
export interface ServiceAccountTokenRow {
  token_hash: string;
  project_id: string;
  key_id: string;
  expires_at: number;
}
export interface ProjectRow {
  project_id: string;
  config: string;
}
export interface ThrottleRow {
  scope: string;
  key_hash: string;
  expires_at: number;
  state: string;
}

export function refreshTokenOf(row: TokenRow): RefreshTokenRecord {
  return {
    tokenHash: row.token_hash,
    projectId: row.project_id,
    localId: row.local_id,
    userCreatedAt: row.user_created_at,
    issuedAt: row.issued_at,
    authTime: row.auth_time,
    signInProvider: row.sign_in_provider,
    ...(row.developer_claims !== null ? { developerClaims: row.developer_claims } : {}),
    ...(row.second_factor !== null ? { secondFactor: JSON.parse(row.second_factor) as SecondFactorClaim } : {}),
  };
}

export function parseUser(row: UserRow | undefined): UserRecord | undefined {
  return row ? (JSON.parse(row.record) as UserRecord) : undefined;
}

export function translateConstraint(error: unknown): unknown {
  if (error instanceof Database.SqliteError && error.code.startsWith('SQLITE_CONSTRAINT')) {
    if (error.message.includes('user_providers')) return new StoreConflict('federated-id-taken');
    if (error.message.includes('users.phone_number')) return new StoreConflict('phone-taken');
    return new StoreConflict(error.message.includes('users.email') ? 'email-taken' : 'local-id-taken');
  }
  return error;
}

/** SqliteStore's statements on its connection. */
export function identityStatements(db: Database.Database) {
  return {
    getUser: db.prepare<[string, string], UserRow>('SELECT record FROM users WHERE project_id = ? AND local_id = ?'),
    getUserByEmail: db.prepare<[string, string], UserRow>('SELECT record FROM users WHERE project_id = ? AND email = ?'),
    getUserByPhone: db.prepare<[string, string], UserRow>('SELECT record FROM users WHERE project_id = ? AND phone_number = ?'),
    getUserByFederatedId: db.prepare<[string, string, string], UserRow>(
      'SELECT u.record FROM user_providers p JOIN users u ON u.project_id = p.project_id AND u.local_id = p.local_id WHERE p.project_id = ? AND p.provider_id = ? AND p.raw_id = ?',
    ),
    insertProvider: db.prepare('INSERT INTO user_providers (project_id, provider_id, raw_id, local_id) VALUES (?, ?, ?, ?)'),
    deleteProvidersOf: db.prepare('DELETE FROM user_providers WHERE project_id = ? AND local_id = ?'),
    deleteAllProviders: db.prepare('DELETE FROM user_providers WHERE project_id = ?'),
    listUsers: db.prepare<[string, string, number], UserRow>(
      'SELECT record FROM users WHERE project_id = ? AND local_id > ? ORDER BY local_id LIMIT ?',
    ),
    insertUser: db.prepare('INSERT INTO users (project_id, local_id, email, phone_number, version, record) VALUES (?, ?, ?, ?, ?, ?)'),
    updateUser: db.prepare(
      'UPDATE users SET email = ?, phone_number = ?, version = ?, record = ? WHERE project_id = ? AND local_id = ? AND version = ?',
    ),
    deleteUser: db.prepare('DELETE FROM users WHERE project_id = ? AND local_id = ?'),
    deleteAllUsers: db.prepare('DELETE FROM users WHERE project_id = ?'),
    deleteAllTokens: db.prepare('DELETE FROM refresh_tokens WHERE project_id = ?'),
    getToken: db.prepare<[string], TokenRow>('SELECT * FROM refresh_tokens WHERE token_hash = ?'),
    getTokenWithUser: db.prepare<[string], TokenRow & { record: string | null }>(
      'SELECT t.*, u.record FROM refresh_tokens t LEFT JOIN users u ON u.project_id = t.project_id AND u.local_id = t.local_id WHERE t.token_hash = ?',
    ),
    insertToken: db.prepare(
      'INSERT INTO refresh_tokens (token_hash, project_id, local_id, user_created_at, issued_at, auth_time, sign_in_provider, developer_claims, second_factor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    deleteToken: db.prepare('DELETE FROM refresh_tokens WHERE token_hash = ?'),
    listServiceAccountKeys: db.prepare<[string], ServiceAccountKeyRow>('SELECT * FROM service_account_keys WHERE project_id = ? ORDER BY created_at, key_id'),
    insertServiceAccountKey: db.prepare('INSERT INTO service_account_keys (project_id, key_id, client_email, public_key, created_at) VALUES (?, ?, ?, ?, ?)'),
    deleteServiceAccountKey: db.prepare('DELETE FROM service_account_keys WHERE project_id = ? AND key_id = ?'),
    deleteServiceAccountTokensOf: db.prepare('DELETE FROM service_account_tokens WHERE project_id = ? AND key_id = ?'),
    getServiceAccountToken: db.prepare<[string], ServiceAccountTokenRow>('SELECT * FROM service_account_tokens WHERE token_hash = ?'),
    insertServiceAccountToken: db.prepare('INSERT INTO service_account_tokens (token_hash, project_id, key_id, expires_at) VALUES (?, ?, ?, ?)'),
    deleteExpiredServiceAccountTokens: db.prepare('DELETE FROM service_account_tokens WHERE expires_at < ?'),
    listProjects: db.prepare<[], ProjectRow>('SELECT * FROM projects ORDER BY project_id'),
    getOobCode: db.prepare<[string], { record: string }>('SELECT record FROM oob_codes WHERE code_hash = ?'),
    insertOobCode: db.prepare('INSERT INTO oob_codes (code_hash, project_id, expires_at, record) VALUES (?, ?, ?, ?)'),
    deleteOobCode: db.prepare('DELETE FROM oob_codes WHERE code_hash = ?'),
    deleteExpiredOobCodes: db.prepare('DELETE FROM oob_codes WHERE expires_at < ?'),
    listThrottle: db.prepare<[string, number, number], ThrottleRow>(
      'SELECT * FROM (SELECT * FROM throttle_state WHERE scope = ? AND expires_at > ? ORDER BY expires_at DESC LIMIT ?) ORDER BY expires_at',
    ),
    putThrottle: db.prepare(
      'INSERT INTO throttle_state (scope, key_hash, expires_at, state) VALUES (?, ?, ?, ?) ON CONFLICT (scope, key_hash) DO UPDATE SET expires_at = excluded.expires_at, state = excluded.state',
    ),
    deleteThrottle: db.prepare('DELETE FROM throttle_state WHERE scope = ? AND key_hash = ?'),
    deleteExpiredThrottle: db.prepare('DELETE FROM throttle_state WHERE expires_at < ?'),
    deleteRealm: [
      'DELETE FROM projects WHERE project_id = ?',
      'DELETE FROM users WHERE project_id = ?',
      'DELETE FROM user_providers WHERE project_id = ?',
      'DELETE FROM refresh_tokens WHERE project_id = ?',
      'DELETE FROM oob_codes WHERE project_id = ?',
    ].map((sql) => db.prepare<[string]>(sql)),
    putProject: db.prepare(
      'INSERT INTO projects (project_id, config) VALUES (?, ?) ON CONFLICT (project_id) DO UPDATE SET config = excluded.config',
    ),
    createProject: db.prepare('INSERT INTO projects (project_id, config) VALUES (?, ?) ON CONFLICT (project_id) DO NOTHING'),
  };
}
