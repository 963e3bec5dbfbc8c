/**
 * Seeded random Firestore data and requests in proto3 JSON, for differential tests against the official emulator.
 * Everything here is deterministic for a given seed, so a failure's seed reproduces it.
 */

// ---------------------------------------------------------------------------------------------------------------
// Seeded PRNG (mulberry32)

export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)];
  }

  /** Up to `count` distinct items, in random order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    const chosen: T[] = [];
    while (chosen.length < count && pool.length > 0) chosen.push(pool.splice(this.int(pool.length), 1)[0]);
    return chosen;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// proto3 JSON shapes

export type Value =
  | { nullValue: null }
  | { booleanValue: boolean }
  | { integerValue: string }
  | { doubleValue: number | 'NaN' | 'Infinity' | '-Infinity' | '-0' }
  | { timestampValue: string }
  | { stringValue: string }
  | { bytesValue: string }
  | { referenceValue: string }
  | { geoPointValue: { latitude: number; longitude: number } }
  | { arrayValue: { values?: Value[] } }
  | { mapValue: { fields?: Record<string, Value> } };

export type Fields = Record<string, Value>;

export interface GeneratedDocument {
  /** Full resource name: projects/{p}/databases/(default)/documents/… */
  name: string;
  fields: Fields;
}

export type FieldOperator =
  | 'EQUAL'
  | 'NOT_EQUAL'
  | 'LESS_THAN'
  | 'LESS_THAN_OR_EQUAL'
  | 'GREATER_THAN'
  | 'GREATER_THAN_OR_EQUAL'
  | 'ARRAY_CONTAINS'
  | 'IN'
  | 'NOT_IN'
  | 'ARRAY_CONTAINS_ANY';
export type UnaryOperator = 'IS_NULL' | 'IS_NAN' | 'IS_NOT_NULL' | 'IS_NOT_NAN';
export type Direction = 'ASCENDING' | 'DESCENDING';

export interface FieldReference {
  fieldPath: string;
}
export interface FieldFilter {
  fieldFilter: { field: FieldReference; op: FieldOperator; value: Value };
}
export interface UnaryFilter {
  unaryFilter: { field: FieldReference; op: UnaryOperator };
}
export interface CompositeFilter {
  compositeFilter: { op: 'AND' | 'OR'; filters: Filter[] };
}
export type Filter = FieldFilter | UnaryFilter | CompositeFilter;

export interface Order {
  field: FieldReference;
  direction?: Direction;
}
export interface Cursor {
  values: Value[];
  before?: boolean;
}
export interface CollectionSelector {
  collectionId?: string;
  allDescendants?: boolean;
}
export interface StructuredQuery {
  select?: { fields: FieldReference[] };
  from: CollectionSelector[];
  where?: Filter;
  orderBy?: Order[];
  startAt?: Cursor;
  endAt?: Cursor;
  offset?: number;
  limit?: number;
}

export type Aggregation = { alias?: string } & ({ count: { upTo?: number } } | { sum: { field: FieldReference } } | { avg: { field: FieldReference } });

export type FieldTransform = { fieldPath: string } & (
  | { setToServerValue: 'REQUEST_TIME' }
  | { increment: Value }
  | { maximum: Value }
  | { minimum: Value }
  | { appendMissingElements: { values: Value[] } }
  | { removeAllFromArray: { values: Value[] } }
);

// ---------------------------------------------------------------------------------------------------------------
// Values

const int = (value: bigint | number): Value => ({ integerValue: String(value) });
const double = (value: number | 'NaN' | 'Infinity' | '-Infinity' | '-0'): Value => ({ doubleValue: value });
const str = (value: string): Value => ({ stringValue: value });
const timestamp = (value: string): Value => ({ timestampValue: value });
const bytes = (hex: string): Value => ({ bytesValue: Buffer.from(hex, 'hex').toString('base64') });
const geo = (latitude: number, longitude: number): Value => ({ geoPointValue: { latitude, longitude } });
const array = (...values: Value[]): Value => ({ arrayValue: values.length ? { values } : {} });
const map = (fields: Fields): Value => ({ mapValue: Object.keys(fields).length ? { fields } : {} });
const NULL: Value = { nullValue: null };

const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);

/** Integers and doubles that collide (1 vs 1.0), straddle 2^53 and reach the int64 limits. */
export const numberValues: readonly Value[] = [
  int(0),
  int(1),
  int(2),
  int(-1),
  int(42),
  int(2n ** 53n + 1n), // 9007199254740993: not representable as a double
  int(MAX_INT64),
  int(MIN_INT64),
  double(0.5),
  double(1), // equal to the integer 1
  double(2.5),
  double(-3.25),
  double('-0'),
  double(2 ** 53), // the double just below the integer 2^53 + 1
  double(1e300),
  double('NaN'),
  double('Infinity'),
  double('-Infinity'),
];

