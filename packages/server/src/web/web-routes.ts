import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { existsSync } from 'node:fs';
import { ActionLinks, actionPagePath, queryOf } from '../auth/core/action-links.js';
import type { ProjectDirectory } from '../auth/core/project-config.js';
import type { SmsDeliveryMode } from '../auth/phone/sms-delivery.js';
import { addToVary } from '../http/cors.js';

/** Paths that belong to the APIs; the web app's client-side routes never start with them. */
const apiPrefixes = ['/identitytoolkit.googleapis.com/', '/securetoken.googleapis.com/', '/www.googleapis.com/', '/v1/', '/emulator/', '/robot/', '/service_accounts/', '/google.firestore'];

/**
 * Serves the built React app at `/` (client-side routes fall back to index.html), the Firebase
 * Hosting convention `/__/firebase/init.json`, from which the app learns its config, and the hosted
 * action page, whose sign-in links go back to the app that asked for them.
 */
export async function registerWebRoutes(app: FastifyInstance, webRoot: string | undefined, projects: ProjectDirectory, publicUrl: () => string, smsDelivery: SmsDeliveryMode = 'none', recentLoginSeconds?: number): Promise<void> {
  app.get('/__/firebase/init.json', async () => {
    const config = await projects.config(projects.defaultProjectId);
    // From the configured public address, never from the request's Host header.
    // `providers` is Hearth's addition: which sign-in buttons the web app shows (no secrets).
    const providers = Object.values(config.idps)
      .filter((idp) => idp.enabled)
      .map((idp) => ({ providerId: idp.providerId, displayName: idp.displayName ?? idp.providerId }));
    // storageBucket: the web app keeps its files (profile photos, attachments) in the project's default bucket.
    // textMessages, phoneSignIn: Hearth's additions, so that the app offers nothing that cannot work
    // (without an SMS provider outside --dev no text is sent: no phone sign-in, no phone second step).
    const textMessages = smsDelivery !== 'none';
    const phoneSignIn = textMessages && config.signIn.phoneNumber.enabled;
    // recentLoginSeconds: how recent a sign-in must be to change email or password or delete the account (--recent-login).
    return { apiKey: config.apiKeys[0], projectId: projects.defaultProjectId, authDomain: new URL(publicUrl()).host, storageBucket: `${projects.defaultProjectId}.appspot.com`, providers, textMessages, phoneSignIn, ...(recentLoginSeconds !== undefined ? { recentLoginSeconds } : {}) };
  });
  const built = webRoot !== undefined && existsSync(webRoot);
  const links = new ActionLinks(projects, publicUrl);
  // Answered here rather than by the page so that it works without JavaScript, and so that the
  // page only ever sees a continueUrl that is allowed (its "Continue" link follows it).
  app.get(actionPagePath, async (request, reply) => {
    const answer = await links.answer(queryOf(request.url));
    if (answer.kind !== 'page') return reply.code(303).header('cache-control', 'no-store').redirect(answer.location, 303);
    return built ? servePage(reply) : reply.callNotFound();
  });
  if (!built) {
    app.get('/', async () => ({ hearth: 'running', web: 'not built: run `npm run build`' }));
    return;
  }
  // preCompressed: the build writes .br and .gz beside each file (packages/web/vite.config.ts).
  await app.register(fastifyStatic, { root: webRoot, wildcard: false, index: ['index.html'], preCompressed: true });
  // Caches must keep the encodings of a built file apart, beside the CORS answer's Origin (which
  // the static plugin's own Vary may have replaced).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.url.startsWith('/assets/')) {
      addToVary(reply, 'Origin');
      addToVary(reply, 'Accept-Encoding');
    }
    done(null, payload);
  });
  app.get('/*', (request, reply) => {
    const path = request.url.split('?')[0]!;
    const wantsPage = (request.headers.accept ?? '').includes('text/html');
    if (!wantsPage || apiPrefixes.some((prefix) => path.startsWith(prefix)) || /\.[a-z0-9]+$/i.test(path)) {
      return reply.callNotFound();
    }
    return servePage(reply);
  });
}

function servePage(reply: FastifyReply): FastifyReply {
  return reply.type('text/html').sendFile('index.html');
}
