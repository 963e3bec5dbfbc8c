import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { fileErrors, type StorageApi } from '../core/file-errors.js';

/** The most bytes of JSON a metadata request (PATCH, resumable start) may carry. */
export const maxJsonBytes = 64 * 1024;

/**
 * Storage routes take their bodies as streams (uploads are never buffered whole): every content
 * type passes through untouched, and each route reads what it expects itself.
 */
export function streamBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
}

export function bodyStream(request: FastifyRequest): Readable | undefined {
  const body = request.body as Readable | undefined;
  return body && typeof body.pipe === 'function' ? body : undefined;
}

/** Reads a small JSON body (at most maxJsonBytes); an empty body is `{}`. */
export async function readJson(api: StorageApi, request: FastifyRequest): Promise<unknown> {
  const body = bodyStream(request);
  if (!body) return {};
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += (chunk as Buffer).length;
    if (length > maxJsonBytes) {
      // The rest is read and dropped (not kept), so the client gets this answer rather than a reset.
      body.resume();
      throw fileErrors.invalid(api, `The JSON body is larger than ${maxJsonBytes} bytes.`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text, (key, value: unknown) => (key === '__proto__' || key === 'constructor' ? undefined : value));
  } catch {
    throw fileErrors.invalid(api, 'Invalid JSON payload received.');
  }
}

/** A declared Content-Length, when it is a number. */
export function contentLength(request: FastifyRequest): number | undefined {
  const header = request.headers['content-length'];
  if (header === undefined) return undefined;
  const value = Number(header);
  return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * Uploads in flight per client address: one address may not hold more than its share of the
 * server's connections, disk bandwidth and staging space at once.
 */
export class UploadsPerAddress {
  private readonly counts = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** A release function, or undefined when the address already has `max` uploads in flight. */
  take(address: string): (() => void) | undefined {
    const count = this.counts.get(address) ?? 0;
    if (count >= this.max) return undefined;
    this.counts.set(address, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.counts.get(address) ?? 1) - 1;
      if (now <= 0) this.counts.delete(address);
      else this.counts.set(address, now);
    };
  }
}

/** A query parameter given once, as a string. */
export function queryString(api: StorageApi, query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown>)[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw fileErrors.invalid(api, `The ${name} parameter must be given once.`);
  return value;
}
