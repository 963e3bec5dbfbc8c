import { SignJWT } from 'jose';
import { authError } from '../errors.js';
import { projectOf } from '../tenants/realm.js';
import { authenticate, requireAdmin, type AuthDeps } from './auth-context.js';
import type { Caller } from './requests.js';
import type { SigningKeyRing } from './signing-keys.js';
import { nowSeconds } from './tokens.js';
import { toEmulatorForm } from './emulator-tokens.js';

/** Google's bounds: five minutes to two weeks. */
export const minSessionSeconds = 5 * 60;
export const maxSessionSeconds = 14 * 24 * 3600;

export function sessionCookieIssuer(projectId: string): string {
  return `https://session.firebase.google.com/${projectId}`;
}

export interface CreateSessionCookieRequest {
  idToken?: string;
  /** Seconds, as a number or an int64 string. */
  validDuration?: number | string;
  tenantId?: string;
}

/**
 * createSessionCookie: a fresh ID token becomes a longer-lived cookie with the same claims, signed
 * by the session-cookie key ring (its keys outlive the longest cookie; published at
 * /identitytoolkit/v3/relyingparty/publicKeys, where firebase-admin's verifySessionCookie reads them).
 */
export class SessionCookies {
  constructor(
    private readonly deps: AuthDeps,
    private readonly keys: SigningKeyRing,
    /** --dev: the Auth emulator's unsigned form, which firebase-admin's emulator mode verifies (emulator-tokens.ts). */
    private readonly emulatorForm = false,
  ) {}

  async create(caller: Caller, request: CreateSessionCookieRequest): Promise<string> {
    requireAdmin(caller);
    const seconds = request.validDuration === undefined ? maxSessionSeconds : Number(request.validDuration);
    if (!Number.isInteger(seconds) || seconds < minSessionSeconds || seconds > maxSessionSeconds) throw authError('INVALID_SESSION_COOKIE_DURATION');
    const { claims } = await authenticate(this.deps, caller, request.idToken);
    const { iss: _iss, aud: _aud, iat: _iat, exp: _exp, nbf: _nbf, jti: _jti, sub, ...carried } = claims;
    const now = nowSeconds();
    const key = await this.keys.signingKey();
    const signed = await new SignJWT(carried)
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuer(sessionCookieIssuer(projectOf(caller.realm)))
      .setAudience(projectOf(caller.realm))
      .setSubject(sub)
      .setIssuedAt(now)
      .setExpirationTime(now + seconds)
      .sign(key.privateKey);
    return this.emulatorForm ? toEmulatorForm(signed) : signed;
  }
}
