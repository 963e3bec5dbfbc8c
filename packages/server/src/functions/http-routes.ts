/**
 * HTTPS (onRequest) and callable (onCall) functions under Hearth's own origin, at the two URLs
 * the web SDK builds:
 *   /{project}/{region}/{name}[/...]   what `connectFunctionsEmulator(functions, host, port)` calls
 *   /functions/{name}[/...]            `getFunctions(app, 'https://HEARTH/functions')` (a custom domain:
 *                                      the production path, over https)
 * The request goes to the worker as it came (method, headers, raw body, the path below the
 * function's name). A callable's ID token is checked here, by Hearth, before the worker sees it (the
 * worker's firebase-functions cannot check Hearth's keys): a bad one is refused as onCall refuses it.
 * CORS is Hearth's (http/cors.ts), as for its client APIs; the worker's own CORS headers are dropped.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FunctionEndpoint } from './manifest.js';
import { WorkerUnavailable, type WorkerProcess } from './worker-process.js';

/** Google's request limit for HTTP functions is 32 MB; callable data 10 MB. */
const httpBodyLimit = 32 * 1024 * 1024;

const droppedRequestHeaders = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'x-hearth-worker-key', 'expect']);
const droppedAnswerHeaders = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive', 'content-encoding', 'vary', 'date']);

export interface FunctionRoutesDeps {
  projectId: string;
  endpoints: readonly FunctionEndpoint[];
  worker: WorkerProcess;
  /** Throws when the token is not a valid ID token of the project. */
  verifyIdToken(projectId: string, token: string): Promise<unknown>;
}

function callableError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).type('application/json').send({ error: { status: code, message } });
}

export async function registerFunctionRoutes(app: FastifyInstance, deps: FunctionRoutesDeps): Promise<void> {
  const served = deps.endpoints.filter((endpoint) => endpoint.kind.type === 'https' || endpoint.kind.type === 'callable');
  if (!served.length) return;
  await app.register(async (scope) => {
    // Bodies reach the function as they came: no parsing here, whatever the type.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: httpBodyLimit }, (_request, body, done) => done(null, body));
    for (const endpoint of served) {
      const handler = (request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => forward(endpoint, request, reply, deps);
      for (const base of [`/${deps.projectId}/${endpoint.region}/${endpoint.name}`, `/functions/${endpoint.name}`]) {
        scope.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], url: base, handler, bodyLimit: httpBodyLimit });
        scope.route({ method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], url: `${base}/*`, handler, bodyLimit: httpBodyLimit });
      }
    }
  });
}

async function forward(endpoint: FunctionEndpoint, request: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply, deps: FunctionRoutesDeps): Promise<FastifyReply> {
  const callable = endpoint.kind.type === 'callable';
  if (callable) {
    const authorization = request.headers.authorization;
    if (authorization !== undefined) {
      const match = /^Bearer (\S+)$/i.exec(authorization);
      const valid = match ? await deps.verifyIdToken(deps.projectId, match[1]!).then(() => true, () => false) : false;
      if (!valid) return callableError(reply, 401, 'UNAUTHENTICATED', 'Unauthenticated');
    }
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || droppedRequestHeaders.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  headers['x-forwarded-for'] = request.ip;
  const rest = request.params['*'];
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  const path = `/__hearth/http/${encodeURIComponent(endpoint.name)}${rest ? `/${rest.split('/').map(encodeURIComponent).join('/')}` : ''}${query}`;
  const body = Buffer.isBuffer(request.body) ? request.body : undefined;
  try {
    const answer = await deps.worker.request(path, {
      method: request.method,
      headers,
      ...(body ? { body } : {}),
      timeoutMs: (endpoint.timeoutSeconds ?? 60) * 1000,
    });
    answer.headers.forEach((value, name) => {
      if (droppedAnswerHeaders.has(name) || name.startsWith('access-control-')) return;
      void reply.header(name, value);
    });
    return reply.code(answer.status).send(answer.body);
  } catch (error) {
    if (!(error instanceof WorkerUnavailable)) throw error;
    const timedOut = error.reason === 'timeout';
    if (callable) return callableError(reply, timedOut ? 504 : 503, timedOut ? 'DEADLINE_EXCEEDED' : 'UNAVAILABLE', error.message);
    return reply.code(timedOut ? 504 : 503).type('text/plain').send(timedOut ? 'Function execution took too long' : 'The function is not available; try again');
  }
}
