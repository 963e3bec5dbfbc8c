/**
 * Where Cloud Storage objects' metadata lives (files/): one row per live object, with the key of
 * its bytes in the byte store, the project's bytes in use (for the quota), and the resumable
 * upload sessions, so that any instance on the same database can continue one. The bytes
 * themselves are never here (files/bytes/). Times are milliseconds since the epoch.
 */

export interface StoredObject {
  bucket: string;
  /** The object's full name (`users/u1/photo.png`), 1 to 1024 bytes of UTF-8. */
  name: string;
  /** The project the bucket belongs to: quotas and rules are the project's. */
  projectId: string;
  /** Decimal microseconds, unique per object name and growing: a new upload is a new generation. */
  generation: string;
  /** Grows with every metadata change of the same generation. */
  metageneration: number;
  /** Where the bytes are, in the byte store. */
  blobKey: string;
  size: number;
  /** Base64 of the MD5 digest, as Google writes it. */
  md5Hash: string;
  /** Base64 of the big-endian CRC32C, as Google writes it. */
  crc32c: string;
  contentType?: string;
  contentEncoding?: string;
  contentDisposition?: string;
  contentLanguage?: string;
  cacheControl?: string;
  /** The developer's key-value metadata (`customMetadata` in the SDK). */
  customMetadata?: Record<string, string>;
  /** Tokens that let anyone holding one download the object (Firebase's download URLs). */
  downloadTokens: string[];
  timeCreated: number;
  updated: number;
}

/** A resumable upload in flight: started, chunks acknowledged up to `received`, then finalized once. */
export interface UploadSession {
  uploadId: string;
  projectId: string;
  bucket: string;
  name: string;
  /** The metadata the start request carried (what the object will have), as JSON text. */
  metadata: string;
  /** Who started it (the verified caller as JSON: rules are judged again on the caller at finalize). */
  caller: string;
  /** Declared total size (X-Goog-Upload-Header-Content-Length), if the client sent one. */
  declaredSize?: number;
  received: number;
  /** The byte store's staging state (JSON), continued by whichever instance gets the next chunk. */
  staging: string;
  /** The CRC32C of the bytes received so far (unsigned), carried across chunks and instances. */
  crc32c: number;
  /** `finalizing`: one request claimed the end and is storing the object (a crash leaves it to expire). */
  state: 'active' | 'finalizing' | 'final' | 'cancelled';
  /** Once final: the generation it made (a repeated finalize answers the same object). */
  finalGeneration?: string;
  createdAt: number;
  expiresAt: number;
}

export interface PutObjectOptions {
  /** Refuse unless the stored generation is this one ('0': unless there is none), as ifGenerationMatch. */
  ifGenerationMatch?: string;
  /** Refuse when the project would hold more than this many bytes afterwards. */
  quotaBytes?: number;
}

export type PutObjectResult =
  | { kind: 'stored'; replaced?: StoredObject }
  | { kind: 'precondition-failed' }
  | { kind: 'over-quota'; usedBytes: number };

export interface ListObjectsQuery {
  bucket: string;
  /** Only names starting with it. */
  prefix: string;
  /** Names at or after it, in UTF-8 byte order; never before `prefix`. */
  startAt: string;
  limit: number;
}

/** What functions will be told (issue 8): recorded in the same commit as the change itself. */
export type ObjectEventKind = 'finalize' | 'delete' | 'metadataUpdate';

export interface ObjectEvent {
  /** Increasing; a reader continues after the last one it saw. */
  id: string;
  kind: ObjectEventKind;
  at: number;
  object: StoredObject;
}

export interface FilesStore {
  getObject(bucket: string, name: string): Promise<StoredObject | undefined>;
  /** Names in UTF-8 byte order. */
  listObjects(query: ListObjectsQuery): Promise<StoredObject[]>;
  /** Creates or replaces the object atomically (the project's bytes in use follow). */
  putObject(object: StoredObject, options?: PutObjectOptions): Promise<PutObjectResult>;
  /**
   * Replaces the metadata of the stored generation if its metageneration is still `expectedMetageneration`;
   * false when the object changed (or is gone) meanwhile.
   */
  updateObject(object: StoredObject, expectedMetageneration: number): Promise<boolean>;
  /** The deleted object (so its bytes can go), or undefined when there was none (or not that generation). */
  deleteObject(bucket: string, name: string, ifGenerationMatch?: string): Promise<StoredObject | undefined>;
  /** Whether any object's metadata points at this blob (the byte store's sweep asks). */
  hasBlob(blobKey: string): Promise<boolean>;
  /** The bytes a project's objects take. */
  usedBytes(projectId: string): Promise<number>;
  /** Events of every project after `afterId`, oldest first. */
  events(afterId: string | undefined, limit: number): Promise<ObjectEvent[]>;

  createUpload(session: UploadSession): Promise<void>;
  getUpload(uploadId: string): Promise<UploadSession | undefined>;
  /**
   * Records a chunk, a claim to finalize or the end, if the session is still in the `expected` state
   * with `expected.received` bytes: false when another request (or instance) got there first, so
   * each byte offset is acknowledged once and an upload is finalized once.
   */
  advanceUpload(uploadId: string, expected: Pick<UploadSession, 'received' | 'state'>, next: Partial<Pick<UploadSession, 'received' | 'staging' | 'crc32c' | 'state' | 'finalGeneration' | 'expiresAt'>>): Promise<boolean>;
  /** Sessions expired before `now`, oldest first (their staged bytes are then discarded). */
  expiredUploads(now: number, limit: number): Promise<UploadSession[]>;
  deleteUpload(uploadId: string): Promise<void>;
}
