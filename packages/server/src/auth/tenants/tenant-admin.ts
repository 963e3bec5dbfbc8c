import { randomInt } from 'node:crypto';
import { requestErrors } from '../../http/api-error.js';
import { authError } from '../errors.js';
import { applyPasswordPolicyPatch, checkPasswordPolicy, passwordPolicyPaths, type PasswordPolicyConfig } from '../core/password-policy.js';
import { updateMaskFilter } from '../core/update-mask.js';
import { applyMfaPatch, checkMfaConfig, mfaConfigPaths, type MfaConfigPatch, type MultiFactorConfig } from '../mfa/mfa-config.js';
import type { ProjectConfig, ProjectDirectory } from '../core/project-config.js';
import { isValidTenantId, realmKey } from './realm.js';
import { newTenantRecord, type TenantRecord } from './tenant-settings.js';

/** Identity Platform's Tenant resource (v2 projects.tenants), with Hearth's two extensions. */
export interface TenantResource {
  name: string;
  tenantId: string;
  displayName?: string;
  allowPasswordSignup: boolean;
  enableEmailLinkSignin: boolean;
  disableAuth: boolean;
  enableAnonymousUser: boolean;
  passwordPolicyConfig: PasswordPolicyConfig;
  emailPrivacyConfig: { enableImprovedEmailPrivacy: boolean };
  /** Identity Platform's MultiFactorConfig (with Hearth's totpCodeFormat, as in the project's `mfa`). */
  mfaConfig: MultiFactorConfig;
  /** Hearth: domains allowed for this tenant's links and sign-in pages, besides the project's. */
  authorizedDomains: string[];
  /** Hearth: how the tenant's mails present it (over the project's sender). */
  mail: Partial<ProjectConfig['mail']>;
}

/** A create or update body, as firebase-admin's createTenant and updateTenant send it. */
export type TenantPatch = Partial<{
  displayName: string;
  allowPasswordSignup: boolean;
  enableEmailLinkSignin: boolean;
  disableAuth: boolean;
  enableAnonymousUser: boolean;
  passwordPolicyConfig: Partial<PasswordPolicyConfig>;
  emailPrivacyConfig: Partial<TenantResource['emailPrivacyConfig']>;
  mfaConfig: MfaConfigPatch;
  authorizedDomains: string[];
  mail: Partial<ProjectConfig['mail']>;
}>;

export interface TenantPage {
  tenants: TenantResource[];
  nextPageToken?: string;
}

/** The update mask paths a tenant has; a mask naming anything else is refused. */
const knownPaths = [
  'displayName',
  'allowPasswordSignup',
  'enableEmailLinkSignin',
  'disableAuth',
  'enableAnonymousUser',
  ...passwordPolicyPaths,
  'emailPrivacyConfig.enableImprovedEmailPrivacy',
  // The tenant's mfaConfig is the project's `mfa` block under another name.
  ...mfaConfigPaths.map((path) => path.replace(/^mfa\./, 'mfaConfig.')),
  'authorizedDomains',
  'mail.projectName',
  'mail.from',
];

/** Google's rule for a tenant's display name. */
const displayNameSyntax = /^[A-Za-z][A-Za-z0-9-]{3,19}$/;
const idAlphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Tenants live in memory (every request resolves one): a project has at most this many, as Identity Platform caps them. */
export const maxTenantsPerProject = 1000;
const maxPageSize = 1000;

/**
 * Tenant management (firebase-admin's tenantManager(): create, get, list, update, delete). Any
 * project may have tenants: Google asks for Identity Platform first, Hearth has nothing to
 * upgrade to. Deleting a tenant deletes its accounts, sessions, codes and kept messages with it.
 */
export class TenantAdmin {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly clock: () => number = Date.now,
  ) {}

  async create(projectId: string, patch: TenantPatch): Promise<TenantResource> {
    if (this.projects.tenantsOf(projectId).length >= maxTenantsPerProject) {
      throw authError('QUOTA_EXCEEDED', `A project can have at most ${maxTenantsPerProject} tenants.`);
    }
    await this.projects.config(projectId); // the project exists from its first use, as everywhere in Hearth
    const tenant = applyTenantPatch(newTenantRecord(this.newTenantId(projectId, patch.displayName), this.clock()), patch, undefined);
    await this.projects.saveTenant(tenant, projectId);
    return tenantResource(projectId, tenant);
  }

  get(projectId: string, tenantId: string): TenantResource {
    return tenantResource(projectId, this.find(projectId, tenantId));
  }

  /** Oldest first; the page token is the position after the last tenant of the page. */
  list(projectId: string, pageSize: number | undefined, pageToken: string | undefined): TenantPage {
    const size = pageSize ?? maxPageSize;
    if (!Number.isSafeInteger(size) || size < 1 || size > maxPageSize) throw requestErrors.invalidArgument(`pageSize must be between 1 and ${maxPageSize}.`);
    const after = pageToken === undefined || pageToken === '' ? undefined : readPageToken(pageToken);
    const all = this.projects.tenantsOf(projectId);
    const rest = after ? all.filter((t) => t.createdAt > after.createdAt || (t.createdAt === after.createdAt && t.tenantId > after.tenantId)) : all;
    const page = rest.slice(0, size);
    const last = page[page.length - 1];
    return { tenants: page.map((t) => tenantResource(projectId, t)), ...(rest.length > size && last ? { nextPageToken: pageTokenAfter(last) } : {}) };
  }

  async update(projectId: string, tenantId: string, patch: TenantPatch, updateMask: string | undefined): Promise<TenantResource> {
    const next = applyTenantPatch(this.find(projectId, tenantId), patch, updateMask);
    await this.projects.saveTenant(next, projectId);
    return tenantResource(projectId, next);
  }

  async delete(projectId: string, tenantId: string): Promise<void> {
    this.find(projectId, tenantId);
    const realm = realmKey(projectId, tenantId);
    await this.projects.deleteTenant(realm, [{ kind: 'deleteRealm', projectId: realm }]);
  }

  private find(projectId: string, tenantId: string): TenantRecord {
    const tenant = isValidTenantId(tenantId) ? this.projects.tenant(realmKey(projectId, tenantId)) : undefined;
    if (!tenant) throw authError('TENANT_NOT_FOUND');
    return tenant;
  }

  /** Google's look: the display name (or "tenant") and five random characters. */
  private newTenantId(projectId: string, displayName: string | undefined): string {
    for (;;) {
      let suffix = '';
      for (let i = 0; i < 5; i++) suffix += idAlphabet[randomInt(idAlphabet.length)];
      const tenantId = `${displayName && displayNameSyntax.test(displayName) ? displayName : 'tenant'}-${suffix}`;
      if (!this.projects.tenant(realmKey(projectId, tenantId))) return tenantId;
    }
  }
}

