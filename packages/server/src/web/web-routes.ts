import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { existsSync } from 'node:fs';
import type { ProjectDirectory } from '../auth/core/project-config.js';

/** Paths that belong to the APIs; the web app's client-side routes never start with them. */
const apiPrefixes = ['/identitytoolkit.googleapis.com/', '/securetoken.googleapis.com/', '/www.googleapis.com/', '/v1/', '/emulator/', '/robot/', '/service_accounts/', '/google.firestore'];

/**
 * Serves the built React app at `/` (client-side routes fall back to index.html) and the
 * Firebase Hosting convention `/__/firebase/init.json`, from which the app learns its config.
 */
export async function registerWebRoutes(app: FastifyInstance, webRoot: string | undefined, projects: ProjectDirectory, publicUrl: () => string): Promise<void> {
  app.get('/__/firebase/init.json', async () => {
    const config = await projects.config(projects.defaultProjectId);
    // From the configured public address, never from the request's Host header.
    // `providers` is Hearth's addition: which sign-in buttons the web app shows (no secrets).
    const providers = Object.values(config.idps)
      .filter((idp) => idp.enabled)
      .map((idp) => ({ providerId: idp.providerId, displayName: idp.displayName ?? idp.providerId }));
    return { apiKey: config.apiKeys[0], projectId: projects.defaultProjectId, authDomain: new URL(publicUrl()).host, providers };
  });
  if (!webRoot || !existsSync(webRoot)) {
    app.get('/', async () => ({ hearth: 'running', web: 'not built: run `npm run build`' }));
    return;
  }
  await app.register(fastifyStatic, { root: webRoot, wildcard: false, index: ['index.html'] });
  app.get('/*', (request, reply) => {
    const path = request.url.split('?')[0]!;
    const wantsPage = (request.headers.accept ?? '').includes('text/html');
    if (!wantsPage || apiPrefixes.some((prefix) => path.startsWith(prefix)) || /\.[a-z0-9]+$/i.test(path)) {
      return reply.callNotFound();
    }
    return reply.type('text/html').sendFile('index.html');
  });
}