const stringValues: readonly Value[] = [str(''), str('a'), str('aa'), str('b'), str('A'), str('é'), str('\uFFFF'), str('😀'), str('a b')];

// Microseconds are kept; the nanosecond inputs check that the server truncates them the same way.
const timestampValues: readonly Value[] = [
  timestamp('1970-01-01T00:00:00Z'),
  timestamp('2020-01-01T00:00:00Z'),
  timestamp('2020-01-01T00:00:00.000001Z'),
  timestamp('2020-01-01T00:00:00.123456Z'),
  timestamp('2020-01-01T00:00:00.123456789Z'),
  timestamp('2021-06-15T12:30:45.5Z'),
];

const bytesValues: readonly Value[] = [bytes(''), bytes('00'), bytes('01'), bytes('0102'), bytes('ff')];
const geoValues: readonly Value[] = [geo(0, 0), geo(1.5, -2), geo(1.5, 3), geo(-90, 180)];

function referenceValues(databaseRoot: string): Value[] {
  return ['c/x', 'c/x/c/y', 'c/a', 'd/x'].map((path) => ({ referenceValue: `${databaseRoot}/${path}` }));
}

/** Small enough that array-contains filters hit; 1 and 1.0 both appear on purpose. */
export const arrayElementValues: readonly Value[] = [str('a'), str('b'), str('c'), int(1), double(1), int(2), NULL, double('NaN'), { booleanValue: true }, map({ k: int(1) })];

function scalarValues(databaseRoot: string): Value[] {
  return [
    NULL,
    { booleanValue: false },
    { booleanValue: true },
    ...numberValues,
    ...stringValues,
    ...timestampValues,
    ...bytesValues,
    ...referenceValues(databaseRoot),
    ...geoValues,
  ];
}

const arrayValues: readonly Value[] = [
  array(),
  array(NULL),
  array(int(1)),
  array(double(1)),
  array(int(1), int(2)),
  array(int(2)),
  array(str('a')),
  array(str('a'), int(1), NULL),
  array(double('NaN')),
  array(map({ a: int(1) })),
];

const mapValues: readonly Value[] = [map({}), map({ x: int(1) }), map({ x: double(1) }), map({ x: str('a') }), map({ y: int(0) }), map({ x: map({ z: { booleanValue: true } }) })];

export function valuePool(databaseRoot: string): Value[] {
  return [...scalarValues(databaseRoot), ...arrayValues, ...mapValues];
}

/** The value at a dotted field path (no backquotes needed for the names used here), or undefined. */
export function valueAtPath(fields: Fields, path: string): Value | undefined {
  const [head, ...rest] = path.split('.');
  const value = fields[head!];
  if (!value || rest.length === 0) return value;
  if (!('mapValue' in value)) return undefined;
  return valueAtPath(value.mapValue.fields ?? {}, rest.join('.'));
}

// ---------------------------------------------------------------------------------------------------------------
// Documents

/** Where one seed's documents live, so seeds never see each other's data. */
export interface Layout {
  /** projects/{p}/databases/(default)/documents */
  databaseRoot: string;
  /** The runQuery parent: the database root or a document under it. */
  parent: string;
  /** The collection the queries read (also used for the subcollections of collection-group queries). */
  collectionId: string;
}

export interface Dataset extends Layout {
  documents: GeneratedDocument[];
}

export function layoutForSeed(databaseRoot: string, seed: number): Layout {
  // Even seeds query a root collection, odd seeds a collection under a document: both parents get exercised.
  return seed % 2 === 0
    ? { databaseRoot, parent: databaseRoot, collectionId: `c${seed}` }
    : { databaseRoot, parent: `${databaseRoot}/runs/seed${seed}`, collectionId: 'c' };
}

const odditiesInIds = ['A', 'Z', 'a', 'a b', 'é', '😀', 'x', '0', '10', '9'];

