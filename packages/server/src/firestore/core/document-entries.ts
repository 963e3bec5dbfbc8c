import type { IndexEntry } from '../../storage/document-store.js';
import { indexValueKey } from '../../storage/index-value-prefix.js';
import { encodeValue } from './index-encoding.js';
import { formatFieldPath } from './paths.js';
import { isVector, type Fields, type Value } from './values.js';

export const valueKind = 0;
export const arrayElementKind = 1;
export const compositeKind = 2;

/**
 * A document's single-field entries by top-level field: every field at every depth of maps, both
 * as a value and, for arrays, per distinct element. Kept apart per top-level field because the
 * entries of one never coincide with another's (their paths differ), so an overwrite compares only
 * the fields whose value changed (`entryChanges`).
 */
export function singleFieldEntriesByField(fields: Fields): Map<string, IndexEntry[]> {
  const byField = new Map<string, IndexEntry[]>();
  for (const [name, value] of fields) byField.set(name, fieldEntries(name, value));
  return byField;
}

/** Every single-field entry of a document. */
export function singleFieldEntries(fields: Fields): IndexEntry[] {
  const entries: IndexEntry[] = [];
  for (const [name, value] of fields) visit(entries, [name], value);
  return entries;
}

function fieldEntries(name: string, value: Value): IndexEntry[] {
  const entries: IndexEntry[] = [];
  visit(entries, [name], value);
  return entries;
}

function visit(entries: IndexEntry[], path: string[], value: Value): void {
  const field = formatFieldPath(path);
  entries.push({ field, kind: valueKind, value: indexValueKey(encodeValue(value)) });
  if (value.type === 'array') {
    // Distinct by the kept prefix: two long elements sharing it are one entry (an update removing one keeps it).
    const seen = new Set<string>();
    for (const element of value.values) {
      const encoded = indexValueKey(encodeValue(element));
      const id = encoded.toString('latin1');
      if (seen.has(id)) continue;
      seen.add(id);
      entries.push({ field, kind: arrayElementKind, value: encoded });
    }
  } else if (value.type === 'map' && !isVector(value)) {
    for (const [name, child] of value.fields) visit(entries, [...path, name], child);
  }
}

function entryId(entry: IndexEntry): string {
  return `${entry.kind}\u0000${entry.field}\u0000${entry.value.toString('latin1')}`;
}

/** The entries of `old` that `next` lacks (to remove), and of `next` that `old` lacks (to add). */
export function diffEntries(old: readonly IndexEntry[], next: readonly IndexEntry[]): { remove: IndexEntry[]; add: IndexEntry[] } {
  if (old.length === 0 || next.length === 0) return { remove: [...old], add: [...next] };
  // A scalar field on both sides (the common overwrite): its one entry, compared without building ids.
  if (old.length === 1 && next.length === 1) {
    const [a, b] = [old[0]!, next[0]!];
    return a.kind === b.kind && a.field === b.field && a.value.equals(b.value) ? { remove: [], add: [] } : { remove: [a], add: [b] };
  }
  const oldIds = new Set(old.map(entryId));
  const nextIds = new Set(next.map(entryId));
  return { remove: old.filter((entry) => !nextIds.has(entryId(entry))), add: next.filter((entry) => !oldIds.has(entryId(entry))) };
}

/**
 * The single-field entries to remove and add when a document's fields go from `before` to `after`.
 * A top-level field holding the same value on both sides keeps all its entries and is not encoded
 * at all: an overwrite that changes one field of twenty encodes and compares that one. `afterByField`:
 * `after`'s entries when already worked out (commit-encoding.ts).
 */
export function singleFieldChanges(before: Fields, after: Fields, afterByField?: ReadonlyMap<string, IndexEntry[]>): { remove: IndexEntry[]; add: IndexEntry[] } {
  const remove: IndexEntry[] = [];
  const add: IndexEntry[] = [];
  for (const [name, old] of before) {
    const next = after.get(name);
    if (next !== undefined && sameValue(old, next)) continue;
    const changes = diffEntries(fieldEntries(name, old), next === undefined ? [] : (afterByField?.get(name) ?? fieldEntries(name, next)));
    remove.push(...changes.remove);
    add.push(...changes.add);
  }
  for (const [name, next] of after) if (!before.has(name)) add.push(...(afterByField?.get(name) ?? fieldEntries(name, next)));
  return { remove, add };
}

/**
 * Identical values (same type, same contents): they have the same index entries. Stricter than
 * Firestore's equality (1 and 1.0, 0 and -0.0 differ here though their entries agree), which only
 * costs a needless comparison of entries.
 */
export function sameValue(left: Value, right: Value): boolean {
  if (left === right) return true;
  switch (left.type) {
    case 'null':
      return right.type === 'null';
    case 'boolean':
    case 'integer':
    case 'string':
    case 'reference':
      return right.type === left.type && right.value === left.value;
    case 'double':
      return right.type === 'double' && Object.is(right.value, left.value);
    case 'timestamp':
      return right.type === 'timestamp' && right.seconds === left.seconds && right.nanos === left.nanos;
    case 'bytes':
      return right.type === 'bytes' && right.value.equals(left.value);
    case 'geo':
      return right.type === 'geo' && Object.is(right.latitude, left.latitude) && Object.is(right.longitude, left.longitude);
    case 'array':
      return right.type === 'array' && right.values.length === left.values.length && left.values.every((value, i) => sameValue(value, right.values[i]!));
    case 'map': {
      if (right.type !== 'map' || right.fields.size !== left.fields.size) return false;
      for (const [name, value] of left.fields) {
        const other = right.fields.get(name);
        if (other === undefined || !sameValue(value, other)) return false;
      }
      return true;
    }
  }
}
