import type { FastifyInstance } from 'fastify';
import type { RefreshRequest } from '../core/requests.js';
import type { SessionService } from '../core/sessions.js';
import type { SigningKeyRing } from '../core/signing-keys.js';
import type { CallerResolver } from './caller.js';
import { tokenResponse } from './responses.js';
import { tokenAnswer, tokenBody } from './schemas.js';

const publicKeysMaxAgeSeconds = 3600;

/** The secure-token refresh (form-encoded or JSON) and the public signing keys. */
export function registerTokenRoutes(app: FastifyInstance, sessions: SessionService, callers: CallerResolver, keys: SigningKeyRing): void {
  app.post('/securetoken.googleapis.com/v1/token', { schema: { body: tokenBody, response: { 200: tokenAnswer } } }, async (request) => {
    const result = await sessions.refresh(request.body as RefreshRequest);
    callers.checkApiKey(request, result.projectId);
    return tokenResponse(result);
  });

  const x509 = async (_request: unknown, reply: { header: (name: string, value: string) => unknown }) => {
    reply.header('cache-control', `public, max-age=${publicKeysMaxAgeSeconds}, must-revalidate, no-transform`);
    return keys.x509Certificates();
  };
  const jwks = async (_request: unknown, reply: { header: (name: string, value: string) => unknown }) => {
    reply.header('cache-control', `public, max-age=${publicKeysMaxAgeSeconds}, must-revalidate, no-transform`);
    return keys.jwks();
  };
  app.get('/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com', x509);
  app.get('/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com', x509);
  app.get('/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com', jwks);
  app.get('/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com', jwks);
  app.get('/.well-known/jwks.json', jwks);
}
