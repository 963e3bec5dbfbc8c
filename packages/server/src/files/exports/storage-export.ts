import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { crc32c } from '@node-rs/crc32';
import type { FilesStore, StoredObject } from '../../storage/files-store.js';
import type { ByteStore } from '../bytes/byte-store.js';
import { crc32cBase64, md5Base64 } from '../core/checksums.js';

/**
 * Cloud Storage objects in and out in the Storage emulator's export layout (`storage_export/` of
 * `firebase emulators:export`): `buckets.json` ({"buckets":[{"id"}]}), `blobs/<bucket>/<folders>/
 * <encoded file name>` the bytes, `metadata/<same>.json` the emulator's StoredFileMetadata (its
 * generation in ms, crc32c as a decimal number, download tokens kept, so download URLs go on
 * working). Objects are copied one at a time, streamed; an object of the same name is replaced.
 */

export class StorageExportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageExportError';
  }
}

interface EmulatorMetadata {
  name: string;
  bucket: string;
  generation?: number;
  metageneration?: number;
  contentType?: string;
  timeCreated?: string;
  updated?: string;
  storageClass?: string;
  size: number;
  md5Hash: string;
  contentEncoding?: string;
  contentDisposition?: string;
  contentLanguage?: string;
  cacheControl?: string;
  crc32c: string;
  etag?: string;
  downloadTokens?: string[] | string;
  customMetadata?: Record<string, string>;
}

/** Where the emulator keeps an object, relative to blobs/ and metadata/: folders as they are, the file name URI-encoded. */
function objectPath(bucket: string, name: string): string {
  const base = posix.basename(name) + (name.endsWith('/') ? '/' : '');
  return posix.join(bucket, posix.dirname(name), encodeURIComponent(base));
}

function* walk(folder: string): Generator<string> {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

async function checksums(file: string): Promise<{ size: number; md5Hash: string; crc32c: string }> {
  const md5 = createHash('md5');
  let crc = 0;
  let size = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    md5.update(chunk);
    crc = crc32c(chunk, crc);
    size += chunk.length;
  }
  return { size, md5Hash: md5Base64(md5.digest()), crc32c: crc32cBase64(crc) };
}

export interface StorageImportReport {
  buckets: string[];
  objects: number;
  bytes: number;
}

/** Every object of a storage_export folder into `projectId`'s buckets of the same names. */
export async function importStorageExport(folder: string, target: { bytes: ByteStore; files: FilesStore; projectId: string }): Promise<StorageImportReport> {
  const bucketsFile = join(folder, 'buckets.json');
  if (!existsSync(bucketsFile)) throw new StorageExportError(`${folder} has no buckets.json: not a Storage emulator export`);
  let listed: Array<{ id?: string }>;
  try {
    listed = (JSON.parse(readFileSync(bucketsFile, 'utf8')) as { buckets?: Array<{ id?: string }> }).buckets ?? [];
  } catch (error) {
    throw new StorageExportError(`${bucketsFile} is not JSON: ${(error as Error).message}`);
  }
  const report: StorageImportReport = { buckets: listed.flatMap((bucket) => (bucket.id ? [bucket.id] : [])), objects: 0, bytes: 0 };
  const metadataFolder = join(folder, 'metadata');
  if (!existsSync(metadataFolder)) return report;
  for (const metadataFile of walk(metadataFolder)) {
    if (!metadataFile.endsWith('.json')) continue;
    const relativePath = relative(metadataFolder, metadataFile).slice(0, -'.json'.length);
    const blobFile = join(folder, 'blobs', relativePath);
    let metadata: EmulatorMetadata;
    try {
      metadata = JSON.parse(readFileSync(metadataFile, 'utf8')) as EmulatorMetadata;
    } catch (error) {
      throw new StorageExportError(`${metadataFile} is not JSON: ${(error as Error).message}`);
    }
    if (!metadata.name || !metadata.bucket || !existsSync(blobFile)) throw new StorageExportError(`${metadataFile}: no object name, bucket or bytes (${relativePath.split(sep).join('/')})`);
    // The checksums are worked out from the bytes: what Hearth serves must match what it holds.
    const sums = await checksums(blobFile);
    const blobKey = await target.bytes.write(createReadStream(blobFile));
    const tokens = Array.isArray(metadata.downloadTokens) ? metadata.downloadTokens : (metadata.downloadTokens ?? '').split(',').filter(Boolean);
    const created = metadata.timeCreated ? Date.parse(metadata.timeCreated) : Date.now();
    const object: StoredObject = {
      bucket: metadata.bucket,
      name: metadata.name,
      projectId: target.projectId,
      generation: String((metadata.generation ?? Date.now()) * 1000),
      metageneration: metadata.metageneration ?? 1,
      blobKey,
      ...sums,
      downloadTokens: tokens,
      timeCreated: created,
      updated: metadata.updated ? Date.parse(metadata.updated) : created,
    };
    for (const key of ['contentType', 'contentEncoding', 'contentDisposition', 'contentLanguage', 'cacheControl'] as const) {
      if (typeof metadata[key] === 'string') object[key] = metadata[key];
    }
    if (metadata.customMetadata && Object.keys(metadata.customMetadata).length > 0) object.customMetadata = metadata.customMetadata;
    const result = await target.files.putObject(object);
    if (result.kind !== 'stored') {
      await target.bytes.delete(blobKey);
      throw new StorageExportError(`${metadata.bucket}/${metadata.name} was not stored (${result.kind})`);
    }
    if (result.replaced) await target.bytes.delete(result.replaced.blobKey);
    report.objects++;
    report.bytes += sums.size;
  }
  return report;
}