export function randomDataset(rng: Random, layout: Layout, count = 80): Dataset {
  const pool = valuePool(layout.databaseRoot);
  const collection = `${layout.parent}/${layout.collectionId}`;
  const topIds = [...odditiesInIds, ...Array.from({ length: count - odditiesInIds.length }, (_, i) => `d${String(i).padStart(2, '0')}`)];
  const names = topIds.map((id) => `${collection}/${id}`);
  // Collection-group queries must find these; the `other` ones must stay out of every query on collectionId.
  for (let i = 0; i < 12; i++) names.push(`${collection}/${rng.pick(topIds)}/${layout.collectionId}/s${i}`);
  for (let i = 0; i < 4; i++) names.push(`${collection}/${rng.pick(topIds)}/other/o${i}`);
  names.push(`${layout.parent}/other/o`);
  const unique = [...new Set(names)];
  return { ...layout, documents: unique.map((name) => ({ name, fields: randomFields(rng, pool) })) };
}

export function randomFields(rng: Random, pool: readonly Value[]): Fields {
  const fields: Fields = {};
  const maybe = (name: string, probability: number, make: () => Value) => {
    if (rng.chance(probability)) fields[name] = make();
  };
  maybe('a', 0.85, () => rng.pick(pool));
  maybe('b', 0.8, () => (rng.chance(0.8) ? rng.pick(numberValues) : rng.pick(pool)));
  maybe('c', 0.75, () => (rng.chance(0.7) ? rng.pick([...stringValues, ...timestampValues]) : rng.pick(pool)));
  maybe('tags', 0.85, () => (rng.chance(0.85) ? array(...rng.sample(arrayElementValues, rng.int(5))) : rng.pick(pool)));
  maybe('m', 0.8, () => (rng.chance(0.8) ? randomMap(rng, pool) : rng.pick(pool)));
  return fields;
}

function randomMap(rng: Random, pool: readonly Value[]): Value {
  const fields: Fields = {};
  if (rng.chance(0.85)) fields.x = rng.chance(0.7) ? rng.pick(numberValues) : rng.pick(pool);
  if (rng.chance(0.3)) fields.y = rng.pick(pool);
  return map(fields);
}

// ---------------------------------------------------------------------------------------------------------------
// Queries

const queriedFields = ['a', 'b', 'c', 'm.x', 'tags', 'm'] as const;
const selectFields = [...queriedFields, 'zz'] as const;
const allFieldOperators: readonly FieldOperator[] = [
  'EQUAL',
  'NOT_EQUAL',
  'LESS_THAN',
  'LESS_THAN_OR_EQUAL',
  'GREATER_THAN',
  'GREATER_THAN_OR_EQUAL',
  'ARRAY_CONTAINS',
  'IN',
  'NOT_IN',
  'ARRAY_CONTAINS_ANY',
];
const unaryOperators: readonly UnaryOperator[] = ['IS_NULL', 'IS_NAN', 'IS_NOT_NULL', 'IS_NOT_NAN'];
const KEY = '__name__';

interface QueryScope {
  dataset: Dataset;
  allDescendants: boolean;
  /** The documents this query can return, whose names and values feed filters and cursors so that they hit. */
  candidates: GeneratedDocument[];
}

export function inScope(dataset: Dataset, allDescendants: boolean): GeneratedDocument[] {
  const collection = `${dataset.parent}/${dataset.collectionId}/`;
  return dataset.documents.filter((doc) => {
    if (!doc.name.startsWith(`${dataset.parent}/`)) return false;
    const segments = doc.name.slice(dataset.parent.length + 1).split('/');
    const collectionId = segments[segments.length - 2];
    return allDescendants ? collectionId === dataset.collectionId : doc.name.startsWith(collection) && !doc.name.slice(collection.length).includes('/');
  });
}

/** A random query that Firestore accepts (see validityProblem). */
export function randomValidQuery(rng: Random, dataset: Dataset): StructuredQuery {
  for (;;) {
    const query = randomQuery(rng, dataset);
    if (!validityProblem(query)) return query;
  }
}

function randomQuery(rng: Random, dataset: Dataset): StructuredQuery {
  // Emulator-only: under a document parent it refuses filtered or ordered collection-group queries
  // ("collection group queries are only allowed at the root parent"), so they run from the root only.
  const allDescendants = dataset.parent === dataset.databaseRoot && rng.chance(0.4);
  const scope: QueryScope = { dataset, allDescendants, candidates: inScope(dataset, allDescendants) };
  const query: StructuredQuery = { from: [allDescendants ? { collectionId: dataset.collectionId, allDescendants: true } : { collectionId: dataset.collectionId }] };
  if (rng.chance(0.75)) query.where = randomFilter(rng, scope, 0);
  if (rng.chance(0.6)) query.orderBy = randomOrderBy(rng);
  if (query.orderBy && rng.chance(0.35)) query.startAt = randomCursor(rng, scope, query.orderBy);
  if (query.orderBy && rng.chance(0.25)) query.endAt = randomCursor(rng, scope, query.orderBy);
  if (rng.chance(0.2)) query.offset = rng.int(6);
  if (rng.chance(0.35)) query.limit = rng.int(15);
  if (rng.chance(0.2)) query.select = { fields: rng.sample(rng.chance(0.1) ? [KEY] : selectFields, rng.int(4)).map((fieldPath) => ({ fieldPath })) };
  return query;
}

