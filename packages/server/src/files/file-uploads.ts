import { createHash, randomBytes, randomUUID, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ApiError } from '../http/api-error.js';
import type { StoredObject, UploadSession } from '../storage/files-store.js';
import { crc32cBase64, MeteredBytes, md5Base64, metered as meterBytes, ObjectTooLarge } from './core/checksums.js';
import { fileErrors, type StorageApi } from './core/file-errors.js';
import { applyMetadata, type IncomingMetadata } from './core/object-metadata.js';
import type { FileService } from './file-service.js';
import type { FilesCaller } from './security/storage-guard.js';

/** A new object's name, metadata and preconditions, whichever protocol carried it. */
export interface NewObject {
  bucket: string;
  name: string;
  metadata: IncomingMetadata;
  /** The media's own content type (multipart part, upload header) when the metadata names none. */
  mediaContentType?: string;
  /** '0': only if no object has the name. */
  ifGenerationMatch?: string;
  /** Hashes the client declared (metadata or X-Goog-Hash), checked against what arrived. */
  expectedMd5?: string;
  expectedCrc32c?: string;
  /** The v0 API gives new objects a download token (Firebase's download URLs). */
  withDownloadToken: boolean;
}

interface Blob {
  blobKey: string;
  size: number;
  md5Hash: string;
  crc32c: string;
}

/** Errors of the request's own stream: the client's doing, not the store's. */
const clientStreamErrors = new Set(['ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_DESTROYED']);

/** A resumable session lives a week, as Google's do. */
const uploadLifetimeMs = 7 * 24 * 3600_000;

/**
 * Uploads: one request (media or multipart), or resumable in chunks that may reach different
 * instances. Bytes stream through MeteredBytes (counted, capped, hashed) into the byte store and
 * become durable first; the rules are judged on the object as it arrived (size, hashes, content
 * type); only then is the metadata committed. Whatever fails on the way removes the bytes.
 */
export class FileUploads {
  /** MD5 state of resumable uploads whose chunks came to this process, by upload id (MD5 cannot be saved). */
  private readonly md5s = new Map<string, { hash: Hash; received: number }>();

  constructor(private readonly files: FileService) {}

  private get deps() {
    return this.files.deps;
  }

  async uploadOnce(api: StorageApi, caller: FilesCaller, request: NewObject, media: Readable, declaredSize?: number): Promise<StoredObject> {
    const { projectId } = this.files.locate(api, request.bucket, request.name);
    const max = this.deps.limits.maxObjectBytes;
    if (declaredSize !== undefined && declaredSize > max) throw fileErrors.tooLarge(api, max);
    const metered = new MeteredBytes(max);
    let blobKey: string;
    try {
      blobKey = await this.deps.bytes.write(meterBytes(media, metered));
    } catch (error) {
      throw this.streamError(api, error);
    }
    const blob = { blobKey, size: metered.bytes, md5Hash: md5Base64(metered.md5!.digest()), crc32c: crc32cBase64(metered.crc32c) };
    return this.commit(api, caller, request, projectId, blob);
  }

  /** Copies an object's bytes to a new name (read judged on the source, write on the destination). */
  async copy(api: StorageApi, caller: FilesCaller, source: { bucket: string; name: string }, target: NewObject): Promise<StoredObject> {
    const from = await this.files.readable(api, caller, source.bucket, source.name);
    const { mediaContentType: _none, ...rest } = target;
    const metadata: IncomingMetadata = {
      contentType: from.contentType ?? null,
      contentEncoding: from.contentEncoding ?? null,
      contentDisposition: from.contentDisposition ?? null,
      contentLanguage: from.contentLanguage ?? null,
      cacheControl: from.cacheControl ?? null,
      ...(from.customMetadata ? { metadata: { ...from.customMetadata } } : {}),
      ...Object.fromEntries(Object.entries(target.metadata).filter(([, value]) => value !== undefined)),
    };
    return this.uploadOnce(api, caller, { ...rest, metadata }, await this.files.openBytes(from), from.size);
  }

  async start(api: StorageApi, caller: FilesCaller, request: NewObject, declaredSize?: number): Promise<UploadSession> {
    const { projectId } = this.files.locate(api, request.bucket, request.name);
    const max = this.deps.limits.maxObjectBytes;
    if (declaredSize !== undefined && declaredSize > max) throw fileErrors.tooLarge(api, max);
    // Judged at the start on what the client declares, so a refused upload sends no bytes; judged
    // again at the end on what arrived.
    const existing = await this.deps.store.getObject(request.bucket, request.name);
    const proposed = this.proposed(request, projectId, { blobKey: '', size: declaredSize ?? 0, md5Hash: '', crc32c: '' });
    await this.files.require(api, caller, { projectId, bucket: request.bucket, method: existing ? 'update' : 'create', path: request.name, requestResource: proposed, ...(existing ? { resource: existing } : {}) });
    const now = Date.now();
    const session: UploadSession = {
      uploadId: randomBytes(24).toString('base64url'),
      projectId,
      bucket: request.bucket,
      name: request.name,
      metadata: JSON.stringify(request),
      caller: JSON.stringify(caller),
      ...(declaredSize !== undefined ? { declaredSize } : {}),
      received: 0,
      staging: await this.deps.bytes.stageBegin(),
      crc32c: 0,
      state: 'active',
      createdAt: now,
      expiresAt: now + uploadLifetimeMs,
    };
    await this.deps.store.createUpload(session);
    this.md5s.set(session.uploadId, { hash: createHash('md5'), received: 0 });
    return session;
  }

