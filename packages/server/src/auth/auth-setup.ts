import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { AuthOptions } from './auth-options.js';
import type { IdentityStorage } from '../storage/identity-storage.js';
import type { Store } from '../storage/store.js';
import { registerActionRoutes } from './api/action-routes.js';
import { registerAdminRoutes } from './api/admin-routes.js';
import { CallerResolver } from './api/caller.js';
import { registerCaptchaRoutes } from './api/captcha-routes.js';
import { registerEmulatorConfigRoutes } from './api/emulator-config-routes.js';
import { registerFederationRoutes } from './api/federation-routes.js';
import { registerIdentityRoutes } from './api/identity-routes.js';
import { registerIdpConfigRoutes } from './api/idp-config-routes.js';
import { registerMfaRoutes } from './api/mfa-routes.js';
import { registerPasskeyRoutes } from './api/passkey-routes.js';
import { registerPhoneRoutes } from './api/phone-routes.js';
import { registerServiceAccountRoutes } from './api/service-account-routes.js';
import { registerTenantRoutes } from './api/tenant-routes.js';
import { registerTokenRoutes } from './api/token-routes.js';
import { HumanChecks } from './captcha/human-check.js';
import { AccountQuery } from './core/account-query.js';
import { AccountService } from './core/accounts.js';
import { ActionCodeService } from './core/action-codes.js';
import { ActionMailer } from './core/action-mail.js';
import { checkedAdminKey, loadOrCreateAdminKey } from './core/admin-key.js';
import { AdminAccountService } from './core/admin-accounts.js';
import type { AuthDeps } from './core/auth-context.js';
import { CustomTokenSignIn, CustomTokenVerifier } from './core/custom-tokens.js';
import { OobCodes } from './core/oob-codes.js';
import { prepareDecoy } from './core/passwords.js';
import { ProjectDirectory } from './core/project-config.js';
import { ServiceAccounts } from './core/service-accounts.js';
import { SessionCookies } from './core/session-cookies.js';
import { SessionService } from './core/sessions.js';
import { SigningKeyRing } from './core/signing-keys.js';
import { SignUpLimit } from './core/signup-limit.js';
import { FailureThrottle, signInLimits, SignInThrottle } from './core/throttle.js';
import { TokenService, type IdTokenClaims } from './core/tokens.js';
import { UserImportService } from './core/user-import.js';
import { UserRepository } from './core/user-repository.js';
import type { DemoIdp } from './federation/demo-idp.js';
import { HandlerFlow } from './federation/handler-flow.js';
import type { OidcProvider } from './federation/idp-configs.js';
import { IdpSignIn } from './federation/idp-sign-in.js';
import { OAuth2Client } from './federation/oauth2.js';
import { OidcRelyingParty } from './federation/oidc.js';
import { SamlServiceProvider } from './federation/saml.js';
import { MailDelivery } from './mail/mailer.js';
import { createMfa } from './mfa/mfa-setup.js';
import { PasskeyChallenges } from './passkeys/challenges.js';
import { PasskeyService } from './passkeys/passkeys.js';
import { SmsCodes } from './phone/codes.js';
import { TenantAdmin } from './tenants/tenant-admin.js';
import { PhoneSignIn } from './phone/phone-sign-in.js';
import { chooseSmsSender, type SmsDeliveryMode } from './phone/sms-delivery.js';

const hour = 3600_000;
/** Outbox messages are for following links while developing; a week is plenty. */
const outboxRetentionMs = 7 * 24 * hour;
/** On PostgreSQL: how often project settings changed by another instance are read back. */
const projectReloadMs = 2_000;
const demoProviderId = 'oidc.demo';

/** Where Hearth is reached: known only once it listens (the public URL defaults to the listening one). */
export interface ServerUrls {
  /** The origin links in mails and provider callbacks point at. */
  publicUrl(): string;
  /** The address Hearth listens on. */
  listeningUrl(): string;
}

