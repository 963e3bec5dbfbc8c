import { randomBytes } from 'node:crypto';
import { requestErrors } from '../../http/api-error.js';
import type { Mutation, Store } from '../../storage/store.js';
import { authError } from '../errors.js';
import type { IdpConfig } from '../federation/idp-configs.js';
import { isTenantRealm, projectOf, realmKey } from '../tenants/realm.js';
import { effectiveConfig, tenantWithDefaults, withOwnSettings, type TenantRecord } from '../tenants/tenant-settings.js';
import { defaultMfaConfig, mfaConfigWithDefaults, type MultiFactorConfig } from '../mfa/mfa-config.js';
import { defaultPasswordPolicy, type PasswordPolicyConfig } from './password-policy.js';

/**
 * A project's identity settings, in the shape of Identity Platform's `projects.config`
 * (the one firebase-admin's projectConfigManager reads and writes), plus Hearth's `apiKeys`.
 */
export interface ProjectConfig {
  signIn: {
    email: { enabled: boolean; passwordRequired: boolean };
    anonymous: { enabled: boolean };
    /** Phone sign-in (first factor); SMS second factors do not depend on it. */
    phoneNumber: { enabled: boolean };
  };
  authorizedDomains: string[];
  emailPrivacyConfig: { enableImprovedEmailPrivacy: boolean };
  /** Browser API keys that name this project; requests carry one as `?key=`. */
  apiKeys: string[];
  /** How action mails present the project. */
  mail: { projectName: string; from: string };
  /** Identity providers by provider id (google.com, oidc.*, saml.*). */
  idps: Record<string, IdpConfig>;
  /** Password strength rules, served to the SDK at /v2/passwordPolicy and enforced when ENFORCE. */
  passwordPolicyConfig: PasswordPolicyConfig;
  /** Multi-factor authentication: whether it is on, which second factors, TOTP settings. */
  mfa: MultiFactorConfig;
}

/** Defaults that depend on how Hearth runs. */
export interface ConfigDefaults {
  /**
   * Phone sign-in starts enabled in --dev (codes go to the outbox) and disabled in production, as
   * a new Firebase project has it: texts cost money and need a provider, so an operator opts in.
   */
  phoneSignIn: boolean;
  /** On, as new Firebase projects have it since 2023; off in --dev, as in the Auth emulator (cli/dev-defaults.ts). */
  emailEnumerationProtection: boolean;
}

const productionDefaults: ConfigDefaults = { phoneSignIn: false, emailEnumerationProtection: true };

export function defaultProjectConfig(projectId: string, defaults: ConfigDefaults = productionDefaults): ProjectConfig {
  return {
    // passwordRequired: false is Identity Platform's switch for email-link sign-in; on, so the
    // "send me a sign-in link" flow works out of the box through the outbox.
    signIn: { email: { enabled: true, passwordRequired: false }, anonymous: { enabled: true }, phoneNumber: { enabled: defaults.phoneSignIn } },
    authorizedDomains: ['localhost', '127.0.0.1'],
    emailPrivacyConfig: { enableImprovedEmailPrivacy: defaults.emailEnumerationProtection },
    apiKeys: [`hearth-${randomBytes(16).toString('base64url')}`],
    mail: { projectName: projectId, from: `"${projectId}" <noreply@${projectId}.hearth.localhost>` },
    idps: {},
    passwordPolicyConfig: defaultPasswordPolicy(),
    mfa: defaultMfaConfig(),
  };
}

/** Merges a stored (possibly older) config over the defaults so new fields always exist. */
function withDefaults(stored: Partial<ProjectConfig>, defaults: ProjectConfig): ProjectConfig {
  return {
    signIn: {
      email: { ...defaults.signIn.email, ...stored.signIn?.email },
      anonymous: { ...defaults.signIn.anonymous, ...stored.signIn?.anonymous },
      phoneNumber: { ...defaults.signIn.phoneNumber, ...stored.signIn?.phoneNumber },
    },
    authorizedDomains: stored.authorizedDomains ?? defaults.authorizedDomains,
    emailPrivacyConfig: { ...defaults.emailPrivacyConfig, ...stored.emailPrivacyConfig },
    apiKeys: stored.apiKeys ?? defaults.apiKeys,
    mail: { ...defaults.mail, ...stored.mail },
    idps: stored.idps ?? {},
    passwordPolicyConfig: stored.passwordPolicyConfig ?? defaults.passwordPolicyConfig,
    mfa: mfaConfigWithDefaults(stored.mfa),
  };
}

/**
 * Projects and the API keys that name them, and the projects' tenants. A request's `?key=` picks
 * its project; in dev mode an unknown key falls back to the default project, as the Firebase
 * emulator accepts any key. Configs are asked for by realm (auth/tenants/realm.ts): a project id,
 * or a tenant's key, whose config is the tenant's settings over its project's.
 */
export class ProjectDirectory {
  private configs = new Map<string, ProjectConfig>();
  private projectByKey = new Map<string, string>();
  /** By realm key. */
  private tenants = new Map<string, TenantRecord>();
  /**
   * Set when other instances share the store: their changes are read back now and then
   * (`reload`), and at once when a tenant is not known here, at most once a second.
   */
  private sharedStore = false;
  private lastMissReloadAt = 0;
  /** Bumped by every change made here: a reload that overlapped one is dropped, not to undo it. */
  private changes = 0;

  constructor(
    private readonly store: Store,
    readonly defaultProjectId: string,
    private readonly acceptAnyApiKey: boolean,
    private readonly defaults: ConfigDefaults = productionDefaults,
  ) {}

  async load(): Promise<void> {
    await this.reload();
    await this.config(this.defaultProjectId);
  }