function randomFilter(rng: Random, scope: QueryScope, depth: number): Filter {
  const roll = rng.next();
  if (depth < 2 && roll < 0.3) {
    const count = rng.chance(0.05) ? 0 : rng.between(1, 3);
    const op = rng.chance(0.5) ? 'AND' : 'OR';
    // An empty OR is invalid; an empty AND is accepted and matches everything.
    const filters = Array.from({ length: op === 'OR' ? Math.max(count, 1) : count }, () => randomFilter(rng, scope, depth + 1));
    return { compositeFilter: { op, filters } };
  }
  if (roll < 0.45) return { unaryFilter: { field: { fieldPath: rng.pick(queriedFields) }, op: rng.pick(unaryOperators) } };
  if (roll < 0.52) return randomKeyFilter(rng, scope);
  return randomFieldFilter(rng, scope);
}

function randomFieldFilter(rng: Random, scope: QueryScope): FieldFilter {
  const fieldPath = rng.pick(queriedFields);
  const op = rng.pick(allFieldOperators);
  const operand = () => (op === 'ARRAY_CONTAINS' || op === 'ARRAY_CONTAINS_ANY' ? randomArrayElement(rng, scope) : randomOperand(rng, scope, fieldPath));
  const value = isListOperator(op) ? array(...Array.from({ length: rng.between(1, 4) }, operand).filter((v) => !hasNanoseconds(v))) : operand();
  if (isListOperator(op) && (value as { arrayValue: { values: Value[] } }).arrayValue.values.length === 0) return { fieldFilter: { field: { fieldPath }, op: 'EQUAL', value: int(1) } };
  return { fieldFilter: { field: { fieldPath }, op, value } };
}

/**
 * Emulator quirk (1.19.9): a nanosecond timestamp inside an IN list matches the stored microsecond
 * value, while EQUAL with the same operand matches nothing. Hearth compares operands exactly in
 * both; list operands therefore avoid nanoseconds here.
 */
function hasNanoseconds(value: Value): boolean {
  return 'timestampValue' in value && /\.\d{7,9}Z$/.test(value.timestampValue);
}

function randomKeyFilter(rng: Random, scope: QueryScope): FieldFilter {
  const op = rng.pick(allFieldOperators.filter((candidate) => !candidate.startsWith('ARRAY_CONTAINS')));
  const value = isListOperator(op) ? array(...Array.from({ length: rng.between(1, 3) }, () => randomKey(rng, scope))) : randomKey(rng, scope);
  return { fieldFilter: { field: { fieldPath: KEY }, op, value } };
}

/** A value some candidate document holds at that path (so filters hit), or any value from the pool. */
function randomOperand(rng: Random, scope: QueryScope, fieldPath: string): Value {
  if (rng.chance(0.6) && scope.candidates.length > 0) {
    const held = valueAtPath(rng.pick(scope.candidates).fields, fieldPath);
    if (held) return held;
  }
  return rng.pick(valuePool(scope.dataset.databaseRoot));
}

function randomArrayElement(rng: Random, scope: QueryScope): Value {
  if (rng.chance(0.6) && scope.candidates.length > 0) {
    const tags = rng.pick(scope.candidates).fields.tags;
    const elements = tags && 'arrayValue' in tags ? (tags.arrayValue.values ?? []) : [];
    if (elements.length > 0) return rng.pick(elements);
  }
  return rng.pick(arrayElementValues);
}

/** The name of a document the query could return, or of a missing one in the same collection. */
function randomKey(rng: Random, scope: QueryScope): Value {
  const name = rng.chance(0.85) && scope.candidates.length > 0 ? rng.pick(scope.candidates).name : `${scope.dataset.parent}/${scope.dataset.collectionId}/${rng.pick(['d33x', 'b', 'zz', '00'])}`;
  return { referenceValue: name };
}

function randomOrderBy(rng: Random): Order[] {
  const orders: Order[] = rng.sample(queriedFields, rng.between(1, 2)).map((fieldPath) => ({ field: { fieldPath }, ...randomDirection(rng) }));
  if (rng.chance(0.25)) orders.push({ field: { fieldPath: KEY }, ...randomDirection(rng) });
  if (rng.chance(0.1)) return [{ field: { fieldPath: KEY } }];
  return orders;
}

