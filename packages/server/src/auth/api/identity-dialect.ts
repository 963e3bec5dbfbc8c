import type { WireDialect } from '../../http/app.js';
import { authError, unservedIdentityRoute } from '../errors.js';

/** The identity API's hosts (as path prefixes, the way the SDKs reach an emulator host). */
const identityApiPath = /^\/(identitytoolkit\.googleapis\.com|securetoken\.googleapis\.com|www\.googleapis\.com\/identitytoolkit)\//;

/**
 * The identity API's errors where the HTTP app answers by itself: a call Hearth lacks names
 * OPERATION_NOT_ALLOWED (the SDK's auth/operation-not-allowed), a refused credential
 * INSUFFICIENT_PERMISSION, as Google's servers do.
 */
export const identityDialect: WireDialect = {
  serves: (path) => identityApiPath.test(path),
  notFound: unservedIdentityRoute,
  permissionDenied: (message) => authError('INSUFFICIENT_PERMISSION', message),
};
