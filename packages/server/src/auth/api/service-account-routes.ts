import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/api-error.js';
import { foreignAdminRefusal } from '../../http/app.js';
import { OAuthGrantError, ServiceAccounts, tokenPath, UnknownServiceAccountKey, googleTokenUrl } from '../core/service-accounts.js';
import { bearerToken, type CallerResolver } from './caller.js';
import { projectPathParams } from './schemas.js';

/** google-auth-library's JWT client's token endpoint (the audience of its assertions). */
const legacyGoogleTokenUrl = 'https://www.googleapis.com/oauth2/v4/token';

export interface ServiceAccountRouteDeps {
  accounts: ServiceAccounts;
  callers: CallerResolver;
  /** Hearth's public origin and listening origin: key files' token_uri, and accepted assertion audiences. */
  publicUrl: () => string;
  listeningUrl: () => string;
}

const tokenBody = {
  type: 'object',
  properties: { grant_type: { type: 'string', maxLength: 200 }, assertion: { type: 'string', maxLength: 16384 } },
};

/**
 * Google's OAuth token endpoint (jwt-bearer grant) for Hearth-issued service-account keys, the
 * resolution of their access tokens on every request, and Hearth's key management API (the admin
 * key only: a service account cannot mint itself more keys).
 */
export function registerServiceAccountRoutes(app: FastifyInstance, deps: ServiceAccountRouteDeps): void {
  const { accounts, callers } = deps;
  app.decorateRequest('serviceAccountProject', '');
  app.decorateRequest('staleServiceAccountToken', false);
  // Resolved before any route, so the synchronous caller checks can read it; only values shaped
  // like our access tokens cost a lookup.
  // Callback style: the many requests without such a token go on at once, with no promise to settle.
  app.addHook('onRequest', (request, _reply, done) => {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined || !ServiceAccounts.isAccessTokenShaped(token)) return done();
    accounts.projectOfAccessToken(token).then((projectId) => {
      if (projectId === undefined) {
        request.staleServiceAccountToken = true;
        return done();
      }
      if (request.fromForeignPage) return done(foreignAdminRefusal(request.url));
      request.serviceAccountProject = projectId;
      done();
    }, done);
  });

  // google-auth-library's JWT client (what @google-cloud/storage signs in with) still uses the older
  // www.googleapis.com/oauth2/v4/token endpoint: the same exchange, its URL as the audience.
  const exchange = async (request: FastifyRequest, reply: FastifyReply) => {
    const body = (request.body ?? {}) as { grant_type?: string; assertion?: string };
    const audiences = [googleTokenUrl, legacyGoogleTokenUrl, `${deps.publicUrl()}${tokenPath}`, `${deps.listeningUrl()}${tokenPath}`];
    try {
      reply.header('cache-control', 'no-store');
      return await accounts.exchangeAssertion(body.grant_type, body.assertion, audiences);
    } catch (error) {
      if (error instanceof OAuthGrantError) return oauthError(reply, error);
      throw error;
    }
  };
  app.post(tokenPath, { schema: { body: tokenBody } }, exchange);
  app.post('/www.googleapis.com/oauth2/v4/token', { schema: { body: tokenBody } }, exchange);

  const keysPath = '/hearth/v1/projects/:projectId/serviceAccountKeys';
  const owner = (request: FastifyRequest) => {
    if (!callers.isOwner(request)) throw new ApiError(403, 'Only the admin key manages service-account keys.', 'PERMISSION_DENIED');
    return (request.params as { projectId: string }).projectId;
  };
  app.get(keysPath, { schema: { params: projectPathParams } }, async (request) => ({ keys: await accounts.listKeys(owner(request)) }));
  app.post(keysPath, { schema: { params: projectPathParams } }, async (request, reply) => {
    const projectId = owner(request);
    reply.header('cache-control', 'no-store');
    return accounts.createKey(projectId, `${deps.publicUrl()}${tokenPath}`);
  });
  app.delete(
    `${keysPath}/:keyId`,
    { schema: { params: { ...projectPathParams, properties: { ...(projectPathParams.properties as object), keyId: { type: 'string', pattern: '^[0-9a-f]{40}$' } }, required: ['projectId', 'keyId'] } } },
    async (request) => {
      const projectId = owner(request);
      const { keyId } = request.params as { keyId: string };
      try {
        await accounts.revokeKey(projectId, keyId);
      } catch (error) {
        if (error instanceof UnknownServiceAccountKey) throw new ApiError(404, `Service account key ${keyId} not found.`, 'NOT_FOUND');
        throw error;
      }
      return {};
    },
  );
}

/** The token endpoint answers in OAuth 2's error shape, which google-auth-library reads. */
function oauthError(reply: FastifyReply, error: OAuthGrantError): { error: string; error_description: string } {
  reply.code(400);
  return { error: error.error, error_description: error.description };
}
