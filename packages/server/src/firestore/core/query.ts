import { getField, type Doc } from './documents.js';
import { firestoreErrors } from './errors.js';
import { fullName, keyField, parseFieldPath, formatFieldPath, relativeName, pathSegments, type DatabaseId } from './paths.js';
import { compareSegments, compareValues, fromWire, isNaNValue, typeOrder, valuesEqual, type Value } from './values.js';

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
}

export interface QueryLimits {
  /** `in` and `array-contains-any` values (30 in production; 10 for old clients). */
  maxInValues: number;
  maxNotInValues: number;
  maxDisjunctions: number;
}

export const defaultQueryLimits: QueryLimits = { maxInValues: 30, maxNotInValues: 10, maxDisjunctions: 30 };

const fieldOps = new Set<string>([
  'LESS_THAN',
  'LESS_THAN_OR_EQUAL',
  'GREATER_THAN',
  'GREATER_THAN_OR_EQUAL',
  'EQUAL',
  'NOT_EQUAL',
  'ARRAY_CONTAINS',
  'IN',
  'ARRAY_CONTAINS_ANY',
  'NOT_IN',
]);
const unaryOps = new Set<string>(['IS_NAN', 'IS_NULL', 'IS_NOT_NAN', 'IS_NOT_NULL']);
const rangeOps = new Set<string>(['LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL']);
const inequalityOps = new Set<string>([...rangeOps, 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', 'IS_NOT_NULL']);
const negationOps = new Set<string>(['NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', 'IS_NOT_NULL']);

type WireObject = Record<string, unknown>;

function object(raw: unknown, where: string): WireObject {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw firestoreErrors.invalidArgument(`Invalid JSON payload received. Invalid value at '${where}': expected an object.`);
  }
  return raw as WireObject;
}

function onlyKeys(raw: WireObject, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key)) throw firestoreErrors.invalidArgument(`Invalid JSON payload received. Unknown name "${key}" at '${where}': Cannot find field.`);
  }
}

// ---- parsing --------------------------------------------------------------------------------

export function parseStructuredQuery(db: DatabaseId, parent: string, raw: unknown, limits: QueryLimits = defaultQueryLimits): Query {
  const wire = object(raw, 'structured_query');
  onlyKeys(wire, ['select', 'from', 'where', 'orderBy', 'startAt', 'endAt', 'offset', 'limit', 'findNearest'], 'structured_query');
  if (wire.findNearest !== undefined) throw firestoreErrors.unimplemented('Vector search (findNearest) is not supported by Hearth yet.');
  if (!Array.isArray(wire.from) || wire.from.length !== 1) throw firestoreErrors.invalidArgument('A query must name exactly one collection in "from".');
  const from = object(wire.from[0], 'structured_query.from[0]');
  onlyKeys(from, ['collectionId', 'allDescendants'], 'structured_query.from[0]');
  const allDescendants = from.allDescendants === true;
  let collectionId: string | undefined;
  if (from.collectionId !== undefined && from.collectionId !== '') {
    if (typeof from.collectionId !== 'string') throw firestoreErrors.invalidArgument('collectionId must be a string.');
    pathSegments(from.collectionId);
    if (from.collectionId.includes('/')) throw firestoreErrors.invalidArgument(`Invalid collection ID "${from.collectionId}".`);
    collectionId = from.collectionId;
  } else if (!allDescendants) {
    throw firestoreErrors.invalidArgument('A query needs a collectionId unless allDescendants is set.');
  }
  const filter = wire.where === undefined ? undefined : parseFilter(db, wire.where, 'structured_query.where');
  if (filter) checkFilterLimits(filter, limits);
  const explicit = parseOrders(wire.orderBy);
  const orderBy = normalizeOrder(explicit, filter);
  const query: Query = { parent, allDescendants, orderBy, offset: 0, ...(collectionId !== undefined ? { collectionId } : {}), ...(filter ? { filter } : {}) };
  if (wire.startAt !== undefined) query.startAt = parseCursor(db, wire.startAt, orderBy, 'startAt');
  if (wire.endAt !== undefined) query.endAt = parseCursor(db, wire.endAt, orderBy, 'endAt');
  if (wire.offset !== undefined) query.offset = parseCount(wire.offset, 'offset');
  if (wire.limit !== undefined) query.limit = parseCount(wire.limit, 'limit');
  if (wire.select !== undefined) query.select = parseSelect(wire.select);
  return query;
}