/** The identity server: its services, for the domains above it, and its routes. */
export interface AuthAssembly {
  adminKey: string;
  projects: ProjectDirectory;
  callers: CallerResolver;
  deps: AuthDeps;
  humanCheck: HumanChecks;
  smsDelivery: SmsDeliveryMode;
  sessionCookieKeys: SigningKeyRing;
  /** ID tokens' signing keys (the console's overview warns before they change hands). */
  idTokenKeys: SigningKeyRing;
  /** Service accounts' public keys (file storage's signed URLs are signed with them). */
  serviceAccounts: ServiceAccounts;
  /** An ID token of the project (or any of its tenants), verified. */
  verifyIdToken(projectId: string, idToken: string, options?: { anyTenant?: boolean }): Promise<IdTokenClaims>;
  register(app: FastifyInstance): Promise<void>;
  /** Once listening: the demo provider, when asked for. */
  started(options: AuthOptions): Promise<void>;
  /** Before the HTTP app closes: stops timers and the demo provider. */
  stop(): Promise<void>;
  /** After the HTTP app closed: mails being issued and sign-up counts reach the store. */
  drain(): Promise<void>;
  /** Calls `listener` after accounts were deleted (their data's erasure is queued in the same commit). */
  onAccountsDeleted(listener: () => void): void;
}

