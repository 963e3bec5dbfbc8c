import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestErrors } from '../../http/api-error.js';
import { mayUseOpenEmulatorEndpoint } from '../../http/browser-origin.js';
import type { ProjectDirectory } from '../core/project-config.js';
import type { CallerResolver } from './caller.js';
import * as schemas from './schemas.js';

/**
 * The Auth emulator's own config call (`GET`/`PATCH /emulator/v1/projects/{p}/config`), which
 * emulator-based test setups use to switch email privacy: open in --dev, as in the emulator (to
 * local tools and pages served from this machine, not to pages of other sites); the admin credential otherwise. Hearth keeps one account per email, so `allowDuplicateEmails` is
 * answered false and switching it on is refused with a sentence saying so.
 */
const patchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    signIn: { type: 'object', additionalProperties: false, properties: { allowDuplicateEmails: { type: 'boolean' } } },
    emailPrivacyConfig: { type: 'object', additionalProperties: false, properties: { enableImprovedEmailPrivacy: { type: 'boolean' } } },
    usageMode: { type: 'string', enum: ['DEFAULT', 'USAGE_MODE_UNSPECIFIED'] },
  },
};

interface PatchBody {
  signIn?: { allowDuplicateEmails?: boolean };
  emailPrivacyConfig?: { enableImprovedEmailPrivacy?: boolean };
}

export function registerEmulatorConfigRoutes(app: FastifyInstance, projects: ProjectDirectory, callers: CallerResolver, dev: boolean): void {
  const realmOf = (request: FastifyRequest): string => {
    const { projectId } = request.params as { projectId: string };
    // Open in --dev to local tools and pages, not to a web page of another site (which may not change settings).
    return mayUseOpenEmulatorEndpoint(request, dev) ? callers.realmOfPath(request) : callers.fromPath(request, projectId).realm;
  };
  const answer = async (realm: string) => {
    const config = await projects.config(realm);
    return {
      signIn: { allowDuplicateEmails: false },
      emailPrivacyConfig: { enableImprovedEmailPrivacy: config.emailPrivacyConfig.enableImprovedEmailPrivacy },
      usageMode: 'DEFAULT',
    };
  };
  for (const [path, params] of schemas.realmPaths) {
    app.get(`/emulator/v1${path}/config`, { schema: { params } }, async (request) => answer(realmOf(request)));
    app.patch(`/emulator/v1${path}/config`, { schema: { params, body: patchBody } }, async (request) => {
      const realm = realmOf(request);
      const patch = (request.body ?? {}) as PatchBody;
      if (patch.signIn?.allowDuplicateEmails === true) {
        throw requestErrors.invalidArgument('Hearth keeps one account per email address: allowDuplicateEmails cannot be turned on.');
      }
      const privacy = patch.emailPrivacyConfig?.enableImprovedEmailPrivacy;
      if (privacy !== undefined) {
        const config = await projects.config(realm);
        await projects.save(realm, { ...config, emailPrivacyConfig: { ...config.emailPrivacyConfig, enableImprovedEmailPrivacy: privacy } });
      }
      return answer(realm);
    });
  }
}
