import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StoredObject, UploadSession } from '../../storage/files-store.js';
import { fileErrors } from '../core/file-errors.js';
import { parseIncomingMetadata, toV0Metadata } from '../core/object-metadata.js';
import type { FileService } from '../file-service.js';
import type { FileUploads, NewObject } from '../file-uploads.js';
import type { FilesCaller } from '../security/storage-guard.js';
import { filesCallerOf, type ResolveCaller } from './files-caller.js';
import { bodyStream, contentLength, queryString, readJson, streamBodies, type UploadsPerAddress } from './files-plugin.js';
import type { DownloadsPerAddress } from './download-slots.js';
import { sendObjectBytes } from './media-response.js';
import { boundaryOf, readMultipartUpload } from './multipart-related.js';
import { clientAddressOf } from '../../http/address-key.js';

export interface V0RoutesDeps {
  files: FileService;
  uploads: FileUploads;
  resolveCaller: ResolveCaller;
  uploadsPerAddress: UploadsPerAddress;
  downloadsPerAddress: DownloadsPerAddress;
  /** The origin resumable upload URLs point at (the request's own unless a public URL is set). */
  baseUrl(request: FastifyRequest): string;
  /** Access-Control-Expose-Headers for pages on other origins (the SDK reads X-Goog-Upload-URL). */
  exposedHeaders: string;
}

const api = 'v0';
/** Chunks of a resumable upload come in multiples of this (the SDK's own chunk size). */
const chunkGranularity = String(256 * 1024);

interface ObjectParams {
  bucket: string;
  object: string;
}

/**
 * The Firebase Storage v0 API that firebase/storage speaks (`/v0/b/{bucket}/o...`): metadata,
 * downloads (alt=media, Range, download tokens), list, delete, one-shot multipart uploads and the
 * resumable protocol (X-Goog-Upload-* headers), and download-token management for administrators.
 */
export async function registerV0Routes(root: FastifyInstance, deps: V0RoutesDeps): Promise<void> {
  // Also under Google's host, for firebase-admin's getDownloadURL forwarded from https://firebasestorage.googleapis.com.
  for (const prefix of ['/v0', '/firebasestorage.googleapis.com/v0']) await root.register(async (app) => routes(app, deps), { prefix });
}

