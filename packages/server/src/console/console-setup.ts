import type { MetricsSample } from './metrics-sampler.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { FailureThrottle } from '../auth/core/throttle.js';
import { countRequests, countStoreBytes } from '../http/metrics.js';
import type { AuditLog } from '../storage/audit-log.js';
import type { Store } from '../storage/store.js';
import { auditConsoleChanges, registerAuditRoutes } from './audit.js';
import { consoleChannel, consoleChannelPrefix, consoleTokenOf, markConsoleRequests } from './console-access.js';
import { matchesSecret } from './console-gate.js';
import { registerMetricsRoutes } from './metrics-routes.js';
import { MetricsSampler } from './metrics-sampler.js';
import { operatorOfIdToken, type OperatorAccountDeps } from './operator-accounts.js';
import { defaultOperatorSessionOptions, OperatorSessions } from './operator-sessions.js';
import { registerSessionRoutes } from './session-routes.js';
import { registerConsoleIndexRoutes } from './index-routes.js';
import { registerMailPreviewRoutes } from './mail-preview.js';
import { registerConsoleRulesRoutes } from './rules-routes.js';
import type { AuthAssembly } from '../auth/auth-setup.js';
import type { WorkerRelay } from '../http/worker-relay.js';
import type { FirestoreAssembly } from '../firestore/firestore-setup.js';

export interface ConsoleSetup {
  adminKey: string;
  /** A worker of --workers: session tokens name it, and a request with another worker's session is relayed there. */
  relay?: WorkerRelay;
  /** Operator accounts: the default project's, verified and read back as stored. */
  accounts: OperatorAccountDeps;
  /** The admin key (or the console session) on a request: the console's routes take it from scripts. */
  isOwnerCredential(request: FastifyRequest): boolean;
  auditLog: AuditLog;
  logger: Logger;
  clock: () => number;
  publicUrl: () => string;
  /** The store's size in bytes now (the SQLite file and its log, or the PostgreSQL database). */
  storeBytes: () => number;
  metricsIntervalMs: number;
  /** Failed console sign-ins per address (openConsoleSignInThrottle). */
  signInFailures: FailureThrottle;
}

/**
 * Failed console sign-ins, counted per address in the store: a restart does not forgive them, and
 * workers and instances sharing PostgreSQL add up each other's counts before deciding.
 */
export function openConsoleSignInThrottle(store: Store): Promise<FailureThrottle> {
  return FailureThrottle.open(store, 'console-sign-in', { maxFailures: 10, windowMs: 15 * 60_000 });
}

export interface ConsoleServer {
  /** The newest metrics sample (the console's overview shows requests and errors now). */
  latestSample(): MetricsSample | undefined;
  close(): void;
}

/**
 * The console's server side on the HTTP app, registered right after it is made so the marking and
 * counting hooks run before every route: request counting, the session mark, session routes,
 * the audit hook and routes, metrics. (The rules routes need the document database: rules-routes.ts.)
 */
export function setUpConsole(app: FastifyInstance, setup: ConsoleSetup): ConsoleServer {
  countRequests(app);
  const relay = setup.relay;
  const sessions = new OperatorSessions({ ...defaultOperatorSessionOptions, clock: setup.clock, ...(relay ? { tokenPrefix: relay.sessionPrefix() } : {}) });
  if (relay) {
    // Console sessions live in the worker that signed the operator in.
    app.addHook('onRequest', async (request, reply) => {
      const owner = relay.ownerOfSession(consoleTokenOf(request));
      // Unreachable (being started again): served here, where the session is unknown (signed out).
      if (owner !== undefined && (await relay.relay(owner, request, reply))) return reply;
    });
  }
  markConsoleRequests(app, sessions);
  registerSessionRoutes(app, {
    sessions,
    isAdminKey: (presented) => matchesSecret(presented, setup.adminKey),
    operatorOfIdToken: (idToken) => operatorOfIdToken(setup.accounts, idToken),
    failures: setup.signInFailures,
    secure: () => setup.publicUrl().startsWith('https:'),
  });
  const audit = { log: setup.auditLog, logger: setup.logger, isOwnerCredential: setup.isOwnerCredential, clock: setup.clock };
  auditConsoleChanges(app, audit);
  registerAuditRoutes(app, audit);
  const sampler = new MetricsSampler(setup.metricsIntervalMs);
  registerMetricsRoutes(app, { sampler, isOwnerCredential: setup.isOwnerCredential });
  const uncountStore = countStoreBytes(setup.storeBytes);
  return {
    latestSample: () => sampler.since(0).at(-1),
    close() {
      sampler.close();
      uncountStore();
    },
  };
}

/** The console's tools over the domains, once they are assembled: rules, declared indexes, mail previews. */
export async function registerConsoleTools(app: FastifyInstance, deps: { auth: AuthAssembly; firestore: FirestoreAssembly; dev: boolean; publicUrl: () => string }): Promise<void> {
  const isOwnerCredential = (request: FastifyRequest) => deps.auth.callers.isOwner(request);
  const { firestore } = deps;
  registerConsoleRulesRoutes(app, { registry: firestore.rulesRegistry, database: firestore.database, guard: firestore.guard, dev: deps.dev, isOwnerCredential });
  registerConsoleIndexRoutes(app, { compositeIndexes: firestore.compositeIndexes, vectorIndexes: firestore.vectorIndexes, isOwnerCredential });
  registerMailPreviewRoutes(app, { config: (projectId) => deps.auth.projects.config(projectId), publicUrl: deps.publicUrl, isOwnerCredential });
  await firestore.registerOperatorChannel(app, consoleChannelPrefix, consoleChannel);
}