  async session(api: StorageApi, uploadId: string): Promise<UploadSession> {
    const session = await this.deps.store.getUpload(uploadId);
    if (!session || session.expiresAt < Date.now()) throw fileErrors.uploadNotFound(api);
    return session;
  }

  /**
   * A chunk at `offset` (the bytes acknowledged so far), and or the end. A repeated finalize of a
   * finished upload answers the object again; a chunk at any other offset is refused (the client
   * asks where to resume with `query`).
   */
  async chunk(api: StorageApi, uploadId: string, offset: number | undefined, body: Readable | undefined, finalize: boolean, total?: number): Promise<{ session: UploadSession; object?: StoredObject }> {
    let session = await this.session(api, uploadId);
    if (session.state === 'final' && finalize && session.finalGeneration) return { session, object: await this.finalObject(api, session) };
    if (session.state !== 'active') throw fileErrors.uploadNotActive(api);
    if (body) {
      if (offset !== undefined && offset !== session.received) throw fileErrors.offsetMismatch(api, session.received);
      session = await this.append(api, session, body);
    }
    if (!finalize) return { session };
    if (total !== undefined && total !== session.received) throw fileErrors.invalid(api, `The upload ended after ${session.received} bytes; ${total} were declared.`);
    return this.finalize(api, session);
  }

  async cancel(api: StorageApi, uploadId: string): Promise<void> {
    const session = await this.session(api, uploadId);
    if (session.state !== 'active' || !(await this.deps.store.advanceUpload(uploadId, session, { state: 'cancelled' }))) throw fileErrors.uploadNotActive(api);
    this.md5s.delete(uploadId);
    await this.deps.bytes.stageDiscard(session.staging);
  }

  /** Expired sessions: their staged bytes and rows go. */
  async sweep(now = Date.now()): Promise<number> {
    const expired = await this.deps.store.expiredUploads(now, 100);
    for (const session of expired) {
      if (session.state !== 'final') await this.deps.bytes.stageDiscard(session.staging).catch(() => undefined);
      await this.deps.store.deleteUpload(session.uploadId);
      this.md5s.delete(session.uploadId);
    }
    return expired.length;
  }

  private async append(api: StorageApi, session: UploadSession, body: Readable): Promise<UploadSession> {
    const max = Math.min(this.deps.limits.maxObjectBytes, session.declaredSize ?? Number.MAX_SAFE_INTEGER) - session.received;
    const local = this.md5s.get(session.uploadId);
    const md5 = local && local.received === session.received ? local.hash.copy() : undefined;
    const metered = new MeteredBytes(max, md5, session.crc32c);
    let staging: string;
    try {
      staging = await this.deps.bytes.stageAppend(session.staging, session.received, meterBytes(body, metered));
    } catch (error) {
      throw this.streamError(api, error, session.declaredSize !== undefined && session.declaredSize < this.deps.limits.maxObjectBytes);
    }
    const received = session.received + metered.bytes;
    const next = { received, staging, crc32c: metered.crc32c };
    if (!(await this.deps.store.advanceUpload(session.uploadId, session, next))) throw fileErrors.offsetMismatch(api, session.received);
    if (md5) this.md5s.set(session.uploadId, { hash: md5, received });
    else this.md5s.delete(session.uploadId);
    return { ...session, ...next };
  }

