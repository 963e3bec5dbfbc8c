import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { FilesStore, StoredObject } from '../storage/files-store.js';
import type { ByteStore } from './bytes/byte-store.js';
import { fileErrors, type DeniedMethod, type StorageApi } from './core/file-errors.js';
import { applyMetadata, type IncomingMetadata } from './core/object-metadata.js';
import { afterPrefix, hasControlCharacter, isBucketName, isWellFormed, justAfter, objectNameProblem, projectOfBucket } from './core/object-names.js';
import type { FilesCaller, StorageAccess, StorageGuard, StorageMethod } from './security/storage-guard.js';

export interface FileLimits {
  /** The largest object, in bytes. */
  maxObjectBytes: number;
  /** The most bytes one project's objects may take; undefined: no quota. */
  projectQuotaBytes?: number;
}

export interface FileServiceDeps {
  store: FilesStore;
  bytes: ByteStore;
  guard: StorageGuard;
  defaultProjectId: string;
  limits: FileLimits;
  logger: Logger;
}

export interface ListRequest {
  bucket: string;
  prefix: string;
  delimiter: string;
  pageToken?: string;
  maxResults?: number;
}

export interface ListPage {
  items: StoredObject[];
  prefixes: string[];
  nextPageToken?: string;
}

/** Google's most (and default) items per list page. */
const maxListResults = 1000;
/** Rows read per step while grouping names under a delimiter. */
const listBatch = 256;

/**
 * Cloud Storage's operations over the metadata store and the byte store, judged by the storage
 * guard (the administrator, the rules in force, or the regime without rules), independent of the
 * API that carried them (v0 for firebase/storage, the JSON API for @google-cloud/storage).
 */
export class FileService {
  private lastGeneration = 0n;

  constructor(readonly deps: FileServiceDeps) {}

  /** Checks the names and says whose project the bucket is. */
  locate(api: StorageApi, bucket: string, name?: string): { projectId: string } {
    if (!isBucketName(bucket)) throw fileErrors.invalid(api, `Invalid bucket name: '${bucket}'.`);
    if (name !== undefined) {
      const problem = objectNameProblem(name);
      if (problem) throw fileErrors.invalid(api, problem);
    }
    return { projectId: projectOfBucket(bucket, this.deps.defaultProjectId) };
  }

  async require(api: StorageApi, caller: FilesCaller, access: StorageAccess): Promise<void> {
    if (!(await this.deps.guard.allows(caller, access))) throw fileErrors.denied(api, deniedName(access.method));
  }

  /**
   * An object a caller may read: with a download token of this object the rules are not asked (as
   * Google's download URLs work for whoever holds one); otherwise `get` must be allowed. A denial
   * comes before "not found", so a caller without read access learns nothing about what exists.
   */
  async readable(api: StorageApi, caller: FilesCaller, bucket: string, name: string, downloadToken?: string): Promise<StoredObject> {
    const { projectId } = this.locate(api, bucket, name);
    const object = await this.deps.store.getObject(bucket, name);
    const tokenHolder = downloadToken !== undefined && downloadToken !== '' && object?.downloadTokens.includes(downloadToken) === true;
    if (!tokenHolder) await this.require(api, caller, { projectId, bucket, method: 'get', path: name, ...(object ? { resource: object } : {}) });
    if (!object) throw fileErrors.objectNotFound(api, bucket, name);
    return object;
  }

  /** The v0 API gives every object a download token when its metadata is first read without one. */
  async withDownloadToken(object: StoredObject): Promise<StoredObject> {
    if (object.downloadTokens.length) return object;
    const next = { ...object, downloadTokens: [randomUUID()], metageneration: object.metageneration + 1, updated: Date.now() };
    return (await this.deps.store.updateObject(next, object.metageneration)) ? next : object;
  }

  async openBytes(object: StoredObject, range?: { start: number; end: number }): Promise<Readable> {
    return this.deps.bytes.read(object.blobKey, range);
  }

  async list(api: StorageApi, caller: FilesCaller, request: ListRequest): Promise<ListPage> {
    const { projectId } = this.locate(api, request.bucket);
    const maxResults = request.maxResults ?? maxListResults;
    if (!Number.isSafeInteger(maxResults) || maxResults < 1) throw fileErrors.invalid(api, 'maxResults must be a positive integer.');
    const limit = Math.min(maxResults, maxListResults);
    // No object name holds a control character, so neither does a prefix or a page token worth asking
    // for (and PostgreSQL's text cannot hold a NUL at all).
    if (!isWellFormed(request.prefix) || hasControlCharacter(request.prefix)) throw fileErrors.invalid(api, 'The prefix is not a valid object name prefix.');
    await this.require(api, caller, { projectId, bucket: request.bucket, method: 'list', path: request.prefix.replace(/\/+$/, '') });
    let cursor = request.prefix;
    if (request.pageToken !== undefined && request.pageToken !== '') {
      const decoded = Buffer.from(request.pageToken, 'base64url').toString('utf8');
      if (!decoded.startsWith(request.prefix) || !isWellFormed(decoded) || hasControlCharacter(decoded)) throw fileErrors.invalid(api, 'Invalid page token.');
      cursor = decoded;
    }
    const items: StoredObject[] = [];
    const prefixes: string[] = [];
    for (;;) {
      const rows = await this.deps.store.listObjects({ bucket: request.bucket, prefix: request.prefix, startAt: cursor, limit: listBatch });
      let skipTo: string | undefined;
      for (const row of rows) {
        if (items.length + prefixes.length >= limit) return { items, prefixes, nextPageToken: Buffer.from(row.name).toString('base64url') };
        const cut = request.delimiter ? row.name.indexOf(request.delimiter, request.prefix.length) : -1;
        if (cut < 0) {
          items.push(row);
          continue;
        }
        // Every name under this group is one prefix: jump past all of them.
        prefixes.push(row.name.slice(0, cut + request.delimiter.length));
        skipTo = afterPrefix(prefixes[prefixes.length - 1]!);
        break;
      }
      if (skipTo !== undefined) {
        cursor = skipTo;
        continue;
      }
      if (rows.length < listBatch) return { items, prefixes };
      cursor = justAfter(rows[rows.length - 1]!.name);
    }
  }

