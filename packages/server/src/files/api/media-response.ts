import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { StoredObject } from '../../storage/files-store.js';
import { fileErrors, type StorageApi } from '../core/file-errors.js';
import { etagOf } from '../core/object-metadata.js';
import type { FileService } from '../file-service.js';
import type { DownloadsPerAddress } from './download-slots.js';

/** `Range: bytes=a-b | a- | -n` (one range; anything else serves the whole object, as RFC 9110 allows). */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (!Number.isSafeInteger(start) || start >= size) return 'unsatisfiable';
  if (end < start) return undefined;
  return { start, end };
}

/**
 * Sends an object's bytes, streamed from the byte store: Range (206), Google's x-goog-* headers,
 * and gzip objects unzipped for clients that do not accept gzip (then without Range, as Google
 * does). The bytes are whatever users uploaded, served from Hearth's own origin: a sandbox CSP and
 * nosniff keep an uploaded HTML or SVG file from running as a page of that origin. Each download
 * holds one of its address's slots (download-slots.ts) from before the bytes are opened until its
 * connection is done with them.
 */
export async function sendObjectBytes(files: FileService, downloads: DownloadsPerAddress, api: StorageApi, object: StoredObject, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const gunzip = object.contentEncoding === 'gzip' && !/\bgzip\b/i.test(String(request.headers['accept-encoding'] ?? ''));
  const range = gunzip || object.size === 0 ? undefined : parseRange(request.headers.range, object.size);
  if (range === 'unsatisfiable') {
    void reply.header('Content-Range', `bytes */${object.size}`);
    throw fileErrors.rangeNotSatisfiable(api);
  }
  const gone = new AbortController();
  const onClose = () => gone.abort();
  reply.raw.once('close', onClose);
  const release = await downloads.take(request.ip, gone.signal);
  reply.raw.off('close', onClose);
  if (!release) throw fileErrors.tooManyRequests(api);
  if (reply.raw.destroyed) {
    release();
    throw fileErrors.tooManyRequests(api);
  }
  reply.raw.once('close', release);
  let body: Readable;
  try {
    body = await files.openBytes(object, range);
  } catch (error) {
    release();
    throw error;
  }
  void reply
    .header('Content-Type', object.contentType ?? 'application/octet-stream')
    .header('Accept-Ranges', 'bytes')
    .header('ETag', `"${etagOf(object)}"`)
    .header('Last-Modified', new Date(object.updated).toUTCString())
    .header('x-goog-generation', object.generation)
    .header('x-goog-metageneration', String(object.metageneration))
    .header('x-goog-storage-class', 'STANDARD')
    .header('x-goog-hash', `crc32c=${object.crc32c},md5=${object.md5Hash}`)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', "sandbox; default-src 'none'")
    .header('Cross-Origin-Resource-Policy', 'cross-origin');
  if (object.cacheControl) void reply.header('Cache-Control', object.cacheControl);
  if (object.contentLanguage) void reply.header('Content-Language', object.contentLanguage);
  if (object.contentDisposition) void reply.header('Content-Disposition', object.contentDisposition);
  if (gunzip) {
    body = body.pipe(createGunzip());
  } else {
    if (object.contentEncoding && object.contentEncoding !== 'identity') void reply.header('Content-Encoding', object.contentEncoding);
    if (range) {
      void reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`).header('Content-Length', String(range.end - range.start + 1));
    } else void reply.header('Content-Length', String(object.size));
  }
  if (request.method === 'HEAD') {
    body.destroy();
    return reply.send();
  }
  return reply.send(body);
}