function routes(app: FastifyInstance, deps: V0RoutesDeps): void {
  const { files, uploads } = deps;
  streamBodies(app);
  app.addHook('onRequest', (request, reply, done) => {
    if (request.headers.origin) void reply.header('Access-Control-Expose-Headers', deps.exposedHeaders);
    done();
  });
  const callerOf = (request: FastifyRequest, bucket: string) => filesCallerOf(deps.resolveCaller, api, request, files.locate(api, bucket).projectId);

  app.get('/b/:bucket/o/:object', async (request, reply) => {
    const { bucket, object: name } = request.params as ObjectParams;
    const caller = await callerOf(request, bucket);
    const token = queryString(api, request.query, 'token');
    const object = await files.readable(api, caller, bucket, name, token);
    if (queryString(api, request.query, 'alt') === 'media') return sendObjectBytes(files, deps.downloadsPerAddress, api, object, request, reply);
    return metadataReply(reply, await files.withDownloadToken(object));
  });

  app.get('/b/:bucket/o', async (request) => {
    const { bucket } = request.params as { bucket: string };
    const caller = await callerOf(request, bucket);
    const prefix = queryString(api, request.query, 'prefix') ?? '';
    if (prefix !== '' && (!prefix.endsWith('/') || prefix.endsWith('//'))) throw fileErrors.badPrefix(api);
    const maxResults = queryString(api, request.query, 'maxResults');
    const pageToken = queryString(api, request.query, 'pageToken');
    const page = await files.list(api, caller, {
      bucket,
      prefix,
      delimiter: queryString(api, request.query, 'delimiter') ?? '',
      ...(pageToken !== undefined ? { pageToken } : {}),
      ...(maxResults !== undefined ? { maxResults: /^\d{1,9}$/.test(maxResults) ? Number(maxResults) : Number.NaN } : {}),
    });
    return {
      prefixes: page.prefixes,
      items: page.items.map((item) => ({ name: item.name, bucket: item.bucket })),
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
    };
  });

  app.patch('/b/:bucket/o/:object', async (request, reply) => updateMetadata(request, reply));
  // Browsers that cannot send PATCH: PUT with X-HTTP-Method-Override.
  app.put('/b/:bucket/o/:object', async (request, reply) => {
    if (String(request.headers['x-http-method-override'] ?? '').toLowerCase() !== 'patch') throw fileErrors.invalid(api, 'PUT is only accepted with X-HTTP-Method-Override: PATCH.');
    return updateMetadata(request, reply);
  });
  async function updateMetadata(request: FastifyRequest, reply: FastifyReply) {
    const { bucket, object: name } = request.params as ObjectParams;
    const caller = await callerOf(request, bucket);
    const incoming = withoutTokens(caller, parseIncomingMetadata(api, await readJson(api, request)));
    return metadataReply(reply, await files.updateMetadata(api, caller, bucket, name, incoming));
  }

  app.delete('/b/:bucket/o/:object', async (request, reply) => {
    const { bucket, object: name } = request.params as ObjectParams;
    await files.delete(api, await callerOf(request, bucket), bucket, name);
    return reply.code(204).send();
  });

  app.post('/b/:bucket/o/:object', async (request, reply) => {
    const { bucket, object: name } = request.params as ObjectParams;
    const createToken = queryString(api, request.query, 'create_token');
    const deleteToken = queryString(api, request.query, 'delete_token');
    if (createToken === undefined && deleteToken === undefined) return upload(request, reply, bucket, name);
    if (createToken !== undefined && createToken !== 'true') throw fileErrors.invalid(api, 'create_token must be true.');
    const caller = await callerOf(request, bucket);
    const change = createToken !== undefined ? ({ create: true } as const) : { revoke: deleteToken! };
    return metadataReply(reply, await files.changeDownloadTokens(api, caller, bucket, name, change));
  });

  app.post('/b/:bucket/o', async (request, reply) => {
    const { bucket } = request.params as { bucket: string };
    const uploadId = queryString(api, request.query, 'upload_id');
    if (uploadId !== undefined) return continueUpload(request, reply, uploadId);
    return upload(request, reply, bucket, queryString(api, request.query, 'name'));
  });

  async function upload(request: FastifyRequest, reply: FastifyReply, bucket: string, name: string | undefined): Promise<FastifyReply> {
    if (!name) throw fileErrors.invalid(api, 'The object name is missing (name=...).');
    const release = deps.uploadsPerAddress.take(clientAddressOf(request));
    if (!release) throw fileErrors.tooManyRequests(api);
    try {
      const caller = await callerOf(request, bucket);
      const protocol = String(request.headers['x-goog-upload-protocol'] ?? '').toLowerCase();
      const command = String(request.headers['x-goog-upload-command'] ?? '').toLowerCase();
      if (protocol === 'resumable' || command === 'start') {
        if (command !== 'start') throw fileErrors.invalid(api, 'A resumable upload begins with X-Goog-Upload-Command: start.');
        const metadata = withoutTokens(caller, parseIncomingMetadata(api, await readJson(api, request)));
        const declared = declaredSize(request);
        const mediaContentType = headerText(request, 'x-goog-upload-header-content-type');
        const session = await uploads.start(api, caller, newObject(bucket, name, metadata, mediaContentType), declared);
        const url = `${deps.baseUrl(request)}/v0/b/${encodeURIComponent(bucket)}/o?name=${encodeURIComponent(name)}&upload_id=${session.uploadId}&upload_protocol=resumable`;
        return reply
          .header('X-Goog-Upload-URL', url)
          .header('X-Goog-Upload-Status', 'active')
          .header('X-Goog-Upload-Chunk-Granularity', chunkGranularity)
          .header('X-GUploader-UploadID', session.uploadId)
          .send();
      }
      const body = bodyStream(request);
      if (!body) throw fileErrors.invalid(api, 'The upload has no body.');
      if (protocol === 'multipart') {
        const boundary = boundaryOf(headerText(request, 'content-type'));
        if (!boundary) throw fileErrors.invalid(api, 'A multipart upload needs Content-Type: multipart/related; boundary=...');
        const parts = await readMultipartUpload(api, body, boundary);
        const metadata = withoutTokens(caller, parseIncomingMetadata(api, parts.metadata));
        const object = await uploads.uploadOnce(api, caller, newObject(bucket, name, metadata, parts.mediaContentType), parts.media, contentLength(request));
        return metadataReply(reply, object);
      }
      // A media upload: the body is the bytes, the Content-Type theirs.
      const object = await uploads.uploadOnce(api, caller, newObject(bucket, name, {}, headerText(request, 'content-type')), body, contentLength(request));
      return metadataReply(reply, object);
    } finally {
      release();
    }
  }

  async function continueUpload(request: FastifyRequest, reply: FastifyReply, uploadId: string): Promise<FastifyReply> {
    const command = String(request.headers['x-goog-upload-command'] ?? '')
      .toLowerCase()
      .split(',')
      .map((part) => part.trim());
    if (command.includes('query')) {
      const session = await uploads.session(api, uploadId);
      return statusReply(reply, session).header('X-Goog-Upload-Size-Received', String(session.received)).send();
    }
    if (command.includes('cancel')) {
      await uploads.cancel(api, uploadId);
      return reply.header('X-Goog-Upload-Status', 'cancelled').send();
    }
    const sending = command.includes('upload');
    const finalize = command.includes('finalize');
    if (!sending && !finalize) throw fileErrors.invalid(api, 'X-Goog-Upload-Command must be upload, finalize, query or cancel.');
    const release = deps.uploadsPerAddress.take(clientAddressOf(request));
    if (!release) throw fileErrors.tooManyRequests(api);
    try {
      const offsetHeader = headerText(request, 'x-goog-upload-offset');
      const offset = offsetHeader === undefined ? undefined : /^\d{1,15}$/.test(offsetHeader) ? Number(offsetHeader) : Number.NaN;
      if (Number.isNaN(offset)) throw fileErrors.invalid(api, 'X-Goog-Upload-Offset must be a byte count.');
      const body = sending ? bodyStream(request) : undefined;
      const { session, object } = await uploads.chunk(api, uploadId, offset, body, finalize);
      statusReply(reply, session);
      return object ? metadataReply(reply, object) : reply.send();
    } finally {
      release();
    }
  }
}

