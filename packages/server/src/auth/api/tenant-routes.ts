import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TenantAdmin, TenantPatch } from '../tenants/tenant-admin.js';
import { mfaConfigPatchSchema } from '../mfa/mfa-config.js';
import { passwordPolicyConfigSchema } from './admin-routes.js';
import type { CallerResolver } from './caller.js';
import { projectPathParams, tenantPathParams } from './schemas.js';

const boolean = { type: 'boolean' };
/** What createTenant and updateTenant send; unknown fields (and Google's that Hearth lacks, such as testPhoneNumbers) are refused. */
const tenantBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    displayName: { type: 'string', maxLength: 100 },
    allowPasswordSignup: boolean,
    enableEmailLinkSignin: boolean,
    disableAuth: boolean,
    enableAnonymousUser: boolean,
    passwordPolicyConfig: passwordPolicyConfigSchema,
    emailPrivacyConfig: { type: 'object', additionalProperties: false, properties: { enableImprovedEmailPrivacy: boolean } },
    mfaConfig: mfaConfigPatchSchema,
    authorizedDomains: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:-]+$' }, maxItems: 100 },
    mail: {
      type: 'object',
      additionalProperties: false,
      properties: { projectName: { type: 'string', minLength: 1, maxLength: 100 }, from: { type: 'string', minLength: 3, maxLength: 320, pattern: '^[^\\r\\n]+$' } },
    },
  },
};
const listQuery = {
  type: 'object',
  properties: { pageSize: { type: 'string', pattern: '^[0-9]{1,6}$' }, pageToken: { type: 'string', maxLength: 200 } },
};
const updateQuery = { type: 'object', properties: { updateMask: { type: 'string', maxLength: 1000 } } };

const base = '/identitytoolkit.googleapis.com/v2/projects/:projectId/tenants';

/**
 * Identity Platform's tenant management, v2 projects.tenants (firebase-admin's tenantManager()):
 * the project's administrators only. A tenant's users, providers and codes are reached under
 * /projects/{p}/tenants/{t}/ (admin-routes.ts, idp-config-routes.ts, action-routes.ts).
 */
export function registerTenantRoutes(app: FastifyInstance, tenants: TenantAdmin, callers: CallerResolver): void {
  const projectOf = (request: FastifyRequest) => callers.projectAdmin(request, (request.params as { projectId: string }).projectId).realm;
  const tenantOf = (request: FastifyRequest) => (request.params as { tenantId: string }).tenantId;

  app.post(base, { schema: { params: projectPathParams, body: tenantBody } }, async (request) => tenants.create(projectOf(request), request.body as TenantPatch));
  app.get(base, { schema: { params: projectPathParams, querystring: listQuery } }, async (request) => {
    const { pageSize, pageToken } = request.query as { pageSize?: string; pageToken?: string };
    return tenants.list(projectOf(request), pageSize === undefined ? undefined : Number(pageSize), pageToken);
  });
  app.get(`${base}/:tenantId`, { schema: { params: tenantPathParams } }, async (request) => tenants.get(projectOf(request), tenantOf(request)));
  app.patch(`${base}/:tenantId`, { schema: { params: tenantPathParams, body: tenantBody, querystring: updateQuery } }, async (request) => {
    const { updateMask } = request.query as { updateMask?: string };
    return tenants.update(projectOf(request), tenantOf(request), request.body as TenantPatch, updateMask);
  });
  app.delete(`${base}/:tenantId`, { schema: { params: tenantPathParams } }, async (request) => {
    await tenants.delete(projectOf(request), tenantOf(request));
    return {};
  });
}