/** Every object of `buckets` into a new storage_export folder. */
export async function exportStorage(folder: string, source: { bytes: ByteStore; files: FilesStore; buckets: readonly string[] }): Promise<StorageImportReport> {
  mkdirSync(join(folder, 'blobs'), { recursive: true, mode: 0o700 });
  mkdirSync(join(folder, 'metadata'), { recursive: true, mode: 0o700 });
  const report: StorageImportReport = { buckets: [...source.buckets], objects: 0, bytes: 0 };
  for (const bucket of source.buckets) {
    for (let startAt = ''; ; ) {
      const page = await source.files.listObjects({ bucket, prefix: '', startAt, limit: 500 });
      const fresh = startAt === '' ? page : page.filter((object) => object.name !== startAt);
      for (const object of fresh) {
        const path = objectPath(bucket, object.name);
        mkdirSync(dirname(join(folder, 'blobs', path)), { recursive: true });
        mkdirSync(dirname(join(folder, 'metadata', path)), { recursive: true });
        await pipeline(await source.bytes.read(object.blobKey), createWriteStream(join(folder, 'blobs', path)));
        writeFileSync(join(folder, 'metadata', `${path}.json`), `${JSON.stringify(emulatorMetadata(object), null, 2)}\n`);
        report.objects++;
        report.bytes += object.size;
      }
      if (page.length < 500) break;
      startAt = page[page.length - 1]!.name;
    }
  }
  writeFileSync(join(folder, 'buckets.json'), `${JSON.stringify({ buckets: source.buckets.map((id) => ({ id })) }, null, 2)}\n`);
  return report;
}

function emulatorMetadata(object: StoredObject): EmulatorMetadata {
  const generation = Math.floor(Number(object.generation) / 1000);
  return {
    name: object.name,
    bucket: object.bucket,
    generation,
    metageneration: object.metageneration,
    contentType: object.contentType ?? 'application/octet-stream',
    timeCreated: new Date(object.timeCreated).toISOString(),
    updated: new Date(object.updated).toISOString(),
    storageClass: 'STANDARD',
    size: object.size,
    md5Hash: object.md5Hash,
    ...(object.contentEncoding !== undefined && { contentEncoding: object.contentEncoding }),
    ...(object.contentDisposition !== undefined && { contentDisposition: object.contentDisposition }),
    ...(object.contentLanguage !== undefined && { contentLanguage: object.contentLanguage }),
    ...(object.cacheControl !== undefined && { cacheControl: object.cacheControl }),
    crc32c: String(Buffer.from(object.crc32c, 'base64').readUInt32BE(0)),
    etag: createHash('sha1').update(`${generation}/${object.metageneration}`).digest('base64'),
    downloadTokens: object.downloadTokens,
    ...(object.customMetadata && { customMetadata: object.customMetadata }),
  };
}
