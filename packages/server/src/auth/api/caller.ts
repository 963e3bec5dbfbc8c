import type { FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../http/api-error.js';
import type { ProjectDirectory } from '../core/project-config.js';
import type { Caller } from '../core/requests.js';
import { authError } from '../errors.js';
import { requestedRealm } from '../tenants/tenant-of-request.js';
import { clientAddressOf } from '../../http/address-key.js';
import { isFunctionsPrincipal, peerOf, type FunctionsCredentialSlot, type Peer } from './functions-credential.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The project whose administrator a service-account access token in `Authorization` is
     * (resolved from the store before the route runs); '' for any other caller.
     */
    serviceAccountProject: string;
    /** A service-account access token that is expired or whose key was revoked. */
    staleServiceAccountToken: boolean;
  }
}

export interface AdminCredential {
  /** The secret admin key; `Authorization: Bearer <key>`. */
  adminKey: string;
  /** In dev mode firebase-admin's emulator credential, `Bearer owner`, is accepted too. */
  acceptOwner: boolean;
}

/**
 * Works out who is calling: the project (from the API key or the path), the realm within it (a
 * tenant the request names, see tenants/tenant-of-request.ts) and admin or not. The admin key (and
 * `Bearer owner` in --dev) is the administrator of every project; a service-account access token
 * only of the project its key belongs to, tenants included.
 */
export class CallerResolver {
  /** The `--functions` worker's own credential (functions-credential.ts); the functions domain fills it in. */
  readonly functions: FunctionsCredentialSlot = {};

  constructor(
    private readonly projects: ProjectDirectory,
    private readonly admin: AdminCredential,
    /** The project a service-account access token administers, if it is live (read from the store). */
    private readonly serviceAccountProjectOf?: (accessToken: string) => Promise<string | undefined>,
  ) {}

  /**
   * For callers that check the header themselves and know the project (Firestore's transports):
   * the admin key, or a live service-account access token of `projectId`.
   */
  async isAdminOf(authorization: string | undefined, projectId: string, peer?: Peer): Promise<boolean> {
    if (this.isAdminAuthorization(authorization)) return true;
    const token = bearerToken(authorization);
    if (token !== undefined && isFunctionsPrincipal(this.functions, token, peer, projectId)) return true;
    if (token === undefined || this.serviceAccountProjectOf === undefined) return false;
    return (await this.serviceAccountProjectOf(token)) === projectId;
  }

  /** Administrator of `projectId` (of every project when the credential is the admin key). */
  isAdmin(request: FastifyRequest, projectId?: string): boolean {
    // The HTTP layer already refuses these; a page on another site is never the administrator.
    if (request.fromForeignPage) return false;
    // The console session (console/console-access.ts marked it) is the administrator of every project.
    if (request.consoleOperator) return true;
    if (this.isAdminAuthorization(request.headers.authorization)) return true;
    if (this.isFunctionsCaller(request, projectId)) return true;
    return projectId !== undefined && request.serviceAccountProject !== '' && request.serviceAccountProject === projectId;
  }

  /** The functions worker's firebase-admin: the administrator of the functions' project, never the owner. */
  private isFunctionsCaller(request: FastifyRequest, projectId: string | undefined): boolean {
    const token = bearerToken(request.headers.authorization);
    return token !== undefined && isFunctionsPrincipal(this.functions, token, peerOf(request), projectId);
  }

  /** The admin key (or `Bearer owner` in --dev) itself, or the console session: only they manage service-account keys. */
  isOwner(request: FastifyRequest): boolean {
    return !request.fromForeignPage && (Boolean(request.consoleOperator) || this.isAdminAuthorization(request.headers.authorization));
  }

  isAdminAuthorization(header: string | undefined): boolean {
    const presented = bearerToken(header);
    if (presented === undefined) return false;
    if (this.admin.acceptOwner && presented === 'owner') return true;
    return this.admin.adminKey.length > 0 && safeEqual(presented, this.admin.adminKey);
  }

