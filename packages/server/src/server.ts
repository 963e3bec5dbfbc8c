import type { FastifyInstance, FastifyRequest } from 'fastify';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import { registerAdminRoutes } from './auth/api/admin-routes.js';
import { registerEmulatorConfigRoutes } from './auth/api/emulator-config-routes.js';
import { CallerResolver } from './auth/api/caller.js';
import { registerIdentityRoutes } from './auth/api/identity-routes.js';
import { registerActionRoutes } from './auth/api/action-routes.js';
import { registerTokenRoutes } from './auth/api/token-routes.js';
import { registerServiceAccountRoutes } from './auth/api/service-account-routes.js';
import { registerMfaRoutes } from './auth/api/mfa-routes.js';
import { createMfa } from './auth/mfa/mfa-setup.js';
import { registerCaptchaRoutes } from './auth/api/captcha-routes.js';
import { HumanChecks } from './auth/captcha/human-check.js';
import { registerPhoneRoutes } from './auth/api/phone-routes.js';
import { SmsCodes } from './auth/phone/codes.js';
import { PhoneSignIn } from './auth/phone/phone-sign-in.js';
import { chooseSmsSender, type SmsDeliveryMode } from './auth/phone/sms-delivery.js';
import { AccountQuery } from './auth/core/account-query.js';
import { CustomTokenSignIn, CustomTokenVerifier } from './auth/core/custom-tokens.js';
import { ServiceAccounts } from './auth/core/service-accounts.js';
import { SessionCookies } from './auth/core/session-cookies.js';
import { ActionCodeService } from './auth/core/action-codes.js';
import { ActionMailer } from './auth/core/action-mail.js';
import { OobCodes } from './auth/core/oob-codes.js';
import { MailDelivery } from './auth/mail/mailer.js';
import { registerFederationRoutes } from './auth/api/federation-routes.js';
import { registerIdpConfigRoutes } from './auth/api/idp-config-routes.js';
import { registerTenantRoutes } from './auth/api/tenant-routes.js';
import { TenantAdmin } from './auth/tenants/tenant-admin.js';
import { HandlerFlow } from './auth/federation/handler-flow.js';
import { IdpSignIn } from './auth/federation/idp-sign-in.js';
import { OidcRelyingParty } from './auth/federation/oidc.js';
import { SamlServiceProvider } from './auth/federation/saml.js';
import { OAuth2Client } from './auth/federation/oauth2.js';
import type { DemoIdp } from './auth/federation/demo-idp.js';
import type { OidcProvider } from './auth/federation/idp-configs.js';
import { AccountService } from './auth/core/accounts.js';
import { AdminAccountService } from './auth/core/admin-accounts.js';
import { UserImportService } from './auth/core/user-import.js';
import type { AuthDeps } from './auth/core/auth-context.js';
import { prepareDecoy } from './auth/core/passwords.js';
import { ProjectDirectory } from './auth/core/project-config.js';
import { SessionService } from './auth/core/sessions.js';
import { checkedAdminKey, loadOrCreateAdminKey } from './auth/core/admin-key.js';
import { SigningKeyRing } from './auth/core/signing-keys.js';
import { FailureThrottle, signInLimits, SignInThrottle } from './auth/core/throttle.js';
import { SignUpLimit } from './auth/core/signup-limit.js';
import { TokenService } from './auth/core/tokens.js';
import { UserRepository } from './auth/core/user-repository.js';
import type { HearthOptions } from './config.js';
import { createHttpApp } from './http/app.js';
import { ownOriginsOf } from './http/browser-origin.js';
import { openPgPool } from './storage/postgres/pg-connection.js';
import { openStorage } from './server-storage.js';
import type { Store } from './storage/store.js';
import { registerWebRoutes } from './web/web-routes.js';
import { FirestoreAccess } from './firestore/api/access.js';
import { registerFirestoreRestRoutes } from './firestore/api/rest-routes.js';
import { loadIndexFile, loadVectorIndexFile } from './firestore/core/index-file.js';
import { DocumentDatabase } from './firestore/core/database.js';
import { FirestoreStreams } from './firestore/streams/streams.js';
import { startGrpc, type FirestoreGrpc } from './firestore/api/grpc.js';
import { shareHttpPort, type SharedPort } from './firestore/api/shared-port.js';
import { registerWebChannelRoutes } from './firestore/api/webchannel.js';
import { defaultQueryLimits } from './firestore/core/query.js';
import { registerRulesRoutes } from './firestore/api/rules-routes.js';
import { FirestoreGuard } from './firestore/security/guard.js';
import { followRulesFile, releaseRulesFile } from './firestore/security/rules-file.js';
import { firestoreRelease, RulesRegistry } from './firestore/security/rules-registry.js';
import { setUpConsole } from './console/console-setup.js';
import { registerConsoleRulesRoutes } from './console/rules-routes.js';
import { registerConsoleIndexRoutes } from './console/index-routes.js';
import { registerMailPreviewRoutes } from './console/mail-preview.js';
import { firestoreMetrics } from './http/metrics.js';

