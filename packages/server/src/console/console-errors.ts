import { ApiError } from '../http/api-error.js';

/** The console's refusals, in Google's generic error shape. */
export const consoleErrors = {
  signedOut: () => new ApiError(401, 'No console session: sign in as an operator.', 'UNAUTHENTICATED'),
  wrongCredential: () => new ApiError(401, 'The admin key or operator ID token is not valid.', 'UNAUTHENTICATED'),
  wrongCredentialShape: () => new ApiError(400, 'Send exactly one of adminKey and idToken.', 'INVALID_ARGUMENT'),
  notOperator: () => new ApiError(401, 'This account is not an operator (custom claim hearthOperator: true), is disabled, or did not sign in with its password or phone number.', 'UNAUTHENTICATED'),
  tooManyAttempts: () => new ApiError(429, 'Too many failed console sign-ins from this address; try again later.', 'RESOURCE_EXHAUSTED'),
  foreignPage: () => new ApiError(403, 'The console is not reachable from web pages on other origins.', 'PERMISSION_DENIED'),
  missingHeader: () => new ApiError(403, 'Console requests must send X-Hearth-Console: 1.', 'PERMISSION_DENIED'),
};
