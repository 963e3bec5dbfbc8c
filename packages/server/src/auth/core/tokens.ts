import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { createHash, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { Mutation, RefreshTokenRecord, RefreshTokenWithUser, SecondFactorClaim, Store, UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import { projectOf, tenantOf } from '../tenants/realm.js';
import type { SigningKeyRing } from './signing-keys.js';
import { VerifiedTokenCache } from './verified-tokens.js';
import { fromEmulatorForm, toEmulatorForm } from './emulator-tokens.js';
import { threadPoolBusyWithHashes } from './passwords.js';

export const idTokenLifetimeSeconds = 3600;

export type SignInProvider = 'password' | 'anonymous' | 'custom' | string;

export interface IdTokenClaims extends JWTPayload {
  sub: string;
  aud: string;
  iat: number;
  exp: number;
  auth_time: number;
  user_id: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string;
  phone_number?: string;
  firebase: {
    identities: Record<string, string[]>;
    sign_in_provider: SignInProvider;
    /** The tenant the account belongs to (absent for the project's own accounts). */
    tenant?: string;
    /** Set when the session passed a second factor: 'phone' or 'totp'. */
    sign_in_second_factor?: string;
    /** The enrolment (mfaEnrollmentId) of that second factor. */
    second_factor_identifier?: string;
  };
}

/** The second factor an ID token's session passed, to carry into tokens issued for the same session. */
export function secondFactorOf(claims: IdTokenClaims): SecondFactorClaim | undefined {
  const { sign_in_second_factor: factorId, second_factor_identifier: enrollmentId } = claims.firebase;
  return typeof factorId === 'string' && typeof enrollmentId === 'string' ? { factorId, enrollmentId } : undefined;
}

/**
 * Whether a session stands where one that passed a second step does, for the changes that ask for
 * one (withdrawing a factor, new recovery codes): it passed a second factor; it began with a
 * passkey (user verification makes it two factors in one, which is why a passkey sign-in is never
 * asked for a second: passkeys.ts); or with a custom token (the app's own server vouched for it).
 */
export function passedSecondStep(claims: IdTokenClaims): boolean {
  const provider = claims.firebase.sign_in_provider;
  return secondFactorOf(claims) !== undefined || provider === 'passkey' || provider === 'custom';
}

/** Claims firebase-admin refuses as custom claims, because the token already uses them. */
export const reservedClaims = new Set([
  'acr', 'amr', 'at_hash', 'aud', 'auth_time', 'azp', 'cnf', 'c_hash', 'exp', 'firebase', 'iat', 'iss', 'jti', 'nbf', 'nonce', 'sub',
]);

export function issuerFor(projectId: string): string {
  return `https://securetoken.google.com/${projectId}`;
}

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class TokenService {
  private readonly verified: VerifiedTokenCache;

  constructor(
    private readonly keys: SigningKeyRing,
    private readonly store: Store,
    /** How many verified ID tokens to remember (verified-tokens.ts); 0 checks every signature every time. */
    verifiedTokenCapacity?: number,
    /** --dev: issue and take ID tokens in the Auth emulator's unsigned form, still signed by us (emulator-tokens.ts). */
    private readonly emulatorForm = false,
  ) {
    this.verified = new VerifiedTokenCache(verifiedTokenCapacity);
  }

  newSessionId(): string {
    return randomId(15);
  }

  /** The stored refresh token and its account as they are now, in one read (the account is undefined once deleted). */
  findRefreshToken(tokenHash: string): Promise<RefreshTokenWithUser | undefined> {
    return this.store.getRefreshTokenWithUser(tokenHash);
  }

  forgetRefreshToken(tokenHash: string): Promise<void> {
    return this.store.commit([{ kind: 'deleteRefreshToken', tokenHash }]);
  }

  /**
   * An ID token for an account of `realm`: audience and issuer name its project, and a tenant's
   * accounts carry `firebase.tenant`. `developerClaims`: a custom token's claims (JSON object
   * text), over the user's own custom claims; `secondFactor`: the second factor the session passed
   * (firebase.sign_in_second_factor).
   */
  async signIdToken(
    realm: string,
    user: UserRecord,
    authTime: number,
    signInProvider: SignInProvider,
    developerClaims?: string,
    secondFactor?: SecondFactorClaim,
    now = nowSeconds(),
  ): Promise<string> {
    const identities: Record<string, string[]> = {};
    if (user.email) identities.email = [user.email];
    if (user.phoneNumber) identities.phone = [user.phoneNumber];
    for (const info of user.providerUserInfo) {
      if (info.providerId === 'password' || info.providerId === 'phone') continue;
      identities[info.providerId] = [info.rawId];
    }
    const custom = user.customAttributes ? (JSON.parse(user.customAttributes) as Record<string, unknown>) : {};
    const fromToken = developerClaims ? (JSON.parse(developerClaims) as Record<string, unknown>) : {};
    const claims: Record<string, unknown> = { ...custom, ...fromToken };
    if (user.displayName) claims.name = user.displayName;
    if (user.photoUrl) claims.picture = user.photoUrl;
    if (user.phoneNumber) claims.phone_number = user.phoneNumber;
    if (user.email) {
      claims.email = user.email;
      claims.email_verified = user.emailVerified;
    }
    const tenant = tenantOf(realm);
    const firebase: IdTokenClaims['firebase'] = { identities, sign_in_provider: signInProvider, ...(tenant !== undefined ? { tenant } : {}) };
    if (secondFactor) {
      firebase.sign_in_second_factor = secondFactor.factorId;
      firebase.second_factor_identifier = secondFactor.enrollmentId;
    }
    const projectId = projectOf(realm);
    Object.assign(claims, {
      auth_time: authTime,
      user_id: user.localId,
      firebase,
      iss: issuerFor(projectId),
      aud: projectId,
      sub: user.localId,
      iat: now,
      exp: now + idTokenLifetimeSeconds,
    });
    const key = await this.keys.signingKey();
    const signed = await signRs256Jwt({ alg: 'RS256', kid: key.kid, typ: 'JWT' }, claims, key.privateKeyObject);
    return this.emulatorForm ? toEmulatorForm(signed) : signed;
  }

  /**
   * Verifies signature (RS256 with one of our keys only), issuer, audience and expiry, and that the
   * token belongs to `realm`: a tenant's token only in that tenant, a project's only outside every
   * tenant (TENANT_ID_MISMATCH), unless `anyTenant` (Firestore takes every account of the project).
   * Answers INVALID_ID_TOKEN for anything forged or foreign and TOKEN_EXPIRED for an old token.
   */
  async verifyIdToken(realm: string, presented: string, options: { anyTenant?: boolean } = {}): Promise<IdTokenClaims> {
    const projectId = projectOf(realm);
    // --dev: an emulator-form token is checked as the signed token it carries (emulator-tokens.ts).
    const token = this.emulatorForm ? (fromEmulatorForm(presented) ?? presented) : presented;
    const known = this.verified.get(token, nowSeconds());
    // A token seen before skips its signature check only while its key is still published; the
    // claims are held to this realm as a first sight's are (jose's issuer and audience checks).
    let claims: IdTokenClaims;
    if (known && this.keys.isPublished(known.kid)) {
      claims = known.claims;
      if (claims.iss !== issuerFor(projectId) || claims.aud !== projectId) throw authError('INVALID_ID_TOKEN');
    } else {
      claims = await this.verifySignedIdToken(projectId, token);
    }
    if (!options.anyTenant && claims.firebase?.tenant !== tenantOf(realm)) throw authError('TENANT_ID_MISMATCH');
    return claims;
  }

  /** The full check: signature, issuer, audience, expiry; remembered when it passes. */
  private async verifySignedIdToken(projectId: string, token: string): Promise<IdTokenClaims> {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw authError('INVALID_ID_TOKEN');
    }
    if (!kid) throw authError('INVALID_ID_TOKEN');
    const key = await this.keys.publicKey(kid);
    if (!key) throw authError('INVALID_ID_TOKEN');
    let claims: IdTokenClaims;
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: ['RS256'],
        issuer: issuerFor(projectId),
        audience: projectId,
        requiredClaims: ['sub', 'iat', 'exp', 'auth_time'],
      });
      claims = payload as IdTokenClaims;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw authError('TOKEN_EXPIRED');
      throw authError('INVALID_ID_TOKEN');
    }
    this.verified.remember(token, kid, claims);
    return claims;
  }

  /** A new opaque refresh token and the mutation that stores its hash, in `realm`: a refresh stays there. */
  newRefreshToken(
    realm: string,
    user: Pick<UserRecord, 'localId' | 'createdAt'>,
    authTime: number,
    signInProvider: SignInProvider,
    developerClaims?: string,
    secondFactor?: SecondFactorClaim,
  ): { token: string; mutation: Mutation } {
    const token = `${randomBytes(32).toString('base64url')}`;
    const record: RefreshTokenRecord = {
      tokenHash: hashRefreshToken(token),
      projectId: realm,
      localId: user.localId,
      userCreatedAt: user.createdAt,
      issuedAt: nowSeconds(),
      authTime,
      signInProvider,
      ...(developerClaims ? { developerClaims } : {}),
      ...(secondFactor ? { secondFactor } : {}),
    };
    return { token, mutation: { kind: 'insertRefreshToken', token: record } };
  }
}

/**
 * A compact RS256 JWT, signed by node:crypto on the libuv pool (off the event loop). jose's SignJWT
 * with a WebCrypto key gives the same bytes with more work per call, which a token refresh pays on
 * every request. While password hashes fill the pool, the signature is made on the event loop
 * instead (passwords.ts threadPoolBusyWithHashes): it would otherwise wait behind them.
 */
export function signRs256Jwt(header: { alg: 'RS256'; kid: string; typ: 'JWT' }, claims: Record<string, unknown>, key: KeyObject): Promise<string> {
  const signingInput = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  if (threadPoolBusyWithHashes()) {
    try {
      return Promise.resolve(`${signingInput}.${sign('sha256', Buffer.from(signingInput), key).toString('base64url')}`);
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
  return new Promise((resolve, reject) => {
    sign('sha256', Buffer.from(signingInput), key, (error, signature) => {
      if (error) reject(error);
      else resolve(`${signingInput}.${signature.toString('base64url')}`);
    });
  });
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function randomId(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}
