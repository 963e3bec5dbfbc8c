import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** This OPTIONS request was answered as a CORS preflight (the OPTIONS route serves nothing else). */
    corsPreflightEnabled: boolean;
  }
}

const allowedMethods = 'GET, POST, PATCH, PUT, DELETE, OPTIONS';
const preflightMaxAgeSeconds = '3600';

/**
 * CORS for browser SDKs on other origins, with exactly the headers @fastify/cors gave with
 * `{ origin: true, credentials: true, maxAge: 3600, methods }` from its per-request delegator, and
 * none for what `adminOnly` names (administration is never readable from another site's page).
 * The plugin's delegator mode rebuilt and copied its option objects twice on every request, which
 * cost a lookup more than its own routing; the two answers here are fixed, so nothing is rebuilt.
 */
export function registerCors(app: FastifyInstance, adminOnly: (request: FastifyRequest) => boolean): void {
  app.decorateRequest('corsPreflightEnabled', false);
  app.addHook('onRequest', (request, reply, done) => {
    // The answer depends on Origin for every request (a dynamic CORS policy).
    addToVary(reply, 'Origin');
    if (adminOnly(request)) return done();
    const origin = request.headers.origin;
    if (origin) void reply.header('Access-Control-Allow-Origin', origin);
    void reply.header('Access-Control-Allow-Credentials', 'true');
    if (request.raw.method !== 'OPTIONS') return done();
    // A preflight must name its origin and method (the plugin's strictPreflight).
    if (!origin || !request.headers['access-control-request-method']) {
      void reply.status(400).type('text/plain').send('Invalid Preflight Request');
      return;
    }
    request.corsPreflightEnabled = true;
    void reply.header('Access-Control-Allow-Methods', allowedMethods);
    addToVary(reply, 'Access-Control-Request-Headers');
    const requested = request.headers['access-control-request-headers'];
    if (requested !== undefined) void reply.header('Access-Control-Allow-Headers', requested);
    void reply.header('Access-Control-Max-Age', preflightMaxAgeSeconds);
    // Content-Length 0: some browsers wait for a body after a 204 without it.
    void reply.code(204).header('Content-Length', '0').send();
  });
  // Lets Fastify accept OPTIONS on every path; only preflights answered above get past it.
  app.options('*', (request, reply) => {
    if (!request.corsPreflightEnabled) return reply.callNotFound();
    return reply.send();
  });
}

/** Adds a field to Vary unless it (or `*`) is there already, as the plugin's vary.js does. */
export function addToVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('Vary');
  if (current === undefined || current === '' || current === null) {
    void reply.header('Vary', field);
    return;
  }
  const header = Array.isArray(current) ? current.join(', ') : String(current);
  if (header === '*') return;
  const fields = header.toLowerCase().split(',').map((part) => part.trim());
  if (fields.includes('*')) void reply.header('Vary', '*');
  else if (!fields.includes(field.toLowerCase())) void reply.header('Vary', `${header}, ${field}`);
}
