import { firestoreErrors } from './errors.js';

/** Shape checks shared by every parser of request JSON, with Google's parser messages. */
export type WireObject = Record<string, unknown>;

export function wireObject(raw: unknown, where: string): WireObject {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw firestoreErrors.invalidArgument(`Invalid JSON payload received. Invalid value at '${where}': expected an object.`);
  }
  return raw as WireObject;
}

export function onlyKeys(raw: WireObject, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key)) throw firestoreErrors.invalidArgument(`Invalid JSON payload received. Unknown name "${key}" at '${where}': Cannot find field.`);
  }
}
