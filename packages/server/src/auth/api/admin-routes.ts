import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestErrors } from '../../http/api-error.js';
import { mayUseOpenEmulatorEndpoint } from '../../http/browser-origin.js';
import type { AccountQuery, QueryAccountsRequest } from '../core/account-query.js';
import type { AdminAccountService } from '../core/admin-accounts.js';
import { applyPasswordPolicyPatch, checkPasswordPolicy, passwordPolicyPaths, type PasswordPolicyConfig } from '../core/password-policy.js';
import { updateMaskFilter } from '../core/update-mask.js';
import type { CreateSessionCookieRequest, SessionCookies } from '../core/session-cookies.js';
import { toAccountInfo } from '../core/account-view.js';
import type { AccountService } from '../core/accounts.js';
import type { ProjectConfig, ProjectDirectory } from '../core/project-config.js';
import { applyMfaPatch, checkMfaConfig, mfaConfigPatchSchema, mfaConfigPaths, type MfaConfigPatch } from '../mfa/mfa-config.js';
import type { BatchDeleteRequest, DeleteRequest, LookupRequest, SignUpRequest, UpdateRequest } from '../core/requests.js';
import type { SessionService } from '../core/sessions.js';
import type { BatchCreateRequest, UserImportService } from '../core/user-import.js';
import { fromEmulatorExport } from '../core/emulator-accounts-file.js';
import type { Caller } from '../core/requests.js';
import type { CallerResolver } from './caller.js';
import { lookupResponse, signUpResponse, updateResponse } from './responses.js';
import * as schemas from './schemas.js';
import { tenantIdSyntax } from '../tenants/realm.js';

interface ProjectParams {
  projectId: string;
}

export interface AdminServices {
  sessions: SessionService;
  accounts: AccountService;
  admin: AdminAccountService;
  projects: ProjectDirectory;
  callers: CallerResolver;
  imports: UserImportService;
  sessionCookies: SessionCookies;
  accountQuery: AccountQuery;
  /** --dev: the Auth emulator's DELETE .../accounts needs no credential (http/browser-origin.ts says from where). */
  dev: boolean;
}

const sessionCookieBody = {
  type: 'object',
  additionalProperties: false,
  properties: { idToken: { type: 'string' }, validDuration: { type: ['string', 'integer'] }, tenantId: { type: 'string' } },
};
const queryBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    returnUserInfo: { type: 'boolean' },
    limit: { type: ['string', 'integer'] },
    offset: { type: ['string', 'integer'] },
    sortBy: { enum: ['SORT_BY_FIELD_UNSPECIFIED', 'USER_ID', 'NAME', 'CREATED_AT', 'LAST_LOGIN_AT', 'USER_EMAIL'] },
    order: { enum: ['ORDER_UNSPECIFIED', 'ASC', 'DESC'] },
    expression: {
      type: 'array',
      maxItems: 10,
      items: { type: 'object', additionalProperties: false, properties: { email: { type: 'string' }, userId: { type: 'string' }, phoneNumber: { type: 'string' } } },
    },
    tenantId: { type: 'string' },
  },
};

const v1 = '/identitytoolkit.googleapis.com/v1/projects/:projectId';
const v2 = '/identitytoolkit.googleapis.com/v2/projects/:projectId';

/**
 * The calls firebase-admin makes (with the admin credential), under /projects/{projectId}; the
 * account calls also under /projects/{projectId}/tenants/{tenantId} (its authForTenant), where
 * they reach only that tenant's accounts.
 */
export function registerAdminRoutes(app: FastifyInstance, services: AdminServices): void {
  const { projects, callers } = services;
  registerAccountRoutes(app, services, v1, schemas.projectPathParams);
  registerAccountRoutes(app, services, `${v1}/tenants/:tenantId`, schemas.tenantPathParams);
  const params = schemas.projectPathParams;

  // The project's own settings; a tenant's are its Tenant resource (tenant-routes.ts).
  const projectOfPath = (request: FastifyRequest) => callers.projectAdmin(request, (request.params as ProjectParams).projectId).realm;
  app.get(`${v2}/config`, { schema: { params } }, async (request) => {
    const projectId = projectOfPath(request);
    return configResponse(projectId, await projects.config(projectId));
  });
  app.patch(`${v2}/config`, { schema: { params, body: configPatchBody } }, async (request) => {
    const projectId = projectOfPath(request);
    const updateMask = (request.query as { updateMask?: string }).updateMask;
    const next = applyConfigPatch(await projects.config(projectId), request.body as ConfigPatch, updateMask);
    await projects.save(projectId, next);
    return configResponse(projectId, next);
  });
}