function statusReply(reply: FastifyReply, session: UploadSession): FastifyReply {
  return reply.header('X-Goog-Upload-Status', session.state === 'finalizing' ? 'active' : session.state);
}

function metadataReply(reply: FastifyReply, object: StoredObject): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(toV0Metadata(object));
}

function newObject(bucket: string, name: string, metadata: NewObject['metadata'], mediaContentType: string | undefined): NewObject {
  return {
    bucket,
    name,
    metadata,
    ...(mediaContentType ? { mediaContentType } : {}),
    ...(metadata.md5Hash !== undefined ? { expectedMd5: metadata.md5Hash } : {}),
    withDownloadToken: true,
  };
}

/** Only the administrator sets download tokens: anyone else naming one could open others' objects to the world. */
function withoutTokens(caller: FilesCaller, metadata: NewObject['metadata']): NewObject['metadata'] {
  if (caller.kind === 'admin' || !metadata.metadata || !('firebaseStorageDownloadTokens' in metadata.metadata)) return metadata;
  const { firebaseStorageDownloadTokens: _ignored, ...custom } = metadata.metadata;
  return { ...metadata, metadata: custom };
}

function headerText(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function declaredSize(request: FastifyRequest): number | undefined {
  const header = headerText(request, 'x-goog-upload-header-content-length');
  if (header === undefined) return undefined;
  if (!/^\d{1,15}$/.test(header)) throw fileErrors.invalid(api, 'X-Goog-Upload-Header-Content-Length must be a byte count.');
  return Number(header);
}
