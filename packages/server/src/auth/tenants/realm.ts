/**
 * A realm is one partition of a project's identity data: the project's own (no tenant), or one of
 * its tenants (Identity Platform multi-tenancy). Accounts, refresh tokens, action codes, SMS codes,
 * mails and sign-in settings are keyed in the store by the realm's key, so a tenant's data is
 * reached only through that tenant: the key is the project id for the project's own realm and
 * `<project>/tenants/<tenant>` for a tenant. Project ids never contain '/', so keys never collide.
 * Tokens name the project itself (aud, iss) and carry the tenant as `firebase.tenant`.
 */

const tenantSegment = '/tenants/';

/** A tenant id: a letter, then letters, digits and hyphens; at most 64 characters in all. */
export const tenantIdSyntax = '[A-Za-z][A-Za-z0-9-]{0,63}';
export const tenantIdPattern = `^${tenantIdSyntax}$`;
const tenantIdExpression = new RegExp(tenantIdPattern);

export function isValidTenantId(tenantId: string): boolean {
  return tenantIdExpression.test(tenantId);
}

/** The store key of a project's own realm (no tenant) or of one of its tenants. */
export function realmKey(projectId: string, tenantId?: string): string {
  return tenantId === undefined ? projectId : `${projectId}${tenantSegment}${tenantId}`;
}

/** The project a realm belongs to: what tokens name as audience and issuer. */
export function projectOf(realm: string): string {
  const at = realm.indexOf(tenantSegment);
  return at < 0 ? realm : realm.slice(0, at);
}

/** The realm's tenant, or undefined for the project's own realm. */
export function tenantOf(realm: string): string | undefined {
  const at = realm.indexOf(tenantSegment);
  return at < 0 ? undefined : realm.slice(at + tenantSegment.length);
}

export function isTenantRealm(realm: string): boolean {
  return realm.includes(tenantSegment);
}

/** `{ tenantId }` for a tenant's realm, `{}` for the project's: for records and answers that name their tenant. */
export function tenantField(realm: string): { tenantId?: string } {
  const tenantId = tenantOf(realm);
  return tenantId === undefined ? {} : { tenantId };
}