/** Int32Value wrappers: a bare number in proto3 JSON, `{value: n}` from some clients. */
function parseCount(raw: unknown, name: string): number {
  const value = typeof raw === 'object' && raw !== null && 'value' in raw ? (raw as { value: unknown }).value : raw;
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number > 2 ** 31 - 1) {
    throw firestoreErrors.invalidArgument(`Invalid JSON payload received. Invalid value at 'structured_query.${name}' (TYPE_INT32).`);
  }
  if (number < 0) throw firestoreErrors.invalidArgument(`${name[0]!.toUpperCase()}${name.slice(1)} must be non-negative.`);
  return number;
}

export function parseFieldRef(raw: unknown, where: string): FieldRef {
  const wire = object(raw, where);
  onlyKeys(wire, ['fieldPath'], where);
  if (typeof wire.fieldPath !== 'string') throw firestoreErrors.invalidArgument(`Invalid property path at ${where}.`);
  if (wire.fieldPath === keyField) return { segments: [keyField], path: keyField, isKey: true };
  const segments = parseFieldPath(wire.fieldPath);
  return { segments, path: formatFieldPath(segments), isKey: false };
}

function parseFilter(db: DatabaseId, raw: unknown, where: string): Filter {
  const wire = object(raw, where);
  onlyKeys(wire, ['compositeFilter', 'fieldFilter', 'unaryFilter'], where);
  const kinds = Object.keys(wire);
  if (kinds.length !== 1) throw firestoreErrors.invalidArgument(`Filter at ${where} must set exactly one of compositeFilter, fieldFilter or unaryFilter.`);
  if (wire.compositeFilter !== undefined) {
    const composite = object(wire.compositeFilter, `${where}.compositeFilter`);
    onlyKeys(composite, ['op', 'filters'], `${where}.compositeFilter`);
    if (composite.op !== 'AND' && composite.op !== 'OR') throw firestoreErrors.invalidArgument('Unsupported CompositeFilter operator.');
    const filters = composite.filters === undefined ? [] : composite.filters;
    if (!Array.isArray(filters)) throw firestoreErrors.invalidArgument(`Invalid value at '${where}.compositeFilter.filters': expected a list.`);
    return { kind: 'composite', op: composite.op, filters: filters.map((item, i) => parseFilter(db, item, `${where}.compositeFilter.filters[${i}]`)) };
  }
  if (wire.unaryFilter !== undefined) {
    const unary = object(wire.unaryFilter, `${where}.unaryFilter`);
    onlyKeys(unary, ['op', 'field'], `${where}.unaryFilter`);
    if (typeof unary.op !== 'string' || !unaryOps.has(unary.op)) throw firestoreErrors.invalidArgument('Unknown UnaryFilter operator.');
    const field = parseFieldRef(unary.field, `${where}.unaryFilter.field`);
    return { kind: 'unary', field, op: unary.op as UnaryOp };
  }
  const fieldFilter = object(wire.fieldFilter, `${where}.fieldFilter`);
  onlyKeys(fieldFilter, ['op', 'field', 'value'], `${where}.fieldFilter`);
  if (typeof fieldFilter.op !== 'string' || !fieldOps.has(fieldFilter.op)) throw firestoreErrors.invalidArgument('Unknown FieldFilter operator.');
  const op = fieldFilter.op as FieldOp;
  const field = parseFieldRef(fieldFilter.field, `${where}.fieldFilter.field`);
  const value = fromWire(fieldFilter.value, `${where}.fieldFilter.value`, 1, { allowNestedArrays: op === 'IN' || op === 'NOT_IN' });
  if (op === 'IN' || op === 'NOT_IN' || op === 'ARRAY_CONTAINS_ANY') {
    if (value.type !== 'array' || value.values.length === 0) throw firestoreErrors.invalidArgument(`'${op}' requires an non-empty ArrayValue.`);
  }
  if (field.isKey) checkKeyFilter(db, op, value);
  return { kind: 'field', field, op, value };
}

function checkKeyFilter(db: DatabaseId, op: FieldOp, value: Value): void {
  if (op === 'ARRAY_CONTAINS' || op === 'ARRAY_CONTAINS_ANY') throw firestoreErrors.invalidArgument(`'${op}' cannot be used with __key__.`);
  const operands = op === 'IN' || op === 'NOT_IN' ? (value.type === 'array' ? value.values : []) : [value];
  for (const operand of operands) {
    if (operand.type !== 'reference') throw firestoreErrors.invalidArgument('__key__ filter value must be a Key');
    relativeName(db, operand.value, 'Reference');
  }
}