function randomDirection(rng: Random): { direction?: Direction } {
  const roll = rng.next();
  if (roll < 0.15) return {}; // direction left out means ASCENDING
  return { direction: roll < 0.55 ? 'ASCENDING' : 'DESCENDING' };
}

/** Cursor values copied from a candidate document where possible, so that cursors land on real rows and ties. */
function randomCursor(rng: Random, scope: QueryScope, orderBy: Order[]): Cursor {
  const count = rng.between(1, orderBy.length);
  const anchor = scope.candidates.length > 0 ? rng.pick(scope.candidates) : undefined;
  const values = orderBy.slice(0, count).map(({ field }) => {
    if (field.fieldPath === KEY) return anchor && rng.chance(0.85) ? { referenceValue: anchor.name } : randomKey(rng, scope);
    return (anchor && rng.chance(0.8) && valueAtPath(anchor.fields, field.fieldPath)) || randomOperand(rng, scope, field.fieldPath);
  });
  const roll = rng.next();
  return roll < 0.2 ? { values } : { values, before: roll < 0.6 };
}

function isListOperator(op: FieldOperator): boolean {
  return op === 'IN' || op === 'NOT_IN' || op === 'ARRAY_CONTAINS_ANY';
}

// ---------------------------------------------------------------------------------------------------------------
// Validity (research note §2.3-§2.5, and what emulator 1.19.9 was seen to reject)

const notOperators = new Set<string>(['NOT_EQUAL', 'NOT_IN', 'IS_NOT_NULL', 'IS_NOT_NAN']);
const inequalityOperators = new Set<string>(['LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NULL', 'IS_NOT_NAN']);
const maxDisjunctions = 30;

/** Why Firestore would reject the query, or undefined if it is valid. */
export function validityProblem(query: StructuredQuery): string | undefined {
  const leaves = query.where ? leafFilters(query.where) : [];
  const operators = leaves.map(leafOperator);
  if (operators.filter((op) => notOperators.has(op)).length > 1) return 'more than one NOT_EQUAL/NOT_IN/IS_NOT_NULL/IS_NOT_NAN';
  if (operators.includes('NOT_IN') && (operators.includes('IN') || operators.includes('ARRAY_CONTAINS_ANY') || (query.where && hasOr(query.where))))
    return 'NOT_IN with IN, ARRAY_CONTAINS_ANY or OR';
  if (query.where && arrayFiltersPerDisjunction(query.where) > 1) return 'more than one array-contains in a disjunction';
  if (query.where && disjunctions(query.where) > maxDisjunctions) return 'too many disjunctions';
  return keyEqualityProblem(leaves) ?? orderByProblem(query, leaves) ?? cursorProblem(query);
}

/** "Equality on key is not allowed if there are other inequality fields and key does not appear in inequalities." */
function keyEqualityProblem(leaves: Array<FieldFilter | UnaryFilter>): string | undefined {
  const keyLeaves = leaves.filter((leaf) => leafPath(leaf) === KEY);
  const keyEquality = keyLeaves.some((leaf) => ['EQUAL', 'IN'].includes(leafOperator(leaf)));
  const keyInequality = keyLeaves.some((leaf) => inequalityOperators.has(leafOperator(leaf)));
  const otherInequality = leaves.some((leaf) => leafPath(leaf) !== KEY && inequalityOperators.has(leafOperator(leaf)));
  return keyEquality && otherInequality && !keyInequality ? '__name__ equality with an inequality on another field' : undefined;
}

function orderByProblem(query: StructuredQuery, leaves: Array<FieldFilter | UnaryFilter>): string | undefined {
  const orderBy = query.orderBy ?? [];
  const paths = orderBy.map((order) => order.field.fieldPath);
  if (new Set(paths).size !== paths.length) return 'duplicate orderBy field';
  const keyIndex = paths.indexOf(KEY);
  if (keyIndex < 0) return undefined;
  if (keyIndex !== paths.length - 1) return 'orderBy continues after __name__';
  // The implicit inequality orderings would follow __name__: the emulator says "order by clause cannot contain more fields after the key".
  const inequalityPaths = leaves.filter((leaf) => inequalityOperators.has(leafOperator(leaf))).map(leafPath).filter((path) => path !== KEY);
  if (inequalityPaths.some((path) => !paths.includes(path))) return 'inequality field would be ordered after __name__';
  // Emulator-only (research note §2.3): it rejects a leading `__name__ DESC` ("descending key scans"); production allows it.
  if (keyIndex === 0 && orderBy[0]!.direction === 'DESCENDING') return 'leading __name__ DESC (emulator refuses descending key scans)';
  return undefined;
}

