
/**
 * Firestore values as the engine works with them: int64 as bigint (never rounded through a
 * double), timestamps truncated to the microsecond, bytes as Buffers, maps as Maps (so no field
 * name can reach an object prototype). The proto3 JSON form lives in value-wire.ts, used only at
 * the edges.
 */
import { numericIdValue } from '../../storage/name-keys.js';

export { hasNumericIdShape, numericIdValue } from '../../storage/name-keys.js';

export type Value =
  | { type: 'null' }
  | { type: 'boolean'; value: boolean }
  | { type: 'integer'; value: bigint }
  | { type: 'double'; value: number }
  | { type: 'timestamp'; seconds: number; nanos: number }
  | { type: 'string'; value: string }
  | { type: 'bytes'; value: Buffer }
  | { type: 'reference'; value: string }
  | { type: 'geo'; latitude: number; longitude: number }
  | { type: 'array'; values: Value[] }
  | { type: 'map'; fields: Fields };

export type Fields = Map<string, Value>;
export type WireValue = Record<string, unknown>;
export type WireFields = Record<string, WireValue>;

export const nullValue: Value = { type: 'null' };
export const int64Max = (1n << 63n) - 1n;
export const int64Min = -(1n << 63n);
/** Depth counts the document's own map as level 0, as Firestore does. */
export const maxDepth = 20;

// ---- order and equality ---------------------------------------------------------------------

const typeRank = {
  null: 0,
  boolean: 1,
  integer: 2,
  double: 2,
  timestamp: 3,
  string: 4,
  bytes: 5,
  reference: 6,
  geo: 7,
  array: 8,
  vector: 9,
  map: 10,
} as const;

/** The documented cross-type order; numbers are one class, vectors sit between arrays and maps. */
export function typeOrder(value: Value): number {
  if (value.type === 'map' && isVector(value)) return typeRank.vector;
  return typeRank[value.type];
}

/** Vectors are maps `{__type__: "__vector__", value: [doubles]}`. */
export function isVector(value: Value): boolean {
  if (value.type !== 'map') return false;
  const marker = value.fields.get('__type__');
  return marker?.type === 'string' && marker.value === '__vector__';
}

/**
 * The one exact comparator of Firestore values, shared by orderBy, cursors, range filters and
 * listeners. Ints and doubles compare by exact value, NaN first; strings by UTF-8 bytes.
 */
export function compareValues(left: Value, right: Value): number {
  const leftOrder = typeOrder(left);
  const rightOrder = typeOrder(right);
  if (leftOrder !== rightOrder) return leftOrder < rightOrder ? -1 : 1;
  switch (left.type) {
    case 'null':
      return 0;
    case 'boolean':
      return Number(left.value) - Number((right as typeof left).value);
    case 'integer':
    case 'double':
      return compareNumbers(left, right as typeof left);
    case 'timestamp': {
      const other = right as typeof left;
      return sign(left.seconds - other.seconds) || sign(left.nanos - other.nanos);
    }
    case 'string':
      return compareUtf8(left.value, (right as typeof left).value);
    case 'bytes':
      return sign(Buffer.compare(left.value, (right as typeof left).value));
    case 'reference':
      return compareResourceNames(left.value, (right as typeof left).value);
    case 'geo': {
      const other = right as typeof left;
      return sign(left.latitude - other.latitude) || sign(left.longitude - other.longitude);
    }
    case 'array':
      return compareArrays(left.values, (right as typeof left).values);
    case 'map':
      return leftOrder === typeRank.vector ? compareVectors(left, right as typeof left) : compareMaps(left.fields, (right as typeof left).fields);
  }
}

export function valuesEqual(left: Value, right: Value): boolean {
  return compareValues(left, right) === 0;
}

type NumberValue = Value & { type: 'integer' | 'double' };

export function isNumber(value: Value): value is NumberValue {
  return value.type === 'integer' || value.type === 'double';
}

export function isNaNValue(value: Value): boolean {
  return value.type === 'double' && Number.isNaN(value.value);
}

function compareNumbers(left: NumberValue, right: NumberValue): number {
  if (left.type === 'integer' && right.type === 'integer') return left.value < right.value ? -1 : left.value > right.value ? 1 : 0;
  if (left.type === 'double' && right.type === 'double') return compareDoubles(left.value, right.value);
  if (left.type === 'integer') return 0 - compareDoubleWithInteger((right as { value: number }).value, left.value) || 0;
  return compareDoubleWithInteger(left.value, (right as { value: bigint }).value);
}