  private async finalize(api: StorageApi, session: UploadSession): Promise<{ session: UploadSession; object: StoredObject }> {
    if (session.declaredSize !== undefined && session.received !== session.declaredSize) {
      throw fileErrors.invalid(api, `The upload ended after ${session.received} bytes; ${session.declaredSize} were declared.`);
    }
    // One request finalizes: the claim is the session's state, so a concurrent finalize (here or on
    // another instance) loses it and answers from the finished session instead.
    if (!(await this.deps.store.advanceUpload(session.uploadId, session, { state: 'finalizing' }))) {
      const now = await this.session(api, session.uploadId);
      if (now.state === 'final' && now.finalGeneration) return { session: now, object: await this.finalObject(api, now) };
      throw fileErrors.uploadNotActive(api);
    }
    const claimed: UploadSession = { ...session, state: 'finalizing' };
    const request = JSON.parse(session.metadata) as NewObject;
    const caller = JSON.parse(session.caller) as FilesCaller;
    try {
      const blobKey = await this.deps.bytes.stageFinish(session.staging, session.received);
      const md5Hash = md5Base64(await this.md5Of(session, blobKey).catch(async (error: unknown) => {
        this.files.discardBlob(blobKey);
        throw error;
      }));
      const object = await this.commit(api, caller, request, session.projectId, { blobKey, size: session.received, md5Hash, crc32c: crc32cBase64(session.crc32c) });
      await this.deps.store.advanceUpload(session.uploadId, claimed, { state: 'final', finalGeneration: object.generation });
      return { session: { ...claimed, state: 'final', finalGeneration: object.generation }, object };
    } catch (error) {
      // Refused (rules, quota, hashes) or failed: the upload is over and its bytes are gone.
      await this.deps.store.advanceUpload(session.uploadId, claimed, { state: 'cancelled' }).catch(() => undefined);
      await this.deps.bytes.stageDiscard(session.staging).catch(() => undefined);
      throw error;
    } finally {
      this.md5s.delete(session.uploadId);
    }
  }

  /** The MD5 of the upload: kept while its chunks came to this process, else read back once from the finished blob. */
  private async md5Of(session: UploadSession, blobKey: string): Promise<Buffer> {
    const local = this.md5s.get(session.uploadId);
    if (local && local.received === session.received) return local.hash.digest();
    const hash = createHash('md5');
    for await (const chunk of await this.deps.bytes.read(blobKey)) hash.update(chunk as Buffer);
    return hash.digest();
  }

  private async finalObject(api: StorageApi, session: UploadSession): Promise<StoredObject> {
    const object = await this.deps.store.getObject(session.bucket, session.name);
    if (!object || object.generation !== session.finalGeneration) throw fileErrors.objectNotFound(api, session.bucket, session.name);
    return object;
  }

  /** Judges the finished object and commits its metadata; the bytes go if anything refuses it. */
  private async commit(api: StorageApi, caller: FilesCaller, request: NewObject, projectId: string, blob: Blob): Promise<StoredObject> {
    const { store, limits } = this.deps;
    try {
      if (request.expectedMd5 !== undefined && request.expectedMd5 !== blob.md5Hash) throw fileErrors.checksumMismatch(api, 'MD5');
      if (request.expectedCrc32c !== undefined && request.expectedCrc32c !== blob.crc32c) throw fileErrors.checksumMismatch(api, 'CRC32C');
      const existing = await store.getObject(request.bucket, request.name);
      const object = this.proposed(request, projectId, blob);
      await this.files.require(api, caller, { projectId, bucket: request.bucket, method: existing ? 'update' : 'create', path: request.name, requestResource: object, ...(existing ? { resource: existing } : {}) });
      const result = await store.putObject(object, {
        ...(request.ifGenerationMatch !== undefined ? { ifGenerationMatch: request.ifGenerationMatch } : {}),
        ...(limits.projectQuotaBytes !== undefined ? { quotaBytes: limits.projectQuotaBytes } : {}),
      });
      if (result.kind === 'precondition-failed') throw fileErrors.preconditionFailed(api);
      if (result.kind === 'over-quota') throw fileErrors.overQuota(api);
      if (result.replaced) this.files.discardBlob(result.replaced.blobKey);
      return object;
    } catch (error) {
      this.files.discardBlob(blob.blobKey);
      throw error;
    }
  }

  /** A new generation: the request's metadata alone (nothing of a replaced object stays). */
  private proposed(request: NewObject, projectId: string, blob: Blob): StoredObject {
    const now = Date.now();
    const base: StoredObject = {
      bucket: request.bucket,
      name: request.name,
      projectId,
      generation: this.files.nextGeneration(),
      metageneration: 1,
      ...blob,
      contentType: request.mediaContentType ?? 'application/octet-stream',
      downloadTokens: request.withDownloadToken ? [randomUUID()] : [],
      timeCreated: now,
      updated: now,
    };
    return applyMetadata(base, request.metadata);
  }

  private streamError(api: StorageApi, error: unknown, declaredSmaller = false): Error {
    if (error instanceof ObjectTooLarge) {
      return declaredSmaller ? fileErrors.invalid(api, 'The upload is larger than its declared size.') : fileErrors.tooLarge(api, this.deps.limits.maxObjectBytes);
    }
    if (error instanceof ApiError) return error;
    // The client went away or sent a malformed body: nothing was kept.
    const code = (error as { code?: string }).code;
    if (code === undefined || clientStreamErrors.has(code)) return fileErrors.invalid(api, 'The upload was interrupted before all its bytes arrived.');
    // The disk or the S3 service failed: nothing was kept either, and the client may retry.
    this.deps.logger.error({ err: error }, 'storing uploaded bytes failed');
    return fileErrors.unavailable(api);
  }
}