function cursorProblem(query: StructuredQuery): string | undefined {
  const explicitOrders = query.orderBy?.length ?? 0;
  for (const cursor of [query.startAt, query.endAt]) if (cursor && cursor.values.length > explicitOrders) return 'cursor has more values than explicit orderBy';
  return undefined;
}

function leafFilters(filter: Filter): Array<FieldFilter | UnaryFilter> {
  return 'compositeFilter' in filter ? filter.compositeFilter.filters.flatMap(leafFilters) : [filter];
}

function leafOperator(leaf: FieldFilter | UnaryFilter): string {
  return 'fieldFilter' in leaf ? leaf.fieldFilter.op : leaf.unaryFilter.op;
}

function leafPath(leaf: FieldFilter | UnaryFilter): string {
  return 'fieldFilter' in leaf ? leaf.fieldFilter.field.fieldPath : leaf.unaryFilter.field.fieldPath;
}

function hasOr(filter: Filter): boolean {
  return 'compositeFilter' in filter && (filter.compositeFilter.op === 'OR' || filter.compositeFilter.filters.some(hasOr));
}

/** The size of the filter's disjunctive normal form; IN and ARRAY_CONTAINS_ANY count one per value. */
function disjunctions(filter: Filter): number {
  if ('unaryFilter' in filter) return 1;
  if ('fieldFilter' in filter) {
    const { op, value } = filter.fieldFilter;
    return op === 'IN' || op === 'ARRAY_CONTAINS_ANY' ? Math.max(1, listValues(value).length) : 1;
  }
  const counts = filter.compositeFilter.filters.map(disjunctions);
  return filter.compositeFilter.op === 'OR' ? counts.reduce((a, b) => a + b, 0) : counts.reduce((a, b) => a * b, 1);
}

/** The most array-contains(-any) filters any one disjunction of the DNF holds. */
function arrayFiltersPerDisjunction(filter: Filter): number {
  if ('unaryFilter' in filter) return 0;
  if ('fieldFilter' in filter) return filter.fieldFilter.op.startsWith('ARRAY_CONTAINS') ? 1 : 0;
  const counts = filter.compositeFilter.filters.map(arrayFiltersPerDisjunction);
  return filter.compositeFilter.op === 'OR' ? Math.max(0, ...counts) : counts.reduce((a, b) => a + b, 0);
}

function listValues(value: Value): Value[] {
  return 'arrayValue' in value ? (value.arrayValue.values ?? []) : [];
}

// ---------------------------------------------------------------------------------------------------------------
// Invalid queries: both servers must refuse them with the same status

export interface InvalidQuery {
  description: string;
  /** Deliberately loose: some of these are not even well-formed. */
  structuredQuery: Record<string, unknown>;
}

