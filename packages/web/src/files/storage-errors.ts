import type { ErrorOverrides } from '../auth-errors';

/** Plain sentences for firebase/storage's error codes (ErrorAlert's overrides). */
export const storageErrorMessages: ErrorOverrides = {
  'storage/unauthorized': 'This site’s rules do not allow that file here. Check its type and size.',
  'storage/unauthenticated': 'Your session has ended. Please sign in again.',
  'storage/object-not-found': 'That file is no longer there.',
  'storage/quota-exceeded': 'This site has no room for more files right now.',
  'storage/retry-limit-exceeded': 'The server could not be reached for too long. Check your connection and try again.',
  'storage/canceled': 'The upload was stopped.',
  'storage/server-file-wrong-size': 'The file did not arrive whole. Please try again.',
  'storage/unknown': 'Something went wrong with the file. Please try again.',
};

/** Sizes as people read them: 980 bytes, 12.4 KB, 3.1 MB. */
export function readableSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1000 * 1000) return `${(bytes / 1000).toFixed(1)} KB`;
  return `${(bytes / 1000 / 1000).toFixed(1)} MB`;
}
