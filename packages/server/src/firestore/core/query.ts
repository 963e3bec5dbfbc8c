import { getField, type Doc } from './documents.js';
import { fullName, type DatabaseId, type DocumentKey } from './paths.js';
import type { FindNearest } from './vector-search.js';
import { compareSegments, compareValues, isNaNValue, typeOrder, valuesEqual, type Value } from './values.js';
import { encodeValue } from './index-encoding.js';
import { indexValueKey, maxIndexValueBytes } from '../../storage/index-value-prefix.js';

/**
 * Structured queries: parsed and checked once, normalized (the implicit orderBy of inequality
 * fields and `__name__`), then matched and ordered document by document with the server's exact
 * semantics (research/firestore-semantics.md §2). The planner only chooses where candidates come
 * from; these functions decide what is in the answer.
 */

export interface FieldRef {
  segments: string[];
  /** Canonical dotted form, as the index stores it. */
  path: string;
  isKey: boolean;
}

export type FieldOp =
  | 'LESS_THAN'
  | 'LESS_THAN_OR_EQUAL'
  | 'GREATER_THAN'
  | 'GREATER_THAN_OR_EQUAL'
  | 'EQUAL'
  | 'NOT_EQUAL'
  | 'ARRAY_CONTAINS'
  | 'IN'
  | 'ARRAY_CONTAINS_ANY'
  | 'NOT_IN';
export type UnaryOp = 'IS_NAN' | 'IS_NULL' | 'IS_NOT_NAN' | 'IS_NOT_NULL';

export type Filter =
  | { kind: 'composite'; op: 'AND' | 'OR'; filters: Filter[] }
  | { kind: 'field'; field: FieldRef; op: FieldOp; value: Value }
  | { kind: 'unary'; field: FieldRef; op: UnaryOp };

export interface Order {
  field: FieldRef;
  descending: boolean;
}

export interface Cursor {
  values: Value[];
  before: boolean;
}

export interface Query {
  /** The parent document's relative path ('' for the root). */
  parent: string;
  collectionId?: string;
  allDescendants: boolean;
  filter?: Filter;
  /** Normalized: explicit orders, inequality fields, then `__name__`. */
  orderBy: Order[];
  startAt?: Cursor;
  endAt?: Cursor;
  offset: number;
  limit?: number;
  /** Field paths to return; an empty list returns names only. */
  select?: string[][];
  /** Vector search: the rest of the query is its pre-filter (core/vector-search.ts). */
  findNearest?: FindNearest;
}

export interface QueryLimits {
  /** `in` and `array-contains-any` values (30 in production; 10 for old clients). */
  maxInValues: number;
  maxNotInValues: number;
  maxDisjunctions: number;
}

export const defaultQueryLimits: QueryLimits = { maxInValues: 30, maxNotInValues: 10, maxDisjunctions: 30 };

const rangeOps = new Set<string>(['LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL']);

// ---- matching and ordering --------------------------------------------------------------------

/** A document's value for a field; `__name__` is its reference. */
export function valueOf(db: DatabaseId, doc: Doc, field: FieldRef): Value | undefined {
  if (field.isKey) return { type: 'reference', value: fullName(db, doc.key.path) };
  return getField(doc.fields, field.segments);
}

/** The path of the collection a (non-group) query reads. */
export function queryCollection(query: Query): string {
  return query.parent === '' ? query.collectionId! : `${query.parent}/${query.collectionId!}`;
}

/** Could a document at this key be in the query's scope (its collection, or group under the parent)? */
export function inScope(query: Query, key: DocumentKey): boolean {
  if (!query.allDescendants) return key.parent === queryCollection(query);
  if (query.parent !== '' && !key.path.startsWith(`${query.parent}/`)) return false;
  return query.collectionId === undefined || key.collectionId === query.collectionId;
}

/** Scope, filter, every ordered field present, and within the cursors. */
export function matchesQuery(db: DatabaseId, query: Query, doc: Doc): boolean {
  if (!inScope(query, doc.key)) return false;
  for (const order of query.orderBy) if (valueOf(db, doc, order.field) === undefined) return false;
  if (query.filter && !matchesFilter(db, query.filter, doc)) return false;
  return withinCursors(db, query, doc);
}

export function matchesFilter(db: DatabaseId, filter: Filter, doc: Doc): boolean {
  switch (filter.kind) {
    case 'composite':
      return filter.op === 'AND' ? filter.filters.every((f) => matchesFilter(db, f, doc)) : filter.filters.length === 0 || filter.filters.some((f) => matchesFilter(db, f, doc));
    case 'unary':
      return matchesUnary(filter.op, valueOf(db, doc, filter.field));
    case 'field':
      return matchesField(filter.op, valueOf(db, doc, filter.field), filter.value);
  }
}

function matchesUnary(op: UnaryOp, value: Value | undefined): boolean {
  if (value === undefined) return false;
  switch (op) {
    case 'IS_NULL':
      return value.type === 'null';
    case 'IS_NAN':
      return isNaNValue(value);
    case 'IS_NOT_NULL':
      return value.type !== 'null';
    case 'IS_NOT_NAN':
      return comparable(value);
  }
}

/** A null or NaN operand never equals anything: the SDKs send IS_NULL / IS_NAN for those. */
/** Null and NaN match only equality (and IS_NULL / IS_NAN): no range, order or index bound uses them. */
export function comparable(operand: Value): boolean {
  return operand.type !== 'null' && !isNaNValue(operand);
}