export function invalidQueries(dataset: Dataset): InvalidQuery[] {
  const from = [{ collectionId: dataset.collectionId }];
  const field = (fieldPath: string, op: string, value: unknown) => ({ fieldFilter: { field: { fieldPath }, op, value } });
  const unary = (fieldPath: string, op: string) => ({ unaryFilter: { field: { fieldPath }, op } });
  const and = (...filters: unknown[]) => ({ compositeFilter: { op: 'AND', filters } });
  const or = (...filters: unknown[]) => ({ compositeFilter: { op: 'OR', filters } });
  const ints = (count: number) => array(...Array.from({ length: count }, (_, i) => int(i)));
  const key = { referenceValue: dataset.documents[0]!.name };
  const where = (description: string, filter: unknown): InvalidQuery => ({ description, structuredQuery: { from, where: filter } });
  const orderByA = [{ field: { fieldPath: 'a' } }];
  return [
    where('two NOT_EQUAL filters', and(field('a', 'NOT_EQUAL', int(1)), field('b', 'NOT_EQUAL', int(1)))),
    where('NOT_EQUAL with IS_NOT_NULL', and(field('a', 'NOT_EQUAL', int(1)), unary('b', 'IS_NOT_NULL'))),
    where('IS_NOT_NAN with NOT_IN', and(unary('a', 'IS_NOT_NAN'), field('b', 'NOT_IN', ints(2)))),
    where('NOT_IN with IN', and(field('a', 'NOT_IN', ints(2)), field('b', 'IN', ints(2)))),
    where('NOT_IN with ARRAY_CONTAINS_ANY', and(field('a', 'NOT_IN', ints(2)), field('tags', 'ARRAY_CONTAINS_ANY', ints(2)))),
    where('NOT_IN inside OR', or(field('a', 'NOT_IN', ints(2)), field('b', 'EQUAL', int(1)))),
    where('two ARRAY_CONTAINS in one conjunction', and(field('tags', 'ARRAY_CONTAINS', int(1)), field('a', 'ARRAY_CONTAINS', int(1)))),
    where('ARRAY_CONTAINS with ARRAY_CONTAINS_ANY', and(field('tags', 'ARRAY_CONTAINS', int(1)), field('a', 'ARRAY_CONTAINS_ANY', ints(2)))),
    where('IN with 31 values', field('a', 'IN', ints(31))),
    where('ARRAY_CONTAINS_ANY with 31 values', field('tags', 'ARRAY_CONTAINS_ANY', ints(31))),
    where('NOT_IN with 11 values', field('a', 'NOT_IN', ints(11))),
    where('IN with an empty array', field('a', 'IN', array())),
    where('ARRAY_CONTAINS_ANY with an empty array', field('tags', 'ARRAY_CONTAINS_ANY', array())),
    where('NOT_IN with a non-array', field('a', 'NOT_IN', int(1))),
    where('36 disjunctions (IN 6 × IN 6)', and(field('a', 'IN', ints(6)), field('b', 'IN', ints(6)))),
    where('__name__ compared with a string', field(KEY, 'EQUAL', str('x'))),
    where('__name__ IS_NULL', unary(KEY, 'IS_NULL')),
    where('ARRAY_CONTAINS on __name__', field(KEY, 'ARRAY_CONTAINS', key)),
    where('__name__ IN with an inequality on another field', and(field(KEY, 'IN', array(key)), field('a', 'GREATER_THAN', int(0)))),
    where('__name__ in another project', field(KEY, 'EQUAL', { referenceValue: 'projects/elsewhere/databases/(default)/documents/c/x' })),
    where('unknown field operator', field('a', 'LIKE', int(1))),
    where('OPERATOR_UNSPECIFIED', field('a', 'OPERATOR_UNSPECIFIED', int(1))),
    where('unknown unary operator', unary('a', 'IS_EMPTY')),
    where('unknown composite operator', { compositeFilter: { op: 'XOR', filters: [field('a', 'EQUAL', int(1))] } }),
    where('empty OR', or()),
    where('invalid field path', field('a..b', 'EQUAL', int(1))),
    { description: 'duplicate orderBy field', structuredQuery: { from, orderBy: [...orderByA, ...orderByA] } },
    { description: 'invalid orderBy path', structuredQuery: { from, orderBy: [{ field: { fieldPath: 'a..b' } }] } },
    { description: 'invalid select path', structuredQuery: { from, select: { fields: [{ fieldPath: 'a..b' }] } } },
    // Not here: a cursor with more values than explicit orderBys. The emulator refuses it ("Cursor has
    // too many values."); production accepts values for the whole normalized order (research note
    // §2.4), and so does Hearth.
    { description: '__name__ cursor that is not a reference', structuredQuery: { from, orderBy: [{ field: { fieldPath: KEY } }], startAt: { values: [str('x')] } } },
    { description: 'negative limit', structuredQuery: { from, limit: -1 } },
    { description: 'negative offset', structuredQuery: { from, offset: -1 } },
    { description: 'two collection selectors', structuredQuery: { from: [...from, { collectionId: 'other' }] } },
    // Seen on emulator 1.19.9 ("order by clause cannot contain more fields after the key"); not checked against production.
    { description: 'explicit __name__ order before an inequality field', structuredQuery: { from, where: field('a', 'GREATER_THAN', int(0)), orderBy: [{ field: { fieldPath: KEY } }] } },
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Aggregations

const aggregateFields = ['a', 'b', 'm.x', 'tags', 'zz'] as const;

export interface AggregationCase {
  structuredQuery: StructuredQuery;
  aggregations: Aggregation[];
}

/**
 * Count-only cases take any query. Cases with sum/avg leave out what emulator 1.19.9 handles in an
 * implementation-defined way: offset/limit/cursors (it applies them in the order of an index on the aggregated
 * fields, not the query's) and `__name__` filters or orders ("requires an index that has fields [..] after __name__").
 */
export function randomAggregationCase(rng: Random, dataset: Dataset): AggregationCase {
  const aggregations = randomAggregations(rng);
  const countOnly = aggregations.every((aggregation) => 'count' in aggregation);
  for (;;) {
    const { select: _select, ...query } = randomValidQuery(rng, dataset);
    if (countOnly) return { structuredQuery: query, aggregations };
    const { offset: _offset, limit: _limit, startAt: _startAt, endAt: _endAt, ...unbounded } = query;
    if (!JSON.stringify(unbounded).includes(`"${KEY}"`)) return { structuredQuery: unbounded, aggregations };
  }
}

/** 1-5 aggregations with unique aliases, or with none (the server then names them field_1, field_2, …). */
function randomAggregations(rng: Random): Aggregation[] {
  const withAliases = rng.chance(0.7);
  const countOnly = rng.chance(0.35);
  return Array.from({ length: rng.between(1, 5) }, (_, i) => {
    const alias = withAliases ? { alias: `agg${i}` } : {};
    const field = { fieldPath: rng.pick(aggregateFields) };
    const roll = rng.next();
    // upTo 0: emulator 1.19.9 counts 0, but the proto says "must be greater than zero when present".
    if (countOnly || roll < 0.2) return { ...alias, count: rng.chance(0.4) ? { upTo: rng.between(1, 20) } : {} };
    return roll < 0.6 ? { ...alias, sum: { field } } : { ...alias, avg: { field } };
  });
}

/** The alias Firestore reports for the aggregation at that position. */
export function aggregationAlias(aggregation: Aggregation, index: number): string {
  return aggregation.alias ?? `field_${index + 1}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Writes with transforms and preconditions

export type PreconditionKind = 'none' | 'exists' | 'missing' | 'currentUpdateTime' | 'staleUpdateTime';

export interface TransformCase {
  name: string;
  /** Written first (without transforms); undefined leaves the document missing. */
  initial: Fields | undefined;
  update: { fields: Fields; mask?: string[] } | undefined;
  transforms: FieldTransform[];
  precondition: PreconditionKind;
}

const transformFields = ['n', 'arr', 's', 'm.k', 'fresh'] as const;
const incrementOperands: readonly Value[] = [int(1), int(-1), int(5), int(MAX_INT64), int(MIN_INT64), double(0.5), double(-2.5), double('NaN'), double('Infinity'), int(2n ** 53n)];
const extremaOperands: readonly Value[] = [int(0), int(3), double(3), double('-0'), double('NaN'), int(MAX_INT64), double(-1.5), double('-Infinity')];

export function randomTransformCase(rng: Random, name: string, databaseRoot: string): TransformCase {
  const pool = valuePool(databaseRoot);
  const initial = rng.chance(0.8) ? randomTransformTarget(rng, pool) : undefined;
  const update = rng.chance(0.5) ? randomMaskedUpdate(rng, pool) : undefined;
  const transforms = rng.sample(transformFields, rng.between(1, 3)).map((fieldPath) => randomTransform(rng, fieldPath));
  const precondition = rng.pick<PreconditionKind>(['none', 'none', 'none', 'exists', 'missing', 'currentUpdateTime', 'staleUpdateTime']);
  return { name, initial, update, transforms, precondition };
}

function randomTransformTarget(rng: Random, pool: readonly Value[]): Fields {
  const fields: Fields = {};
  if (rng.chance(0.8)) fields.n = rng.chance(0.8) ? rng.pick(numberValues) : rng.pick(pool);
  if (rng.chance(0.7)) fields.arr = rng.chance(0.8) ? array(...rng.sample(arrayElementValues, rng.int(5))) : rng.pick(pool);
  if (rng.chance(0.5)) fields.s = rng.pick(pool);
  if (rng.chance(0.4)) fields.m = map({ k: rng.pick(numberValues) });
  return fields;
}

function randomMaskedUpdate(rng: Random, pool: readonly Value[]): { fields: Fields; mask?: string[] } {
  const fields: Fields = rng.chance(0.5) ? { s: rng.pick(pool) } : {};
  if (rng.chance(0.3)) fields.n = rng.pick(numberValues);
  // A masked path absent from `fields` deletes that field; without a mask the update replaces the document.
  return rng.chance(0.6) ? { fields, mask: rng.sample(['s', 'n', 'm.k', 'gone'], rng.between(1, 3)) } : { fields };
}

function randomTransform(rng: Random, fieldPath: string): FieldTransform {
  const elements = () => ({ values: rng.sample(arrayElementValues, rng.between(1, 4)) });
  switch (rng.int(6)) {
    case 0:
      return { fieldPath, setToServerValue: 'REQUEST_TIME' };
    case 1:
      return { fieldPath, increment: rng.pick(incrementOperands) };
    case 2:
      return { fieldPath, maximum: rng.pick(extremaOperands) };
    case 3:
      return { fieldPath, minimum: rng.pick(extremaOperands) };
    case 4:
      return { fieldPath, appendMissingElements: elements() };
    default:
      return { fieldPath, removeAllFromArray: elements() };
  }
}
