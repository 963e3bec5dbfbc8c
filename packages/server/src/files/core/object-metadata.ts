import type { StoredObject } from '../../storage/files-store.js';
import type { StorageApi } from './file-errors.js';
import { fileErrors } from './file-errors.js';

/**
 * The metadata a client may set on an object (the SDK's writable fields; the JSON API's too), as
 * parsed from a request: a string sets a field, null clears it, absent leaves it.
 */
export interface IncomingMetadata {
  name?: string;
  contentType?: string | null;
  contentEncoding?: string | null;
  contentDisposition?: string | null;
  contentLanguage?: string | null;
  cacheControl?: string | null;
  /** Null clears all; a key set to null is removed. */
  metadata?: Record<string, string | null> | null;
  md5Hash?: string;
  crc32c?: string;
}

const textFields = ['contentType', 'contentEncoding', 'contentDisposition', 'contentLanguage', 'cacheControl'] as const;
/** Google keeps custom metadata to 8 KiB; each text field to 1 KiB here. */
const maxCustomMetadataBytes = 8 * 1024;
const maxFieldBytes = 1024;
/** Fields of the JSON API's object resource that a client may send and that Hearth ignores. */
const ignoredJsonFields = new Set(['kind', 'id', 'selfLink', 'mediaLink', 'bucket', 'generation', 'metageneration', 'size', 'timeCreated', 'updated', 'storageClass', 'etag', 'acl', 'customTime', 'contentLength', 'fullPath', 'owner', 'timeStorageClassUpdated', 'temporaryHold', 'eventBasedHold']);

/** Checks a request's metadata JSON; anything of the wrong type is a 400 with Google's error JSON. */
export function parseIncomingMetadata(api: StorageApi, raw: unknown): IncomingMetadata {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw fileErrors.invalid(api, 'The metadata must be a JSON object.');
  const source = raw as Record<string, unknown>;
  const parsed: IncomingMetadata = {};
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if ((textFields as readonly string[]).includes(key)) {
      if (value !== null && typeof value !== 'string') throw fileErrors.invalid(api, `Invalid value for ${key}: expected a string.`);
      if (typeof value === 'string' && Buffer.byteLength(value) > maxFieldBytes) throw fileErrors.invalid(api, `${key} is longer than ${maxFieldBytes} bytes.`);
      parsed[key as (typeof textFields)[number]] = value;
    } else if (key === 'name' || key === 'md5Hash' || key === 'crc32c') {
      if (typeof value !== 'string') throw fileErrors.invalid(api, `Invalid value for ${key}: expected a string.`);
      parsed[key] = value;
    } else if (key === 'metadata') {
      parsed.metadata = parseCustomMetadata(api, value);
    } else if (!ignoredJsonFields.has(key)) {
      throw fileErrors.invalid(api, `Invalid JSON payload received. Unknown name "${key}": Cannot find field.`);
    }
  }
  return parsed;
}

function parseCustomMetadata(api: StorageApi, value: unknown): Record<string, string | null> | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw fileErrors.invalid(api, 'Invalid value for metadata: expected an object of strings.');
  const result: Record<string, string | null> = {};
  let bytes = 0;
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    if (entry !== null && typeof entry !== 'string' && typeof entry !== 'number' && typeof entry !== 'boolean') {
      throw fileErrors.invalid(api, `Invalid value for metadata.${key}: expected a string.`);
    }
    const text = entry === null ? null : String(entry);
    bytes += Buffer.byteLength(key) + (text === null ? 0 : Buffer.byteLength(text));
    if (bytes > maxCustomMetadataBytes) throw fileErrors.invalid(api, `Custom metadata is larger than ${maxCustomMetadataBytes} bytes.`);
    result[key] = text;
  }
  return result;
}

