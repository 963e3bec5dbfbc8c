import { decodeJwt, type JWTPayload } from 'jose';
import { authError } from '../errors.js';
import { profileFromClaims, type IdpProfile } from './oidc.js';

/**
 * Google's Auth emulator takes made-up provider credentials, so tests sign in without a provider:
 * `GoogleAuthProvider.credential('{"sub":"abc","email":"a@b.c","email_verified":true}')`, or any
 * JWT whose signature nobody checks, as an ID token or an access token. Hearth accepts them in
 * --dev only (server.ts decides), and only for providers it was not configured to verify.
 */
export function fakeProviderProfile(token: string): IdpProfile {
  return profileFromClaims(claimsOf(token));
}

function claimsOf(token: string): JWTPayload {
  const trimmed = token.trim();
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw authError('INVALID_IDP_RESPONSE', 'The made-up credential is not valid JSON.');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw authError('INVALID_IDP_RESPONSE', 'The made-up credential is not a JSON object.');
    return parsed as JWTPayload;
  }
  try {
    return decodeJwt(trimmed);
  } catch {
    throw authError('INVALID_IDP_RESPONSE', 'The made-up credential is neither a JSON object nor a JWT.');
  }
}
