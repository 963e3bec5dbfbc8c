import type { FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../http/api-error.js';
import type { ProjectDirectory } from '../core/project-config.js';
import type { Caller } from '../core/requests.js';
import { authError } from '../errors.js';

export interface AdminCredential {
  /** The secret admin key; `Authorization: Bearer <key>`. */
  adminKey: string;
  /** In dev mode firebase-admin's emulator credential, `Bearer owner`, is accepted too. */
  acceptOwner: boolean;
}

/** Works out who is calling: the project (from the API key or the path) and admin or not. */
export class CallerResolver {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly admin: AdminCredential,
  ) {}

  isAdmin(request: FastifyRequest): boolean {
    return this.isAdminAuthorization(request.headers.authorization);
  }

  isAdminAuthorization(header: string | undefined): boolean {
    if (!header?.startsWith('Bearer ')) return false;
    const presented = header.slice('Bearer '.length).trim();
    if (this.admin.acceptOwner && presented === 'owner') return true;
    return safeEqual(presented, this.admin.adminKey);
  }

  /** For client calls, which carry no project in the path: the `?key=` decides. */
  fromApiKey(request: FastifyRequest): Caller {
    const isAdmin = this.isAdmin(request);
    const key = apiKeyOf(request);
    if (key === undefined) {
      if (isAdmin) return { projectId: this.projects.defaultProjectId, isAdmin, clientIp: request.ip, ...locale(request) };
      throw new ApiError(403, 'The request is missing a valid API key.', 'PERMISSION_DENIED');
    }
    const projectId = this.projects.projectForApiKey(key);
    if (projectId === undefined) throw authError('INVALID_API_KEY');
    return { projectId, isAdmin, clientIp: request.ip, apiKey: key, ...locale(request) };
  }

  /** For `/projects/{projectId}/...` calls: administrators only. */
  fromPath(request: FastifyRequest, projectId: string): Caller {
    const isAdmin = this.isAdmin(request);
    if (!isAdmin) throw authError('ADMIN_ONLY_OPERATION');
    return { projectId, isAdmin, clientIp: request.ip, ...locale(request) };
  }

  /** A key is checked but names no project (the token endpoint: the refresh token does). */
  checkApiKey(request: FastifyRequest, projectId: string): void {
    if (this.isAdmin(request)) return;
    const key = apiKeyOf(request);
    if (key === undefined) throw new ApiError(403, 'The request is missing a valid API key.', 'PERMISSION_DENIED');
    if (!this.projects.isApiKeyAccepted(projectId, key)) throw authError('INVALID_API_KEY');
  }
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

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
