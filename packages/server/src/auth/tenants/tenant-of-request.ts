import type { FastifyRequest } from 'fastify';
import { requestErrors } from '../../http/api-error.js';
import { authError } from '../errors.js';
import { isValidTenantId, realmKey } from './realm.js';
import type { TenantRecord } from './tenant-settings.js';

/**
 * The realm a request acts in, as Google's servers (and the Auth emulator) work it out: the
 * tenant in the path (`/projects/{p}/tenants/{t}/...`, firebase-admin's authForTenant), else the
 * `tenantId` of the body (the SDK adds it when `auth.tenantId` is set) or of the query (its GET
 * calls), else the tenant of the ID token the body carries (the SDK sends no tenantId with
 * lookup, delete and some updates). A path and a body naming different tenants are refused.
 *
 * The ID token is only decoded here, to pick the realm; it is verified later against that same
 * realm (TokenService.verifyIdToken), which refuses a token of another tenant or of none.
 */
export function requestedRealm(request: FastifyRequest, projectId: string, tenantOf: (realm: string) => TenantRecord | undefined): string {
  const fromPath = text((request.params as Record<string, unknown> | undefined)?.tenantId, 'tenantId');
  const body = isObject(request.body) ? request.body : {};
  const fromBody = text(body.tenantId, 'tenantId') ?? text((request.query as Record<string, unknown> | undefined)?.tenantId, 'tenantId');
  if (fromPath !== undefined && fromBody !== undefined && fromPath !== fromBody) throw authError('TENANT_ID_MISMATCH');
  const tenantId = fromPath ?? fromBody ?? tenantOfIdToken(body.idToken);
  if (tenantId === undefined) return projectId;
  if (!isValidTenantId(tenantId)) throw authError('INVALID_TENANT_ID');
  const realm = realmKey(projectId, tenantId);
  const tenant = tenantOf(realm);
  if (!tenant) throw authError('TENANT_NOT_FOUND');
  if (tenant.disableAuth) throw authError('PROJECT_DISABLED');
  return realm;
}

/** proto3 reads an empty string as "not set", as the SDKs may send it. */
function text(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw requestErrors.invalidArgument(`Invalid value at '${name}' (TYPE_STRING)`);
  return value;
}

/** Three base64url segments, the middle one (the claims) non-empty: what jose's decodeJwt accepts as a compact JWT. */
const compactJwt = /^[A-Za-z0-9_-]*\.([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]*$/;

/**
 * The tenant the token's claims name, read without jose's decodeJwt (its base64 decoding through
 * atob and TextDecoder cost more than the rest of routing a lookup). Anything that is not a JWT
 * with a JSON object for claims names no tenant, as before.
 */
function tenantOfIdToken(idToken: unknown): string | undefined {
  if (typeof idToken !== 'string' || idToken === '') return undefined;
  const known = decodedTenants.get(idToken);
  if (known !== undefined) return known === '' ? undefined : known;
  const tenant = decodeTenant(idToken);
  // Only token-sized text is kept (an ID token with the most custom claims allowed is under 4 kB),
  // and at most 10,000 of them: past the limit the oldest answer is dropped.
  if (idToken.length > maxRememberedLength) return tenant;
  if (decodedTenants.size >= maxDecodedTenants) {
    const oldest = decodedTenants.keys().next();
    if (!oldest.done) decodedTenants.delete(oldest.value);
  }
  decodedTenants.set(idToken, tenant ?? '');
  return tenant;
}

/**
 * The tenant each recently seen token names ('' for none), by the token's text: a client sends
 * the same ID token with every call for up to an hour, and decoding it again cost a lookup more
 * than its signature check does once the token is verified (verified-tokens.ts). What a token
 * names cannot change, so nothing here goes stale; the token is still verified on every use.
 */
const decodedTenants = new Map<string, string>();
const maxDecodedTenants = 10_000;
const maxRememberedLength = 4096;

function decodeTenant(idToken: string): string | undefined {
  const claimsPart = compactJwt.exec(idToken)?.[1];
  if (claimsPart === undefined) return undefined; // not a JWT: verification answers INVALID_ID_TOKEN in the project's realm
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(claimsPart, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(claims) || !isObject(claims.firebase)) return undefined;
  const tenant = claims.firebase.tenant;
  return typeof tenant === 'string' && tenant !== '' ? tenant : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
