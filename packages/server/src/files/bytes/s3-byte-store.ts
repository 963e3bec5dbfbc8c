import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { ByteStore } from './byte-store.js';

/** Where an S3 store keeps bytes: `s3://bucket[/prefix]?endpoint=...&region=...`; keys come from the environment. */
export interface S3Location {
  bucket: string;
  prefix: string;
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
}

/** Parses `--storage-url`; never echoes credentials (they belong in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY). */
export function parseS3Url(text: string): S3Location {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('--storage-url must look like s3://bucket?endpoint=https://s3.example');
  }
  if (url.protocol !== 's3:' || !url.hostname) throw new Error('--storage-url must look like s3://bucket?endpoint=https://s3.example');
  if (url.username || url.password) throw new Error('--storage-url must not hold credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  const prefix = url.pathname.replace(/^\/+/, '');
  return {
    bucket: url.hostname,
    prefix: prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix,
    ...(endpoint ? { endpoint } : {}),
    region: url.searchParams.get('region') ?? 'us-east-1',
    // Path-style is what self-hosted services (Ceph RGW, MinIO, Garage) expect; AWS takes either.
    forcePathStyle: url.searchParams.get('forcePathStyle') !== 'false',
  };
}

/** S3 parts are 5 MiB at least (but the last); bigger parts mean fewer requests, each held in memory once. */
const partBytes = 8 * 1024 * 1024;

interface Staging {
  key: string;
  /** The S3 multipart upload, made with the first full part. */
  multipartId?: string;
  parts: { number: number; etag: string; size: number }[];
  /** Bytes after the last full part, kept as their own object until the next chunk (any instance) or the end. */
  tailSize: number;
}

const keyPattern = /^[0-9a-f]{32}$/;

/**
 * Blobs in an S3 bucket (AWS S3, Ceph's RADOS Gateway, MinIO, Garage), so several Hearth instances
 * on one PostgreSQL database serve one set of objects. A blob is written with lib-storage's managed
 * upload (streamed in parts, never whole in memory) and exists only once S3 acknowledged it. A
 * resumable upload is an S3 multipart upload whose parts are cut at 8 MiB; the bytes after the last
 * full part wait in a tail object, so the next chunk may reach any instance (its state is JSON in
 * the session row).
 */
export class S3ByteStore implements ByteStore {
  readonly client: S3Client;