/** The account calls of one realm: `base` is the project's path or a tenant's. */
function registerAccountRoutes(app: FastifyInstance, services: AdminServices, base: string, params: Record<string, unknown>): void {
  const { sessions, accounts, admin, callers, imports, sessionCookies, accountQuery, dev } = services;
  const caller = (request: FastifyRequest) => callers.fromPath(request, (request.params as ProjectParams).projectId);
  const v1 = base;

  app.post(`${v1}/accounts`, { schema: { params, body: schemas.signUpBody } }, async (request) => {
    const result = await sessions.signUp(caller(request), schemas.requestBody<SignUpRequest>(request));
    return signUpResponse(result);
  });
  app.post(`${v1}/accounts::lookup`, { schema: { params, body: schemas.lookupBody } }, async (request) =>
    lookupResponse(await accounts.lookup(caller(request), schemas.requestBody<LookupRequest>(request))),
  );
  app.post(`${v1}/accounts::update`, { schema: { params, body: schemas.updateBody } }, async (request) =>
    updateResponse(await accounts.update(caller(request), schemas.requestBody<UpdateRequest>(request, schemas.updateNullDeletes))),
  );
  app.post(`${v1}/accounts::delete`, { schema: { params, body: schemas.deleteBody } }, async (request) => {
    await accounts.deleteAccount(caller(request), schemas.requestBody<DeleteRequest>(request));
    return { kind: 'identitytoolkit#DeleteAccountResponse' };
  });
  app.post(`${v1}/accounts::batchDelete`, { schema: { params, body: schemas.batchDeleteBody } }, async (request) => {
    const { errors } = await admin.batchDelete(caller(request), schemas.requestBody<BatchDeleteRequest>(request));
    return errors.length ? { errors } : {};
  });
  // --dev also takes the Firebase CLI's emulator import (emulator-accounts-file.ts), whose accounts
  // file of the project's own accounts it posts under an empty tenant segment (`tenants//`).
  const batchCreate = async (request: FastifyRequest, target: Caller) => {
    const body = schemas.requestBody<BatchCreateRequest>(request);
    const { errors } = await imports.batchCreate(target, dev ? await fromEmulatorExport(body) : body);
    return errors.length ? { error: errors } : {};
  };
  app.post(`${v1}/accounts::batchCreate`, { schema: { params, body: dev ? emulatorExportBody : batchCreateBody } }, async (request) => batchCreate(request, caller(request)));
  if (dev && base.endsWith(':tenantId')) {
    const project = base.slice(0, -'/tenants/:tenantId'.length);
    app.post(`${project}/tenants//accounts::batchCreate`, { schema: { params: schemas.projectPathParams, body: emulatorExportBody } }, async (request) => batchCreate(request, caller(request)));
  }
  app.get(`${v1}/accounts::batchGet`, { schema: { params, querystring: schemas.listQuery } }, async (request) => {
    const query = request.query as { maxResults?: string; nextPageToken?: string };
    // maxResults=-1 (--dev): every account, as the Auth emulator answers the CLI's export.
    if (query.maxResults === '-1' && dev) return { kind: 'identitytoolkit#DownloadAccountResponse', users: (await admin.listAll(caller(request))).map(toAccountInfo) };
    const page = await admin.list(caller(request), query.maxResults === undefined ? undefined : Number(query.maxResults), query.nextPageToken);
    return { kind: 'identitytoolkit#DownloadAccountResponse', users: page.users.map(toAccountInfo), ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  });

  app.post(`${v1}/accounts::query`, { schema: { params, body: queryBody } }, async (request) => {
    const result = await accountQuery.query(caller(request), request.body as QueryAccountsRequest);
    // proto3 JSON: an empty list is left out, as Google answers.
    return { recordsCount: String(result.recordsCount), ...(result.users?.length ? { userInfo: result.users.map(toAccountInfo) } : {}) };
  });
  // `/projects/{p}:createSessionCookie` (or `/projects/{p}/tenants/{t}:createSessionCookie`): the last id ends at the colon.
  const lastId = base.endsWith(':tenantId') ? `(^${tenantIdSyntax})` : '(^[a-z0-9][a-z0-9-]{0,62})';
  app.post(`${base}${lastId}::createSessionCookie`, { schema: { body: sessionCookieBody } }, async (request) => ({
    sessionCookie: await sessionCookies.create(caller(request), request.body as CreateSessionCookieRequest),
  }));

  // What the SDKs' own test suites call between tests (the Auth emulator's): open in --dev as the
  // emulator's is (they send no credential), the administrator's otherwise.
  app.delete(`${base.replace('/identitytoolkit.googleapis.com/v1/', '/emulator/v1/')}/accounts`, { schema: { params } }, async (request) => {
    await admin.deleteAll(mayUseOpenEmulatorEndpoint(request, dev) ? callers.realmOfPath(request) : caller(request));
    return {};
  });
}

const text = { type: ['string', 'null'] };
const flag = { type: ['boolean', 'null'] };
const wholeNumber = { type: ['integer', 'string', 'null'] };
/** What firebase-admin's importUsers and the Firebase CLI's auth:import send (proto3 JSON: int64 as text too). */
const batchCreateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    users: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          localId: text,
          email: text,
          emailVerified: flag,
          displayName: text,
          photoUrl: text,
          phoneNumber: text,
          disabled: flag,
          passwordHash: text,
          salt: text,
          createdAt: wholeNumber,
          lastLoginAt: wholeNumber,
          customAttributes: text,
          tenantId: text,
          mfaInfo: { type: ['array', 'null'] },
          passkeys: { type: ['array', 'null'], maxItems: 10 },
          providerUserInfo: {
            type: ['array', 'null'],
            maxItems: 100,
            items: {
              type: 'object',
              additionalProperties: false,
              properties: { providerId: text, rawId: text, email: text, displayName: text, photoUrl: text, phoneNumber: text, federatedId: text, screenName: text },
            },
          },
        },
      },
    },
    hashAlgorithm: text,
    signerKey: text,
    saltSeparator: text,
    rounds: wholeNumber,
    memoryCost: wholeNumber,
    cpuMemCost: wholeNumber,
    parallelization: wholeNumber,
    blockSize: wholeNumber,
    dkLen: wholeNumber,
    passwordHashOrder: text,
    sanityCheck: flag,
    allowOverwrite: flag,
    targetProjectId: {},
    delegatedProjectNumber: {},
    tenantId: text,
  },
};

