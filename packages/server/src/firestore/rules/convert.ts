import type { Doc } from '../core/documents.js';
import type { DatabaseId } from '../core/paths.js';
import type { Fields, Value } from '../core/values.js';
import { LazyMap, RulesLatLng, RulesMap, RulesPath, RulesTimestamp, type RulesValue } from './values.js';

/**
 * Hearth's stored values as rules values. Maps convert field by field on first read, so a rule
 * that reads one field of a large document converts one field. References and `__name__` are
 * paths from `databases`: `/databases/(default)/documents/users/u1` (the emulator's form;
 * `string(resource.data.ref)` is that text).
 */
export function fromValue(value: Value): RulesValue {
  switch (value.type) {
    case 'null':
      return null;
    case 'boolean':
    case 'integer':
    case 'double':
    case 'string':
    case 'bytes':
      return value.value;
    case 'timestamp':
      return new RulesTimestamp(BigInt(value.seconds) * 1_000_000_000n + BigInt(value.nanos));
    case 'reference':
      return referencePath(value.value);
    case 'geo':
      return new RulesLatLng(value.latitude, value.longitude);
    case 'array':
      return value.values.map(fromValue);
    case 'map':
      return fieldsMap(value.fields);
  }
}

export function fieldsMap(fields: Fields): RulesMap {
  return new LazyMap([...fields.keys()], (key) => {
    const value = fields.get(key);
    return value === undefined ? undefined : fromValue(value);
  });
}

/** `projects/p/databases/d/documents/a/b` -> `/databases/d/documents/a/b`. */
export function referencePath(name: string): RulesPath {
  const segments = name.split('/');
  return new RulesPath(segments[0] === 'projects' ? segments.slice(2) : segments);
}

export function documentPath(db: DatabaseId, relative: string): RulesPath {
  return new RulesPath(['databases', db.databaseId, 'documents', ...(relative === '' ? [] : relative.split('/'))]);
}

/** rules.firestore.Resource: `data`, `id` and `__name__`. */
export function resourceOf(db: DatabaseId, doc: Doc): RulesMap {
  return new LazyMap(['data', 'id', '__name__'], (key) => {
    if (key === 'data') return fieldsMap(doc.fields);
    if (key === 'id') return doc.key.id;
    return documentPath(db, doc.key.path);
  });
}

/** ID token claims: JSON numbers that are whole become ints (iat, exp), others floats. */
export function fromJson(value: unknown): RulesValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      return Number.isSafeInteger(value) ? BigInt(value) : value;
    case 'object':
      if (Array.isArray(value)) return value.map(fromJson);
      return new RulesMap(new Map(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, fromJson(item)])));
  }
  return null;
}
