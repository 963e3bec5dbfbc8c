import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import type { AuthDeps } from './auth-context.js';
import type { Caller } from './requests.js';
import type { ServiceAccounts } from './service-accounts.js';
import type { SessionService, SignInResult } from './sessions.js';
import { reservedClaims } from './tokens.js';
import { checkLocalId } from './validation.js';
import { newSignedInAccount } from './user-repository.js';
import { projectOf, tenantOf } from '../tenants/realm.js';

/** The audience firebase-admin's createCustomToken writes, for Google and its emulator alike. */
export const customTokenAudience = 'https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit';
const maxLifetimeSeconds = 3600;
const clockSkewSeconds = 300;
const maxUidLength = 128;
/** Google refuses developer claims over 1000 bytes of JSON, as it does setCustomUserClaims. */
const maxClaimsBytes = 1000;

export interface VerifiedCustomToken {
  uid: string;
  /** JSON object text, or undefined when the token carries no claims. */
  developerClaims?: string;
}

export interface CustomTokenOptions {
  /**
   * --dev: also accept what Google's Auth emulator takes: the unsigned (alg none) tokens
   * firebase-admin mints in emulator mode, and plain JSON (`{"uid": ..., "claims": {...}}`), which
   * the SDKs' own test suites sign in with. Never outside --dev.
   */
  acceptUnsigned: boolean;
}

const invalid = (detail: string) => authError('INVALID_CUSTOM_TOKEN', detail);

/**
 * verifyCustomToken: an RS256 token from firebase-admin's createCustomToken, signed with one of the
 * project's service-account keys (iss = sub = the account's email), for the Identity Toolkit
 * audience, valid now for at most an hour, naming a uid of 1 to 128 characters.
 */
export class CustomTokenVerifier {
  constructor(
    private readonly accounts: ServiceAccounts,
    private readonly options: CustomTokenOptions,
  ) {}

  /** `realm`: where the token is used; a tenant's token (firebase-admin's authForTenant) names it as `tenant_id`. */
  async verify(realm: string, token: string | undefined): Promise<VerifiedCustomToken> {
    if (!token) throw authError('MISSING_CUSTOM_TOKEN');
    if (this.options.acceptUnsigned && token.startsWith('{')) return claimsOf(plainJsonToken(token, realm));
    if (token.split('.').length !== 3) throw invalid('Invalid assertion format. 3 dot separated segments required.');
    let alg: string | undefined;
    let payload: JWTPayload;
    try {
      alg = decodeProtectedHeader(token).alg;
      payload = decodeJwt(token);
    } catch {
      throw invalid('Invalid assertion format');
    }
    if (payload.aud !== customTokenAudience) {
      throw invalid('Invalid audience. Firebase ID tokens and third-party tokens cannot be used with signInWithCustomToken.');
    }
    if (alg === 'none' && this.options.acceptUnsigned) return claimsOf(sameTenant(payload, realm));
    if (alg !== 'RS256') throw invalid('Invalid signature algorithm; custom tokens are signed with RS256.');

    const issuer = typeof payload.iss === 'string' ? payload.iss : '';
    if (!issuer || payload.sub !== issuer) throw invalid('The iss and sub claims must both be the service account email.');
    const account = await this.accounts.keysOf(issuer);
    if (!account) throw invalid('The token is not signed by a known service account.');
    const verified = await verifyWithAny(token, account.keys, issuer);
    // Signed by a key of another project: Google's answer for a token minted for a different project.
    if (account.projectId !== projectOf(realm)) throw authError('CREDENTIAL_MISMATCH');
    return claimsOf(sameTenant(verified, realm));
  }
}

async function verifyWithAny(token: string, keys: Parameters<typeof jwtVerify>[1][], issuer: string): Promise<JWTPayload> {
  let expired = false;
  for (const key of keys) {
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['RS256'],
        issuer,
        audience: customTokenAudience,
        requiredClaims: ['iat', 'exp'],
        clockTolerance: clockSkewSeconds,
      });
      if (payload.exp! - payload.iat! > maxLifetimeSeconds) throw invalid('The token lives longer than an hour (exp - iat > 3600).');
      if (payload.iat! > Date.now() / 1000 + clockSkewSeconds) throw invalid('The token is issued in the future (iat).');
      return payload;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) expired = true;
      else if (!(error instanceof joseErrors.JOSEError)) throw error;
    }
  }
  throw invalid(expired ? 'Token expired.' : 'Invalid signature.');
}