  async updateMetadata(api: StorageApi, caller: FilesCaller, bucket: string, name: string, incoming: IncomingMetadata, ifMetagenerationMatch?: number): Promise<StoredObject> {
    const { projectId } = this.locate(api, bucket, name);
    for (let attempt = 0; attempt < 5; attempt++) {
      const object = await this.deps.store.getObject(bucket, name);
      const next = object ? { ...applyMetadata(object, incoming), metageneration: object.metageneration + 1, updated: Date.now() } : undefined;
      await this.require(api, caller, { projectId, bucket, method: 'update', path: name, ...(object ? { resource: object } : {}), ...(next ? { requestResource: next } : {}) });
      if (!object || !next) throw fileErrors.objectNotFound(api, bucket, name);
      if (ifMetagenerationMatch !== undefined && object.metageneration !== ifMetagenerationMatch) throw fileErrors.preconditionFailed(api);
      if (await this.deps.store.updateObject(next, object.metageneration)) return next;
      // Changed meanwhile (another request, another instance): judge and apply again on what is there now.
    }
    throw fileErrors.unavailable(api);
  }

  async delete(api: StorageApi, caller: FilesCaller, bucket: string, name: string, ifGenerationMatch?: string): Promise<void> {
    const { projectId } = this.locate(api, bucket, name);
    const object = await this.deps.store.getObject(bucket, name);
    await this.require(api, caller, { projectId, bucket, method: 'delete', path: name, ...(object ? { resource: object } : {}) });
    if (!object) throw fileErrors.objectNotFound(api, bucket, name);
    if (ifGenerationMatch !== undefined && ifGenerationMatch !== object.generation) throw fileErrors.preconditionFailed(api);
    const deleted = await this.deps.store.deleteObject(bucket, name, object.generation);
    if (!deleted) throw fileErrors.preconditionFailed(api);
    this.discardBlob(deleted.blobKey);
  }

  /**
   * Deletes every object of a bucket whose name starts with `prefix`, as the administrator (a deleted
   * account's files): each deletion recorded as an event, its bytes freed, the project's bytes in use
   * lowered. Safe to run twice or on several instances at once. How many objects went.
   */
  async deleteUnder(bucket: string, prefix: string): Promise<number> {
    let count = 0;
    let startAt = prefix;
    for (;;) {
      const batch = await this.deps.store.listObjects({ bucket, prefix, startAt, limit: listBatch });
      for (const object of batch) {
        const deleted = await this.deps.store.deleteObject(bucket, object.name, object.generation);
        if (deleted) {
          this.discardBlob(deleted.blobKey);
          count++;
        }
      }
      if (batch.length < listBatch) return count;
      // On after the last name seen: an object replaced meanwhile (its generation changed) is left as the newer write.
      startAt = justAfter(batch.at(-1)!.name);
    }
  }

  /** Token management is the administrator's (the console's "create new access token" / revoke). */
  async changeDownloadTokens(api: StorageApi, caller: FilesCaller, bucket: string, name: string, change: { create: true } | { revoke: string }): Promise<StoredObject> {
    this.locate(api, bucket, name);
    if (caller.kind !== 'admin') throw fileErrors.adminOnly(api);
    for (let attempt = 0; attempt < 5; attempt++) {
      const object = await this.deps.store.getObject(bucket, name);
      if (!object) throw fileErrors.objectNotFound(api, bucket, name);
      let tokens = 'create' in change ? [...object.downloadTokens, randomUUID()] : object.downloadTokens.filter((token) => token !== change.revoke);
      // An object always keeps one token, as Google's service does: revoking the last one makes a new one.
      if (tokens.length === 0) tokens = [randomUUID()];
      const next = { ...object, downloadTokens: tokens, metageneration: object.metageneration + 1, updated: Date.now() };
      if (await this.deps.store.updateObject(next, object.metageneration)) return next;
    }
    throw fileErrors.unavailable(api);
  }

  /** A generation number: microseconds, growing within this process. */
  nextGeneration(): string {
    let generation = BigInt(Date.now()) * 1000n;
    if (generation <= this.lastGeneration) generation = this.lastGeneration + 1n;
    this.lastGeneration = generation;
    return generation.toString();
  }

  /** Bytes no metadata points at any more; a failure leaves an orphan for the sweep, never a dangling row. */
  discardBlob(blobKey: string): void {
    this.deps.bytes.delete(blobKey).catch((err: unknown) => this.deps.logger.warn({ err }, 'could not remove the bytes of a replaced or deleted object'));
  }
}

export function deniedName(method: StorageMethod): DeniedMethod {
  if (method === 'get') return 'READ';
  if (method === 'list') return 'LIST';
  return 'WRITE';
}
