import { fastifyCookie } from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FailureThrottle } from '../auth/core/throttle.js';
import { consoleCookieName, consoleHeader, consoleTokenOf } from './console-access.js';
import { consoleErrors } from './console-errors.js';
import type { OperatorSession, OperatorSessions } from './operator-sessions.js';
import { clientAddressOf } from '../http/address-key.js';

export interface SessionRouteDeps {
  sessions: OperatorSessions;
  /** Is this exactly the admin key? (Not `Bearer owner`: --dev's well-known credential opens no console.) */
  isAdminKey(presented: string): boolean;
  /** The operator an ID token signs in (operator-accounts.ts), undefined when it signs in none. */
  operatorOfIdToken(idToken: string): Promise<string | undefined>;
  /** Failed sign-ins per client address: floods get 429 before any credential is checked. */
  failures: FailureThrottle;
  /** Whether Hearth is served over https (the public URL): the cookie is then Secure. */
  secure(): boolean;
}

export const consolePrefix = '/hearth/v1/console';

const signInSchema = {
  body: {
    type: 'object',
    additionalProperties: false,
    properties: { adminKey: { type: 'string', minLength: 1, maxLength: 512 }, idToken: { type: 'string', minLength: 1, maxLength: 8192 } },
  },
} as const;

/** `POST|GET|DELETE /hearth/v1/console/session` (docs/CONSOLE-API.md). */
export function registerSessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  const path = `${consolePrefix}/session`;
  app.post(path, { schema: signInSchema, bodyLimit: 16 * 1024 }, async (request, reply) => {
    if (request.fromForeignPage) throw consoleErrors.foreignPage();
    const body = request.body as { adminKey?: string; idToken?: string };
    if ((body.adminKey === undefined) === (body.idToken === undefined)) throw consoleErrors.wrongCredentialShape();
    const address = clientAddressOf(request);
    await deps.failures.refresh([address]);
    if (deps.failures.isBlocked(address)) throw consoleErrors.tooManyAttempts();
    const operator = body.adminKey !== undefined ? (deps.isAdminKey(body.adminKey) ? 'admin' : undefined) : await deps.operatorOfIdToken(body.idToken!);
    if (operator === undefined) {
      deps.failures.recordFailure(address);
      throw body.adminKey !== undefined ? consoleErrors.wrongCredential() : consoleErrors.notOperator();
    }
    deps.sessions.end(consoleTokenOf(request));
    const { token, session } = deps.sessions.start(operator);
    // The audit hook reads who signed in from here: the request had no session yet.
    request.consoleSessionOperator = operator;
    void reply.header('set-cookie', fastifyCookie.serialize(consoleCookieName, token, cookieOptions(deps, session.expiresAt)));
    return sessionAnswer(session);
  });

  app.get(path, async (request) => {
    return sessionAnswer(currentSession(request, deps));
  });

  app.delete(path, async (request, reply: FastifyReply) => {
    if (request.fromForeignPage) throw consoleErrors.foreignPage();
    if (request.consoleSessionOperator && request.headers[consoleHeader] !== '1') throw consoleErrors.missingHeader();
    deps.sessions.end(consoleTokenOf(request));
    void reply.header('set-cookie', fastifyCookie.serialize(consoleCookieName, '', { ...cookieOptions(deps, 0), maxAge: 0 }));
    return {};
  });
}

function currentSession(request: FastifyRequest, deps: SessionRouteDeps): OperatorSession {
  if (request.fromForeignPage) throw consoleErrors.foreignPage();
  if (request.consoleSessionOperator && request.headers[consoleHeader] !== '1') throw consoleErrors.missingHeader();
  const session = request.consoleOperator ? deps.sessions.find(consoleTokenOf(request)) : undefined;
  if (!session) throw consoleErrors.signedOut();
  return session;
}

function sessionAnswer(session: OperatorSession): { operator: string; expiresAt: number } {
  return { operator: session.operator, expiresAt: session.expiresAt };
}

function cookieOptions(deps: SessionRouteDeps, expiresAt: number) {
  return { httpOnly: true, sameSite: 'strict' as const, path: '/', secure: deps.secure(), ...(expiresAt > 0 ? { expires: new Date(expiresAt) } : {}) };
}