function checkFilterLimits(filter: Filter, limits: QueryLimits): void {
  const all = flatten(filter);
  const negations = all.filter((f) => f.kind !== 'composite' && negationOps.has(f.op));
  if (negations.length > 1) {
    throw firestoreErrors.invalidArgument("Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.");
  }
  const hasNotIn = all.some((f) => f.kind === 'field' && f.op === 'NOT_IN');
  const hasOr = containsOr(filter);
  if (hasNotIn && (hasOr || all.some((f) => f.kind === 'field' && (f.op === 'IN' || f.op === 'ARRAY_CONTAINS_ANY')))) {
    throw firestoreErrors.invalidArgument("'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.");
  }
  const arrayFilters = all.filter((f) => f.kind === 'field' && (f.op === 'ARRAY_CONTAINS' || f.op === 'ARRAY_CONTAINS_ANY'));
  if (arrayFilters.length > 1) throw firestoreErrors.failedPrecondition('Only a single array-contains clause is allowed in a query');
  for (const f of all) {
    if (f.kind !== 'field' || f.value.type !== 'array') continue;
    if ((f.op === 'IN' || f.op === 'ARRAY_CONTAINS_ANY') && f.value.values.length > limits.maxInValues) {
      throw firestoreErrors.invalidArgument(`'${f.op}' supports up to ${limits.maxInValues} comparison values.`);
    }
    if (f.op === 'NOT_IN' && f.value.values.length > limits.maxNotInValues) {
      throw firestoreErrors.invalidArgument(`'NOT_IN' supports up to ${limits.maxNotInValues} comparison values.`);
    }
  }
  const disjunctions = countDisjunctions(filter);
  if (disjunctions > limits.maxDisjunctions) {
    throw firestoreErrors.invalidArgument(
      `Too many disjunctions after normalization. Result had ${disjunctions} disjunctions which is more than the maximum of ${limits.maxDisjunctions}`,
    );
  }
}

function flatten(filter: Filter): Filter[] {
  return filter.kind === 'composite' ? filter.filters.flatMap(flatten) : [filter];
}

function containsOr(filter: Filter): boolean {
  return filter.kind === 'composite' && (filter.op === 'OR' ? filter.filters.length > 1 : filter.filters.some(containsOr));
}

/** The size of the filter's disjunctive normal form (`in` counts as an OR of its values). */
function countDisjunctions(filter: Filter): number {
  if (filter.kind === 'composite') {
    if (filter.filters.length === 0) return 1;
    const counts = filter.filters.map(countDisjunctions);
    return filter.op === 'OR' ? counts.reduce((a, b) => a + b, 0) : counts.reduce((a, b) => Math.min(a * b, 1e6), 1);
  }
  if (filter.kind === 'field' && (filter.op === 'IN' || filter.op === 'ARRAY_CONTAINS_ANY') && filter.value.type === 'array') return filter.value.values.length;
  return 1;
}

function parseOrders(raw: unknown): Order[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw firestoreErrors.invalidArgument("Invalid value at 'structured_query.order_by': expected a list.");
  return raw.map((item, i) => {
    const where = `structured_query.order_by[${i}]`;
    const wire = object(item, where);
    onlyKeys(wire, ['field', 'direction'], where);
    const direction = wire.direction ?? 'ASCENDING';
    if (direction !== 'ASCENDING' && direction !== 'DESCENDING' && direction !== 'DIRECTION_UNSPECIFIED') {
      throw firestoreErrors.invalidArgument(`Invalid value at '${where}.direction': unknown direction ${String(direction)}.`);
    }
    return { field: parseFieldRef(wire.field, `${where}.field`), descending: direction === 'DESCENDING' };
  });
}

/** Explicit orders, then inequality fields not yet ordered (by path), then `__name__`. */
function normalizeOrder(explicit: Order[], filter: Filter | undefined): Order[] {
  const orders: Order[] = [];
  const seen = new Set<string>();
  for (const order of explicit) {
    if (seen.has(order.field.path)) continue;
    seen.add(order.field.path);
    orders.push(order);
    if (order.field.isKey) return orders;
  }
  const lastDirection = explicit.length ? explicit[explicit.length - 1]!.descending : false;
  const inequalities = new Map<string, FieldRef>();
  for (const f of filter ? flatten(filter) : []) {
    if (f.kind !== 'composite' && inequalityOps.has(f.op) && !seen.has(f.field.path)) inequalities.set(f.field.path, f.field);
  }
  const added = [...inequalities.values()].sort((a, b) => compareSegments(a.segments, b.segments));
  for (const field of added) {
    if (field.isKey) continue;
    orders.push({ field, descending: lastDirection });
  }
  orders.push({ field: { segments: [keyField], path: keyField, isKey: true }, descending: lastDirection });
  return orders;
}