  /** Other instances change the same rows: `reload` then picks their changes up. */
  shareWithOtherInstances(): void {
    this.sharedStore = true;
  }

  /** Reads every project and tenant again, replacing what is known here in one step. */
  async reload(): Promise<void> {
    const changesBefore = this.changes;
    const configs = new Map<string, ProjectConfig>();
    const projectByKey = new Map<string, string>();
    const tenants = new Map<string, TenantRecord>();
    for (const project of await this.store.listProjects()) {
      if (isTenantRealm(project.projectId)) {
        tenants.set(project.projectId, tenantWithDefaults(JSON.parse(project.config) as TenantRecord));
        continue;
      }
      const config = withDefaults(JSON.parse(project.config) as Partial<ProjectConfig>, defaultProjectConfig(project.projectId, this.defaults));
      configs.set(project.projectId, config);
      for (const key of config.apiKeys) projectByKey.set(key, project.projectId);
    }
    if (this.changes !== changesBefore) return;
    this.configs = configs;
    this.projectByKey = projectByKey;
    this.tenants = tenants;
  }

  /**
   * The realm's config: a project's, created with defaults on first use (any project id works), or
   * a tenant's over its project's (TENANT_NOT_FOUND when there is no such tenant).
   */
  async config(projectId: string): Promise<ProjectConfig> {
    if (isTenantRealm(projectId)) {
      const tenant = this.tenants.get(projectId) ?? ((await this.reloadOnMiss()) ? this.tenants.get(projectId) : undefined);
      if (!tenant) throw authError('TENANT_NOT_FOUND');
      return effectiveConfig(await this.config(projectOf(projectId)), tenant);
    }
    const known = this.configs.get(projectId) ?? ((await this.reloadOnMiss()) ? this.configs.get(projectId) : undefined);
    if (known) return known;
    return this.create(projectId);
  }

  /**
   * A project's first use: its default config is written only if no other instance wrote one in
   * the meantime, and the stored one is what counts (two instances starting on one empty database
   * must hand out the same API key).
   */
  private async create(projectId: string): Promise<ProjectConfig> {
    const config = defaultProjectConfig(projectId, this.defaults);
    this.changes++;
    await this.store.commit([{ kind: 'createProject', project: { projectId, config: JSON.stringify(config) } }]);
    const stored = (await this.store.listProjects()).find((project) => project.projectId === projectId);
    const effective = stored ? withDefaults(JSON.parse(stored.config) as Partial<ProjectConfig>, config) : config;
    if (!this.configs.has(projectId)) this.remember(projectId, effective);
    return this.configs.get(projectId)!;
  }

  async save(projectId: string, config: ProjectConfig): Promise<void> {
    if (isTenantRealm(projectId)) {
      const tenant = this.tenants.get(projectId);
      if (!tenant) throw authError('TENANT_NOT_FOUND');
      return this.saveTenant(withOwnSettings(tenant, config), projectOf(projectId));
    }
    if (config.apiKeys.length === 0) throw requestErrors.invalidArgument('A project needs at least one API key.');
    for (const key of config.apiKeys) {
      const owner = this.projectByKey.get(key);
      if (owner !== undefined && owner !== projectId) throw requestErrors.invalidArgument('That API key belongs to another project.');
    }
    this.changes++;
    await this.store.commit([{ kind: 'putProject', project: { projectId, config: JSON.stringify(config) } }]);
    const previous = this.configs.get(projectId);
    for (const key of previous?.apiKeys ?? []) this.projectByKey.delete(key);
    this.remember(projectId, config);
  }

  /** The project an API key names, or undefined when the key is unknown and keys are enforced. */
  projectForApiKey(apiKey: string): string | undefined {
    return this.projectByKey.get(apiKey) ?? (this.acceptAnyApiKey ? this.defaultProjectId : undefined);
  }

  isApiKeyAccepted(projectId: string, apiKey: string): boolean {
    return this.acceptAnyApiKey || this.configs.get(projectId)?.apiKeys.includes(apiKey) === true;
  }

  /** The tenant behind a realm key, if the project has it. */
  tenant(realm: string): TenantRecord | undefined {
    return this.tenants.get(realm);
  }

  /** A project's tenants, oldest first (then by id), as Google lists them. */
  tenantsOf(projectId: string): TenantRecord[] {
    return [...this.tenants.entries()]
      .filter(([realm]) => projectOf(realm) === projectId)
      .map(([, tenant]) => tenant)
      .sort((a, b) => a.createdAt - b.createdAt || (a.tenantId < b.tenantId ? -1 : 1));
  }

  /** Creates or replaces a tenant, with `alongside` in the same commit. */
  async saveTenant(tenant: TenantRecord, projectId: string, alongside: Mutation[] = []): Promise<void> {
    const realm = realmKey(projectId, tenant.tenantId);
    this.changes++;
    await this.store.commit([{ kind: 'putProject', project: { projectId: realm, config: JSON.stringify(tenant) } }, ...alongside]);
    this.tenants.set(realm, tenant);
  }

  /** Forgets a tenant; `removal` deletes its row and its data in one commit. */
  async deleteTenant(realm: string, removal: Mutation[]): Promise<void> {
    this.changes++;
    await this.store.commit(removal);
    this.tenants.delete(realm);
  }

  /** True when it read the store again (shared store, and not within the last second). */
  private async reloadOnMiss(): Promise<boolean> {
    const now = Date.now();
    if (!this.sharedStore || now - this.lastMissReloadAt < 1000) return false;
    this.lastMissReloadAt = now;
    await this.reload();
    return true;
  }

  private remember(projectId: string, config: ProjectConfig): void {
    this.configs.set(projectId, config);
    for (const key of config.apiKeys) this.projectByKey.set(key, projectId);
  }
}
