import { createHash, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { ServiceAccountKeyRecord, ServiceAccountTokenRecord, Store } from '../../storage/store.js';
import { StoreConflict } from '../../storage/store.js';

/** The token URL firebase-admin (google-auth-library) signs its assertions for, whatever the key file says. */
export const googleTokenUrl = 'https://oauth2.googleapis.com/token';
/** Hearth serves Google's token endpoint under its host name, like the other Google hosts. */
export const tokenPath = '/oauth2.googleapis.com/token';

const accessTokenLifetimeSeconds = 3600;
/** Assertions may be signed this far ahead of our clock (machines drift). */
const clockSkewSeconds = 300;
/** Access tokens carry this prefix, so other bearer values never cost a lookup. */
const accessTokenPrefix = 'ya29.hearth.';

/** The JSON file firebase-admin's `cert()` reads (the shape Google's console downloads). */
export interface ServiceAccountKeyFile {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

export interface ServiceAccountKeyInfo {
  keyId: string;
  clientEmail: string;
  createdAt: string;
}

export interface AccessTokenGrant {
  access_token: string;
  expires_in: number;
  token_type: 'Bearer';
}

/** A refused token exchange, in OAuth 2's terms (RFC 6749 §5.2), not Google's API error shape. */
export class OAuthGrantError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'unsupported_grant_type' | 'invalid_grant',
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
    this.name = 'OAuthGrantError';
  }
}

export class UnknownServiceAccountKey extends Error {
  constructor(readonly keyId: string) {
    super(`no service-account key ${keyId}`);
    this.name = 'UnknownServiceAccountKey';
  }
}

/** Project ids Hearth accepts in an account's email: Google's own id alphabet. */
const projectIdPattern = /^[a-z0-9][a-z0-9-]{0,62}$/i;

export function serviceAccountEmail(projectId: string): string {
  return `firebase-adminsdk-hearth@${projectId}.iam.gserviceaccount.com`;
}

/** The project a service-account email belongs to, if it has the shape Hearth issues. */
export function projectOfServiceAccount(clientEmail: string): string | undefined {
  const match = /^[a-z0-9-]+@([^@]+)\.iam\.gserviceaccount\.com$/i.exec(clientEmail);
  return match && projectIdPattern.test(match[1]!) ? match[1] : undefined;
}

export function hashAccessToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Service-account keys per project and the OAuth token exchange that turns a key's signed
 * assertion into an access token, which is the administrator of that project only. Hearth keeps
 * only each key's public half; the private key exists in the file handed out once.
 */
export class ServiceAccounts {
  /** Parsed public keys by key id; which keys exist is always read from the store (revocation is immediate). */
  private readonly parsed = new Map<string, KeyObject>();

  constructor(private readonly store: Store) {}

  /** A new key for the project; the file (with its private key) is returned once and never kept. */
  async createKey(projectId: string, tokenUri: string, now = Date.now()): Promise<ServiceAccountKeyFile> {
    if (!projectIdPattern.test(projectId)) throw new Error(`not a project id Hearth can name a service account after: ${projectId}`);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyId = randomBytes(20).toString('hex');
    const clientEmail = serviceAccountEmail(projectId);
    const record: ServiceAccountKeyRecord = {
      projectId,
      keyId,
      clientEmail,
      publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      createdAt: now,
    };
    await this.store.commit([{ kind: 'insertServiceAccountKey', key: record }]);
    const base = tokenUri.slice(0, tokenUri.length - tokenPath.length);
    return {
      type: 'service_account',
      project_id: projectId,
      private_key_id: keyId,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: clientEmail,
      client_id: numericId(clientEmail),
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: tokenUri,
      auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
      client_x509_cert_url: `${base}/robot/v1/metadata/x509/${encodeURIComponent(clientEmail)}`,
      universe_domain: 'googleapis.com',
    };
  }

  async listKeys(projectId: string): Promise<ServiceAccountKeyInfo[]> {
    const keys = await this.store.listServiceAccountKeys(projectId);
    return keys.map((key) => ({ keyId: key.keyId, clientEmail: key.clientEmail, createdAt: new Date(key.createdAt).toISOString() }));
  }