function parseCursor(db: DatabaseId, raw: unknown, orderBy: Order[], name: string): Cursor {
  const wire = object(raw, `structured_query.${name}`);
  onlyKeys(wire, ['values', 'before'], `structured_query.${name}`);
  const rawValues = wire.values === undefined ? [] : wire.values;
  if (!Array.isArray(rawValues)) throw firestoreErrors.invalidArgument(`Invalid value at 'structured_query.${name}.values': expected a list.`);
  if (rawValues.length > orderBy.length) throw firestoreErrors.invalidArgument('Cursor has too many values.');
  const values = rawValues.map((item, i) => fromWire(item, `structured_query.${name}.values[${i}]`));
  values.forEach((value, i) => {
    if (!orderBy[i]!.field.isKey) return;
    if (value.type !== 'reference') throw firestoreErrors.invalidArgument('Cursor value for __name__ must be a Key (a referenceValue).');
    relativeName(db, value.value, 'Reference');
  });
  if (wire.before !== undefined && typeof wire.before !== 'boolean') throw firestoreErrors.invalidArgument(`Invalid value at 'structured_query.${name}.before' (TYPE_BOOL).`);
  return { values, before: wire.before === true };
}

function parseSelect(raw: unknown): string[][] {
  const wire = object(raw, 'structured_query.select');
  onlyKeys(wire, ['fields'], 'structured_query.select');
  if (wire.fields === undefined) return [];
  if (!Array.isArray(wire.fields)) throw firestoreErrors.invalidArgument("Invalid value at 'structured_query.select.fields': expected a list.");
  return wire.fields.map((item, i) => parseFieldRef(item, `structured_query.select.fields[${i}]`)).filter((ref) => !ref.isKey).map((ref) => ref.segments);
}

// ---- matching and ordering --------------------------------------------------------------------

/** A document's value for a field; `__name__` is its reference. */
export function valueOf(db: DatabaseId, doc: Doc, field: FieldRef): Value | undefined {
  if (field.isKey) return { type: 'reference', value: fullName(db, doc.key.path) };
  return getField(doc.fields, field.segments);
}

/** Is the document in the queried collection (or group, or under the parent)? */
export function inScope(query: Query, doc: Doc): boolean {
  const path = doc.key.path;
  if (!query.allDescendants) {
    const collection = query.parent === '' ? query.collectionId! : `${query.parent}/${query.collectionId!}`;
    return doc.key.parent === collection;
  }
  if (query.parent !== '' && !path.startsWith(`${query.parent}/`)) return false;
  return query.collectionId === undefined || doc.key.collectionId === query.collectionId;
}

/** Scope, filter, every ordered field present, and within the cursors. */
export function matchesQuery(db: DatabaseId, query: Query, doc: Doc): boolean {
  if (!inScope(query, doc)) return false;
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
      return value.type !== 'null' && !isNaNValue(value);
  }
}

/** A null or NaN operand never equals anything: the SDKs send IS_NULL / IS_NAN for those. */
function comparable(operand: Value): boolean {
  return operand.type !== 'null' && !isNaNValue(operand);
}

export function matchesField(op: FieldOp, value: Value | undefined, operand: Value): boolean {
  if (value === undefined) return false;
  switch (op) {
    case 'EQUAL':
      return comparable(operand) && valuesEqual(value, operand);
    case 'NOT_EQUAL':
      return comparable(operand) && value.type !== 'null' && !valuesEqual(value, operand);
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
      return value.type !== 'null' && !operands.some((o) => valuesEqual(value, o));
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
  return compareValues(left, right);
}

/** Where the document sits relative to a cursor's position (over the cursor's own length). */
function compareToCursor(db: DatabaseId, orderBy: readonly Order[], doc: Doc, cursor: Cursor): number {
  for (let i = 0; i < cursor.values.length; i++) {
    const order = orderBy[i]!;
    const value = valueOf(db, doc, order.field);
    if (value === undefined) return -1;
    const result = compareValues(value, cursor.values[i]!);
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
