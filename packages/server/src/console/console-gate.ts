import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { consoleHeader } from './console-access.js';
import { consoleErrors } from './console-errors.js';

/**
 * Who may call the console's own endpoints: the console session (with its header, from Hearth's
 * own origin), or a non-browser caller with the admin key. Returns the operator, for the audit log.
 */
export function requireOperator(request: FastifyRequest, isOwnerCredential: (request: FastifyRequest) => boolean): string {
  if (request.fromForeignPage) throw consoleErrors.foreignPage();
  if (request.consoleOperator) return request.consoleOperator;
  if (request.headers.authorization !== undefined && isOwnerCredential(request)) return 'admin';
  if (request.consoleSessionOperator && request.headers[consoleHeader] !== '1') throw consoleErrors.missingHeader();
  throw consoleErrors.signedOut();
}

/** Constant-time comparison of a presented secret with the real one. */
export function matchesSecret(presented: string, secret: string): boolean {
  const left = createHash('sha256').update(presented).digest();
  const right = createHash('sha256').update(secret).digest();
  return secret.length > 0 && timingSafeEqual(left, right);
}
