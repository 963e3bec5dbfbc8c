import type { FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { registerAdminRoutes } from './auth/api/admin-routes.js';
import { CallerResolver } from './auth/api/caller.js';
import { registerIdentityRoutes } from './auth/api/identity-routes.js';
import { registerActionRoutes } from './auth/api/action-routes.js';
import { registerTokenRoutes } from './auth/api/token-routes.js';
import { ActionCodeService } from './auth/core/action-codes.js';
import { ActionMailer } from './auth/core/action-mail.js';
import { OobCodes } from './auth/core/oob-codes.js';
import { MailDelivery } from './auth/mail/mailer.js';
import { registerFederationRoutes } from './auth/api/federation-routes.js';
import { registerIdpConfigRoutes } from './auth/api/idp-config-routes.js';
import { HandlerFlow } from './auth/federation/handler-flow.js';
import { IdpSignIn } from './auth/federation/idp-sign-in.js';
import { OidcRelyingParty } from './auth/federation/oidc.js';
import { SamlServiceProvider } from './auth/federation/saml.js';
import { OAuth2Client } from './auth/federation/oauth2.js';
import { startDemoIdp, type DemoIdp } from './auth/federation/demo-idp.js';
import type { OidcProvider } from './auth/federation/idp-configs.js';
import { AccountService } from './auth/core/accounts.js';
import { AdminAccountService } from './auth/core/admin-accounts.js';
import type { AuthDeps } from './auth/core/auth-context.js';
import { prepareDecoy } from './auth/core/passwords.js';
import { ProjectDirectory } from './auth/core/project-config.js';
import { SessionService } from './auth/core/sessions.js';
import { SigningKeyRing } from './auth/core/signing-keys.js';
import { FailureThrottle } from './auth/core/throttle.js';
import { TokenService } from './auth/core/tokens.js';
import { UserRepository } from './auth/core/user-repository.js';
import type { HearthOptions } from './config.js';
import { createHttpApp } from './http/app.js';
import { SqliteStore } from './storage/sqlite/sqlite-store.js';
import type { Store } from './storage/store.js';
import { registerWebRoutes } from './web/web-routes.js';
import { FirestoreAccess } from './firestore/api/access.js';
import { registerFirestoreRestRoutes } from './firestore/api/rest-routes.js';
import { loadIndexFile } from './firestore/core/index-file.js';
import { DocumentDatabase } from './firestore/core/database.js';
import { FirestoreStreams } from './firestore/streams/streams.js';
import { startGrpc, type FirestoreGrpc } from './firestore/api/grpc.js';
import { shareHttpPort } from './firestore/api/shared-port.js';
import { registerWebChannelRoutes } from './firestore/api/webchannel.js';
import { defaultQueryLimits } from './firestore/core/query.js';

const hour = 3600_000;
/** Outbox messages are for following links while developing; a week is plenty. */
const outboxRetentionMs = 7 * 24 * hour;

export interface Hearth {
  app: FastifyInstance;
  options: HearthOptions;
  adminKey: string;
  defaultApiKey: string;
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
  const sqlite = new SqliteStore(join(options.dataDir, 'hearth.sqlite'));
  const store: Store = sqlite;
  const keys = await SigningKeyRing.open(join(options.dataDir, 'signing-keys.json'), {
    rotateAfterMs: 24 * hour,
    prepublishMs: hour,
    publishRetiredForMs: 2 * hour,
  });
  const rotation = setInterval(() => void keys.rotateIfDue().catch((err: unknown) => logger.error({ err }, 'key rotation failed')), 10 * 60_000);
  rotation.unref();

  const projects = new ProjectDirectory(store, options.defaultProjectId, options.dev);
  await projects.load();
  await withdrawDemoIdp(projects); // offered again below only while --demo-idp is given
  const adminKey = options.adminKey ?? loadOrCreateAdminKey(options.dataDir);
  const callers = new CallerResolver(projects, { adminKey, acceptOwner: options.dev });
  const deps: AuthDeps = {
    users: new UserRepository(store),
    tokens: new TokenService(keys, store),
    projects,
    accountThrottle: new FailureThrottle(options.accountThrottle),
    addressThrottle: new FailureThrottle(options.addressThrottle),
    options: { recentLoginSeconds: options.recentLoginSeconds },
    onEmailChanged: () => undefined, // replaced below, once the mailer exists
  };
  const sessions = new SessionService(deps);
  const admin = new AdminAccountService(store);
  const oobCodes = new OobCodes(store, options.oobLifetimes);
  const mail = new MailDelivery(store, { ...(options.smtpUrl ? { smtpUrl: options.smtpUrl } : {}), keepInOutbox: options.dev }, logger);
  if (options.publicUrl !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(options.publicUrl)) {
    throw new Error(`--public-url must be an origin like https://auth.example.com, not ${options.publicUrl}`);
  }
  let publicUrl = options.publicUrl?.replace(/\/$/, '') ?? '';
  const mailer = new ActionMailer(deps, oobCodes, mail, { recipient: new FailureThrottle(options.mailThrottle), client: new FailureThrottle({ ...options.mailThrottle, maxFailures: options.mailThrottle.maxFailures * 10 }) }, { publicUrl: () => publicUrl }, logger);
  const actions = new ActionCodeService(deps, oobCodes, sessions, mailer);
  const accounts = new AccountService(deps, sessions);
  deps.onEmailChanged = (caller, user, oldEmail) =>
    void projects.config(caller.projectId).then(
      (config) => mailer.recoverEmailLater(caller, user, oldEmail, config),
      (err: unknown) => logger.error({ err }, 'could not mail the email-change notice'),
    );
  const oidc = new OidcRelyingParty();
  const saml = new SamlServiceProvider(() => `${publicUrl}/__/auth/handler`);
  const oauth2 = new OAuth2Client();
  const flow = new HandlerFlow(store, projects, oidc, saml, oauth2, { publicUrl: () => publicUrl, sessionTtlMs: 15 * 60_000 }, (providerId, err) =>
    logger.warn({ providerId, err: { message: (err as Error).message } }, 'identity provider unreachable'),
  );
  const idpSignIn = new IdpSignIn(deps, store, oidc, saml, oauth2, sessions);
  const sweepAll = async () => {
    await oobCodes.sweep();
    await flow.sweep();
    await store.commit([{ kind: 'pruneOutbox', olderThan: Date.now() - outboxRetentionMs }]);
  };
  const sweep = setInterval(() => void sweepAll().catch((err: unknown) => logger.error({ err }, 'sweep failed')), 3600_000);
  sweep.unref();

  await prepareDecoy();
  const app = await createHttpApp(logger);
  app.get('/healthz', async () => ({ status: 'ok' }));
  registerIdentityRoutes(app, { sessions, accounts, actions, projects, callers });
  registerActionRoutes(app, { mailer, actions, callers, mail, store, dev: options.dev });
  await registerFederationRoutes(app, {
    flow,
    idpSignIn,
    projects,
    callers,
    publicUrl: () => publicUrl,
    startThrottle: new FailureThrottle({ maxFailures: 60, windowMs: 15 * 60_000 }),
  });
  registerIdpConfigRoutes(app, projects, callers);
  registerAdminRoutes(app, { sessions, accounts, admin, projects, callers });
  registerTokenRoutes(app, sessions, callers, keys);
  const database = new DocumentDatabase(sqlite.documents(), {
    queryLimits: { ...defaultQueryLimits, maxInValues: options.maxInValues },
    compositeIndexes: options.indexesFile ? loadIndexFile(options.indexesFile) : [],
  });
  const firestoreAccess = new FirestoreAccess({
    isAdmin: (authorization) => callers.isAdminAuthorization(authorization),
    verifyIdToken: (projectId, token) => deps.tokens.verifyIdToken(projectId, token),
    openToUsers: options.dev,
  });
  await registerFirestoreRestRoutes(app, database, firestoreAccess);
  const firestoreStreams = new FirestoreStreams(database, firestoreAccess);
  await registerWebChannelRoutes(app, firestoreStreams, firestoreAccess);
  let grpc: FirestoreGrpc | undefined;
  await registerWebRoutes(app, options.webRoot, projects, () => publicUrl);

  const defaultApiKey = (await projects.config(options.defaultProjectId)).apiKeys[0]!;
  let closed = false;
  let demoIdp: DemoIdp | undefined;
  const hearth: Hearth = {
    app,
    options,
    adminKey,
    defaultApiKey,
    url: '',
    async listen() {
      grpc = await startGrpc({ database, access: firestoreAccess, streams: firestoreStreams, logger, ...(options.grpcPort !== undefined ? { port: options.grpcPort, host: options.host } : {}) });
      shareHttpPort(app.server, grpc);
      await app.listen({ port: options.port, host: options.host });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      hearth.url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
      publicUrl ||= hearth.url;
      if (options.demoIdpPort !== undefined) {
        demoIdp = await startDemoIdp({ host: options.host, port: options.demoIdpPort, redirectUris: [flow.callbackUrl] });
        await offerDemoIdp(projects, demoIdp);
      }
      return hearth.url;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(rotation);
      clearInterval(sweep);
      await demoIdp?.close();
      // gRPC first: the HTTP server's close waits for the connections it handed over.
      await grpc?.close();
      firestoreStreams.close();
      // Fastify finishes in-flight requests first, then mails being issued; only then is the store closed.
      await app.close();
      await mailer.drain();
      mail.close();
      await store.close();
    },
  };
  return hearth;
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

function loadOrCreateAdminKey(dataDir: string): string {
  const file = join(dataDir, 'admin-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const key = randomBytes(32).toString('base64url');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}
