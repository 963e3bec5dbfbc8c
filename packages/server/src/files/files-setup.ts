import type { FastifyInstance, FastifyRequest } from 'fastify';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { FilesStore } from '../storage/files-store.js';
import { registerV0Routes } from './api/v0-routes.js';
import type { ResolveCaller } from './api/files-caller.js';
import { UploadsPerAddress } from './api/files-plugin.js';
import type { ByteStore } from './bytes/byte-store.js';
import { DiskByteStore } from './bytes/disk-byte-store.js';
import { FileService, type FileLimits } from './file-service.js';
import { FileUploads } from './file-uploads.js';
import { RegimeGuard, type StorageGuard } from './security/storage-guard.js';

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
}

export interface FilesSetupDeps {
  store: FilesStore;
  resolveCaller: ResolveCaller;
  /** The origin clients reach Hearth at, when one is configured ('' otherwise: the request's own). */
  publicUrl(): string;
  logger: Logger;
  guard?: StorageGuard;
}

export interface FilesDomain {
  files: FileService;
  uploads: FileUploads;
  guard: StorageGuard;
  close(): Promise<void>;
}


/**
 * Cloud Storage for Firebase (issue 31): the byte store, the metadata in Hearth's store, the guard,
 * and the routes of the v0 API. One call from the composition root.
 */
export async function setUpFiles(app: FastifyInstance, options: FilesOptions, deps: FilesSetupDeps): Promise<FilesDomain> {
  const disk = new DiskByteStore(join(options.dataDir, 'files'));
  await disk.clearTemporary();
  const bytes: ByteStore = disk;
  const guard = deps.guard ?? new RegimeGuard({ dev: options.dev, logger: deps.logger });
  const files = new FileService({ store: deps.store, bytes, guard, defaultProjectId: options.defaultProjectId, limits: limitsOf(options), logger: deps.logger });
  const uploads = new FileUploads(files);
  const baseUrl = (request: FastifyRequest) => deps.publicUrl() || `${request.protocol}://${request.host}`;
  await registerV0Routes(app, { files, uploads, resolveCaller: deps.resolveCaller, uploadsPerAddress: new UploadsPerAddress(options.uploadsPerAddress), baseUrl, exposedHeaders });
  // Orphans of a crash (bytes renamed into place, metadata never committed) go in the background.
  const startedAt = Date.now();
  void bytes
    .sweep?.((key) => deps.store.hasBlob(key), startedAt)
    .then((removed) => removed && deps.logger.info({ removed }, 'removed stored bytes that no object pointed at'))
    .catch((err: unknown) => deps.logger.error({ err }, 'sweeping unreferenced bytes failed'));
  const sweep = setInterval(() => void uploads.sweep().catch((err: unknown) => deps.logger.error({ err }, 'sweeping expired uploads failed')), 3600_000);
  sweep.unref();
  return {
    files,
    uploads,
    guard,
    async close() {
      clearInterval(sweep);
      await bytes.close();
    },
  };
}

function limitsOf(options: FilesOptions): FileLimits {
  return { maxObjectBytes: options.maxObjectBytes, ...(options.projectQuotaBytes !== undefined ? { projectQuotaBytes: options.projectQuotaBytes } : {}) };
}