function compareDoubles(left: number, right: number): number {
  if (Number.isNaN(left)) return Number.isNaN(right) ? 0 : -1;
  if (Number.isNaN(right)) return 1;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Exact: an int64 is never rounded to a double (2^53 + 1 > 2^53.0). */
function compareDoubleWithInteger(double: number, integer: bigint): number {
  if (Number.isNaN(double)) return -1;
  if (double === Infinity) return 1;
  if (double === -Infinity) return -1;
  const floor = BigInt(Math.floor(double));
  if (floor < integer) return -1;
  if (floor > integer) return 1;
  return Number.isInteger(double) ? 0 : 1;
}

/** UTF-8 byte order without encoding: a surrogate pair is a code point above every BMP unit. */
export function compareUtf8(left: string, right: string): number {
  const length = Math.min(left.length, right.length);
  for (let i = 0; i < length; i++) {
    const a = left.charCodeAt(i);
    const b = right.charCodeAt(i);
    if (a === b) continue;
    const aSurrogate = a >= 0xd800 && a <= 0xdfff;
    const bSurrogate = b >= 0xd800 && b <= 0xdfff;
    if (aSurrogate !== bSurrogate) return aSurrogate ? 1 : -1;
    return a < b ? -1 : 1;
  }
  return sign(left.length - right.length);
}

/** Segment by segment; a path sorts before the longer paths it is a prefix of. */
export function compareResourceNames(left: string, right: string): number {
  return compareSegments(left.split('/'), right.split('/'));
}

export function compareSegments(left: readonly string[], right: readonly string[]): number {
  const length = Math.min(left.length, right.length);
  for (let i = 0; i < length; i++) {
    const order = compareSegment(left[i]!, right[i]!);
    if (order !== 0) return order;
  }
  return sign(left.length - right.length);
}

/**
 * One segment of a name: numeric ids (`__id7__`, Datastore's integer ids) sort first, by their
 * number; then every other id by UTF-8 bytes. The SDKs order their caches the same way.
 */
export function compareSegment(left: string, right: string): number {
  const leftNumber = numericIdValue(left);
  const rightNumber = numericIdValue(right);
  if (leftNumber === undefined) return rightNumber === undefined ? compareUtf8(left, right) : 1;
  if (rightNumber === undefined) return -1;
  return leftNumber < rightNumber ? -1 : leftNumber > rightNumber ? 1 : 0;
}

function compareArrays(left: Value[], right: Value[]): number {
  const length = Math.min(left.length, right.length);
  for (let i = 0; i < length; i++) {
    const order = compareValues(left[i]!, right[i]!);
    if (order !== 0) return order;
  }
  return sign(left.length - right.length);
}

function vectorElements(value: Value & { type: 'map' }): Value[] {
  const elements = value.fields.get('value');
  return elements?.type === 'array' ? elements.values : [];
}

function compareVectors(left: Value & { type: 'map' }, right: Value & { type: 'map' }): number {
  const leftElements = vectorElements(left);
  const rightElements = vectorElements(right);
  return sign(leftElements.length - rightElements.length) || compareArrays(leftElements, rightElements);
}

export function sortedKeys(fields: Fields): string[] {
  return [...fields.keys()].sort(compareUtf8);
}

function compareMaps(left: Fields, right: Fields): number {
  const leftKeys = sortedKeys(left);
  const rightKeys = sortedKeys(right);
  const length = Math.min(leftKeys.length, rightKeys.length);
  for (let i = 0; i < length; i++) {
    const keyOrder = compareUtf8(leftKeys[i]!, rightKeys[i]!);
    if (keyOrder !== 0) return keyOrder;
    const valueOrder = compareValues(left.get(leftKeys[i]!)!, right.get(rightKeys[i]!)!);
    if (valueOrder !== 0) return valueOrder;
  }
  return sign(leftKeys.length - rightKeys.length);
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Strings must be valid UTF-8: no unpaired surrogates. */
export function isWellFormed(text: string): boolean {
  return !loneSurrogate.test(text);
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}