/** The object's fields with `incoming` applied (null clears); download tokens given as custom metadata join the token list. */
export function applyMetadata(object: StoredObject, incoming: IncomingMetadata): StoredObject {
  const next: StoredObject = { ...object, downloadTokens: [...object.downloadTokens] };
  for (const field of textFields) {
    const value = incoming[field];
    if (value === undefined) continue;
    if (value === null || value === '') delete next[field];
    else next[field] = value;
  }
  if (incoming.metadata === null) delete next.customMetadata;
  else if (incoming.metadata) {
    const custom = { ...(object.customMetadata ?? {}) };
    for (const [key, value] of Object.entries(incoming.metadata)) {
      if (key === downloadTokensKey) {
        if (value) for (const token of value.split(',')) if (token && !next.downloadTokens.includes(token)) next.downloadTokens.push(token);
        continue;
      }
      if (value === null) delete custom[key];
      else custom[key] = value;
    }
    if (Object.keys(custom).length) next.customMetadata = custom;
    else delete next.customMetadata;
  }
  return next;
}

/** Where Firebase keeps download tokens in an object's custom metadata (what the JSON API shows). */
export const downloadTokensKey = 'firebaseStorageDownloadTokens';

export function etagOf(object: Pick<StoredObject, 'generation' | 'metageneration'>): string {
  return Buffer.from(`${object.generation}/${object.metageneration}`).toString('base64url');
}

/** The Firebase v0 API's metadata JSON, what firebase/storage reads. */
export function toV0Metadata(object: StoredObject): Record<string, unknown> {
  return {
    name: object.name,
    bucket: object.bucket,
    generation: object.generation,
    metageneration: String(object.metageneration),
    contentType: object.contentType ?? 'application/octet-stream',
    timeCreated: new Date(object.timeCreated).toISOString(),
    updated: new Date(object.updated).toISOString(),
    storageClass: 'STANDARD',
    size: String(object.size),
    md5Hash: object.md5Hash,
    crc32c: object.crc32c,
    etag: etagOf(object),
    downloadTokens: object.downloadTokens.join(','),
    contentEncoding: object.contentEncoding ?? 'identity',
    contentDisposition: object.contentDisposition ?? 'inline',
    ...(object.contentLanguage ? { contentLanguage: object.contentLanguage } : {}),
    ...(object.cacheControl ? { cacheControl: object.cacheControl } : {}),
    metadata: object.customMetadata ?? {},
  };
}

/** The JSON API's object resource (storage#object), what @google-cloud/storage reads. */
export function toJsonObject(object: StoredObject, baseUrl: string): Record<string, unknown> {
  const encoded = encodeURIComponent(object.name);
  const custom: Record<string, string> = { ...(object.customMetadata ?? {}) };
  if (object.downloadTokens.length) custom[downloadTokensKey] = object.downloadTokens.join(',');
  return {
    kind: 'storage#object',
    id: `${object.bucket}/${object.name}/${object.generation}`,
    selfLink: `${baseUrl}/storage/v1/b/${object.bucket}/o/${encoded}`,
    mediaLink: `${baseUrl}/download/storage/v1/b/${object.bucket}/o/${encoded}?generation=${object.generation}&alt=media`,
    name: object.name,
    bucket: object.bucket,
    generation: object.generation,
    metageneration: String(object.metageneration),
    contentType: object.contentType ?? 'application/octet-stream',
    storageClass: 'STANDARD',
    size: String(object.size),
    md5Hash: object.md5Hash,
    crc32c: object.crc32c,
    etag: etagOf(object),
    timeCreated: new Date(object.timeCreated).toISOString(),
    updated: new Date(object.updated).toISOString(),
    timeStorageClassUpdated: new Date(object.timeCreated).toISOString(),
    ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
    ...(object.contentDisposition ? { contentDisposition: object.contentDisposition } : {}),
    ...(object.contentLanguage ? { contentLanguage: object.contentLanguage } : {}),
    ...(object.cacheControl ? { cacheControl: object.cacheControl } : {}),
    ...(Object.keys(custom).length ? { metadata: custom } : {}),
  };
}
