import cors from '@fastify/cors';
import formBody from '@fastify/formbody';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { requestErrors } from './api-error.js';
import { handleError } from './error-handler.js';

/** Paths only the admin credential may use: no CORS for them. */
const adminPathPrefixes = ['/identitytoolkit.googleapis.com/v1/projects/', '/identitytoolkit.googleapis.com/v2/projects/', '/emulator/', '/hearth/'];

/** Identity requests are small; a larger body is refused before it is read whole. */
export const defaultBodyLimit = 1024 * 1024;

/**
 * The one Fastify app every protocol adapter registers on: strict JSON validation (no coercion,
 * no silently dropped fields), form bodies for the token endpoint, CORS for browser SDKs on
 * other origins, and the Google error shape for everything that goes wrong.
 */
export async function createHttpApp(logger: Logger): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: defaultBodyLimit,
    trustProxy: false,
    logController: new LogController({ disableRequestLogging: true }),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    ajv: { customOptions: { allowUnionTypes: true, removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false } },
    routerOptions: { ignoreTrailingSlash: true },
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => handleError(requestErrors.notFound(`No route for ${request.method} ${request.url.split('?')[0]}.`), request, reply));
  await app.register(cors, {
    // Browser apps on other origins may call the client APIs; administration is never reachable
    // from another site's page (in --dev, `Bearer owner` would otherwise let any page be admin).
    delegator: (request, callback) => {
      const path = (request.url ?? '').split('?')[0] ?? '';
      const adminOnly = adminPathPrefixes.some((prefix) => path.startsWith(prefix));
      callback(null, adminOnly ? { origin: false } : { origin: true, credentials: true, maxAge: 3600, methods: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'] });
    },
  });
  await app.register(formBody, { bodyLimit: defaultBodyLimit });
  app.addHook('onResponse', async (request, reply) => {
    // Log the route, never the body or the query (they carry passwords, tokens and keys).
    request.log.info({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  return app;
}