/** Wires the identity services over the storage: keys, projects, accounts, mail, phone, MFA, federation. */
export async function assembleAuth(options: AuthOptions, storage: IdentityStorage, logger: Logger, urls: ServerUrls, sharedInstances: boolean): Promise<AuthAssembly> {
  const store: Store = storage.store;
  const keys = await SigningKeyRing.open(storage.signingKeys, {
    rotateAfterMs: 24 * hour,
    prepublishMs: hour,
    publishRetiredForMs: 2 * hour,
  });
  // Session cookies live up to two weeks: their keys rotate weekly and stay published past the longest cookie.
  const sessionCookieKeys = await SigningKeyRing.open(storage.sessionCookieKeys, {
    rotateAfterMs: 7 * 24 * hour,
    prepublishMs: hour,
    publishRetiredForMs: 15 * 24 * hour,
  });
  const rotateAll = async () => {
    await keys.rotateIfDue();
    await sessionCookieKeys.rotateIfDue();
  };
  const rotation = setInterval(() => void rotateAll().catch((err: unknown) => logger.error({ err }, 'key rotation failed')), 10 * 60_000);
  rotation.unref();

  const projects = new ProjectDirectory(store, options.defaultProjectId, options.dev, { phoneSignIn: options.dev, emailEnumerationProtection: options.emailEnumerationProtection });
  await projects.load();
  // Instances on one database see each other's projects, tenants and API keys within a few seconds.
  let projectReload: NodeJS.Timeout | undefined;
  if (sharedInstances) {
    projects.shareWithOtherInstances();
    projectReload = setInterval(() => void projects.reload().catch((err: unknown) => logger.error({ err }, 'reloading project settings failed')), projectReloadMs);
    projectReload.unref();
  }
  await withdrawDemoIdp(projects); // offered again once listening, only while --demo-idp is given
  const adminKey = options.adminKey !== undefined ? checkedAdminKey(options.adminKey, 'HEARTH_ADMIN_KEY') : loadOrCreateAdminKey(options.dataDir);
  const serviceAccounts = new ServiceAccounts(store);
  const callers = new CallerResolver(projects, { adminKey, acceptOwner: options.dev }, (token) => serviceAccounts.projectOfAccessToken(token));
  const signUpLimit = await SignUpLimit.open(store, options.signUpLimits);
  const deps: AuthDeps = {
    users: new UserRepository(store),
    tokens: new TokenService(keys, store, undefined, options.dev),
    projects,
    accountThrottle: new FailureThrottle(options.accountThrottle),
    addressThrottle: new FailureThrottle(options.addressThrottle),
    // Failed sign-ins are counted in the store: a restart or a crash does not forgive them.
    signInThrottle: await SignInThrottle.open(store, signInLimits(options.accountThrottle.maxFailures, options.accountThrottle.windowMs)),
    options: { recentLoginSeconds: options.recentLoginSeconds },
    onEmailChanged: () => undefined, // replaced below, once the mailer exists
    // Accounts made by a first sign-in (email link, provider, phone) count like accounts:signUp.
    signUps: signUpLimit,
    blocking: {},
  };
  const sessions = new SessionService(deps);
  const admin = new AdminAccountService(store);
  const oobCodes = new OobCodes(store, options.oobLifetimes);
  const mail = new MailDelivery(store, { ...(options.smtpUrl ? { smtpUrl: options.smtpUrl } : {}), keepInOutbox: options.dev }, logger);
  const mailer = new ActionMailer(deps, oobCodes, mail, { recipient: await FailureThrottle.open(store, 'mail-recipient', options.mailThrottle), client: await FailureThrottle.open(store, 'mail-client', { ...options.mailThrottle, maxFailures: options.mailThrottle.maxFailures * 10 }) }, { publicUrl: urls.publicUrl, emulatorLinks: options.dev && options.emulatorActionLinks }, logger);
  const actions = new ActionCodeService(deps, oobCodes, sessions, mailer);
  const accounts = new AccountService(deps, sessions);
  deps.onEmailChanged = (caller, user, oldEmail) =>
    void projects.config(caller.realm).then(
      (config) => mailer.recoverEmailLater(caller, user, oldEmail, config),
      (err: unknown) => logger.error({ err }, 'could not mail the email-change notice'),
    );
  const oidc = new OidcRelyingParty();
  const saml = new SamlServiceProvider(() => `${urls.publicUrl()}/__/auth/handler`);
  const oauth2 = new OAuth2Client();
  const flow = new HandlerFlow(store, projects, oidc, saml, oauth2, { publicUrl: urls.publicUrl, sessionTtlMs: 15 * 60_000, emulatorWidget: options.dev }, (providerId, err) =>
    logger.warn({ providerId, err: { message: (err as Error).message } }, 'identity provider unreachable'),
  );
  const idpSignIn = new IdpSignIn(deps, store, oidc, saml, oauth2, sessions, options.dev);
  const humanCheck = new HumanChecks(store, storage.captchaKey, { ...options.captcha, dev: options.dev });
  const sms = chooseSmsSender({ dev: options.dev, outbox: options.smsOutbox, ...(options.sms ? { provider: options.sms } : {}) }, (failure) =>
    logger.warn({ sms: failure }, 'SMS provider attempt failed'),
  );
  const smsCodes = new SmsCodes(
    store,
    projects,
    sms.sender,
    { perNumber: await FailureThrottle.open(store, 'sms-number', options.smsLimits.perNumber), perAddress: await FailureThrottle.open(store, 'sms-address', options.smsLimits.perAddress) },
    options.smsCodes,
  );
  const phoneSignIn = new PhoneSignIn(deps, sessions, smsCodes, humanCheck);
  // Every first-factor sign-in asks accounts with second factors for one (SessionService.startSession).
  const mfa = await createMfa({ auth: deps, sessions, store, dataDir: options.dataDir, ...(storage.mfaSealingKey ? { sealingKey: storage.mfaSealingKey } : {}), clock: options.clock ?? Date.now, sms: { codes: smsCodes, humanCheck }, auditLog: storage.auditLog });
  deps.secondFactors = mfa.gate;
  const passkeys = new PasskeyService({
    auth: deps,
    sessions,
    challenges: new PasskeyChallenges(mfa.deps.keys, options.clock ?? Date.now),
    startThrottle: await FailureThrottle.open(store, 'passkey-start', { maxFailures: 60, windowMs: 15 * 60_000 }),
    publicUrl: urls.publicUrl,
  });
  const sweepAll = async () => {
    await oobCodes.sweep();
    await humanCheck.sweep();
    await flow.sweep();
    await smsCodes.sweep();
    await store.commit([
      { kind: 'pruneOutbox', olderThan: Date.now() - outboxRetentionMs },
      { kind: 'pruneSmsOutbox', olderThan: Date.now() - outboxRetentionMs },
    ]);
  };
  const sweep = setInterval(() => void sweepAll().catch((err: unknown) => logger.error({ err }, 'sweep failed')), hour);
  sweep.unref();
  await prepareDecoy();
  let demoIdp: DemoIdp | undefined;

  return {
    adminKey,
    projects,
    callers,
    deps,
    humanCheck,
    smsDelivery: sms.mode,
    sessionCookieKeys,
    idTokenKeys: keys,
    serviceAccounts,
    verifyIdToken: (projectId, idToken, verifyOptions) => deps.tokens.verifyIdToken(projectId, idToken, verifyOptions),
    onAccountsDeleted(listener) {
      deps.users.afterDelete = listener;
      admin.afterDelete = listener;
    },
    async register(app) {
      const customTokens = new CustomTokenSignIn(deps, sessions, new CustomTokenVerifier(serviceAccounts, { acceptUnsigned: options.dev }));
      registerServiceAccountRoutes(app, { accounts: serviceAccounts, callers, publicUrl: urls.publicUrl, listeningUrl: urls.listeningUrl });
      registerIdentityRoutes(app, { sessions, accounts, actions, projects, callers, customTokens, sessionCookieKeys, humanCheck, signUpLimit });
      registerCaptchaRoutes(app, humanCheck);
      registerActionRoutes(app, { mailer, actions, callers, mail, store, dev: options.dev });
      registerPhoneRoutes(app, { phone: phoneSignIn, callers, store, dev: options.dev, delivery: sms.mode });
      await registerFederationRoutes(app, {
        flow,
        idpSignIn,
        projects,
        callers,
        publicUrl: urls.publicUrl,
        startThrottle: new FailureThrottle({ maxFailures: 60, windowMs: 15 * 60_000 }),
      });
      registerIdpConfigRoutes(app, projects, callers);
      registerEmulatorConfigRoutes(app, projects, callers, options.dev);
      registerTenantRoutes(app, new TenantAdmin(projects), callers);
      registerMfaRoutes(app, { enrollment: mfa.enrollment, signIn: mfa.signIn, callers, recoveryCodes: mfa.recoveryCodes });
      registerPasskeyRoutes(app, passkeys, callers);
      registerAdminRoutes(app, { sessions, accounts, admin, projects, callers, imports: new UserImportService(store), sessionCookies: new SessionCookies(deps, sessionCookieKeys, options.dev), accountQuery: new AccountQuery(store, storage.userListing), dev: options.dev });
      registerTokenRoutes(app, sessions, callers, keys);
    },
    async started(startOptions) {
      if (startOptions.demoIdpPort === undefined) return;
      // Loaded only here: oidc-provider warns about the Node.js runtime as soon as it is imported.
      const { startDemoIdp } = await import('./federation/demo-idp.js');
      demoIdp = await startDemoIdp({ host: startOptions.host, port: startOptions.demoIdpPort, redirectUris: [flow.callbackUrl] });
      await offerDemoIdp(projects, demoIdp);
    },
    async stop() {
      clearInterval(rotation);
      clearInterval(projectReload);
      clearInterval(sweep);
      await demoIdp?.close();
    },
    async drain() {
      await mailer.drain();
      // The sign-up counts are written behind the answers; a clean stop keeps every one.
      await signUpLimit.flushed();
      mail.close();
    },
  };
}

/** The demo provider trusts anyone: it must never outlive the run that started it. */
async function withdrawDemoIdp(projects: ProjectDirectory): Promise<void> {
  const config = await projects.config(projects.defaultProjectId);
  if (!config.idps[demoProviderId]) return;
  const { [demoProviderId]: _withdrawn, ...idps } = config.idps;
  await projects.save(projects.defaultProjectId, { ...config, idps });
}

/** The default project offers the demo provider (its secret is new each start). */
async function offerDemoIdp(projects: ProjectDirectory, demo: DemoIdp): Promise<void> {
  const config = await projects.config(projects.defaultProjectId);
  const provider: OidcProvider = {
    kind: 'oidc',
    providerId: demoProviderId,
    displayName: 'Hearth Demo',
    enabled: true,
    issuer: demo.issuer,
    clientId: demo.clientId,
    clientSecret: demo.clientSecret,
    scopes: ['openid', 'email', 'profile'],
    // Always show the demo's page, so signing out of the app lets you pick another identity.
    authorizationParameters: { prompt: 'login' },
  };
  await projects.save(projects.defaultProjectId, { ...config, idps: { ...config.idps, [provider.providerId]: provider } });
}
