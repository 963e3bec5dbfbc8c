import { createHash, verify, type KeyObject } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/api-error.js';
import { handleError } from '../../http/error-handler.js';
import { fileErrors } from '../core/file-errors.js';
import type { FileService } from '../file-service.js';
import type { FileUploads } from '../file-uploads.js';
import { contentLength } from './files-plugin.js';
import type { DownloadsPerAddress } from './download-slots.js';
import { sendObjectBytes } from './media-response.js';

export interface SignedUrlDeps {
  files: FileService;
  uploads: FileUploads;
  downloadsPerAddress: DownloadsPerAddress;
  /** A service account's public keys and project, by its email (what signed the URL). */
  keysOf(clientEmail: string): Promise<{ projectId: string; keys: KeyObject[] } | undefined>;
}

const api = 'json';
const googleHost = 'storage.googleapis.com';
/** Google's longest v4 signed URL: seven days. */
const maxExpiresSeconds = 7 * 24 * 3600;
/** Clocks of signer and server may differ a little. */
const skewMs = 5 * 60_000;

/**
 * V4 signed URLs (`getSignedUrl({ version: 'v4' })` of @google-cloud/storage, signed with a
 * Hearth-issued service-account key): `/{bucket}/{object}?X-Goog-Algorithm=GOOG4-RSA-SHA256&...`
 * at Hearth's own address (apiEndpoint or cname) or under `/storage.googleapis.com/`. The canonical
 * request is rebuilt from what arrived and the RSA-SHA256 signature checked against the account's
 * keys; within its time a URL lets whoever holds it do its one method (GET/HEAD read, PUT write) on
 * its one object, as the project's administrator would. Handled before routing (it shares no prefix).
 */
export function registerSignedUrls(app: FastifyInstance, deps: SignedUrlDeps): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.url.includes('X-Goog-Signature=')) return done();
    serve(deps, request, reply).catch((error: unknown) => handleError(error, request, reply));
  });
}

async function serve(deps: SignedUrlDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const url = new URL(request.url, 'http://localhost');
  let rawPath = url.pathname;
  let host = (request.headers.host ?? '').replace(/:\d+$/, '');
  if (rawPath.startsWith(`/${googleHost}/`)) {
    rawPath = rawPath.slice(googleHost.length + 1);
    host = googleHost;
  }
  const [, rawBucket, ...rawObject] = rawPath.split('/');
  if (!rawBucket || rawObject.length === 0 || rawObject.join('') === '') throw fileErrors.invalid(api, 'A signed URL names a bucket and an object.');
  let bucket: string;
  let name: string;
  try {
    bucket = decodeURIComponent(rawBucket);
    name = rawObject.map(decodeURIComponent).join('/');
  } catch {
    throw fileErrors.invalid(api, 'The request URL is malformed.');
  }
  const { projectId } = deps.files.locate(api, bucket, name);
  const signer = await checkSignature(deps, request, url, rawPath, host);
  if (signer !== projectId) throw fileErrors.denied(api, request.method === 'PUT' ? 'WRITE' : 'READ');
  const caller = { kind: 'admin' } as const;
  if (request.method === 'GET' || request.method === 'HEAD') {
    const object = await deps.files.readable(api, caller, bucket, name);
    return sendObjectBytes(deps.files, deps.downloadsPerAddress, api, object, request, reply);
  }
  if (request.method === 'PUT') {
    const contentType = request.headers['content-type'];
    const object = await deps.uploads.uploadOnce(
      api,
      caller,
      { bucket, name, metadata: {}, ...(typeof contentType === 'string' && contentType ? { mediaContentType: contentType } : {}), withDownloadToken: false },
      request.raw,
      contentLength(request),
    );
    return reply.code(200).header('ETag', `"${object.md5Hash}"`).send();
  }
  throw new ApiError(405, `A signed URL does not take ${request.method}.`, undefined, true);
}

/** The signing service account's project, once the signature, the times and the signed headers hold. */
async function checkSignature(deps: SignedUrlDeps, request: FastifyRequest, url: URL, rawPath: string, host: string): Promise<string> {
  const denied = (why: string) => new ApiError(403, `The signed URL is not valid: ${why}.`, undefined, true);
  const query = url.searchParams;
  const one = (key: string) => {
    const values = query.getAll(key);
    if (values.length !== 1) throw denied(`${key} is required once`);
    return values[0]!;
  };
  if (one('X-Goog-Algorithm') !== 'GOOG4-RSA-SHA256') throw denied('only GOOG4-RSA-SHA256 is accepted');
  const credential = one('X-Goog-Credential');
  const date = one('X-Goog-Date');
  const expires = Number(one('X-Goog-Expires'));
  const signedHeaders = one('X-Goog-SignedHeaders');
  const signature = one('X-Goog-Signature');
  const credentialMatch = /^([^/]+)\/(\d{8})\/([^/]+)\/storage\/goog4_request$/.exec(credential);
  const dateMatch = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  if (!credentialMatch || !dateMatch || credentialMatch[2] !== date.slice(0, 8)) throw denied('malformed credential or date');
  if (!Number.isInteger(expires) || expires < 1 || expires > maxExpiresSeconds) throw denied('X-Goog-Expires must be 1 to 604800 seconds');
  if (!/^[0-9a-f]+$/i.test(signature)) throw denied('malformed signature');
  const signedAt = Date.UTC(Number(dateMatch[1]), Number(dateMatch[2]) - 1, Number(dateMatch[3]), Number(dateMatch[4]), Number(dateMatch[5]), Number(dateMatch[6]));
  const now = Date.now();
  if (now + skewMs < signedAt) throw denied('it is not valid yet');
  if (now > signedAt + expires * 1000) throw denied('it has expired');
  const headerNames = signedHeaders.split(';');
  if (!headerNames.includes('host')) throw denied('the host header must be signed');
  const canonicalHeaders = headerNames
    .map((headerName) => {
      const value = headerName === 'host' ? host : request.headers[headerName];
      if (typeof value !== 'string') throw denied(`the signed header ${headerName} is missing`);
      return `${headerName}:${value.trim().replace(/\s{2,}/g, ' ')}\n`;
    })
    .join('');
  const canonicalQuery = [...query.entries()]
    .filter(([key]) => key !== 'X-Goog-Signature')
    .map(([key, value]) => [encodeStrict(key), encodeStrict(value)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  // HEAD is allowed on a URL signed for GET, as Google does.
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  const canonicalRequest = [method, rawPath, canonicalQuery, canonicalHeaders, signedHeaders, request.headers['x-goog-content-sha256'] ?? 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${credentialMatch[2]}/${credentialMatch[3]}/storage/goog4_request`;
  const toSign = ['GOOG4-RSA-SHA256', date, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const account = await deps.keysOf(credentialMatch[1]!);
  const signatureBytes = Buffer.from(signature, 'hex');
  if (!account || !account.keys.some((key) => verify('RSA-SHA256', Buffer.from(toSign), key, signatureBytes))) throw denied('the signature does not match');
  return account.projectId;
}

/** encodeURIComponent with `!'()*` escaped too (what the signer encodes). */
function encodeStrict(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}
