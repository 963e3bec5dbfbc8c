import type { FastifyRequest } from 'fastify';
import { peerOf, type Peer } from '../../auth/api/functions-credential.js';
import { ApiError } from '../../http/api-error.js';
import { fileErrors, type StorageApi } from '../core/file-errors.js';
import type { FilesCaller } from '../security/storage-guard.js';

/** Resolves a header to a caller the way Firestore does (admin credential, verified or --dev unsigned ID token). */
export type ResolveCaller = (authorization: string | undefined, projectId: string, consoleSession: boolean, peer: Peer) => Promise<FilesCaller>;

/**
 * The caller of a storage request. firebase/storage sends `Authorization: Firebase <ID token>`,
 * @google-cloud/storage `Bearer <access token>`; both are read as bearer credentials. A page on
 * another origin is never the administrator (the HTTP layer refuses the admin key from it; here
 * `Firebase owner` and service-account tokens are refused too).
 */
export async function filesCallerOf(resolve: ResolveCaller, api: StorageApi, request: FastifyRequest, projectId: string): Promise<FilesCaller> {
  const header = request.headers.authorization;
  const bearer = header === undefined ? undefined : header.replace(/^Firebase\s+/i, 'Bearer ');
  let caller: FilesCaller;
  try {
    caller = await resolve(bearer, projectId, Boolean(request.consoleOperator) && !request.fromForeignPage, peerOf(request));
  } catch (error) {
    if (error instanceof ApiError && error.httpStatus === 401) throw fileErrors.unauthenticated(api);
    throw error;
  }
  if (caller.kind === 'admin' && request.fromForeignPage) throw fileErrors.adminOnly(api);
  return caller;
}