const hour = 3600_000;
/** How long close() lets requests in flight finish before it ends their connections. */
const shutdownGraceMs = 3_000;
/** Outbox messages are for following links while developing; a week is plenty. */
const outboxRetentionMs = 7 * 24 * hour;
/** On PostgreSQL: how often project settings changed by another instance are read back. */
const projectReloadMs = 2_000;

export interface Hearth {
  app: FastifyInstance;
  options: HearthOptions;
  adminKey: string;
  defaultApiKey: string;
  /** One line for the start banner: which security rules guard the document database. */
  rulesSummary: string;
  /** The reCAPTCHA stand-in's server side: challenges, tokens, and the check identity calls make. */
  humanCheck: HumanChecks;
  /** Where SMS codes go: the outbox, the provider, both, or nowhere (phone sign-in refused). */
  smsDelivery: SmsDeliveryMode;
  /** The address it listens on, once `listen` resolved. */
  url: string;
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** Wires storage, identity services and the HTTP app together. Nothing listens until `listen`. */
export async function createHearth(options: HearthOptions, logger: Logger = createLogger(options.logLevel)): Promise<Hearth> {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  // The folder holds password hashes, keys and mails: private to the owner even if it existed before.
  chmodSync(options.dataDir, 0o700);
  const pgPool = options.databaseUrl ? openPgPool(options.databaseUrl) : undefined;
  const storage = await openStorage(options.dataDir, pgPool, options.sqliteWriterLatch).catch(async (error: unknown) => {
    await pgPool?.end();
    throw error;
  });
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
  if (pgPool) {
    projects.shareWithOtherInstances();
    projectReload = setInterval(() => void projects.reload().catch((err: unknown) => logger.error({ err }, 'reloading project settings failed')), projectReloadMs);
    projectReload.unref();
  }
  await withdrawDemoIdp(projects); // offered again below only while --demo-idp is given
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
  };
  const sessions = new SessionService(deps);
  const admin = new AdminAccountService(store);
  const oobCodes = new OobCodes(store, options.oobLifetimes);
  const mail = new MailDelivery(store, { ...(options.smtpUrl ? { smtpUrl: options.smtpUrl } : {}), keepInOutbox: options.dev }, logger);
  if (options.publicUrl !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(options.publicUrl)) {
    throw new Error(`--public-url must be an origin like https://auth.example.com, not ${options.publicUrl}`);
  }
  let publicUrl = options.publicUrl?.replace(/\/$/, '') ?? '';
  const mailer = new ActionMailer(deps, oobCodes, mail, { recipient: await FailureThrottle.open(store, 'mail-recipient', options.mailThrottle), client: await FailureThrottle.open(store, 'mail-client', { ...options.mailThrottle, maxFailures: options.mailThrottle.maxFailures * 10 }) }, { publicUrl: () => publicUrl, emulatorLinks: options.dev && options.emulatorActionLinks }, logger);
  const actions = new ActionCodeService(deps, oobCodes, sessions, mailer);
  const accounts = new AccountService(deps, sessions);
  deps.onEmailChanged = (caller, user, oldEmail) =>
    void projects.config(caller.realm).then(
      (config) => mailer.recoverEmailLater(caller, user, oldEmail, config),
      (err: unknown) => logger.error({ err }, 'could not mail the email-change notice'),
    );
  const oidc = new OidcRelyingParty();
  const saml = new SamlServiceProvider(() => `${publicUrl}/__/auth/handler`);
  const oauth2 = new OAuth2Client();
  const flow = new HandlerFlow(store, projects, oidc, saml, oauth2, { publicUrl: () => publicUrl, sessionTtlMs: 15 * 60_000, emulatorWidget: options.dev }, (providerId, err) =>
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
  const mfa = await createMfa({ auth: deps, sessions, store, dataDir: options.dataDir, ...(storage.mfaSealingKey ? { sealingKey: storage.mfaSealingKey } : {}), clock: options.clock ?? Date.now, sms: { codes: smsCodes, humanCheck } });
  deps.secondFactors = mfa.gate;
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
  const sweep = setInterval(() => void sweepAll().catch((err: unknown) => logger.error({ err }, 'sweep failed')), 3600_000);
  sweep.unref();

  await prepareDecoy();
  let ownOrigins: string[] = [];
  const app = await createHttpApp(logger, { isAdminCredential: (authorization) => callers.isAdminAuthorization(authorization), ownOrigins: () => ownOrigins, emulatorOpenToLocalPages: options.dev });
  app.get('/healthz', async () => ({ status: 'ok' }));
  const isOwnerCredential = (request: FastifyRequest) => callers.isOwner(request);
  const consoleServer = setUpConsole(app, {
    adminKey,
    accounts: { projectId: options.defaultProjectId, verifyIdToken: (projectId, token) => deps.tokens.verifyIdToken(projectId, token), getUser: (projectId, localId) => deps.users.get(projectId, localId) },
    isOwnerCredential,
    auditLog: storage.auditLog,
    logger,
    clock: options.clock ?? Date.now,
    publicUrl: () => publicUrl,
    storeBytes: storage.sizeBytes,
    metricsIntervalMs: options.metricsIntervalMs ?? 5000,
  });
  const customTokens = new CustomTokenSignIn(deps, sessions, new CustomTokenVerifier(serviceAccounts, { acceptUnsigned: options.dev }));
  registerServiceAccountRoutes(app, { accounts: serviceAccounts, callers, publicUrl: () => publicUrl, listeningUrl: () => hearth.url });
  registerIdentityRoutes(app, { sessions, accounts, actions, projects, callers, customTokens, sessionCookieKeys, humanCheck, signUpLimit });
  registerCaptchaRoutes(app, humanCheck);
  registerActionRoutes(app, { mailer, actions, callers, mail, store, dev: options.dev });
  registerPhoneRoutes(app, { phone: phoneSignIn, callers, store, dev: options.dev, delivery: sms.mode });
  await registerFederationRoutes(app, {
    flow,
    idpSignIn,
    projects,
    callers,
    publicUrl: () => publicUrl,
    startThrottle: new FailureThrottle({ maxFailures: 60, windowMs: 15 * 60_000 }),
  });
  registerIdpConfigRoutes(app, projects, callers);
  registerEmulatorConfigRoutes(app, projects, callers, options.dev);
  registerTenantRoutes(app, new TenantAdmin(projects), callers);
  registerMfaRoutes(app, { enrollment: mfa.enrollment, signIn: mfa.signIn, callers });
  registerAdminRoutes(app, { sessions, accounts, admin, projects, callers, imports: new UserImportService(store), sessionCookies: new SessionCookies(deps, sessionCookieKeys, options.dev), accountQuery: new AccountQuery(store), dev: options.dev });
  registerTokenRoutes(app, sessions, callers, keys);
  const compositeIndexes = options.indexesFile ? loadIndexFile(options.indexesFile) : [];
  const vectorIndexes = options.indexesFile ? loadVectorIndexFile(options.indexesFile) : [];
  const database = new DocumentDatabase(storage.documents, {
    ...(storage.changeFeed ? { changeFeed: storage.changeFeed } : {}),
    queryLimits: { ...defaultQueryLimits, maxInValues: options.maxInValues },
    compositeIndexes,
    versionRetentionMs: options.versionRetentionSeconds * 1000,
    vectorIndexes,
    anyVectorField: options.dev,
  });
  const stopCountingCommits = database.onCommit((event) => firestoreMetrics.committed(event.changes.length));
  // Versions older than any allowed read time go, in small batches, once a minute.
  let pruningStopped = false;
  const pruning = setInterval(() => void database.pruneHistory(() => pruningStopped).catch((err: unknown) => logger.error({ err }, 'pruning document versions failed')), 60_000);
  pruning.unref();
  const rulesRegistry = new RulesRegistry(storage.rules, logger);
  const rulesSummary = await prepareRules(rulesRegistry, options, logger);
  const stopFollowingRules = options.rulesFile ? await followRulesFile(rulesRegistry, options.defaultProjectId, options.rulesFile, logger) : () => undefined;
  const guard = new FirestoreGuard(rulesRegistry, database, { dev: options.dev, logger });
  const firestoreAccess = new FirestoreAccess({
    isAdmin: (authorization, projectId) => callers.isAdminOf(authorization, projectId),
    // Every account of the project, its tenants' too (rules see firebase.tenant), as Google's Firestore takes them.
    verifyIdToken: (projectId, token) => deps.tokens.verifyIdToken(projectId, token, { anyTenant: true }),
    dev: options.dev,
    guard,
    warn: (fields, message) => logger.warn(fields, message),
  });
  registerConsoleRulesRoutes(app, { registry: rulesRegistry, database, guard, dev: options.dev, isOwnerCredential });
  registerConsoleIndexRoutes(app, { compositeIndexes, vectorIndexes, isOwnerCredential });
  registerMailPreviewRoutes(app, { config: (projectId) => projects.config(projectId), publicUrl: () => publicUrl, isOwnerCredential });
  await registerRulesRoutes(app, { registry: rulesRegistry, isAdmin: (authorization, projectId) => callers.isAdminOf(authorization, projectId), dev: options.dev });
  await registerFirestoreRestRoutes(app, database, firestoreAccess);
  const firestoreStreams = new FirestoreStreams(database, firestoreAccess);
  await registerWebChannelRoutes(app, firestoreStreams, firestoreAccess, { isAdminCredential: (authorization) => callers.isAdminAuthorization(authorization) });
  let grpc: FirestoreGrpc | undefined;
  await registerWebRoutes(app, options.webRoot, projects, () => publicUrl);

  const defaultApiKey = (await projects.config(options.defaultProjectId)).apiKeys[0]!;
  let closed = false;
  let sharedPort: SharedPort | undefined;
  let demoIdp: DemoIdp | undefined;
  const hearth: Hearth = {
    app,
    options,
    adminKey,
    defaultApiKey,
    rulesSummary,
    humanCheck,
    smsDelivery: sms.mode,
    url: '',
    async listen() {
      grpc = await startGrpc({ database, access: firestoreAccess, streams: firestoreStreams, logger, ...(options.grpcPort !== undefined ? { port: options.grpcPort, host: options.host } : {}) });
      sharedPort = shareHttpPort(app.server, grpc);
      await app.listen({ port: options.port, host: options.host });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      hearth.url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
      publicUrl ||= hearth.url;
      ownOrigins = ownOriginsOf(hearth.url, publicUrl);
      if (options.demoIdpPort !== undefined) {
        // Loaded only here: oidc-provider warns about the Node.js runtime as soon as it is imported.
        const { startDemoIdp } = await import('./auth/federation/demo-idp.js');
        demoIdp = await startDemoIdp({ host: options.host, port: options.demoIdpPort, redirectUris: [flow.callbackUrl] });
        await offerDemoIdp(projects, demoIdp);
      }
      return hearth.url;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(rotation);
      clearInterval(projectReload);
      clearInterval(sweep);
      clearInterval(pruning);
      consoleServer.close();
      stopCountingCommits();
      pruningStopped = true;
      stopFollowingRules();
      await demoIdp?.close();
      // gRPC first: the HTTP server's close waits for the connections it handed over.
      sharedPort?.close();
      await grpc?.close();
      firestoreStreams.close();
      // Fastify finishes in-flight requests first, then mails being issued; only then is the store closed.
      // A request still unfinished after the grace period (half-sent by a slow client) is cut off.
      const cutOff = setTimeout(() => app.server.closeAllConnections(), shutdownGraceMs);
      await app.close().finally(() => clearTimeout(cutOff));
      await mailer.drain();
      // The sign-up counts are written behind the answers; a clean stop keeps every one.
      await signUpLimit.flushed();
      mail.close();
      await storage.close();
      await pgPool?.end();
    },
  };
  return hearth;
}

/**
 * The shipped rules (the web app's) go to the default project outside --dev until it has rules of
 * its own; says, for the start banner, what guards the database.
 */
async function prepareRules(registry: RulesRegistry, options: HearthOptions, logger: Logger): Promise<string> {
  const project = options.defaultProjectId;
  if (options.rulesFile) return `${options.rulesFile} (project ${project}, reloaded on change)`;
  const released = await registry.store.getRelease(project, firestoreRelease);
  if (!released && !options.dev && options.shippedRulesFile && existsSync(options.shippedRulesFile)) {
    await releaseRulesFile(registry, project, options.shippedRulesFile);
    logger.info({ project }, "the web app's security rules were released to the default project");
    return `the web app's rules (users/{uid}/... for their owner) for project ${project}; other projects are closed until their rules are released`;
  }
  if (released) return `released rules for project ${project}${options.dev ? '; projects without rules are open to every caller (dev mode)' : '; projects without rules are closed to all but the admin'}`;
  return options.dev
    ? 'none: the database is open to every caller, signed in or not (dev mode, as in Google\'s emulator)'
    : 'none: the database is closed to all but the admin until rules are released (--rules FILE)';
}

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: ['req.headers.authorization', 'password', '*.password', 'idToken', '*.idToken', 'refresh_token', '*.refresh_token', 'passwordHash', '*.passwordHash'],
      censor: '[redacted]',
    },
  });
}

/** The demo provider trusts anyone: it must never outlive the run that started it. */
async function withdrawDemoIdp(projects: ProjectDirectory): Promise<void> {
  const config = await projects.config(projects.defaultProjectId);
  if (!config.idps[demoProviderId]) return;
  const { [demoProviderId]: _withdrawn, ...idps } = config.idps;
  await projects.save(projects.defaultProjectId, { ...config, idps });
}

const demoProviderId = 'oidc.demo';

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
