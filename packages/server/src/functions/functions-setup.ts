/**
 * The functions domain's assembly (server.ts calls it): with `--functions DIR`, learns the code base's
 * functions from its manifest, starts its worker once Hearth listens (the worker's firebase-admin
 * is pointed at Hearth's address), and wires what each kind of function needs.
 */
import type { Logger } from 'pino';
import { resolve } from 'node:path';
import { defaultBucketsOf } from '../files/files-setup.js';
import { baseEnvironment, discoverFunctions } from './discovery.js';
import type { FunctionEndpoint } from './manifest.js';
import { WorkerProcess } from './worker-process.js';

export interface FunctionsOptions {
  /** `--functions DIR`: the folder of a Cloud Functions for Firebase code base (its package.json). */
  functionsDir?: string;
  defaultProjectId: string;
}

export interface FunctionsAssembly {
  /** The code base's functions, as its manifest declares them (empty without --functions). */
  endpoints: FunctionEndpoint[];
  /** The worker running the code base (undefined without --functions). */
  worker: WorkerProcess | undefined;
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

export async function setUpFunctions(options: FunctionsOptions, logger: Logger): Promise<FunctionsAssembly> {
  if (!options.functionsDir) {
    return { endpoints: [], worker: undefined, summary: 'none', async started() {}, async close() {} };
  }
  const codeBase = resolve(options.functionsDir);
  const projectId = options.defaultProjectId;
  let hearthUrl = '';
  const endpoints = await discoverFunctions(codeBase, { ...workerEnvironment(projectId, 'http://127.0.0.1:1') });
  const worker = new WorkerProcess(codeBase, () => workerEnvironment(projectId, hearthUrl), logger.child({ codeBase }));
  for (const endpoint of endpoints) {
    if (endpoint.kind.type === 'unsupported') logger.warn({ function: endpoint.name, reason: endpoint.kind.reason }, 'a function Hearth does not run');
  }
  return {
    endpoints,
    worker,
    summary: `${codeBase}: ${endpoints.map((endpoint) => endpoint.name).join(', ') || 'no functions'}`,
    async started(url) {
      hearthUrl = url;
      await worker.start();
    },
    async close() {
      await worker.close();
    },
  };
}
