import { resolve } from 'node:path';
import type { DispatcherOptions } from './functions/event-dispatcher.js';
import { defaultAuthOptions, type AuthOptions } from './auth/auth-options.js';
import { defaultFirestoreOptions, type FirestoreOptions } from './firestore/firestore-options.js';

/** Everything `hearth start` takes: each domain's settings, and the server's own. */
export interface HearthOptions extends AuthOptions, FirestoreOptions {
  port: number;
  /**
   * `postgres://…` (`--database-url` or HEARTH_DATABASE_URL): keep everything in PostgreSQL instead of
   * the SQLite file, so that several Hearth processes can serve one project (storage/postgres/).
   */
  databaseUrl?: string;
  /** Built web app to serve at `/`; undefined serves none. */
  webRoot?: string;
  logLevel: string;
  /** The origin action links point at; defaults to the address Hearth listens on. */
  publicUrl?: string;
  /** Tests only: holds the SQLite document writer thread before COMMIT (holdForTest in sqlite-writer-thread.ts). */
  sqliteWriterLatch?: Int32Array;
  /**
   * `--trust-proxy` (HEARTH_TRUST_PROXY): reverse proxies (addresses, CIDR ranges, `loopback`...)
   * whose X-Forwarded-For names the client; unset, the connection's address is the client's.
   */
  trustProxy?: string[];
  /** Set in a worker of `--workers`: its index and the primary's folder of the workers' relay sockets (http/worker-relay.ts). */
  worker?: {
    index: number;
    /** How many workers serve (--workers). */
    count: number;
    relayDir: string;
    /** On SQLite: tells the other workers how far a database's change log reaches after a commit here. */
    announce: (db: string, seq: number) => void;
  };
  /** How often the console's metrics series is sampled (5000 ms; tests shorten it). */
  metricsIntervalMs?: number;
  /** `--storage-url s3://bucket?endpoint=...` (or HEARTH_STORAGE_URL): Cloud Storage bytes in an S3 service, credentials from AWS_* variables. */
  storageUrl?: string;
  /** `--storage-rules FILE`: the default project's storage security rules (`firebase.storage`), reloaded on change. */
  storageRulesFile?: string;
  /** Released to the default project outside --dev when it has no storage rules and no --storage-rules is given (the web app's). */
  shippedStorageRulesFile?: string;
  /** `--functions DIR`: a Cloud Functions for Firebase code base run beside Hearth (functions/). */
  functionsDir?: string;
  /** Tests: the trigger dispatcher's backoff, tries and poll (functions/event-dispatcher.ts). */
  functionsDispatcher?: Partial<DispatcherOptions>;
  /** Cloud Storage (files/): the largest object, a quota per project, uploads and downloads in flight per client address. */
  files: FilesConfig;
}

export interface FilesConfig {
  maxObjectBytes: number;
  /** Undefined: no quota. */
  projectQuotaBytes?: number;
  uploadsPerAddress: number;
  downloadsPerAddress: number;
}

export const defaultWebRoot = resolve(import.meta.dirname, '../../web/dist');
export const defaultShippedRulesFile = resolve(import.meta.dirname, '../../web/firestore.rules');
export const defaultShippedStorageRulesFile = resolve(import.meta.dirname, '../../web/storage.rules');

export function defaultOptions(overrides: Partial<HearthOptions> = {}): HearthOptions {
  return {
    port: 9000,
    host: '127.0.0.1',
    dataDir: resolve('.hearth'),
    dev: false,
    defaultProjectId: 'demo-hearth',
    webRoot: defaultWebRoot,
    logLevel: 'info',
    ...defaultAuthOptions,
    ...defaultFirestoreOptions,
    files: { maxObjectBytes: 5 * 1024 ** 3, uploadsPerAddress: 32, downloadsPerAddress: 16 },
    ...overrides,
  };
}
