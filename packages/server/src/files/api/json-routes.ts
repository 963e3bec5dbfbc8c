import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UploadSession } from '../../storage/files-store.js';
import { fileErrors } from '../core/file-errors.js';
import { parseIncomingMetadata, toJsonObject, type IncomingMetadata } from '../core/object-metadata.js';
import type { FileService } from '../file-service.js';
import type { FileUploads, NewObject } from '../file-uploads.js';
import type { FilesCaller } from '../security/storage-guard.js';
import { filesCallerOf, type ResolveCaller } from './files-caller.js';
import { bodyStream, contentLength, queryString, readJson, streamBodies, type UploadsPerAddress } from './files-plugin.js';
import type { DownloadsPerAddress } from './download-slots.js';
import { sendObjectBytes } from './media-response.js';
import { boundaryOf, readMultipartUpload } from './multipart-related.js';
import { clientAddressOf } from '../../http/address-key.js';

export interface JsonRoutesDeps {
  files: FileService;
  uploads: FileUploads;
  resolveCaller: ResolveCaller;
  uploadsPerAddress: UploadsPerAddress;
  downloadsPerAddress: DownloadsPerAddress;
  /** --dev: a request without any credential is the administrator, as in Google's emulator (never from a page on another origin). */
  dev: boolean;
  /** The origin answers' links and session URLs point at (the request's own unless a public URL is set). */
  baseUrl(request: FastifyRequest): string;
}

const api = 'json';
/** Google's host, when its requests are forwarded to Hearth under `/storage.googleapis.com/...`. */
const googleHost = '/storage.googleapis.com';

interface ObjectParams {
  bucket: string;
  object: string;
}

/**
 * The Cloud Storage JSON API that @google-cloud/storage (firebase-admin's getStorage()) speaks:
 * objects (get, alt=media, patch, delete, list, copyTo/rewriteTo), uploads (media, multipart,
 * resumable with Content-Range and 308), downloads. Served where the library sends them: `/b/...`
 * (STORAGE_EMULATOR_HOST), `/storage/v1/...`, `/upload/storage/v1/...`, `/download/storage/v1/...`,
 * and the same under `/storage.googleapis.com` for requests forwarded from Google's host.
 */
export async function registerJsonRoutes(root: FastifyInstance, deps: JsonRoutesDeps): Promise<void> {
  for (const prefix of ['', '/storage/v1', `${googleHost}/storage/v1`]) await root.register(async (app) => objectRoutes(app, deps), { prefix });
  for (const prefix of ['/download/storage/v1', `${googleHost}/download/storage/v1`]) await root.register(async (app) => downloadRoutes(app, deps), { prefix });
  for (const prefix of ['/upload/storage/v1', `${googleHost}/upload/storage/v1`]) await root.register(async (app) => uploadRoutes(app, deps, prefix), { prefix });
}

async function callerOf(deps: JsonRoutesDeps, request: FastifyRequest, bucket: string): Promise<FilesCaller> {
  const { projectId } = deps.files.locate(api, bucket);
  if (deps.dev && request.headers.authorization === undefined && !request.fromForeignPage) return { kind: 'admin' };
  return filesCallerOf(deps.resolveCaller, api, request, projectId);
}

/** Answers' links point where the client came from: Google's host for forwarded requests. */
function linkBase(deps: JsonRoutesDeps, request: FastifyRequest): string {
  return request.url.startsWith(`${googleHost}/`) ? 'https://storage.googleapis.com' : deps.baseUrl(request);
}

