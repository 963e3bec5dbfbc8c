/**
 * The functions domain's assembly (server.ts calls it): with `--functions DIR`, learns the code base's
 * functions from its manifest, starts its worker once Hearth listens (the worker's firebase-admin
 * is pointed at Hearth's address), and wires what each kind of function needs.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { registerFunctionRoutes } from './http-routes.js';
import { BlockingCalls } from './blocking-calls.js';
import { StorageEventBridge } from './storage-triggers.js';
import { authTriggerRecorder } from './auth-triggers.js';
import type { AccountChangeRecorder } from '../auth/core/user-repository.js';
import type { FilesStore } from '../storage/files-store.js';
import type { BlockingSlot } from '../auth/core/blocking-functions.js';
import type { FunctionsCredentialSlot } from '../auth/api/functions-credential.js';
import { resolve } from 'node:path';
import { defaultBucketsOf } from '../files/files-setup.js';
import { baseEnvironment, discoverFunctions } from './discovery.js';
import type { FunctionEndpoint } from './manifest.js';
import { WorkerProcess } from './worker-process.js';
import type { DocumentStore } from '../storage/document-store.js';
import type { TriggerEventStore } from '../storage/trigger-events.js';
import { defaultDispatcherOptions, EventDispatcher, type DispatcherOptions } from './event-dispatcher.js';
import { firestoreTriggerSelector } from './firestore-triggers.js';

export interface FunctionsOptions {
  /** `--functions DIR`: the folder of a Cloud Functions for Firebase code base (its package.json). */
  functionsDir?: string;
  defaultProjectId: string;
  dev: boolean;
}

export interface FunctionsAssembly {
  /** The code base's functions, as its manifest declares them (empty without --functions). */
  endpoints: FunctionEndpoint[];
  /** The worker running the code base (undefined without --functions). */
  worker: WorkerProcess | undefined;
  /** Delivers the trigger events commits store (undefined without --functions). */
  dispatcher: EventDispatcher | undefined;
  /** HTTPS and callable functions' routes on Hearth's app. */
  register(app: FastifyInstance): Promise<void>;
  /** Trigger events waiting for delivery, and set aside. */
  eventCounts(): Promise<{ pending: number; setAside: number }>;
  /** The stored trigger events (the console lists them and puts set-aside ones back). */
  triggerEvents: TriggerEventStore;
  /** One line for the start banner. */
  summary: string;
  /** Once Hearth listens: starts the worker, its firebase-admin reaching `hearthUrl`. */
  started(hearthUrl: string): Promise<void>;
  close(): Promise<void>;
}

/** What a worker's firebase-admin and firebase-functions read to reach Hearth instead of Google. */
export function workerEnvironment(projectId: string, hearthUrl: string): NodeJS.ProcessEnv {
  const hostPort = new URL(hearthUrl).host.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '127.0.0.1:');
  return {
    ...baseEnvironment(),
    GCLOUD_PROJECT: projectId,
    GOOGLE_CLOUD_PROJECT: projectId,
    FIREBASE_CONFIG: JSON.stringify({ projectId, storageBucket: defaultBucketsOf(projectId)[0] }),
    FIRESTORE_EMULATOR_HOST: hostPort,
    FIREBASE_AUTH_EMULATOR_HOST: hostPort,
    FIREBASE_STORAGE_EMULATOR_HOST: hostPort,
    STORAGE_EMULATOR_HOST: `http://${hostPort}`,
    FUNCTIONS_EMULATOR: 'true',
    // Hearth checks ID tokens and blocking-function requests itself before a worker sees them;
    // the worker's firebase-functions cannot check Hearth's keys against Google's.
    FIREBASE_DEBUG_MODE: 'true',
    FIREBASE_DEBUG_FEATURES: JSON.stringify({ skipTokenVerification: true }),
    K_REVISION: '1',
    TZ: 'UTC',
  };
}

/** The code base as discovered, before anything else of Hearth is opened. */
export interface FunctionsPlan {
  codeBase: string;
  projectId: string;
  endpoints: FunctionEndpoint[];
  dev: boolean;
}

/** Discovery first: a code base that does not load refuses the start before storage is opened. */
export async function discoverCodeBase(options: FunctionsOptions): Promise<FunctionsPlan | undefined> {
  if (!options.functionsDir) return undefined;
  const codeBase = resolve(options.functionsDir);
  const projectId = options.defaultProjectId;
  const endpoints = await discoverFunctions(codeBase, workerEnvironment(projectId, 'http://127.0.0.1:1'));
  return { codeBase, projectId, endpoints, dev: options.dev };
}