  /** Deletes the key and every access token exchanged with it, in one commit. */
  async revokeKey(projectId: string, keyId: string): Promise<void> {
    try {
      await this.store.commit([{ kind: 'deleteServiceAccountKey', projectId, keyId }]);
    } catch (error) {
      if (error instanceof StoreConflict) throw new UnknownServiceAccountKey(keyId);
      throw error;
    }
  }

  /** The public keys of a service account (named by its email), with the project it belongs to. */
  async keysOf(clientEmail: string): Promise<{ projectId: string; keys: KeyObject[] } | undefined> {
    const projectId = projectOfServiceAccount(clientEmail);
    if (projectId === undefined) return undefined;
    const records = await this.store.listServiceAccountKeys(projectId, clientEmail);
    return records.length ? { projectId, keys: records.map((r) => this.publicKeyOf(r)) } : undefined;
  }

  /**
   * The jwt-bearer grant: the assertion must be signed by one of the account's keys, name the
   * token endpoint as audience, and be valid now for at most an hour.
   */
  async exchangeAssertion(grantType: string | undefined, assertion: string | undefined, acceptedAudiences: readonly string[]): Promise<AccessTokenGrant> {
    if (grantType !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') throw new OAuthGrantError('unsupported_grant_type', 'Invalid grant_type: ' + (grantType ?? ''));
    if (!assertion) throw new OAuthGrantError('invalid_request', 'Missing required parameter: assertion');
    let issuer: string | undefined;
    try {
      if (decodeProtectedHeader(assertion).alg !== 'RS256') throw new Error('alg');
      issuer = decodeJwt(assertion).iss;
    } catch {
      throw new OAuthGrantError('invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
    }
    const account = issuer ? await this.keysOf(issuer) : undefined;
    if (!account) throw new OAuthGrantError('invalid_grant', 'Invalid grant: account not found');
    const keyId = await this.verifyWithAny(account.projectId, issuer!, assertion, acceptedAudiences);
    const token = `${accessTokenPrefix}${randomBytes(32).toString('base64url')}`;
    const record: ServiceAccountTokenRecord = {
      tokenHash: hashAccessToken(token),
      projectId: account.projectId,
      keyId,
      expiresAt: Date.now() + accessTokenLifetimeSeconds * 1000,
    };
    await this.store.commit([
      { kind: 'deleteExpiredServiceAccountTokens', expiredBefore: Date.now() },
      { kind: 'insertServiceAccountToken', token: record },
    ]);
    return { access_token: token, expires_in: accessTokenLifetimeSeconds - 1, token_type: 'Bearer' };
  }

  /** The project an access token is the administrator of, if it is live and its key not revoked. */
  async projectOfAccessToken(token: string, now = Date.now()): Promise<string | undefined> {
    if (!token.startsWith(accessTokenPrefix)) return undefined;
    const record = await this.store.getServiceAccountToken(hashAccessToken(token));
    return record && record.expiresAt > now ? record.projectId : undefined;
  }

  private publicKeyOf(record: ServiceAccountKeyRecord): KeyObject {
    let key = this.parsed.get(record.keyId);
    if (!key) {
      key = createPublicKey(record.publicKey);
      this.parsed.set(record.keyId, key);
    }
    return key;
  }

  static isAccessTokenShaped(token: string): boolean {
    return token.startsWith(accessTokenPrefix);
  }

  private async verifyWithAny(projectId: string, clientEmail: string, assertion: string, audiences: readonly string[]): Promise<string> {
    const records = await this.store.listServiceAccountKeys(projectId, clientEmail);
    for (const record of records) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(assertion, this.publicKeyOf(record), {
          algorithms: ['RS256'],
          issuer: clientEmail,
          audience: [...audiences],
          requiredClaims: ['iat', 'exp'],
          clockTolerance: clockSkewSeconds,
        }));
      } catch {
        continue; // the next key may have signed it
      }
      if (payload.exp! - payload.iat! > accessTokenLifetimeSeconds || payload.iat! > Date.now() / 1000 + clockSkewSeconds) {
        throw new OAuthGrantError('invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
      }
      return record.keyId;
    }
    throw new OAuthGrantError('invalid_grant', 'Invalid JWT Signature.');
  }
}

/** Google's client ids are 21 digits; derived from the email so each account keeps one. */
function numericId(clientEmail: string): string {
  const digest = createHash('sha256').update(clientEmail).digest();
  return (digest.readBigUInt64BE(0) % 10n ** 21n).toString().padStart(21, '1');
}