function objectRoutes(app: FastifyInstance, deps: JsonRoutesDeps): void {
  const { files, uploads } = deps;
  streamBodies(app);

  app.get('/b/:bucket', async (request) => {
    const { bucket } = request.params as { bucket: string };
    files.locate(api, bucket);
    return { kind: 'storage#bucket', id: bucket, name: bucket, selfLink: `${linkBase(deps, request)}/storage/v1/b/${bucket}`, location: 'US', storageClass: 'STANDARD', metageneration: '1' };
  });

  app.get('/b/:bucket/o', async (request) => {
    const { bucket } = request.params as { bucket: string };
    const caller = await callerOf(deps, request, bucket);
    const maxResults = queryString(api, request.query, 'maxResults');
    const pageToken = queryString(api, request.query, 'pageToken');
    const page = await files.list(api, caller, {
      bucket,
      prefix: queryString(api, request.query, 'prefix') ?? '',
      delimiter: queryString(api, request.query, 'delimiter') ?? '',
      ...(pageToken !== undefined ? { pageToken } : {}),
      ...(maxResults !== undefined ? { maxResults: /^\d{1,9}$/.test(maxResults) ? Number(maxResults) : Number.NaN } : {}),
    });
    const base = linkBase(deps, request);
    return {
      kind: 'storage#objects',
      ...(page.items.length ? { items: page.items.map((item) => toJsonObject(item, base)) } : {}),
      ...(page.prefixes.length ? { prefixes: page.prefixes } : {}),
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    };
  });

  app.get('/b/:bucket/o/:object', async (request, reply) => {
    const { bucket, object: name } = request.params as ObjectParams;
    const object = await files.readable(api, await callerOf(deps, request, bucket), bucket, name);
    if (queryString(api, request.query, 'alt') === 'media') return sendObjectBytes(files, deps.downloadsPerAddress, api, object, request, reply);
    return jsonObject(deps, request, reply, object);
  });

  app.patch('/b/:bucket/o/:object', async (request, reply) => {
    const { bucket, object: name } = request.params as ObjectParams;
    const caller = await callerOf(deps, request, bucket);
    const incoming = parseIncomingMetadata(api, await readJson(api, request));
    const metageneration = queryString(api, request.query, 'ifMetagenerationMatch');
    return jsonObject(deps, request, reply, await files.updateMetadata(api, caller, bucket, name, incoming, metageneration === undefined ? undefined : Number(metageneration)));
  });

  app.delete('/b/:bucket/o/:object', async (request, reply) => {
    const { bucket, object: name } = request.params as ObjectParams;
    await files.delete(api, await callerOf(deps, request, bucket), bucket, name, queryString(api, request.query, 'ifGenerationMatch'));
    return reply.code(204).send();
  });

  const copy = async (request: FastifyRequest, reply: FastifyReply, rewrite: boolean) => {
    const params = request.params as ObjectParams & { destinationBucket: string; destinationObject: string };
    const caller = await callerOf(deps, request, params.destinationBucket);
    const metadata = parseIncomingMetadata(api, await readJson(api, request));
    const copied = await uploads.copy(api, caller, { bucket: params.bucket, name: params.object }, {
      bucket: params.destinationBucket,
      name: params.destinationObject,
      metadata,
      ...ifGenerationMatch(request),
      withDownloadToken: false,
    });
    const resource = toJsonObject(copied, linkBase(deps, request));
    if (!rewrite) return reply.send(resource);
    return reply.send({ kind: 'storage#rewriteResponse', totalBytesRewritten: String(copied.size), objectSize: String(copied.size), done: true, resource });
  };
  app.post('/b/:bucket/o/:object/copyTo/b/:destinationBucket/o/:destinationObject', (request, reply) => copy(request, reply, false));
  app.post('/b/:bucket/o/:object/rewriteTo/b/:destinationBucket/o/:destinationObject', (request, reply) => copy(request, reply, true));
}

function downloadRoutes(app: FastifyInstance, deps: JsonRoutesDeps): void {
  streamBodies(app);
  app.get('/b/:bucket/o/:object', async (request, reply) => {
    const { bucket, object: name } = request.params as ObjectParams;
    const object = await deps.files.readable(api, await callerOf(deps, request, bucket), bucket, name);
    return sendObjectBytes(deps.files, deps.downloadsPerAddress, api, object, request, reply);
  });
}

function uploadRoutes(app: FastifyInstance, deps: JsonRoutesDeps, prefix: string): void {
  const { uploads } = deps;
  streamBodies(app);

  app.post('/b/:bucket/o', async (request, reply) => {
    const { bucket } = request.params as { bucket: string };
    const release = deps.uploadsPerAddress.take(clientAddressOf(request));
    if (!release) throw fileErrors.tooManyRequests(api);
    try {
      const caller = await callerOf(deps, request, bucket);
      const uploadType = queryString(api, request.query, 'uploadType') ?? String(request.headers['x-goog-upload-protocol'] ?? 'media');
      const nameParam = queryString(api, request.query, 'name');
      if (uploadType === 'resumable') {
        const metadata = parseIncomingMetadata(api, await readJson(api, request));
        const name = objectName(nameParam ?? metadata.name);
        const declared = request.headers['x-upload-content-length'];
        const declaredSize = typeof declared === 'string' && /^\d{1,15}$/.test(declared) ? Number(declared) : undefined;
        const session = await uploads.start(api, caller, newObject(request, bucket, name, metadata, header(request, 'x-upload-content-type')), declaredSize);
        const location = `${linkBase(deps, request)}${prefix.replace(googleHost, '')}/b/${encodeURIComponent(bucket)}/o?uploadType=resumable&name=${encodeURIComponent(name)}&upload_id=${session.uploadId}`;
        return reply.header('Location', location).header('X-GUploader-UploadID', session.uploadId).send();
      }
      const body = bodyStream(request);
      if (!body) throw fileErrors.invalid(api, 'The upload has no body.');
      if (uploadType === 'multipart') {
        const boundary = boundaryOf(header(request, 'content-type'));
        if (!boundary) throw fileErrors.invalid(api, 'A multipart upload needs Content-Type: multipart/related; boundary=...');
        const parts = await readMultipartUpload(api, body, boundary);
        const metadata = parseIncomingMetadata(api, parts.metadata);
        const object = await uploads.uploadOnce(api, caller, newObject(request, bucket, objectName(nameParam ?? metadata.name), metadata, parts.mediaContentType), parts.media, contentLength(request));
        return jsonObject(deps, request, reply, object);
      }
      if (uploadType !== 'media') throw fileErrors.invalid(api, `Unknown uploadType: ${uploadType}.`);
      const object = await uploads.uploadOnce(api, caller, newObject(request, bucket, objectName(nameParam), {}, header(request, 'content-type')), body, contentLength(request));
      return jsonObject(deps, request, reply, object);
    } finally {
      release();
    }
  });

  // The resumable session: chunks with Content-Range, 308 until the last byte, then the object.
  app.put('/b/:bucket/o', async (request, reply) => {
    const uploadId = queryString(api, request.query, 'upload_id');
    if (!uploadId) throw fileErrors.invalid(api, 'upload_id is required.');
    const range = contentRange(header(request, 'content-range'));
    const release = deps.uploadsPerAddress.take(clientAddressOf(request));
    if (!release) throw fileErrors.tooManyRequests(api);
    try {
      let session = await uploads.session(api, uploadId);
      if (range.kind === 'query' && session.state === 'final') {
        const { object } = await uploads.chunk(api, uploadId, undefined, undefined, true);
        return jsonObject(deps, request, reply, object!);
      }
      if (range.kind === 'query' && (range.total === undefined || range.total !== session.received)) return incomplete(reply, session);
      const body = range.kind === 'chunk' ? bodyStream(request) : undefined;
      // The last chunk: its end is the declared total, or unknown (`bytes a-*/*`: the body is the rest).
      const finalize = range.kind === 'query' || range.end === undefined || (range.total !== undefined && range.end + 1 === range.total);
      const result = await uploads.chunk(api, uploadId, range.kind === 'chunk' ? range.start : undefined, body, finalize, range.total);
      session = result.session;
      if (result.object) return jsonObject(deps, request, reply, result.object);
      return incomplete(reply, session);
    } finally {
      release();
    }
  });

  app.delete('/b/:bucket/o', async (request, reply) => {
    const uploadId = queryString(api, request.query, 'upload_id');
    if (!uploadId) throw fileErrors.invalid(api, 'upload_id is required.');
    await uploads.cancel(api, uploadId);
    return reply.code(499).send();
  });
}

