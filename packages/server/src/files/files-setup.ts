import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { FilesStore } from '../storage/files-store.js';
import { registerV0Routes } from './api/v0-routes.js';
import { registerJsonRoutes } from './api/json-routes.js';
import { registerSignedUrls } from './api/signed-urls.js';
import type { ResolveCaller } from './api/files-caller.js';
import { UploadsPerAddress } from './api/files-plugin.js';
import { DownloadsPerAddress } from './api/download-slots.js';
import type { ByteStore } from './bytes/byte-store.js';
import { DiskByteStore } from './bytes/disk-byte-store.js';
import { FileService, type FileLimits } from './file-service.js';
import { FileUploads } from './file-uploads.js';
import { RegimeGuard, type StorageGuard } from './security/storage-guard.js';
import { storageRulesJudge } from './security/rules-guard.js';
import { registerStorageRulesRoutes } from './api/storage-rules-routes.js';
import type { Doc } from '../firestore/core/documents.js';
import { followRulesFile, releaseRulesFile } from '../firestore/security/rules-file.js';
import { storageRelease, type RulesRegistry } from '../firestore/security/rules-registry.js';

/** Where a user's files are kept under the web app's storage rules (packages/web/storage.rules). */
export const userFilePrefixes: readonly string[] = ['users/{uid}/'];

/** The buckets Firebase names for a project (a config's storageBucket is one of them). */
export function defaultBucketsOf(projectId: string): string[] {
  return [`${projectId}.appspot.com`, `${projectId}.firebasestorage.app`];
}

/** Headers the browser SDK must read from answers on another origin (the resumable protocol's). */
const exposedHeaders = [
  'X-Goog-Upload-URL',
  'X-Goog-Upload-Status',
  'X-Goog-Upload-Size-Received',
  'X-Goog-Upload-Chunk-Granularity',
  'X-Goog-Upload-Control-URL',
  'X-GUploader-UploadID',
  'X-Goog-Generation',
  'X-Goog-Metageneration',
  'X-Goog-Hash',
  'Content-Range',
  'Content-Disposition',
  'ETag',
].join(', ');

export interface FilesOptions {
  dataDir: string;
  dev: boolean;
  defaultProjectId: string;
  maxObjectBytes: number;
  projectQuotaBytes?: number;
  /** Uploads one client address may have in flight at once. */
  uploadsPerAddress: number;
  /** Downloads one client address may have in flight at once (as many again, four times over, wait their turn). */
  downloadsPerAddress: number;
  /** `--storage-url s3://bucket?endpoint=...`: bytes in an S3 service instead of the data folder. */
  storageUrl?: string;
  /** `--storage-rules FILE`: released to the default project as `firebase.storage`, reloaded on change. */
  storageRulesFile?: string;
  /**
   * Released to the default project outside --dev when it has no storage rules yet and no
   * --storage-rules is given: the web app's own (packages/web/storage.rules: users/{uid}/... for their owner).
   */
  shippedStorageRulesFile?: string;
  /**
   * Other processes write the same bytes (the workers of --workers, instances sharing a bucket):
   * one of them may have put a blob in place and be about to commit its metadata, so unreferenced
   * bytes are swept only once they are older than orphanGraceMs, at start and every hour after.
   */
  sharedBytes?: boolean;
}

/** Longer than any upload takes from its blob's rename to its metadata's commit (a write waits at most 5 s for the file). */
const orphanGraceMs = 10 * 60_000;

export interface FilesSetupDeps {
  store: FilesStore;
  /** Where storage rules are released (the same rulesets and releases as Firestore's). */
  rules: RulesRegistry;
  /** A Firestore document for storage rules' firestore.get()/exists(). */
  readDocument(projectId: string, databaseId: string, path: string): Promise<Doc | undefined>;
  /** A service account's public keys and project (v4 signed URLs are signed with them). */
  serviceAccountKeysOf(clientEmail: string): Promise<{ projectId: string; keys: KeyObject[] } | undefined>;
  /** The administrator, not from a page on another origin (the rules endpoint outside --dev). */
  isOwner(request: FastifyRequest): boolean;
  resolveCaller: ResolveCaller;
  /** The origin clients reach Hearth at, when one is configured ('' otherwise: the request's own). */
  publicUrl(): string;
  logger: Logger;
}

export interface FilesDomain {
  files: FileService;
  uploads: FileUploads;
  guard: StorageGuard;
  /** One line for the start banner: which storage rules guard the default project. */
  rulesSummary: string;
  /**
   * Deletes a deleted account's files where the web app keeps them (`users/{uid}/` in the project's
   * default buckets); the account-data erasure calls it. How many objects went.
   */
  eraseUserFiles(projectId: string, uid: string): Promise<number>;
  close(): Promise<void>;
}


/**
 * Cloud Storage for Firebase (issue 31): the byte store, the metadata in Hearth's store, the guard,
 * and the routes of the v0 API. One call from the composition root.
 */
