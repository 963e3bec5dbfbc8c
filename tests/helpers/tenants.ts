import type { TestHearth } from './hearth.js';
import type { OobEntry } from './outbox.js';

export interface TenantResource {
  name: string;
  tenantId: string;
  displayName?: string;
  allowPasswordSignup: boolean;
  enableEmailLinkSignin: boolean;
  enableAnonymousUser: boolean;
  disableAuth: boolean;
  [field: string]: unknown;
}

/** A call with the admin key (or another `authorization`); answers status and parsed body. */
export async function call(
  server: TestHearth,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { authorization: `Bearer ${server.adminKey}` },
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

export const tenantsPath = (server: TestHearth, projectId = server.projectId) => `/identitytoolkit.googleapis.com/v2/projects/${projectId}/tenants`;

/** Creates a tenant over raw HTTP with the admin key (every sign-in method on unless `settings` says otherwise). */
export async function createTenant(server: TestHearth, settings: Record<string, unknown> = {}): Promise<TenantResource> {
  const created = await call(server, 'POST', tenantsPath(server), { allowPasswordSignup: true, enableEmailLinkSignin: true, enableAnonymousUser: true, ...settings });
  if (created.status !== 200) throw new Error(`createTenant: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body as TenantResource;
}

/** The mails of a tenant (GET /emulator/v1/projects/{p}/tenants/{t}/oobCodes), oldest first. */
export async function tenantOobCodes(server: TestHearth, tenantId: string): Promise<OobEntry[]> {
  const { status, body } = await call(server, 'GET', `/emulator/v1/projects/${server.projectId}/tenants/${tenantId}/oobCodes`);
  if (status !== 200) throw new Error(`oobCodes: ${status} ${JSON.stringify(body)}`);
  return (body as { oobCodes: OobEntry[] }).oobCodes;
}

/** The newest mail of a type to an address in a tenant (polled: some mails are sent after the answer). */
export async function waitForTenantMail(server: TestHearth, tenantId: string, email: string, requestType: string): Promise<OobEntry> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = (await tenantOobCodes(server, tenantId)).filter((m) => m.email === email.toLowerCase() && m.requestType === requestType).pop();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${requestType} mail to ${email} in tenant ${tenantId}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The claims of a JWT, unverified (the tests check what Hearth put in). */
export function claimsOf(jwt: string): Record<string, any> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, any>;
}

/** A client call (`/identitytoolkit.googleapis.com/v1/accounts:<name>?key=`), as the SDK makes it. */
export function clientCall(server: TestHearth, name: string, body: unknown, apiKey = server.apiKey) {
  return call(server, 'POST', `/identitytoolkit.googleapis.com/v1/accounts:${name}?key=${apiKey}`, body, {});
}

/** The server's error code: the message before ` : `. */
export function errorCode(answer: { body: any }): string {
  return String(answer.body?.error?.message ?? '').split(' : ')[0]!;
}