  constructor(readonly location: S3Location) {
    this.client = new S3Client({
      region: location.region,
      forcePathStyle: location.forcePathStyle,
      ...(location.endpoint ? { endpoint: location.endpoint } : {}),
      // S3-compatible services do not all take the SDK's newer default checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async write(source: Readable): Promise<string> {
    const key = newKey();
    const upload = new Upload({ client: this.client, params: { Bucket: this.location.bucket, Key: this.blobKey(key), Body: source }, partSize: partBytes, queueSize: 2, leavePartsOnError: false });
    try {
      await upload.done();
    } catch (error) {
      await upload.abort().catch(() => undefined);
      throw error;
    }
    return key;
  }

  async read(blobKey: string, range?: { start: number; end: number }): Promise<Readable> {
    const answer = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.blobKey(blobKey), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }));
    return answer.Body as Readable;
  }

  async delete(blobKey: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.blobKey(blobKey) }));
  }

  async stageBegin(): Promise<string> {
    const staging: Staging = { key: newKey(), parts: [], tailSize: 0 };
    return JSON.stringify(staging);
  }

  async stageAppend(text: string, offset: number, source: Readable): Promise<string> {
    const staging = parseStaging(text);
    const staged = staging.parts.reduce((sum, part) => sum + part.size, 0) + staging.tailSize;
    if (staged !== offset) throw new Error(`staging holds ${staged} bytes, not ${offset}`);
    // The tail and the new bytes, cut into full parts as they come; what is left is the new tail.
    let buffer = staging.tailSize ? await this.readAll(this.tailKey(staging.key)) : Buffer.alloc(0);
    const pending: Buffer[] = [buffer];
    let pendingBytes = buffer.length;
    for await (const chunk of source) {
      pending.push(chunk as Buffer);
      pendingBytes += (chunk as Buffer).length;
      if (pendingBytes >= partBytes) {
        buffer = Buffer.concat(pending);
        let at = 0;
        while (buffer.length - at >= partBytes) {
          await this.uploadPart(staging, buffer.subarray(at, at + partBytes));
          at += partBytes;
        }
        pending.length = 0;
        pending.push(buffer.subarray(at));
        pendingBytes = buffer.length - at;
      }
    }
    const tail = Buffer.concat(pending);
    if (tail.length) await this.client.send(new PutObjectCommand({ Bucket: this.location.bucket, Key: this.tailKey(staging.key), Body: tail }));
    staging.tailSize = tail.length;
    return JSON.stringify(staging);
  }

  /** The blob is the multipart upload itself (its key was the blob's from the start): completing it makes it, no copy. */
  async stageFinish(text: string): Promise<string> {
    const staging = parseStaging(text);
    const target = { Bucket: this.location.bucket, Key: this.blobKey(staging.key) };
    if (!staging.multipartId) {
      // Small: the tail is the whole object.
      if (staging.tailSize) await this.client.send(new CopyObjectCommand({ ...target, CopySource: `${this.location.bucket}/${this.tailKey(staging.key)}` }));
      else await this.client.send(new PutObjectCommand({ ...target, Body: Buffer.alloc(0) }));
    } else {
      if (staging.tailSize) await this.uploadPart(staging, await this.readAll(this.tailKey(staging.key)));
      await this.client.send(
        new CompleteMultipartUploadCommand({ ...target, UploadId: staging.multipartId, MultipartUpload: { Parts: staging.parts.map((part) => ({ PartNumber: part.number, ETag: part.etag })) } }),
      );
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.tailKey(staging.key) })).catch(() => undefined);
    return staging.key;
  }

  async stageDiscard(text: string): Promise<void> {
    const staging = parseStaging(text);
    if (staging.multipartId) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.location.bucket, Key: this.blobKey(staging.key), UploadId: staging.multipartId })).catch(() => undefined);
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.tailKey(staging.key) })).catch(() => undefined);
  }

  async sweep(isReferenced: (blobKey: string) => Promise<boolean>, olderThan = Date.now()): Promise<number> {
    let removed = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: `${this.location.prefix}blobs/`, ...(token ? { ContinuationToken: token } : {}) }));
      for (const entry of page.Contents ?? []) {
        const key = entry.Key?.slice(`${this.location.prefix}blobs/`.length) ?? '';
        if (!keyPattern.test(key) || (entry.LastModified?.getTime() ?? olderThan) >= olderThan || (await isReferenced(key))) continue;
        await this.delete(key).catch(() => undefined);
        removed++;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return removed;
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private async uploadPart(staging: Staging, body: Buffer): Promise<void> {
    if (!staging.multipartId) {
      const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.location.bucket, Key: this.blobKey(staging.key) }));
      staging.multipartId = created.UploadId!;
    }
    const number = staging.parts.length + 1;
    const answer = await this.client.send(new UploadPartCommand({ Bucket: this.location.bucket, Key: this.blobKey(staging.key), UploadId: staging.multipartId, PartNumber: number, Body: body }));
    staging.parts.push({ number, etag: answer.ETag!, size: body.length });
  }

  private async readAll(key: string): Promise<Buffer> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
      return Buffer.from(await answer.Body!.transformToByteArray());
    } catch (error) {
      if (error instanceof NoSuchKey) return Buffer.alloc(0);
      throw error;
    }
  }

  private blobKey(key: string): string {
    if (!keyPattern.test(key)) throw new Error('not a blob key');
    return `${this.location.prefix}blobs/${key}`;
  }

  private tailKey(key: string): string {
    return `${this.location.prefix}staging/${key}.tail`;
  }
}

function parseStaging(text: string): Staging {
  const staging = JSON.parse(text) as Staging;
  if (!keyPattern.test(staging.key)) throw new Error('not a staging key');
  return staging;
}

function newKey(): string {
  return randomBytes(16).toString('hex');
}