export function tenantResource(projectId: string, tenant: TenantRecord): TenantResource {
  return {
    name: `projects/${projectId}/tenants/${tenant.tenantId}`,
    tenantId: tenant.tenantId,
    ...(tenant.displayName !== undefined ? { displayName: tenant.displayName } : {}),
    allowPasswordSignup: tenant.signIn.email.enabled,
    enableEmailLinkSignin: !tenant.signIn.email.passwordRequired,
    disableAuth: tenant.disableAuth,
    enableAnonymousUser: tenant.signIn.anonymous.enabled,
    passwordPolicyConfig: tenant.passwordPolicyConfig,
    emailPrivacyConfig: { ...tenant.emailPrivacyConfig },
    mfaConfig: structuredClone(tenant.mfa),
    authorizedDomains: [...tenant.authorizedDomains],
    mail: { ...tenant.mail },
  };
}

/** Applies the fields named by `updateMask` (all given fields when there is none), like Google's PATCH. */
export function applyTenantPatch(current: TenantRecord, patch: TenantPatch, updateMask: string | undefined): TenantRecord {
  const wanted = updateMaskFilter(updateMask, knownPaths);
  const next: TenantRecord = structuredClone(current);
  if (wanted('displayName') && patch.displayName !== undefined) {
    if (!displayNameSyntax.test(patch.displayName)) {
      throw requestErrors.invalidArgument('A tenant display name must be 4 to 20 letters, digits and hyphens, starting with a letter.');
    }
    next.displayName = patch.displayName;
  }
  if (wanted('allowPasswordSignup') && patch.allowPasswordSignup !== undefined) next.signIn.email.enabled = patch.allowPasswordSignup;
  if (wanted('enableEmailLinkSignin') && patch.enableEmailLinkSignin !== undefined) next.signIn.email.passwordRequired = !patch.enableEmailLinkSignin;
  if (wanted('disableAuth') && patch.disableAuth !== undefined) next.disableAuth = patch.disableAuth;
  if (wanted('enableAnonymousUser') && patch.enableAnonymousUser !== undefined) next.signIn.anonymous.enabled = patch.enableAnonymousUser;
  applyPasswordPolicyPatch(next.passwordPolicyConfig, patch.passwordPolicyConfig, wanted);
  const privacy = patch.emailPrivacyConfig?.enableImprovedEmailPrivacy;
  if (wanted('emailPrivacyConfig.enableImprovedEmailPrivacy') && privacy !== undefined) next.emailPrivacyConfig.enableImprovedEmailPrivacy = privacy;
  if (wanted('authorizedDomains') && patch.authorizedDomains !== undefined) next.authorizedDomains = [...new Set(patch.authorizedDomains.map((d) => d.toLowerCase()))];
  if (wanted('mail.projectName') && patch.mail?.projectName !== undefined) next.mail.projectName = patch.mail.projectName;
  if (wanted('mail.from') && patch.mail?.from !== undefined) next.mail.from = patch.mail.from;
  next.mfa = applyMfaPatch(next.mfa, patch.mfaConfig, (path) => wanted(path.replace(/^mfa\./, 'mfaConfig.')));
  const refusal = checkPasswordPolicy(next.passwordPolicyConfig) ?? checkMfaConfig(next.mfa);
  if (refusal) throw requestErrors.invalidArgument(refusal);
  return next;
}

function pageTokenAfter(tenant: TenantRecord): string {
  return Buffer.from(JSON.stringify([tenant.createdAt, tenant.tenantId])).toString('base64url');
}

function readPageToken(token: string): { createdAt: number; tenantId: string } {
  try {
    const [createdAt, tenantId] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'number' && Number.isSafeInteger(createdAt) && typeof tenantId === 'string') return { createdAt, tenantId };
  } catch {
    // a made-up or damaged token: refused below
  }
  throw authError('INVALID_PAGE_SELECTION');
}
