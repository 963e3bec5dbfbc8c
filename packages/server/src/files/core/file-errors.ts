import { ApiError } from '../../http/api-error.js';

/**
 * Cloud Storage's refusals. The Firebase v0 API (what firebase/storage reads) answers
 * `{"error":{"code":N,"message":"..."}}` without a status name, as Google's Storage emulator and
 * service do; the JSON API (@google-cloud/storage) adds the `errors` array with a reason.
 * The SDK picks its error code from the HTTP status (403 unauthorized, 404 object-not-found,
 * 401 unauthenticated, 412 precondition, 429/503 retried).
 */
export type StorageApi = 'v0' | 'json';

export type DeniedMethod = 'READ' | 'WRITE' | 'LIST';

export function fileError(api: StorageApi, httpStatus: number, message: string): ApiError {
  return new ApiError(httpStatus, message, undefined, api === 'json');
}

export const fileErrors = {
  denied: (api: StorageApi, method: DeniedMethod) => fileError(api, 403, `Permission denied. No ${method} permission.`),
  unauthenticated: (api: StorageApi) => fileError(api, 401, 'Invalid authentication credentials: the ID token could not be verified.'),
  objectNotFound: (api: StorageApi, bucket: string, name: string) => fileError(api, 404, api === 'json' ? `No such object: ${bucket}/${name}` : 'Not Found.'),
  uploadNotFound: (api: StorageApi) => fileError(api, 404, 'No such upload session (it expired, was cancelled, or never existed).'),
  invalid: (api: StorageApi, message: string) => fileError(api, 400, message),
  badPrefix: (api: StorageApi) => fileError(api, 400, 'The prefix parameter is required to be empty or ends with a single / character.'),
  tooLarge: (api: StorageApi, limit: number) => fileError(api, 413, `The object exceeds the maximum object size of ${limit} bytes.`),
  overQuota: (api: StorageApi) => fileError(api, 402, "The project's storage quota is exceeded."),
  preconditionFailed: (api: StorageApi) => fileError(api, 412, 'At least one of the pre-conditions you specified did not hold.'),
  checksumMismatch: (api: StorageApi, which: 'MD5' | 'CRC32C') => fileError(api, 400, `Provided ${which} hash doesn't match calculated ${which} hash.`),
  rangeNotSatisfiable: (api: StorageApi) => fileError(api, 416, 'The requested range cannot be satisfied.'),
  offsetMismatch: (api: StorageApi, received: number) => fileError(api, 400, `The upload offset does not match the bytes received so far (${received}).`),
  uploadNotActive: (api: StorageApi) => fileError(api, 400, 'The upload is no longer active (finalized or cancelled).'),
  adminOnly: (api: StorageApi) => fileError(api, 403, 'Missing admin credentials.'),
  unavailable: (api: StorageApi) => fileError(api, 503, 'The storage service is unavailable; try again.'),
  tooManyRequests: (api: StorageApi) => fileError(api, 429, 'Too many requests from this address; slow down.'),
};