type ContentRange = { kind: 'query'; total?: number } | { kind: 'chunk'; start: number; end?: number; total?: number };

/** `bytes a-b/N`, `bytes a-b/*`, `bytes a-*\/N` (the rest, streamed), `bytes *\/N` or `bytes *\/*` (where are we). */
function contentRange(text: string | undefined): ContentRange {
  if (text === undefined) return { kind: 'chunk', start: 0 };
  const match = /^bytes (?:(\d{1,15})-(\d{1,15}|\*)|\*)\/(\d{1,15}|\*)$/.exec(text.trim());
  if (!match) throw fileErrors.invalid(api, 'Malformed Content-Range.');
  const total = match[3] === '*' ? undefined : Number(match[3]);
  if (match[1] === undefined) return { kind: 'query', ...(total !== undefined ? { total } : {}) };
  const start = Number(match[1]);
  const end = match[2] === '*' ? undefined : Number(match[2]);
  if (end !== undefined && end < start) throw fileErrors.invalid(api, 'Malformed Content-Range.');
  return { kind: 'chunk', start, ...(end !== undefined ? { end } : {}), ...(total !== undefined ? { total } : {}) };
}

/** 308 Resume Incomplete: `Range: bytes=0-(received-1)`, none before the first byte. */
function incomplete(reply: FastifyReply, session: UploadSession): FastifyReply {
  if (session.received > 0) void reply.header('Range', `bytes=0-${session.received - 1}`);
  return reply.code(308).send();
}

function jsonObject(deps: JsonRoutesDeps, request: FastifyRequest, reply: FastifyReply, object: Parameters<typeof toJsonObject>[0]): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(toJsonObject(object, linkBase(deps, request)));
}

function objectName(name: string | undefined): string {
  if (!name) throw fileErrors.invalid(api, 'Required parameter: name.');
  return name.startsWith('/') ? name.slice(1) : name;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function ifGenerationMatch(request: FastifyRequest): { ifGenerationMatch?: string } {
  const value = queryString(api, request.query, 'ifGenerationMatch');
  if (value === undefined) return {};
  if (!/^\d{1,20}$/.test(value)) throw fileErrors.invalid(api, 'ifGenerationMatch must be a generation number.');
  return { ifGenerationMatch: value };
}

/** X-Goog-Hash (`crc32c=...,md5=...`) or the metadata's hashes are checked against what arrives. */
function newObject(request: FastifyRequest, bucket: string, name: string, metadata: IncomingMetadata, mediaContentType: string | undefined): NewObject {
  const hashes = new Map<string, string>();
  for (const part of String(request.headers['x-goog-hash'] ?? '').split(',')) {
    const at = part.indexOf('=');
    if (at > 0) hashes.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  const expectedMd5 = metadata.md5Hash ?? hashes.get('md5');
  const expectedCrc32c = metadata.crc32c ?? hashes.get('crc32c');
  return {
    bucket,
    name,
    metadata,
    ...(mediaContentType ? { mediaContentType } : {}),
    ...ifGenerationMatch(request),
    ...(expectedMd5 !== undefined ? { expectedMd5 } : {}),
    ...(expectedCrc32c !== undefined ? { expectedCrc32c } : {}),
    withDownloadToken: false,
  };
}
