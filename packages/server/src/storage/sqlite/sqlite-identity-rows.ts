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
