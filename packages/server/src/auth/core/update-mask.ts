import { requestErrors } from '../../http/api-error.js';

/**
 * A PATCH's `updateMask`, as Google reads it: which fields to apply (all given fields when there is
 * no mask). A path names a field or every field under it; a mask naming a field outside `known` is
 * refused.
 */
export function updateMaskFilter(updateMask: string | undefined, known: readonly string[]): (path: string) => boolean {
  const paths = updateMask ? updateMask.split(',').map((p) => p.trim()) : undefined;
  for (const path of paths ?? []) {
    if (!known.some((k) => k === path || k.startsWith(`${path}.`))) throw requestErrors.invalidArgument(`Unknown field in updateMask: ${path}`);
  }
  return (path) => (paths ? paths.some((p) => p === path || path.startsWith(`${p}.`)) : true);
}