/** --dev: the CLI's emulator export as its import posts it (a DownloadAccountResponse; accounts with read-only fields). */
const emulatorExportBody = {
  ...batchCreateBody,
  properties: {
    ...batchCreateBody.properties,
    kind: { type: 'string' },
    nextPageToken: { type: 'string' },
    users: { ...batchCreateBody.properties.users, items: { ...batchCreateBody.properties.users.items, additionalProperties: true } },
  },
};

type ConfigPatch = Partial<{
  signIn: Partial<{
    email: Partial<ProjectConfig['signIn']['email']>;
    anonymous: Partial<ProjectConfig['signIn']['anonymous']>;
    phoneNumber: Partial<ProjectConfig['signIn']['phoneNumber']>;
  }>;
  authorizedDomains: string[];
  emailPrivacyConfig: Partial<ProjectConfig['emailPrivacyConfig']>;
  apiKeys: string[];
  mail: Partial<ProjectConfig['mail']>;
  passwordPolicyConfig: Partial<PasswordPolicyConfig>;
  mfa: MfaConfigPatch;
}>;

const boolean = { type: 'boolean' };
/** Identity Platform's passwordPolicyConfig, for a project's config and a tenant's (tenant-routes.ts). */
export const passwordPolicyConfigSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    passwordPolicyEnforcementState: { enum: ['OFF', 'ENFORCE', 'PASSWORD_POLICY_ENFORCEMENT_STATE_UNSPECIFIED'] },
    forceUpgradeOnSignin: boolean,
    passwordPolicyVersions: {
      type: 'array',
      maxItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          customStrengthOptions: {
            type: 'object',
            additionalProperties: false,
            properties: {
              minPasswordLength: { type: 'integer' },
              maxPasswordLength: { type: 'integer' },
              containsLowercaseCharacter: boolean,
              containsUppercaseCharacter: boolean,
              containsNumericCharacter: boolean,
              containsNonAlphanumericCharacter: boolean,
            },
          },
          schemaVersion: {},
        },
      },
    },
  },
};
const configPatchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    signIn: {
      type: 'object',
      additionalProperties: false,
      properties: {
        email: { type: 'object', additionalProperties: false, properties: { enabled: boolean, passwordRequired: boolean } },
        anonymous: { type: 'object', additionalProperties: false, properties: { enabled: boolean } },
        phoneNumber: { type: 'object', additionalProperties: false, properties: { enabled: boolean } },
      },
    },
    authorizedDomains: { type: 'array', items: { type: 'string', maxLength: 253 }, maxItems: 100 },
    emailPrivacyConfig: { type: 'object', additionalProperties: false, properties: { enableImprovedEmailPrivacy: boolean } },
    apiKeys: { type: 'array', items: { type: 'string', minLength: 8, maxLength: 128 }, maxItems: 20 },
    mfa: mfaConfigPatchSchema,
    mail: {
      type: 'object',
      additionalProperties: false,
      properties: { projectName: { type: 'string', minLength: 1, maxLength: 100 }, from: { type: 'string', minLength: 3, maxLength: 320, pattern: '^[^\\r\\n]+$' } },
    },
    passwordPolicyConfig: passwordPolicyConfigSchema,
  },
};

