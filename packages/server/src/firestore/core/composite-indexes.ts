import { readFileSync } from 'node:fs';
import type { IndexEntry } from '../../storage/document-store.js';
import { compositeKind, type Doc } from './documents.js';
import { complement, encodeSegments, encodeValue } from './index-encoding.js';
import { formatFieldPath, parseFieldPath } from './paths.js';
import { conjuncts, type Query } from './query.js';
import { getField } from './documents.js';
import { isNaNValue, type Value } from './values.js';

/**
 * Composite indexes declared in a `firestore.indexes.json` file (the Firebase CLI's format).
 * Single-field indexes need no declaration: every field is indexed. A composite index serves
 * queries with equality filters on some fields and an order on others, which a single-field
 * index can only answer by filtering. Collection-group scoped indexes are accepted and not used.
 */
export interface CompositeIndexField {
  path: string;
  segments: string[];
  mode: 'ASCENDING' | 'DESCENDING' | 'CONTAINS';
}

export interface CompositeIndex {
  /** Stable id, also the `field` of its index entries. */
  id: string;
  collectionGroup: string;
  queryScope: 'COLLECTION' | 'COLLECTION_GROUP';
  fields: CompositeIndexField[];
}

export function loadIndexFile(file: string): CompositeIndex[] {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { indexes?: unknown };
  if (!Array.isArray(parsed.indexes)) return [];
  return parsed.indexes.map((raw, i) => parseIndex(raw, `${file}: indexes[${i}]`));
}

function parseIndex(raw: unknown, where: string): CompositeIndex {
  const index = raw as { collectionGroup?: unknown; queryScope?: unknown; fields?: unknown };
  if (typeof index.collectionGroup !== 'string' || !Array.isArray(index.fields) || index.fields.length === 0) {
    throw new Error(`${where} needs collectionGroup and fields`);
  }
  const fields = index.fields.map((field: { fieldPath?: unknown; order?: unknown; arrayConfig?: unknown }) => {
    if (typeof field.fieldPath !== 'string') throw new Error(`${where}: every field needs a fieldPath`);
    const mode = field.arrayConfig === 'CONTAINS' ? 'CONTAINS' : field.order === 'DESCENDING' ? 'DESCENDING' : field.order === 'ASCENDING' ? 'ASCENDING' : undefined;
    if (!mode) throw new Error(`${where}: field ${field.fieldPath} needs order ASCENDING/DESCENDING or arrayConfig CONTAINS`);
    const segments = parseFieldPath(field.fieldPath);
    return { path: formatFieldPath(segments), segments, mode } as CompositeIndexField;
  });
  const queryScope = index.queryScope === 'COLLECTION_GROUP' ? 'COLLECTION_GROUP' : 'COLLECTION';
  const id = `ci:${index.collectionGroup}:${queryScope}:${fields.map((f) => `${f.path}/${f.mode}`).join(',')}`;
  return { id, collectionGroup: index.collectionGroup, queryScope, fields };
}

/** The whole set, as recorded beside the entries built for it. */
export function indexSetText(indexes: readonly CompositeIndex[]): string {
  return JSON.stringify(indexes.map((index) => index.id).sort());
}

/** A document's keys in one index: its values in index order, then its name (last field's direction). */
export function compositeEntries(indexes: readonly CompositeIndex[], doc: Doc): IndexEntry[] {
  const entries: IndexEntry[] = [];
  for (const index of indexes) {
    if (index.queryScope !== 'COLLECTION' || doc.key.collectionId !== index.collectionGroup) continue;
    const parts: Buffer[][] = [[]];
    let complete = true;
    for (const field of index.fields) {
      const value = getField(doc.fields, field.segments);
      if (value === undefined) {
        complete = false;
        break;
      }
      const options = field.mode === 'CONTAINS' ? distinctElements(value) : [encodeDirected(value, field.mode)];
      const next: Buffer[][] = [];
      for (const prefix of parts) for (const option of options) next.push([...prefix, option]);
      parts.splice(0, parts.length, ...next);
    }
    if (!complete) continue;
    const last = index.fields[index.fields.length - 1]!;
    const name = encodeSegments(doc.key.path.split('/'));
    const namePart = last.mode === 'DESCENDING' ? complement(name) : name;
    for (const prefix of parts) entries.push({ field: index.id, kind: compositeKind, value: Buffer.concat([...prefix, namePart]) });
  }
  return entries;
}

function encodeDirected(value: Value, mode: CompositeIndexField['mode']): Buffer {
  const encoded = encodeValue(value);
  return mode === 'DESCENDING' ? complement(encoded) : encoded;
}

function distinctElements(value: Value): Buffer[] {
  if (value.type !== 'array') return [];
  const seen = new Map<string, Buffer>();
  for (const element of value.values) {
    const encoded = encodeValue(element);
    seen.set(encoded.toString('latin1'), encoded);
  }
  return [...seen.values()];
}

/**
 * An index fits when its leading fields are pinned by equality (or array-contains) filters and
 * the remaining fields are exactly the query's order (or exactly its reverse).
 */
export function compositeIndexFor(
  indexes: readonly CompositeIndex[],
  collection: string,
  query: Query,
): { index: CompositeIndex; prefix: Buffer; descending: boolean } | undefined {
  const collectionId = collection.slice(collection.lastIndexOf('/') + 1);
  const equal = new Map<string, Value>();
  const contains = new Map<string, Value>();
  for (const filter of conjuncts(query.filter)) {
    if (filter.kind !== 'field' || filter.field.isKey || filter.value.type === 'null' || isNaNValue(filter.value)) continue;
    if (filter.op === 'EQUAL') equal.set(filter.field.path, filter.value);
    if (filter.op === 'ARRAY_CONTAINS') contains.set(filter.field.path, filter.value);
  }
  const orders = query.orderBy.slice(0, -1);
  const nameOrder = query.orderBy[query.orderBy.length - 1]!;
  if (orders.some((order) => order.field.isKey) || (equal.size === 0 && contains.size === 0)) return undefined;
  for (const index of indexes) {
    if (index.queryScope !== 'COLLECTION' || index.collectionGroup !== collectionId) continue;
    const prefix: Buffer[] = [];
    let i = 0;
    for (; i < index.fields.length; i++) {
      const field = index.fields[i]!;
      const pinned = field.mode === 'CONTAINS' ? contains.get(field.path) : equal.get(field.path);
      if (!pinned) break;
      prefix.push(field.mode === 'CONTAINS' ? encodeValue(pinned) : encodeDirected(pinned, field.mode));
    }
    const rest = index.fields.slice(i);
    if (i === 0 || rest.length !== orders.length) continue;
    const lastMode = index.fields[index.fields.length - 1]!.mode;
    const nameDescendingInIndex = lastMode === 'DESCENDING';
    for (const descending of [false, true]) {
      const fits = rest.every((field, j) => field.mode !== 'CONTAINS' && field.path === orders[j]!.field.path && ((field.mode === 'DESCENDING') !== descending) === orders[j]!.descending)
        && (nameDescendingInIndex !== descending) === nameOrder.descending;
      if (fits) return { index, prefix: Buffer.concat(prefix), descending };
    }
  }
  return undefined;
}
