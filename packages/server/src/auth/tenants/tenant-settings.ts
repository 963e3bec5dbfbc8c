import type { IdpConfig } from '../federation/idp-configs.js';
import { defaultMfaConfig, mfaConfigWithDefaults, type MultiFactorConfig } from '../mfa/mfa-config.js';
import { defaultPasswordPolicy, type PasswordPolicyConfig } from '../core/password-policy.js';
import type { ProjectConfig } from '../core/project-config.js';

/**
 * A tenant as it is stored (the `projects` row of its realm key): Identity Platform's Tenant
 * settings, plus two Hearth extensions (extra authorized domains, mail sender). What the tenant
 * does not set itself comes from its project when the realm's config is read (effectiveConfig),
 * so changing the project's API keys, domains or mail sender reaches every tenant.
 */
export interface TenantRecord {
  tenantId: string;
  displayName?: string;
  /** Identity Platform's disableAuth: nobody signs in, and its users are not managed, until it is off again. */
  disableAuth: boolean;
  /** Milliseconds since the epoch: tenants are listed oldest first, as Google lists them. */
  createdAt: number;
  signIn: {
    /** allowPasswordSignup, and enableEmailLinkSignin as !passwordRequired (Identity Platform's two switches). */
    email: { enabled: boolean; passwordRequired: boolean };
    anonymous: { enabled: boolean };
  };
  emailPrivacyConfig: { enableImprovedEmailPrivacy: boolean };
  passwordPolicyConfig: PasswordPolicyConfig;
  /** The tenant's own identity providers (OIDC, SAML, ...): a project's providers are not a tenant's. */
  idps: Record<string, IdpConfig>;
  /** The tenant's multi-factor settings (its Tenant resource's mfaConfig). */
  mfa: MultiFactorConfig;
  /** Domains allowed for this tenant's links and sign-in pages, besides the project's. */
  authorizedDomains: string[];
  /** The tenant's mail sender settings, over the project's (the name defaults to the display name). */
  mail: Partial<ProjectConfig['mail']>;
}

/**
 * A new tenant as Google makes one: every sign-in method off until enabled (firebase-admin's
 * createTenant({emailSignInConfig: {enabled: true}}) turns email on), no providers, multi-factor
 * off, the default password policy; email enumeration protection on, as for Hearth projects.
 */
export function newTenantRecord(tenantId: string, now: number): TenantRecord {
  return {
    tenantId,
    disableAuth: false,
    createdAt: now,
    signIn: { email: { enabled: false, passwordRequired: true }, anonymous: { enabled: false } },
    emailPrivacyConfig: { enableImprovedEmailPrivacy: true },
    passwordPolicyConfig: defaultPasswordPolicy(),
    idps: {},
    mfa: multiFactorOff(),
    authorizedDomains: [],
    mail: {},
  };
}

/** Google's tenant default: no second factors (TOTP's code format stays Hearth's default, for when it is turned on). */
function multiFactorOff(): MultiFactorConfig {
  return { ...defaultMfaConfig(), state: 'DISABLED', enabledProviders: [], providerConfigs: [] };
}

/** A stored tenant (possibly written by an older Hearth) with every field present. */
export function tenantWithDefaults(stored: Partial<TenantRecord> & { tenantId: string }): TenantRecord {
  const defaults = newTenantRecord(stored.tenantId, stored.createdAt ?? 0);
  return {
    ...defaults,
    ...stored,
    signIn: { email: { ...defaults.signIn.email, ...stored.signIn?.email }, anonymous: { ...defaults.signIn.anonymous, ...stored.signIn?.anonymous } },
    emailPrivacyConfig: { ...defaults.emailPrivacyConfig, ...stored.emailPrivacyConfig },
    mfa: stored.mfa ? mfaConfigWithDefaults(stored.mfa) : defaults.mfa,
  };
}

/**
 * The config a tenant's realm works with: the tenant's own settings, and the project's API keys,
 * authorized domains (with the tenant's added), phone sign-in switch and mail sender.
 */
export function effectiveConfig(project: ProjectConfig, tenant: TenantRecord): ProjectConfig {
  return {
    signIn: { email: { ...tenant.signIn.email }, anonymous: { ...tenant.signIn.anonymous }, phoneNumber: { ...project.signIn.phoneNumber } },
    authorizedDomains: [...new Set([...project.authorizedDomains, ...tenant.authorizedDomains])],
    emailPrivacyConfig: { ...tenant.emailPrivacyConfig },
    apiKeys: project.apiKeys,
    mail: { ...project.mail, projectName: tenant.displayName ?? project.mail.projectName, ...tenant.mail },
    idps: tenant.idps,
    passwordPolicyConfig: tenant.passwordPolicyConfig,
    mfa: tenant.mfa,
  };
}

/** Takes back into the tenant what belongs to it from a realm config changed by a caller (its providers, say). */
export function withOwnSettings(tenant: TenantRecord, config: ProjectConfig): TenantRecord {
  return {
    ...tenant,
    signIn: { email: { ...config.signIn.email }, anonymous: { ...config.signIn.anonymous } },
    emailPrivacyConfig: { ...config.emailPrivacyConfig },
    passwordPolicyConfig: config.passwordPolicyConfig,
    idps: config.idps,
    mfa: config.mfa,
  };
}
