import { ApiError } from '../../http/api-error.js';

/**
 * Firestore's error answers, with the status and the message the SDK shows the developer
 * (`FirebaseError: [code=invalid-argument]: <message>`). Messages follow production's text where
 * it is known (research/firestore-semantics.md §1.4, §2.5, §3).
 */
export const firestoreErrors = {
  invalidArgument: (message: string) => new ApiError(400, message, 'INVALID_ARGUMENT'),
  failedPrecondition: (message: string) => new ApiError(400, message, 'FAILED_PRECONDITION'),
  notFound: (message: string) => new ApiError(404, message, 'NOT_FOUND'),
  alreadyExists: (message: string) => new ApiError(409, message, 'ALREADY_EXISTS'),
  aborted: (message: string) => new ApiError(409, message, 'ABORTED'),
  permissionDenied: () => new ApiError(403, 'Missing or insufficient permissions.', 'PERMISSION_DENIED'),
  permissionDeniedWith: (message: string) => new ApiError(403, message, 'PERMISSION_DENIED'),
  unauthenticated: (message: string) => new ApiError(401, message, 'UNAUTHENTICATED'),
  unimplemented: (message: string) => new ApiError(501, message, 'UNIMPLEMENTED'),
  resourceExhausted: (message: string) => new ApiError(429, message, 'RESOURCE_EXHAUSTED'),
};