export async function setUpFiles(app: FastifyInstance, options: FilesOptions, deps: FilesSetupDeps): Promise<FilesDomain> {
  let bytes: ByteStore;
  if (options.storageUrl) {
    // The S3 client is a large import, loaded only by servers that keep their files in S3.
    const { parseS3Url, S3ByteStore } = await import('./bytes/s3-byte-store.js');
    bytes = new S3ByteStore(parseS3Url(options.storageUrl));
  } else {
    const disk = new DiskByteStore(join(options.dataDir, 'files'));
    // Beside other processes, a temporary file written lately may be one of their uploads.
    await disk.clearTemporary(options.sharedBytes ? Date.now() - orphanGraceMs : undefined);
    bytes = disk;
  }
  const guard = new RegimeGuard({ dev: options.dev, logger: deps.logger }, storageRulesJudge({ registry: deps.rules, readDocument: deps.readDocument, logger: deps.logger }));
  const stopFollowingRules = options.storageRulesFile
    ? await followRulesFile(deps.rules, options.defaultProjectId, options.storageRulesFile, deps.logger, storageRelease)
    : () => undefined;
  const rulesSummary = await prepareShippedRules(deps.rules, options, deps.logger);
  await registerStorageRulesRoutes(app, { registry: deps.rules, defaultProjectId: options.defaultProjectId, dev: options.dev, isOwner: deps.isOwner });
  const files = new FileService({ store: deps.store, bytes, guard, defaultProjectId: options.defaultProjectId, limits: limitsOf(options), logger: deps.logger });
  const uploads = new FileUploads(files);
  const baseUrl = (request: FastifyRequest) => deps.publicUrl() || `${request.protocol}://${request.host}`;
  const uploadsPerAddress = new UploadsPerAddress(options.uploadsPerAddress);
  const downloadsPerAddress = new DownloadsPerAddress(options.downloadsPerAddress);
  await registerV0Routes(app, { files, uploads, resolveCaller: deps.resolveCaller, uploadsPerAddress, downloadsPerAddress, baseUrl, exposedHeaders });
  registerSignedUrls(app, { files, uploads, downloadsPerAddress, keysOf: deps.serviceAccountKeysOf });
  await registerJsonRoutes(app, { files, uploads, resolveCaller: deps.resolveCaller, uploadsPerAddress, downloadsPerAddress, baseUrl, dev: options.dev });
  // Orphans of a crash (bytes renamed into place, metadata never committed) go in the background:
  // alone, every blob from before the start is done with; beside other processes, only old ones are.
  const sweepBytes = (olderThan: number) =>
    void bytes
      .sweep?.((key) => deps.store.hasBlob(key), olderThan)
      .then((removed) => removed && deps.logger.info({ removed }, 'removed stored bytes that no object pointed at'))
      .catch((err: unknown) => deps.logger.error({ err }, 'sweeping unreferenced bytes failed'));
  sweepBytes(options.sharedBytes ? Date.now() - orphanGraceMs : Date.now());
  const sweep = setInterval(() => {
    uploads.sweep().catch((err: unknown) => deps.logger.error({ err }, 'sweeping expired uploads failed'));
    if (options.sharedBytes) sweepBytes(Date.now() - orphanGraceMs);
  }, 3600_000);
  sweep.unref();
  return {
    files,
    uploads,
    guard,
    rulesSummary,
    async eraseUserFiles(projectId, uid) {
      let erased = 0;
      for (const bucket of defaultBucketsOf(projectId)) {
        for (const template of userFilePrefixes) erased += await files.deleteUnder(bucket, template.replace('{uid}', uid));
      }
      return erased;
    },
    async close() {
      clearInterval(sweep);
      stopFollowingRules();
      await bytes.close();
    },
  };
}

/**
 * The web app's storage rules go to the default project outside --dev until it has storage rules of
 * its own (as Firestore's shipped rules do); says, for the start banner, what guards its files.
 */
async function prepareShippedRules(registry: RulesRegistry, options: FilesOptions, logger: Logger): Promise<string> {
  const project = options.defaultProjectId;
  if (options.storageRulesFile) return `${options.storageRulesFile} (project ${project}, reloaded on change)`;
  const released = await registry.store.getRelease(project, storageRelease);
  if (!released && !options.dev && options.shippedStorageRulesFile && existsSync(options.shippedStorageRulesFile)) {
    await releaseRulesFile(registry, project, options.shippedStorageRulesFile, storageRelease);
    logger.info({ project }, "the web app's storage rules were released to the default project");
    return `the web app's rules (users/{uid}/... for their owner) for project ${project}`;
  }
  if (released) return `released rules for project ${project}`;
  return options.dev ? 'none: storage is open to every caller (dev mode)' : 'none: storage is closed to all but the admin until storage rules are released (--storage-rules FILE)';
}

function limitsOf(options: FilesOptions): FileLimits {
  return { maxObjectBytes: options.maxObjectBytes, ...(options.projectQuotaBytes !== undefined ? { projectQuotaBytes: options.projectQuotaBytes } : {}) };
}
