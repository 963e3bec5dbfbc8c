import type { IndexEntry, IndexPosition } from '../../storage/document-store.js';
import { indexValueKey } from '../../storage/index-value-prefix.js';
import { compositeKind, getField, nameKey, type Doc } from './documents.js';
import { complement, encodeValue } from './index-encoding.js';
import { comparable, conjuncts, type Filter, type Query } from './query.js';
import type { Value } from './values.js';

/**
 * Declared indexes (see index-file.ts). Single-field indexes of collection scope need no
 * declaration: every field is indexed. A composite index serves queries with equality filters on
 * some fields and an order on others, which a single-field index can only answer by filtering; a
 * collection-group index (composite or one field) serves a group's filtered or ordered queries,
 * which could otherwise only scan the whole group.
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

/** The whole set, as recorded beside the entries built for it. */
export function indexSetText(indexes: readonly CompositeIndex[], vectorSets: readonly string[] = []): string {
  return JSON.stringify([...indexes.map((index) => index.id), ...vectorSets].sort());
}

/** Where a collection group's entries are filed: no collection path starts with a slash. */
export function groupIndexParent(collectionId: string): string {
  return `/${collectionId}`;
}

/**
 * A document's keys in each index of its collection id: its values in index order, then its name
 * (in the last field's direction), so keys are unique and equal values sort by name.
 */
export function compositeEntries(indexes: readonly CompositeIndex[], doc: Doc): IndexEntry[] {
  const entries: IndexEntry[] = [];
  let name: Buffer | undefined;
  for (const index of indexes) {
    if (doc.key.collectionId !== index.collectionGroup) continue;
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
    name ??= nameKey(doc.key.path);
    const namePart = last.mode === 'DESCENDING' ? complement(name) : name;
    const filing = index.queryScope === 'COLLECTION_GROUP' ? { parent: groupIndexParent(index.collectionGroup), docId: doc.key.path } : {};
    const kept = new Set<string>();
    for (const prefix of parts) {
      // Cut to the kept prefix (storage/index-value-prefix.ts): options sharing it are one entry.
      const value = indexValueKey(Buffer.concat([...prefix, namePart]));
      const id = value.toString('latin1');
      if (kept.has(id)) continue;
      kept.add(id);
      entries.push({ field: index.id, kind: compositeKind, value, ...filing });
    }
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

/** An index that fits a query, and the key range the query's filters and cursor leave of it. */
export interface IndexFit {
  index: CompositeIndex;
  lower: IndexPosition;
  upper: IndexPosition;
  /** Whether the index is read backwards. */
  descending: boolean;
}

/**
 * An index fits when its leading fields are pinned by equality (or array-contains) filters and
 * the remaining fields are exactly the query's order (or exactly its reverse).
 */
export function compositeIndexFor(
  indexes: readonly CompositeIndex[],
  scope: CompositeIndex['queryScope'],
  collectionId: string,
  query: Query,
): IndexFit | undefined {
  const filters = conjuncts(query.filter);
  const equal = new Map<string, Value>();
  const contains = new Map<string, Value>();
  for (const filter of filters) {
    if (filter.kind !== 'field' || filter.field.isKey || !comparable(filter.value)) continue;
    if (filter.op === 'EQUAL') equal.set(filter.field.path, filter.value);
    if (filter.op === 'ARRAY_CONTAINS') contains.set(filter.field.path, filter.value);
  }
  const orders = query.orderBy.slice(0, -1);
  const nameOrder = query.orderBy[query.orderBy.length - 1]!;
  if (orders.some((order) => order.field.isKey)) return undefined;
  // An index read in its own direction first; one read backwards serves as well.
  for (const descending of [false, true]) {
    for (const index of indexes) {
      if (index.queryScope !== scope || index.collectionGroup !== collectionId) continue;
      const prefix: Buffer[] = [];
      let i = 0;
      for (; i < index.fields.length; i++) {
        const field = index.fields[i]!;
        const pinned = field.mode === 'CONTAINS' ? contains.get(field.path) : equal.get(field.path);
        if (!pinned) break;
        prefix.push(field.mode === 'CONTAINS' ? encodeValue(pinned) : encodeDirected(pinned, field.mode));
      }
      const rest = index.fields.slice(i);
      if (rest.length !== orders.length || (i === 0 && rest.length === 0)) continue;
      const nameDescendingInIndex = index.fields[index.fields.length - 1]!.mode === 'DESCENDING';
      const fits = rest.every((field, j) => field.mode !== 'CONTAINS' && field.path === orders[j]!.field.path && ((field.mode === 'DESCENDING') !== descending) === orders[j]!.descending)
        && (nameDescendingInIndex !== descending) === nameOrder.descending;
      if (fits) return { index, descending, ...keyRange(Buffer.concat(prefix), rest[0], filters, query.startAt?.values[0], descending) };
    }
  }
  return undefined;
}

/**
 * The keys of the pinned prefix, narrowed by range filters on the first ordered field and by the
 * start cursor's value for it. Every key with that field equal to v lies in [prefix+enc(v),
 * prefix+enc(v)+FF): values are self-delimiting and a name part never starts with FF. A
 * descending field's complemented encoding reverses which side a range filter bounds.
 */
function keyRange(prefix: Buffer, ordered: CompositeIndexField | undefined, filters: Filter[], cursor: Value | undefined, backwards: boolean): { lower: IndexPosition; upper: IndexPosition } {
  let lower: IndexPosition = { value: prefix, inclusive: true };
  let upper: IndexPosition = { value: Buffer.concat([prefix, Buffer.of(0xff)]), inclusive: false };
  if (!ordered) return { lower, upper };
  const blockStart = (value: Value) => Buffer.concat([prefix, encodeDirected(value, ordered.mode)]);
  const blockEnd = (value: Value) => Buffer.concat([blockStart(value), Buffer.of(0xff)]);
  const raiseLower = (key: Buffer) => {
    if (Buffer.compare(key, lower.value) > 0) lower = { value: key, inclusive: true };
  };
  const dropUpper = (key: Buffer) => {
    if (Buffer.compare(key, upper.value) < 0) upper = { value: key, inclusive: false };
  };
  const reversed = ordered.mode === 'DESCENDING';
  for (const filter of filters) {
    if (filter.kind !== 'field' || filter.field.isKey || filter.field.path !== ordered.path) continue;
    if (!comparable(filter.value)) continue;
    // In key order: above v, at or above v, below v, at or below v.
    const value = filter.value;
    if (filter.op === 'GREATER_THAN') reversed ? dropUpper(blockStart(value)) : raiseLower(blockEnd(value));
    if (filter.op === 'GREATER_THAN_OR_EQUAL') reversed ? dropUpper(blockEnd(value)) : raiseLower(blockStart(value));
    if (filter.op === 'LESS_THAN') reversed ? raiseLower(blockEnd(value)) : dropUpper(blockStart(value));
    if (filter.op === 'LESS_THAN_OR_EQUAL') reversed ? raiseLower(blockStart(value)) : dropUpper(blockEnd(value));
  }
  // The cursor's own block is kept: whether it starts before or after it is decided per document.
  if (cursor) backwards ? dropUpper(blockEnd(cursor)) : raiseLower(blockStart(cursor));
  return { lower, upper };
}