/** Applies the fields named by `updateMask` (all given fields when there is none), like Google's PATCH. */
function applyConfigPatch(current: ProjectConfig, patch: ConfigPatch, updateMask: string | undefined): ProjectConfig {
  const wanted = updateMaskFilter(updateMask, [
    'signIn.email.enabled',
    'signIn.email.passwordRequired',
    'signIn.anonymous.enabled',
    'signIn.phoneNumber.enabled',
    'authorizedDomains',
    'emailPrivacyConfig.enableImprovedEmailPrivacy',
    'apiKeys',
    'mail.projectName',
    'mail.from',
    ...passwordPolicyPaths,
    ...mfaConfigPaths,
  ]);
  const next: ProjectConfig = structuredClone(current);
  if (wanted('signIn.email.enabled') && patch.signIn?.email?.enabled !== undefined) next.signIn.email.enabled = patch.signIn.email.enabled;
  if (wanted('signIn.email.passwordRequired') && patch.signIn?.email?.passwordRequired !== undefined) next.signIn.email.passwordRequired = patch.signIn.email.passwordRequired;
  if (wanted('signIn.anonymous.enabled') && patch.signIn?.anonymous?.enabled !== undefined) next.signIn.anonymous.enabled = patch.signIn.anonymous.enabled;
  if (wanted('signIn.phoneNumber.enabled') && patch.signIn?.phoneNumber?.enabled !== undefined) next.signIn.phoneNumber.enabled = patch.signIn.phoneNumber.enabled;
  if (wanted('authorizedDomains') && patch.authorizedDomains) next.authorizedDomains = patch.authorizedDomains;
  if (wanted('emailPrivacyConfig.enableImprovedEmailPrivacy') && patch.emailPrivacyConfig?.enableImprovedEmailPrivacy !== undefined) {
    next.emailPrivacyConfig.enableImprovedEmailPrivacy = patch.emailPrivacyConfig.enableImprovedEmailPrivacy;
  }
  if (wanted('apiKeys') && patch.apiKeys) next.apiKeys = patch.apiKeys;
  if (wanted('mail.projectName') && patch.mail?.projectName !== undefined) next.mail.projectName = patch.mail.projectName;
  if (wanted('mail.from') && patch.mail?.from !== undefined) next.mail.from = patch.mail.from;
  applyPasswordPolicyPatch(next.passwordPolicyConfig, patch.passwordPolicyConfig, wanted);
  next.mfa = applyMfaPatch(next.mfa, patch.mfa, wanted);
  const refusal = checkPasswordPolicy(next.passwordPolicyConfig) ?? checkMfaConfig(next.mfa);
  if (refusal) throw requestErrors.invalidArgument(refusal);
  return next;
}

function configResponse(projectId: string, config: ProjectConfig): Record<string, unknown> {
  return { name: `projects/${projectId}/config`, ...config };
}
