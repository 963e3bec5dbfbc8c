import { createHash, type Hash } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { crc32c } from '@node-rs/crc32';

/** What Google reports: MD5 as base64, CRC32C as base64 of its four big-endian bytes. */
export function md5Base64(digest: Buffer): string {
  return digest.toString('base64');
}

export function crc32cBase64(value: number): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes.toString('base64');
}

/** Continues a CRC32C over more bytes (0 starts one). */
export function crc32cUpdate(value: number, bytes: Buffer): number {
  return crc32c(bytes, value) >>> 0;
}

/** The byte count went past what is allowed: the upload stops there and nothing is kept. */
export class ObjectTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
    this.name = 'ObjectTooLarge';
  }
}

/**
 * Counts, hashes (MD5 and CRC32C) and caps the bytes flowing through it, so an upload is checked
 * as it streams and never held whole. `md5` may continue an earlier hash (a resumable upload's
 * previous chunks, in this process); undefined hashes nothing (computed later from the stored bytes).
 */
export class MeteredBytes extends Transform {
  bytes = 0;
  crc32c: number;

  constructor(
    private readonly maxBytes: number,
    readonly md5: Hash | undefined = createHash('md5'),
    startCrc32c = 0,
  ) {
    super();
    this.crc32c = startCrc32c;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return callback(new ObjectTooLarge(this.maxBytes));
    this.md5?.update(chunk);
    this.crc32c = crc32cUpdate(this.crc32c, chunk);
    callback(null, chunk);
  }
}

/**
 * Pipes a request's bytes through the meter. When the meter refuses (too large), the rest of the
 * request is read and dropped rather than the connection reset, so the client gets the answer;
 * when the request fails (the client went away), the meter fails with it.
 */
export function metered(source: Readable, meter: MeteredBytes): MeteredBytes {
  source.on('error', (error) => meter.destroy(error));
  source.on('aborted', () => meter.destroy(Object.assign(new Error('request aborted'), { code: 'ECONNRESET' })));
  meter.on('error', () => {
    source.unpipe(meter);
    source.resume();
  });
  source.pipe(meter);
  return meter;
}