export function matchesField(op: FieldOp, value: Value | undefined, operand: Value): boolean {
  if (value === undefined) return false;
  switch (op) {
    case 'EQUAL':
      return comparable(operand) && valuesEqual(value, operand);
    case 'NOT_EQUAL':
      // NaN equals nothing, so `!= NaN` keeps every present, non-null value.
      return operand.type !== 'null' && value.type !== 'null' && !(comparable(operand) && valuesEqual(value, operand));
    case 'LESS_THAN':
    case 'LESS_THAN_OR_EQUAL':
    case 'GREATER_THAN':
    case 'GREATER_THAN_OR_EQUAL': {
      if (!comparable(operand) || isNaNValue(value) || typeOrder(value) !== typeOrder(operand)) return false;
      const order = compareValues(value, operand);
      if (op === 'LESS_THAN') return order < 0;
      if (op === 'LESS_THAN_OR_EQUAL') return order <= 0;
      if (op === 'GREATER_THAN') return order > 0;
      return order >= 0;
    }
    case 'ARRAY_CONTAINS':
      return comparable(operand) && value.type === 'array' && value.values.some((element) => valuesEqual(element, operand));
    case 'ARRAY_CONTAINS_ANY': {
      const operands = operand.type === 'array' ? operand.values.filter(comparable) : [];
      return value.type === 'array' && value.values.some((element) => operands.some((o) => valuesEqual(element, o)));
    }
    case 'IN': {
      const operands = operand.type === 'array' ? operand.values.filter(comparable) : [];
      return operands.some((o) => valuesEqual(value, o));
    }
    case 'NOT_IN': {
      const operands = operand.type === 'array' ? operand.values : [];
      if (operands.some((o) => o.type === 'null')) return false;
      return value.type !== 'null' && !operands.some((o) => comparable(o) && valuesEqual(value, o));
    }
  }
}

/** The order of results: the normalized orderBy, each field's direction applied. */
export function compareDocs(db: DatabaseId, orderBy: readonly Order[], left: Doc, right: Doc): number {
  for (const order of orderBy) {
    const result = order.field.isKey ? compareSegments(left.key.path.split('/'), right.key.path.split('/')) : compareMissingFirst(valueOf(db, left, order.field), valueOf(db, right, order.field));
    if (result !== 0) return order.descending ? -result : result;
  }
  return 0;
}

/** Documents without an ordered field are never in an answer; ordering them first keeps sorting total. */
function compareMissingFirst(left: Value | undefined, right: Value | undefined): number {
  if (left === undefined || right === undefined) return left === right ? 0 : left === undefined ? -1 : 1;
  return compareForOrder(left, right);
}

/**
 * Order as the index holds it: only a value's kept prefix counts (storage/index-value-prefix.ts),
 * so long values sharing it tie and the order goes on by name, as on Firestore. The index encoding
 * sorts as compareValues does, so for values within the prefix this is compareValues itself.
 */
function compareForOrder(left: Value, right: Value): number {
  if (!mayBeLong(left) && !mayBeLong(right)) return compareValues(left, right);
  const [a, b] = [encodeValue(left), encodeValue(right)];
  if (a.length <= maxIndexValueBytes && b.length <= maxIndexValueBytes) return compareValues(left, right);
  return Buffer.compare(indexValueKey(a), indexValueKey(b));
}

/** Whether a value's encoding may pass the kept prefix (a cheap bound: UTF-8 is at most 3 bytes per UTF-16 unit, escapes double a byte). */
function mayBeLong(value: Value): boolean {
  switch (value.type) {
    case 'string':
    case 'reference':
      return value.value.length * 3 + 8 > maxIndexValueBytes;
    case 'bytes':
      return value.value.length * 2 + 8 > maxIndexValueBytes;
    case 'array':
    case 'map':
      return true;
    default:
      return false;
  }
}

/** Where the document sits relative to a cursor's position (over the cursor's own length). */
function compareToCursor(db: DatabaseId, orderBy: readonly Order[], doc: Doc, cursor: Cursor): number {
  for (let i = 0; i < cursor.values.length; i++) {
    const order = orderBy[i]!;
    const value = valueOf(db, doc, order.field);
    if (value === undefined) return -1;
    const result = compareForOrder(value, cursor.values[i]!);
    if (result !== 0) return order.descending ? -result : result;
  }
  return 0;
}

export function withinCursors(db: DatabaseId, query: Query, doc: Doc): boolean {
  if (query.startAt) {
    const position = compareToCursor(db, query.orderBy, doc, query.startAt);
    if (query.startAt.before ? position < 0 : position <= 0) return false;
  }
  if (query.endAt) {
    const position = compareToCursor(db, query.orderBy, doc, query.endAt);
    if (query.endAt.before ? position >= 0 : position > 0) return false;
  }
  return true;
}

/** The filters that must hold for every result: the top-level conjunction. */
export function conjuncts(filter: Filter | undefined): Filter[] {
  if (!filter) return [];
  if (filter.kind === 'composite' && filter.op === 'AND') return filter.filters.flatMap(conjuncts);
  if (filter.kind === 'composite' && filter.filters.length === 1) return conjuncts(filter.filters[0]);
  return [filter];
}

export function isRangeOp(op: string): boolean {
  return rangeOps.has(op);
}
