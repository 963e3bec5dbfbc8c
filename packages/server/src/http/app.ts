import formBody from '@fastify/formbody';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ApiError, requestErrors } from './api-error.js';
import { isFromForeignPage, isFromLocalPage, type OriginPolicy } from './browser-origin.js';
import { registerCors } from './cors.js';
import { lazyRequestLogger } from './request-logger.js';
import { pathOf } from './url-path.js';
import { handleError } from './error-handler.js';
import { buildValidator } from './request-validators.js';

/** Paths only the admin credential may use: no CORS for them. */
const adminPathPrefixes = ['/identitytoolkit.googleapis.com/v1/projects/', '/identitytoolkit.googleapis.com/v2/projects/', '/emulator/', '/hearth/', '/metrics', '/internal/'];

/**
 * A protocol's own error shapes on the paths it serves, where Google's generic ones would mislead
 * its SDK (the identity SDKs read a leading code such as OPERATION_NOT_ALLOWED). A domain hands
 * its dialect to the app; the app knows none of them.
 */
export interface WireDialect {
  serves(path: string): boolean;
  /** A path of the protocol that no route serves. */
  notFound(method: string, path: string): ApiError;
  /** A refusal of the caller's credential. */
  permissionDenied(message: string): ApiError;
}

/** Identity requests are small; a larger body is refused before it is read whole. */
export const defaultBodyLimit = 1024 * 1024;

export interface HttpAppOptions {
  /** The protocols' own error shapes on their paths. */
  dialects?: readonly WireDialect[];
  /** `--trust-proxy`: reverse proxies whose X-Forwarded-For names the client (http/trusted-proxies.ts). */
  trustedProxies?: string[];
}

/**
 * The one Fastify app every protocol adapter registers on: strict JSON validation (no coercion,
 * no silently dropped fields), form bodies for the token endpoint, CORS for browser SDKs on
 * other origins, and the Google error shape for everything that goes wrong.
 */
export async function createHttpApp(logger: Logger, origins?: OriginPolicy, options: HttpAppOptions = {}): Promise<FastifyInstance> {
  const dialects = options.dialects ?? [];
  const trustedProxies = options.trustedProxies;
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: defaultBodyLimit,
    // Only the listed proxies' X-Forwarded-For is believed (http/trusted-proxies.ts).
    trustProxy: trustedProxies && trustedProxies.length > 0 ? trustedProxies : false,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    ajv: { customOptions: { allowUnionTypes: true, removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false } },
    schemaController: { compilersFactory: { buildValidator } },
    routerOptions: { ignoreTrailingSlash: true },
    // Bad `%` escapes in the path: Google's error JSON, not Fastify's.
    frameworkErrors: (error, request, reply) => handleError(error, request, reply),
    // Requests Node's parser refuses (raw non-ASCII in the request line, oversized headers) never
    // reach Fastify; they too get Google's error JSON.
    clientErrorHandler: answerClientError,
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    // Some SDKs read the error's leading code: a call Hearth lacks must name a code they know.
    const dialect = dialects.find((candidate) => candidate.serves(path));
    const refusal = dialect ? dialect.notFound(request.method, path) : requestErrors.notFound(`No route for ${request.method} ${path}.`);
    handleError(refusal, request, reply);
  });
  app.decorateRequest('fromForeignPage', false);
  // Before CORS: a refused request gets no Access-Control-Allow-* headers, so the page cannot read it.
  // Hooks on every request take `done` rather than return a promise: one microtask less each.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!origins) return done();
    request.fromForeignPage = isFromForeignPage(request, origins.ownOrigins());
    if (request.fromForeignPage && origins.isAdminCredential(request.headers.authorization)) return done(foreignAdminRefusal(request.url, dialects));
    done();
  });
  // Browser apps on other origins may call the client APIs; administration is never reachable
  // from another site's page (in --dev, `Bearer owner` would otherwise let any page be admin).
  registerCors(app, (request) => {
    const path = pathOf(request.url ?? '');
    // --dev: the emulator's endpoints answer pages served from this machine, as Google's emulators do.
    if (origins?.emulatorOpenToLocalPages && path.startsWith('/emulator/') && isFromLocalPage(request) && !origins.isAdminCredential(request.headers.authorization)) return false;
    return adminPathPrefixes.some((prefix) => path.startsWith(prefix)) || (origins?.isAdminCredential(request.headers.authorization) ?? false);
  });
  await app.register(formBody, { bodyLimit: defaultBodyLimit });
  app.addHook('onResponse', (request, reply, done) => {
    // Log the route, never the body or the query (they carry passwords, tokens and keys). Through
    // the app's logger with the request's id, as its own logger would have it (request-logger.ts).
    logger.info({ reqId: request.id, method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    done();
  });
  return app;
}

/** In the shape of the protocol whose path it is (its dialect), Google's generic one (PERMISSION_DENIED) elsewhere. */
export function foreignAdminRefusal(url: string, dialects: readonly WireDialect[] = []): ApiError {
  const message = 'The admin credential is not accepted from web pages on other origins.';
  const dialect = dialects.find((candidate) => candidate.serves(pathOf(url)));
  return dialect ? dialect.permissionDenied(message) : new ApiError(403, message, 'PERMISSION_DENIED');
}

/** Node's HTTP parser refused the request: answer in Google's shape on the raw socket, then close it. */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return;
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError(431, 'Request header fields too large.', 'INVALID_ARGUMENT')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError(408, 'Request timed out.', 'INVALID_ARGUMENT')
        : requestErrors.invalidArgument('The request is malformed.');
  const body = JSON.stringify(apiError.toBody());
  const reason = STATUS_CODES[apiError.httpStatus] ?? 'Bad Request';
  socket.end(`HTTP/1.1 ${apiError.httpStatus} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
