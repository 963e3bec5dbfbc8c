import { fastifyCookie } from '@fastify/cookie';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OperatorSessions } from './operator-sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The operator this request acts for as the administrator, '' for none: a live console
     * session cookie on a same-origin request that says `X-Hearth-Console: 1` and carries no
     * `Authorization` (a request naming a credential is judged by that credential alone).
     */
    consoleOperator: string;
    /**
     * The operator of the session cookie a same-origin request carries, with or without the
     * console's header: what a WebChannel handshake (which the SDK makes, not the console) and the
     * console's own session routes look at. Never the administrator by itself.
     */
    consoleSessionOperator: string;
    /** A WebChannel Write request of a session the console opened, carrying writes: for the audit log. */
    consoleChannelWrite: { operator: string; messages: unknown[] } | null;
  }
}

export const consoleCookieName = 'hearth_console';
export const consoleHeader = 'x-hearth-console';

/**
 * Marks requests made with the console session, once, before any route: the admin checks
 * (auth/api/caller.ts, Firestore's access, the Rules API) then only read `request.consoleOperator`.
 * Runs after the HTTP layer's hook, so `fromForeignPage` is known: a page on another site never
 * speaks for an operator, whatever its cookies.
 */
export function markConsoleRequests(app: FastifyInstance, sessions: OperatorSessions): void {
  app.decorateRequest('consoleOperator', '');
  app.decorateRequest('consoleSessionOperator', '');
  app.decorateRequest('consoleChannelWrite', null);
  // `done` rather than an async hook: every request passes here, and a promise each cost more than the check.
  app.addHook('onRequest', (request, _reply, done) => {
    const token = request.fromForeignPage ? undefined : consoleTokenOf(request);
    const session = token === undefined ? undefined : sessions.find(token);
    if (session) {
      request.consoleSessionOperator = session.operator;
      if (request.headers[consoleHeader] === '1' && request.headers.authorization === undefined) request.consoleOperator = session.operator;
    }
    done();
  });
}

export function consoleTokenOf(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const header = request.headers.cookie;
  if (!header || !header.includes(consoleCookieName)) return undefined;
  return fastifyCookie.parse(header)[consoleCookieName];
}

/**
 * The console's own WebChannel (its live view: a firebase app with no signed-in user, whose
 * Firestore is pointed at the console's prefix). A handshake acts for the operator of the session
 * cookie when it names no credential of its own and comes from a page of Hearth's own origin: the
 * browser must vouch for it (`Sec-Fetch-Site: same-origin`), since the SDK cannot send the console's header.
 */
export const consoleChannel = {
  operatorOf(request: FastifyRequest, authorization: string | undefined): string | undefined {
    const vouched = authorization === undefined && request.headers['sec-fetch-site'] === 'same-origin';
    return vouched && request.consoleSessionOperator ? request.consoleSessionOperator : undefined;
  },
  /** Marks a Write request for the audit log when it carries writes (not the handshake's `{database}` alone). */
  noteWrites(request: FastifyRequest, operator: string, maps: unknown[]): void {
    const carriesWrites = maps.some((map) => typeof map === 'object' && map !== null && Array.isArray((map as { writes?: unknown }).writes) && (map as { writes: unknown[] }).writes.length > 0);
    if (carriesWrites) request.consoleChannelWrite = { operator, messages: maps };
  },
};

/** Where the console's live view reaches the document database (the web app's console-firebase.ts). */
export const consoleChannelPrefix = '/hearth/v1/console/firestore';
