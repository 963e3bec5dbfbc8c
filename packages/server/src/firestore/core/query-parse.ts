import { firestoreErrors } from './errors.js';
import { documentKey, formatFieldPath, keyField, parseFieldPath, pathSegments, relativeName, type DatabaseId } from './paths.js';
import { comparable, defaultQueryLimits, isRangeOp, type Cursor, type FieldOp, type FieldRef, type Filter, type Order, type Query, type QueryLimits, type UnaryOp } from './query.js';
import { fromWire } from './value-wire.js';
import { parseFindNearest } from './vector-search.js';
import { compareSegments, maxDepth, type Value } from './values.js';
import { onlyKeys, wireObject as object } from './wire-checks.js';

/** Structured queries from the wire: checked once (limits and messages as the server's), normalized. */

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
const inequalityOps = new Set<string>(['LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', 'IS_NOT_NULL']);
const negationOps = new Set<string>(['NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', 'IS_NOT_NULL']);

// ---- parsing --------------------------------------------------------------------------------

export function parseStructuredQuery(db: DatabaseId, parent: string, raw: unknown, limits: QueryLimits = defaultQueryLimits): Query {
  // A query's parent is the root or a document, checked like any document name (reserved ids too),
  // whichever protocol brought it: REST, gRPC or a Listen target.
  if (parent !== '') documentKey(parent);
  const wire = object(raw, 'structured_query');
  onlyKeys(wire, ['select', 'from', 'where', 'orderBy', 'startAt', 'endAt', 'offset', 'limit', 'findNearest'], 'structured_query');
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
  if (wire.findNearest !== undefined) {
    // The nearest are the answer: no limit or offset beside them; cursors may only name the explicit orders.
    if (wire.limit !== undefined) throw firestoreErrors.invalidArgument('A query limit cannot be used with FindNearest');
    if (wire.offset !== undefined) throw firestoreErrors.invalidArgument('A query offset cannot be used with FindNearest');
    for (const cursor of [query.startAt, query.endAt]) {
      if (cursor && cursor.values.length > explicit.length) throw firestoreErrors.invalidArgument('Cursor has too many values.');
    }
    query.findNearest = parseFindNearest(wire.findNearest, parseFieldRef);
  }
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

/**
 * Composite filters nest at most this deep, as maps and arrays in values do: the SDKs flatten
 * `and(and(...))`, and 2,000 levels overflowed the stack (REST 500, WebChannel INTERNAL).
 */
export const maxFilterDepth = maxDepth;

function parseFilter(db: DatabaseId, raw: unknown, where: string, depth = 1): Filter {
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
    if (depth >= maxFilterDepth && filters.some((item) => typeof item === 'object' && item !== null && 'compositeFilter' in item)) {
      throw firestoreErrors.invalidArgument(`Filter at ${where} nests composite filters more than ${maxFilterDepth} deep.`);
    }
    return { kind: 'composite', op: composite.op, filters: filters.map((item, i) => parseFilter(db, item, `${where}.compositeFilter.filters[${i}]`, depth + 1)) };
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
  if (arrayFiltersPerDisjunction(filter) > 1) throw firestoreErrors.invalidArgument("A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction.");
  if (filter.kind === 'composite' && filter.op === 'OR' && filter.filters.length === 0) throw firestoreErrors.invalidArgument('An OR filter needs at least one filter.');
  for (const f of all) {
    if (f.kind === 'unary' && f.field.isKey) throw firestoreErrors.invalidArgument(`'${f.op}' cannot be used with __key__.`);
  }
  const keyEquality = all.some((f) => f.kind === 'field' && f.field.isKey && (f.op === 'EQUAL' || f.op === 'IN'));
  const otherInequality = all.some((f) => f.kind !== 'composite' && !f.field.isKey && inequalityOps.has(f.op));
  const keyInequality = all.some((f) => f.kind !== 'composite' && f.field.isKey && inequalityOps.has(f.op));
  if (keyEquality && otherInequality && !keyInequality) {
    throw firestoreErrors.invalidArgument('Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities.');
  }
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

/** The most array-contains filters any one disjunct of the filter's normal form holds. */
function arrayFiltersPerDisjunction(filter: Filter): number {
  if (filter.kind === 'composite') {
    const counts = filter.filters.map(arrayFiltersPerDisjunction);
    return filter.op === 'AND' ? counts.reduce((a, b) => a + b, 0) : Math.max(0, ...counts);
  }
  return filter.kind === 'field' && (filter.op === 'ARRAY_CONTAINS' || filter.op === 'ARRAY_CONTAINS_ANY') ? 1 : 0;
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
  const inequalities = new Map<string, FieldRef>();
  for (const f of filter ? flatten(filter) : []) {
    // A range against null or NaN matches nothing; it orders nothing either.
    if (f.kind === 'field' && isRangeOp(f.op) && !comparable(f.value)) continue;
    if (f.kind !== 'composite' && inequalityOps.has(f.op)) inequalities.set(f.field.path, f.field);
  }
  for (const order of explicit) {
    if (seen.has(order.field.path)) throw firestoreErrors.invalidArgument(`Order by field "${order.field.path}" appears more than once.`);
    seen.add(order.field.path);
    orders.push(order);
    if (order.field.isKey) {
      if ([...inequalities.keys()].some((path) => !seen.has(path))) throw firestoreErrors.invalidArgument('order by clause cannot contain more fields after the key');
      return orders;
    }
  }
  const lastDirection = explicit.length ? explicit[explicit.length - 1]!.descending : false;
  for (const path of seen) inequalities.delete(path);
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