/**
 * --dev: a plain JSON custom token, as the Auth emulator takes it (no audience needed; `user_id`
 * stands for `uid`). A tenant it names must be the realm's; one that names none works anywhere, as
 * in the emulator.
 */
function plainJsonToken(token: string, realm: string): JWTPayload {
  let payload: unknown;
  try {
    payload = JSON.parse(token);
  } catch {
    throw invalid('Auth Emulator only accepts strict JSON or JWTs as fake custom tokens.');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw invalid('A JSON custom token must be an object.');
  const fields = payload as JWTPayload;
  if (fields.uid === undefined && fields.user_id !== undefined) fields.uid = fields.user_id;
  return fields.tenant_id === undefined ? fields : sameTenant(fields, realm);
}

/** A tenant's token works only in that tenant, and a project's only outside every tenant. */
function sameTenant(payload: JWTPayload, realm: string): JWTPayload {
  const tenantId = typeof payload.tenant_id === 'string' && payload.tenant_id !== '' ? payload.tenant_id : undefined;
  if (payload.tenant_id !== undefined && tenantId === undefined) throw invalid('tenant_id must be a tenant id.');
  if (tenantId !== tenantOf(realm)) throw authError('TENANT_ID_MISMATCH');
  return payload;
}

function claimsOf(payload: JWTPayload): VerifiedCustomToken {
  const uid = typeof payload.uid === 'string' ? payload.uid : typeof payload.uid === 'number' ? String(payload.uid) : undefined;
  if (!uid) throw authError('MISSING_IDENTIFIER');
  if (uid.length > maxUidLength) throw invalid(`The uid must be at most ${maxUidLength} characters.`);
  if (payload.claims === undefined) return { uid };
  const claims = payload.claims;
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw invalid('The claims must be a JSON object.');
  for (const name of Object.keys(claims)) {
    if (reservedClaims.has(name)) throw invalid(`Developer claim "${name}" is reserved and cannot be specified.`);
  }
  const text = JSON.stringify(claims);
  if (Buffer.byteLength(text) > maxClaimsBytes) throw authError('CLAIMS_TOO_LARGE');
  return Object.keys(claims).length ? { uid, developerClaims: text } : { uid };
}

export interface SignInWithCustomTokenRequest {
  token?: string;
  returnSecureToken?: boolean;
  tenantId?: string;
}

export interface CustomTokenSignInResult extends SignInResult {
  isNewUser: boolean;
}

/**
 * signInWithCustomToken / verifyCustomToken: the uid a project's backend vouches for signs in and
 * is created on first use; the token's developer claims go into every ID token of that session.
 */
export class CustomTokenSignIn {
  constructor(
    private readonly deps: AuthDeps,
    private readonly sessions: SessionService,
    private readonly verifier: CustomTokenVerifier,
  ) {}

  async signIn(caller: Caller, request: SignInWithCustomTokenRequest): Promise<CustomTokenSignInResult> {
    const { uid, developerClaims } = await this.verifier.verify(caller.realm, request.token);
    const existing = await this.deps.users.get(caller.realm, uid);
    if (existing) return this.again(caller, existing, developerClaims);
    const now = Date.now();
    const authTime = Math.floor(now / 1000);
    const fresh = newSignedInAccount(now, { localId: checkLocalId(uid) });
    const refresh = this.deps.tokens.newRefreshToken(caller.realm, fresh, authTime, 'custom', developerClaims);
    let user: UserRecord;
    try {
      // Google raises no v1 onCreate for it, and calls no blocking function for custom tokens.
      user = await this.deps.users.insert(caller.realm, fresh, [refresh.mutation], true);
    } catch (error) {
      // Two first sign-ins of one uid at once: the second signs in to the account the first made.
      const raced = await this.deps.users.get(caller.realm, uid);
      if (!raced) throw error;
      return this.again(caller, raced, developerClaims);
    }
    return { user, tokens: await this.sessions.tokensFor(caller.realm, user, authTime, 'custom', refresh.token, developerClaims), isNewUser: true };
  }

  private async again(caller: Caller, account: UserRecord, developerClaims: string | undefined): Promise<CustomTokenSignInResult> {
    if (account.disabled) throw authError('USER_DISABLED');
    return { ...(await this.sessions.startSession(caller.realm, account, 'custom', developerClaims ? { developerClaims } : {})), isNewUser: false };
  }
}