export interface FunctionsDeps {
  documents: DocumentStore;
  triggerEvents: TriggerEventStore;
  /** Cloud Storage's object metadata and its event log (storage triggers). */
  files: FilesStore;
  dispatcher?: Partial<DispatcherOptions>;
  /** The identity domain's accounts: v1 auth onCreate / onDelete events are committed with their changes. */
  accounts?: { onAccountChange(recorder: AccountChangeRecorder): () => void };
  /** The identity domain's slot for blocking functions (beforeCreate, beforeSignIn). */
  blocking?: BlockingSlot;
  /** Where the worker's own credential is told to the identity domain (auth/api/functions-credential.ts). */
  credential?: FunctionsCredentialSlot;
  /** Throws unless `token` is a valid ID token of the project (any of its tenants). */
  verifyIdToken(projectId: string, token: string): Promise<unknown>;
}

export function setUpFunctions(plan: FunctionsPlan | undefined, deps: FunctionsDeps, logger: Logger): FunctionsAssembly {
  if (!plan) {
    return { endpoints: [], worker: undefined, dispatcher: undefined, summary: 'none', async register() {}, eventCounts: () => deps.triggerEvents.counts(), triggerEvents: deps.triggerEvents, async started() {}, async close() {} };
  }
  const { codeBase, projectId, endpoints } = plan;
  let hearthUrl = '';
  // One worker runs every function: the largest memory any of them asks for (Google's default 256 MiB),
  // the smallest concurrency (Google's default 80 for v2).
  const memoryMb = Math.max(256, ...endpoints.map((endpoint) => endpoint.availableMemoryMb ?? 0));
  const concurrency = Math.min(80, ...endpoints.map((endpoint) => endpoint.concurrency ?? 80));
  const worker = new WorkerProcess(codeBase, () => workerEnvironment(projectId, hearthUrl), logger.child({ codeBase }), { memoryMb, concurrency });
  if (deps.credential) {
    deps.credential.projectId = projectId;
    deps.credential.current = () => worker.credential;
  }
  for (const endpoint of endpoints) {
    if (endpoint.kind.type === 'unsupported') logger.warn({ function: endpoint.name, reason: endpoint.kind.reason }, 'a function Hearth does not run');
  }
  const dispatcherOptions = { ...defaultDispatcherOptions, ...deps.dispatcher };
  const dispatcher = new EventDispatcher(deps.triggerEvents, worker, endpoints, logger.child({ component: 'functions' }), dispatcherOptions);
  const storageBridge = new StorageEventBridge(deps.files, deps.triggerEvents, endpoints, projectId, () => hearthUrl, () => dispatcher.noteRaised(), logger.child({ component: 'functions' }), Math.max(dispatcherOptions.pollMs, 200));
  // Installed before Hearth listens, like the Firestore selector: no account is made without its events.
  const accountRecorder = authTriggerRecorder(projectId, endpoints, () => dispatcher.noteRaised());
  const stopAccounts = accountRecorder && deps.accounts ? deps.accounts.onAccountChange(accountRecorder) : undefined;
  const blocking = new BlockingCalls(projectId, endpoints, worker);
  if (blocking.size && deps.blocking) deps.blocking.current = blocking;
  const selector = firestoreTriggerSelector(projectId, endpoints);
  if (selector) {
    // Installed before Hearth listens: no commit is made without its events.
    deps.documents.raiseTriggerEvents((db, change, commitTime) => {
      const events = selector(db, change, commitTime);
      if (events.length) dispatcher.noteRaised();
      return events;
    });
  }
  return {
    endpoints,
    worker,
    dispatcher,
    eventCounts: () => deps.triggerEvents.counts(),
    triggerEvents: deps.triggerEvents,
    register: (app) => registerFunctionRoutes(app, { projectId, endpoints, worker, verifyIdToken: deps.verifyIdToken }),
    summary: `${codeBase}: ${endpoints.map((endpoint) => endpoint.name).join(', ') || 'no functions'}`,
    async started(url) {
      hearthUrl = url;
      await storageBridge.prepare();
      await worker.start();
      dispatcher.start();
      storageBridge.start();
    },
    async close() {
      deps.documents.raiseTriggerEvents(undefined);
      if (deps.blocking?.current === blocking) deps.blocking.current = undefined;
      if (deps.credential) deps.credential.current = undefined;
      stopAccounts?.();
      await storageBridge.stop();
      await dispatcher.stop();
      await worker.close();
    },
  };
}
