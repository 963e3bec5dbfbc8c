import type { FastifyInstance, FastifyRequest } from 'fastify';
import { chmodSync, mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import pino, { type Logger } from 'pino';
import { startAccountErasures, type AccountErasures } from './account-erasure.js';
import { identityDialect } from './auth/api/identity-dialect.js';
import { assembleAuth } from './auth/auth-setup.js';
import type { HumanChecks } from './auth/captcha/human-check.js';
import type { SmsDeliveryMode } from './auth/phone/sms-delivery.js';
import type { HearthOptions } from './config.js';
import { openConsoleSignInThrottle, registerConsoleTools, setUpConsole } from './console/console-setup.js';
import { DocumentCounter } from './console/document-counter.js';
import { registerConsoleFunctionsRoutes } from './console/functions-routes.js';
import { registerOverviewRoutes } from './console/overview-routes.js';
import { registerConsoleStorageRules } from './console/storage-rules-simulation.js';
import { setUpFiles } from './files/files-setup.js';
import { discoverCodeBase, setUpFunctions, type FunctionsAssembly, type FunctionsPlan } from './functions/functions-setup.js';
import { assembleFirestore } from './firestore/firestore-setup.js';
import { createHttpApp } from './http/app.js';
import { ownOriginsOf } from './http/browser-origin.js';
import { hostPort } from './http/host-port.js';
import { openStorage, type IdentityStorage } from './storage/identity-storage.js';
import { openPgPool, type PgPool } from './storage/postgres/pg-connection.js';
import { registerWebRoutes } from './web/web-routes.js';
import { WorkerRelay } from './http/worker-relay.js';
import { perAddressShares } from './workers/address-shares.js';

/** How long an overview waits for a first document count before it answers "counting" (null) instead. */
const overviewCountWaitMs = 300;
/** How long close() lets requests in flight finish before it ends their connections. */
const shutdownGraceMs = 3_000;

export interface Hearth {
  app: FastifyInstance;
  options: HearthOptions;
  adminKey: string;
  defaultApiKey: string;
  /** One line for the start banner: which security rules guard the document database. */
  rulesSummary: string;
  /** The same for Cloud Storage. */
  storageRulesSummary: string;
  /** Deletes a deleted account's files (`users/{uid}/` in its project's default buckets), for the account-data erasure. */
  eraseUserFiles(projectId: string, uid: string): Promise<number>;
  /** The same for the functions code base (--functions). */
  functionsSummary: string;
  /** The functions code base's endpoints and worker (functions/). */
  functions: FunctionsAssembly;
  /** The reCAPTCHA stand-in's server side: challenges, tokens, and the check identity calls make. */
  humanCheck: HumanChecks;
  /** Where SMS codes go: the outbox, the provider, both, or nowhere (phone sign-in refused). */
  smsDelivery: SmsDeliveryMode;
  /** The address it listens on, once `listen` resolved. */
  url: string;
  listen(): Promise<string>;
  /**
   * For a worker of `--workers`: serves the connections a primary process accepted on `url` and
   * hands over (`accept`), without listening itself.
   */
  serveHandedConnections(url: string): Promise<void>;
  /** A connection of the public port (or the gRPC one), accepted elsewhere: HTTP/1.1 and gRPC alike. */
  accept(socket: Socket): void;
  /** Another worker on the same SQLite file says a database's change log reaches `seq`. */
  changeLogReached(db: string, seq: number): void;
  close(): Promise<void>;
}

/**
 * The composition root: storage, then each domain's assembly (identity, document database,
 * console, web app) on one HTTP app. A domain assembles its own services; nothing listens until
 * `listen`.
 */
export async function createHearth(given: HearthOptions, logger: Logger = createLogger(given.logLevel)): Promise<Hearth> {
  // A worker behind a trusted proxy allows its share of each per-address limit (workers/address-shares.ts).
  const options = given.worker ? perAddressShares(given, given.worker.count) : given;
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  // The folder holds password hashes, keys and mails: private to the owner even if it existed before.
  chmodSync(options.dataDir, 0o700);
  // First: a code base that cannot be loaded refuses the start before anything is opened.
  const functionsPlan = await discoverCodeBase({ defaultProjectId: options.defaultProjectId, dev: options.dev, ...(options.functionsDir ? { functionsDir: options.functionsDir } : {}) });
  const pgPool = options.databaseUrl ? openPgPool(options.databaseUrl) : undefined;
  const storage = await openStorage(options.dataDir, pgPool, { ...(options.sqliteWriterLatch ? { writerLatch: options.sqliteWriterLatch } : {}), ...(options.worker && !pgPool ? { sharedFile: { announce: options.worker.announce } } : {}) }).catch(async (error: unknown) => {
    await pgPool?.end();
    throw error;
  });
  // A start refused past this point (a bad flag, rules that do not compile) lets go of the storage
  // it opened: the PostgreSQL pool and change feed would otherwise keep the process alive.
  try {
    return await assemble(options, logger, storage, pgPool, functionsPlan);
  } catch (error) {
    await storage.close().catch(() => undefined);
    await pgPool?.end().catch(() => undefined);
    throw error;
  }
}

/** Every domain on one HTTP app, over the storage createHearth opened. */
async function assemble(options: HearthOptions, logger: Logger, storage: IdentityStorage, pgPool: PgPool | undefined, functionsPlan: FunctionsPlan | undefined): Promise<Hearth> {
  if (options.publicUrl !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(options.publicUrl)) {
    throw new Error(`--public-url must be an origin like https://auth.example.com, not ${options.publicUrl}`);
  }
  let publicUrl = options.publicUrl?.replace(/\/$/, '') ?? '';
  const urls = { publicUrl: () => publicUrl, listeningUrl: () => hearth.url };
  // PostgreSQL, or a SQLite file other workers write too: settings, keys and commits come from elsewhere as well.
  const auth = await assembleAuth(options, storage, logger, urls, storage.changeFeed !== undefined);
  const { callers } = auth;
  let ownOrigins: string[] = [];
  const app = await createHttpApp(logger, { isAdminCredential: (authorization) => callers.isAdminAuthorization(authorization), ownOrigins: () => ownOrigins, emulatorOpenToLocalPages: options.dev }, { dialects: [identityDialect], ...(options.trustProxy ? { trustedProxies: options.trustProxy } : {}) });
  app.get('/healthz', async () => ({ status: 'ok' }));
  const isOwnerCredential = (request: FastifyRequest) => callers.isOwner(request);
  // Right after the app: its hooks (request counting, the session mark, the audit) run before every route.
  const relay = options.worker ? new WorkerRelay(options.worker.index, options.worker.relayDir) : undefined;
  const consoleServer = setUpConsole(app, {
    adminKey: auth.adminKey,
    ...(relay ? { relay } : {}),
    accounts: { projectId: options.defaultProjectId, verifyIdToken: (projectId, token) => auth.verifyIdToken(projectId, token), getUser: (projectId, localId) => auth.deps.users.get(projectId, localId) },
    isOwnerCredential,
    auditLog: storage.auditLog,
    logger,
    clock: options.clock ?? Date.now,
    publicUrl: urls.publicUrl,
    storeBytes: storage.sizeBytes,
    metricsIntervalMs: options.metricsIntervalMs ?? 5000,
    signInFailures: await openConsoleSignInThrottle(storage.store),
  });
  await auth.register(app);
  const firestore = await assembleFirestore(options, storage, logger, {
    isAdminOf: (authorization, projectId, peer) => callers.isAdminOf(authorization, projectId, peer),
    isAdminAuthorization: (authorization) => callers.isAdminAuthorization(authorization),
    // Every account of the project, its tenants' too (rules see firebase.tenant), as Google's Firestore takes them.
    verifyIdToken: (projectId, token) => auth.verifyIdToken(projectId, token, { anyTenant: true }),
  }, relay);
  await registerConsoleTools(app, { auth, firestore, dev: options.dev, publicUrl: urls.publicUrl });
  await firestore.register(app);
  const files = await setUpFiles(app, { dataDir: options.dataDir, dev: options.dev, defaultProjectId: options.defaultProjectId, ...options.files, ...(options.storageRulesFile ? { storageRulesFile: options.storageRulesFile } : {}), ...(options.shippedStorageRulesFile ? { shippedStorageRulesFile: options.shippedStorageRulesFile } : {}), ...(options.storageUrl ? { storageUrl: options.storageUrl } : {}), ...(sharesBytes(options) ? { sharedBytes: true } : {}) }, {
    store: storage.files,
    rules: firestore.rulesRegistry,
    readDocument: (projectId, databaseId, path) => firestore.guard.reader({ projectId, databaseId }).get(path),
    isOwner: isOwnerCredential,
    serviceAccountKeysOf: (clientEmail) => auth.serviceAccounts.keysOf(clientEmail),
    resolveCaller: (authorization, projectId, consoleSession, peer) => firestore.access.callerOf(authorization, projectId, consoleSession, peer),
    publicUrl: () => options.publicUrl?.replace(/\/$/, '') ?? '',
    logger,
  });
  registerConsoleStorageRules(app, {
    registry: firestore.rulesRegistry,
    readObject: (bucket, name) => storage.files.getObject(bucket, name),
    readDocument: (projectId, databaseId, path) => firestore.guard.reader({ projectId, databaseId }).get(path),
    dev: options.dev,
    isOwnerCredential,
  });
  const functions = setUpFunctions(functionsPlan, { documents: storage.documents, triggerEvents: storage.triggerEvents, files: storage.files, accounts: auth.deps.users, ...(auth.deps.blocking ? { blocking: auth.deps.blocking } : {}), credential: callers.functions, verifyIdToken: (projectId, token) => auth.verifyIdToken(projectId, token, { anyTenant: true }), ...(options.functionsDispatcher ? { dispatcher: options.functionsDispatcher } : {}) }, logger);
  await functions.register(app);
  registerConsoleFunctionsRoutes(app, { functions, isOwnerCredential });
  // The overview's document count: counted once at start (the default project) or at first sight, then kept by the change feed.
  const documentCounter = new DocumentCounter(firestore.database, (dbKey) => storage.counts.documents(dbKey), (error) => logger.warn({ err: error }, 'counting documents for the console overview failed'), storage.counts.lastCommitTime?.bind(storage.counts));
  const documentsKey = (projectId: string) => firestore.database.dbKey({ projectId, databaseId: '(default)' });
  documentCounter.start(documentsKey(options.defaultProjectId));
  registerOverviewRoutes(app, {
    counts: storage.counts,
    documents: (projectId) => documentCounter.documents(documentsKey(projectId), overviewCountWaitMs),
    store: storage.store,
    auditLog: storage.auditLog,
    fileBytes: (projectId) => storage.files.usedBytes(projectId),
    storeBytes: storage.sizeBytes,
    latestSample: () => consoleServer.latestSample(),
    mailSent: Boolean(options.smtpUrl),
    smsDelivery: auth.smsDelivery,
    hasRules: async (projectId) => (await firestore.rulesRegistry.rulesFor({ projectId, databaseId: '(default)' })) !== undefined,
    dev: options.dev,
    clock: options.clock ?? Date.now,
    keyHandovers: (now) => [
      { what: 'ID token', ...auth.idTokenKeys.nextHandover(now) },
      { what: 'Session cookie', ...auth.sessionCookieKeys.nextHandover(now) },
    ],
    isOwnerCredential,
  });
  await registerWebRoutes(app, options.webRoot, auth.projects, urls.publicUrl, auth.smsDelivery, options.recentLoginSeconds);
  // A deleted account's documents and files go too (queued with the deletion; a restart finishes it).
  let erasures: AccountErasures | undefined;
  auth.onAccountsDeleted(() => erasures?.wake());

  const defaultApiKey = (await auth.projects.config(options.defaultProjectId)).apiKeys[0]!;
  let closed = false;
  /** What starts once the address is known, whoever listens on it. */
  const serveOn = async (url: string) => {
    hearth.url = url;
    publicUrl ||= hearth.url;
    ownOrigins = ownOriginsOf(hearth.url, publicUrl);
    await auth.started(options);
    await functions.started(hearth.url);
    erasures = startAccountErasures({
      store: storage.store,
      documents: firestore.database,
      eraseUserFiles: (projectId, uid) => files.eraseUserFiles(projectId, uid),
      projectId: options.defaultProjectId,
      logger,
    });
  };
  const hearth: Hearth = {
    app,
    options,
    adminKey: auth.adminKey,
    defaultApiKey,
    rulesSummary: firestore.rulesSummary,
    storageRulesSummary: files.rulesSummary,
    functionsSummary: functions.summary,
    functions,
    eraseUserFiles: (projectId, uid) => files.eraseUserFiles(projectId, uid),
    humanCheck: auth.humanCheck,
    smsDelivery: auth.smsDelivery,
    url: '',
    async listen() {
      await firestore.listen(app.server);
      await app.listen({ port: options.port, host: options.host });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      await serveOn(`http://${hostPort(options.host, port)}`);
      return hearth.url;
    },
    async serveHandedConnections(url) {
      await firestore.listen(app.server, { ownGrpcPort: false });
      await app.ready();
      await relay?.listen((socket) => hearth.accept(socket));
      await serveOn(url);
    },
    accept(socket) {
      if (closed) socket.destroy();
      else app.server.emit('connection', socket);
    },
    changeLogReached(db, seq) {
      storage.heard?.(db, seq);
    },
    async close() {
      if (closed) return;
      closed = true;
      consoleServer.close();
      await relay?.close();
      documentCounter.close();
      await functions.close();
      await erasures?.stop();
      await auth.stop();
      await firestore.stop();
      // Fastify finishes in-flight requests first, then mails being issued; only then is the store closed.
      // A request still unfinished after the grace period (half-sent by a slow client) is cut off.
      const cutOff = setTimeout(() => app.server.closeAllConnections(), shutdownGraceMs);
      await app.close().finally(() => clearTimeout(cutOff));
      await auth.drain();
      await files.close();
      await storage.close();
      await pgPool?.end();
    },
  };
  return hearth;
}

/**
 * Whether other processes write the same stored bytes: the workers of --workers (one data folder),
 * or instances on one database keeping their files in one S3 bucket.
 */
function sharesBytes(options: HearthOptions): boolean {
  return options.worker !== undefined || (options.databaseUrl !== undefined && options.storageUrl !== undefined);
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