  /** For client calls, which carry no project in the path: the `?key=` decides. */
  fromApiKey(request: FastifyRequest): Caller {
    const key = apiKeyOf(request);
    if (key === undefined) {
      if (this.isOwner(request)) return { realm: this.realm(request, this.projects.defaultProjectId), isAdmin: true, isOwner: true, clientIp: clientAddressOf(request), ...locale(request) };
      if (this.isFunctionsCaller(request, this.projects.defaultProjectId)) return { realm: this.realm(request, this.projects.defaultProjectId), isAdmin: true, clientIp: clientAddressOf(request), ...locale(request) };
      const serviceAccountProject = request.fromForeignPage ? '' : request.serviceAccountProject;
      if (serviceAccountProject !== '') return { realm: this.realm(request, serviceAccountProject), isAdmin: true, clientIp: clientAddressOf(request), ...locale(request) };
      throw new ApiError(403, 'The request is missing a valid API key.', 'PERMISSION_DENIED');
    }
    const projectId = this.projects.projectForApiKey(key);
    if (projectId === undefined) throw authError('INVALID_API_KEY');
    return { realm: this.realm(request, projectId), isAdmin: this.isAdmin(request, projectId), isOwner: this.isOwner(request), clientIp: clientAddressOf(request), apiKey: key, ...locale(request) };
  }

  /** For `/projects/{projectId}/...` calls: administrators only, in the realm the request names (`.../tenants/{t}/...`). */
  fromPath(request: FastifyRequest, projectId: string): Caller {
    return { ...this.projectAdmin(request, projectId), realm: this.realm(request, projectId) };
  }

  /**
   * For what only the owner reads or clears: a project's outboxes and sent codes. A mail's link or a
   * text's code signs in as its account, an operator's included, so a service account, the
   * administrator of its project only, must not see them (auth/core/operator-claim.ts).
   */
  ownerOfPath(request: FastifyRequest, projectId: string): Caller {
    const caller = this.fromPath(request, projectId);
    if (!caller.isOwner) throw authError('INSUFFICIENT_PERMISSION', "Only the admin key or a console operator may read or clear a project's sent mails and codes.");
    return caller;
  }

  /** An administrator of the project itself, whatever tenant the request names: its settings and the management of its tenants. */
  projectAdmin(request: FastifyRequest, projectId: string): Caller {
    const isAdmin = this.isAdmin(request, projectId);
    // A live credential of another project: Google's answer for a service account without rights here.
    if (!isAdmin && request.serviceAccountProject) throw authError('INSUFFICIENT_PERMISSION', 'The caller does not have permission on this project.');
    if (!isAdmin && request.staleServiceAccountToken) throw staleCredential();
    if (!isAdmin) throw authError('ADMIN_ONLY_OPERATION');
    return { realm: projectId, isAdmin, isOwner: this.isOwner(request), clientIp: clientAddressOf(request), ...locale(request) };
  }

  /** The realm a `/projects/{p}[/tenants/{t}]/...` path names, for what --dev serves to anyone (the emulator's lists). */
  realmOfPath(request: FastifyRequest): string {
    return this.realm(request, (request.params as { projectId: string }).projectId);
  }

  /** The project's realm the request names (its own, or a live tenant's). */
  private realm(request: FastifyRequest, projectId: string): string {
    return requestedRealm(request, projectId, (realm) => this.projects.tenant(realm));
  }

  /** A key is checked but names no project (the token endpoint: the refresh token does). */
  checkApiKey(request: FastifyRequest, projectId: string): void {
    if (this.isAdmin(request, projectId)) return;
    const key = apiKeyOf(request);
    if (key === undefined) throw new ApiError(403, 'The request is missing a valid API key.', 'PERMISSION_DENIED');
    if (!this.projects.isApiKeyAccepted(projectId, key)) throw authError('INVALID_API_KEY');
  }
}

/** Google's answer for an access token it no longer honours (expired, or its key deleted). */
function staleCredential(): ApiError {
  return new ApiError(
    401,
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
    'UNAUTHENTICATED',
  );
}

function locale(request: FastifyRequest): { languageCode?: string } {
  const header = request.headers['x-firebase-locale'];
  return typeof header === 'string' && /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/.test(header) ? { languageCode: header } : {};
}

function apiKeyOf(request: FastifyRequest): string | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  const key = query?.key;
  if (typeof key === 'string' && key !== '') return key;
  const header = request.headers['x-goog-api-key'];
  return typeof header === 'string' && header !== '' ? header : undefined;
}

/**
 * The token of `Bearer <token>`: one or more visible ASCII characters, nothing else. No Unicode
 * trimming: `trim()` turned a non-breaking space (which Node's header parser keeps) into an
 * empty credential that matched an empty admin key.
 */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer +([\x21-\x7e]+)$/i.exec(header);
  return match?.[1];
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
