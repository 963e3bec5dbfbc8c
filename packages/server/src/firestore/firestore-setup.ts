import type { FastifyInstance } from 'fastify';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { WorkerRelay } from '../http/worker-relay.js';
import type { Logger } from 'pino';
import type { IdTokenClaims } from '../auth/core/tokens.js';
import type { Peer } from '../auth/api/functions-credential.js';
import type { FirestoreOptions } from './firestore-options.js';
import { firestoreMetrics } from '../http/metrics.js';
import type { IdentityStorage } from '../storage/identity-storage.js';
import { FirestoreAccess } from './api/access.js';
import { startGrpc, type FirestoreGrpc } from './api/grpc.js';
import { registerFirestoreRestRoutes } from './api/rest-routes.js';
import { registerRulesRoutes } from './api/rules-routes.js';
import { shareHttpPort, type SharedPort } from './api/shared-port.js';
import { registerWebChannelRoutes, type OperatorChannel } from './api/webchannel.js';
import type { CompositeIndex } from './core/composite-indexes.js';
import { DocumentDatabase } from './core/database.js';
import { loadIndexFile, loadVectorIndexFile } from './core/index-file.js';
import { defaultQueryLimits } from './core/query.js';
import type { VectorIndex } from './core/vector-indexes.js';
import { FirestoreGuard } from './security/guard.js';
import { followRulesFile, releaseRulesFile } from './security/rules-file.js';
import { firestoreRelease, RulesRegistry } from './security/rules-registry.js';
import { FirestoreStreams } from './streams/streams.js';

/** What the document database needs of the identity server. */
export interface FirestoreIdentity {
  /** The admin credential of that project (the admin key, `Bearer owner` in --dev, its service accounts). */
  isAdminOf(authorization: string | undefined, projectId: string, peer?: Peer): Promise<boolean>;
  /** The admin credential of any project. */
  isAdminAuthorization(authorization: string | undefined): boolean;
  /** An ID token of the project or any of its tenants (rules see firebase.tenant), as Google's Firestore takes them. */
  verifyIdToken(projectId: string, idToken: string): Promise<IdTokenClaims>;
}

/** The document database: its engine and rules, for the console, and its transports. */
export interface FirestoreAssembly {
  database: DocumentDatabase;
  rulesRegistry: RulesRegistry;
  guard: FirestoreGuard;
  /** Who calls: the admin, a verified user, or nobody (file storage resolves callers the same way). */
  access: FirestoreAccess;
  compositeIndexes: CompositeIndex[];
  vectorIndexes: VectorIndex[];
  /** One line for the start banner: which security rules guard the document database. */
  rulesSummary: string;
  register(app: FastifyInstance): Promise<void>;
  /** A WebChannel of its own at `prefix` for operators (the console's live view): each handshake must name one. */
  registerOperatorChannel(app: FastifyInstance, prefix: string, operators: OperatorChannel): Promise<void>;
  /**
   * gRPC: on its own port when asked, and always on the HTTP port (HTTP/2 preface sniffing).
   * `ownGrpcPort: false`: a worker of `--workers`, whose primary listens on both ports and hands
   * each connection to the HTTP server, where the sniffing sends gRPC on.
   */
  listen(server: Server, listening?: { ownGrpcPort: boolean }): Promise<void>;
  /** Before the HTTP app closes: gRPC first (the HTTP server waits for the connections it handed over), streams, timers. */
  stop(): Promise<void>;
}

/** How often a process sharing its store reads the rules releases again. */
const sharedRulesReloadMs = 1_000;

/** `relay`: in a worker of --workers, how requests another worker owns reach it (http/worker-relay.ts). */
export async function assembleFirestore(options: FirestoreOptions, storage: IdentityStorage, logger: Logger, identity: FirestoreIdentity, relay?: WorkerRelay): Promise<FirestoreAssembly> {
  const compositeIndexes = options.indexesFile ? loadIndexFile(options.indexesFile) : [];
  const vectorIndexes = options.indexesFile ? loadVectorIndexFile(options.indexesFile) : [];
  const database = new DocumentDatabase(storage.documents, {
    ...(storage.changeFeed ? { changeFeed: storage.changeFeed } : {}),
    ...(relay ? { instanceTag: relay.transactionTag() } : {}),
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
  // Where other processes share the store, rules they release are taken up within a second.
  const rulesRegistry = new RulesRegistry(storage.rules, logger, storage.changeFeed ? sharedRulesReloadMs : undefined);
  const rulesSummary = await prepareRules(rulesRegistry, options, logger);
  const stopFollowingRules = options.rulesFile ? await followRulesFile(rulesRegistry, options.defaultProjectId, options.rulesFile, logger) : () => undefined;
  const guard = new FirestoreGuard(rulesRegistry, database, { dev: options.dev, logger });
  const access = new FirestoreAccess({ isAdmin: identity.isAdminOf, verifyIdToken: identity.verifyIdToken, dev: options.dev, guard, warn: (fields, message) => logger.warn(fields, message) });
  const streams = new FirestoreStreams(database, access);
  let grpc: FirestoreGrpc | undefined;
  let sharedPort: SharedPort | undefined;

  return {
    database,
    rulesRegistry,
    guard,
    access,
    compositeIndexes,
    vectorIndexes,
    rulesSummary,
    async register(app) {
      await registerRulesRoutes(app, { registry: rulesRegistry, isAdmin: identity.isAdminOf, dev: options.dev });
      await registerFirestoreRestRoutes(app, database, access, relay);
      await registerWebChannelRoutes(app, streams, access, { ...options.webChannelLimits, isAdminCredential: identity.isAdminAuthorization, ...(relay ? { relay } : {}) });
    },
    async registerOperatorChannel(app, prefix, operators) {
      await registerWebChannelRoutes(app, streams, access, { ...options.webChannelLimits, isAdminCredential: identity.isAdminAuthorization, prefix, operators });
    },
    async listen(server, listening = { ownGrpcPort: true }) {
      const ownPort = listening.ownGrpcPort && options.grpcPort !== undefined;
      grpc = await startGrpc({ database, access, streams, logger, ...(ownPort ? { port: options.grpcPort, host: options.host } : {}) });
      sharedPort = shareHttpPort(server, grpc);
    },
    async stop() {
      stopCountingCommits();
      pruningStopped = true;
      clearInterval(pruning);
      stopFollowingRules();
      rulesRegistry.close();
      sharedPort?.close();
      await grpc?.close();
      streams.close();
    },
  };
}

/**
 * The shipped rules (the web app's) go to the default project outside --dev until it has rules of
 * its own; says, for the start banner, what guards the database.
 */
async function prepareRules(registry: RulesRegistry, options: FirestoreOptions, logger: Logger): Promise<string> {
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
