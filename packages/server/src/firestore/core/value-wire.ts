import { firestoreErrors } from './errors.js';
import { checkReferenceName } from './resource-names.js';
import { int64Max, int64Min, isWellFormed, maxDepth, nullValue, type Fields, type Value, type WireFields, type WireValue } from './values.js';
import { onlyKeys } from './wire-checks.js';

export { isWellFormed };

/**
 * The proto3 JSON form of values (int64 as strings, doubles' NaN/Infinity/-0 as strings, bytes
 * as base64, RFC 3339 timestamps), checked on the way in with Google-style messages.
 */
const minSeconds = -62135596800; // 0001-01-01T00:00:00Z
const maxSeconds = 253402300799; // 9999-12-31T23:59:59Z

// ---- wire → engine --------------------------------------------------------------------------

const valueKinds = new Set([
  'nullValue',
  'booleanValue',
  'integerValue',
  'doubleValue',
  'timestampValue',
  'stringValue',
  'bytesValue',
  'referenceValue',
  'geoPointValue',
  'arrayValue',
  'mapValue',
]);

export interface WireOptions {
  /** Query operands (`in`, `not-in`) may list arrays; stored values may not nest them. */
  allowNestedArrays?: boolean;
}

/**
 * `where` names the place in the request, as Google's JSON parser does in its messages. Depth
 * counts maps and arrays: a top-level field may hold 20 of them nested, not 21.
 */
export function fromWire(wire: unknown, where: string, depth = 1, options: WireOptions = {}): Value {
  if (typeof wire !== 'object' || wire === null || Array.isArray(wire)) {
    throw firestoreErrors.invalidArgument(`Invalid JSON payload received. Invalid value at '${where}': expected a Value object.`);
  }
  const keys = Object.keys(wire);
  for (const key of keys) {
    if (!valueKinds.has(key)) {
      throw firestoreErrors.invalidArgument(`Invalid JSON payload received. Unknown name "${key}" at '${where}': Cannot find field.`);
    }
  }
  if (keys.length !== 1) {
    throw firestoreErrors.invalidArgument(
      keys.length === 0 ? `Value at ${where} has no value type set.` : `Invalid JSON payload received. Value at '${where}' sets more than one of its oneof fields.`,
    );
  }
  const kind = keys[0]!;
  const raw = (wire as Record<string, unknown>)[kind];
  if ((kind === 'arrayValue' || kind === 'mapValue') && depth > maxDepth) {
    throw firestoreErrors.invalidArgument(`Property ${where} contains an invalid nested entity: maps and arrays nest at most ${maxDepth} deep.`);
  }
  const bad = (expected: string) =>
    firestoreErrors.invalidArgument(`Invalid JSON payload received. Invalid value at '${where}.${kind}' (${expected}).`);
  switch (kind) {
    case 'nullValue':
      if (raw !== null && raw !== 'NULL_VALUE' && raw !== 0) throw bad('type.googleapis.com/google.protobuf.NullValue');
      return nullValue;
    case 'booleanValue':
      if (typeof raw !== 'boolean') throw bad('TYPE_BOOL');
      return { type: 'boolean', value: raw };
    case 'integerValue':
      return { type: 'integer', value: parseInt64(raw, () => bad('TYPE_INT64')) };
    case 'doubleValue':
      return { type: 'double', value: parseDouble(raw, () => bad('TYPE_DOUBLE')) };
    case 'timestampValue': {
      if (typeof raw !== 'string') throw bad('type.googleapis.com/google.protobuf.Timestamp');
      const parsed = parseTimestamp(raw);
      if (!parsed) throw bad('type.googleapis.com/google.protobuf.Timestamp');
      return { type: 'timestamp', seconds: parsed.seconds, nanos: parsed.nanos };
    }
    case 'stringValue':
      if (typeof raw !== 'string') throw bad('TYPE_STRING');
      if (!isWellFormed(raw)) throw firestoreErrors.invalidArgument(`String value at ${where} is not valid UTF-8.`);
      return { type: 'string', value: raw };
    case 'bytesValue': {
      if (typeof raw !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(raw)) throw bad('TYPE_BYTES');
      return { type: 'bytes', value: Buffer.from(raw, raw.includes('-') || raw.includes('_') ? 'base64url' : 'base64') };
    }
    case 'referenceValue':
      if (typeof raw !== 'string') throw bad('TYPE_STRING');
      checkReferenceName(raw);
      return { type: 'reference', value: raw };
    case 'geoPointValue': {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('type.googleapis.com/google.type.LatLng');
      const point = raw as Record<string, unknown>;
      onlyKeys(point, ['latitude', 'longitude'], `${where}.geoPointValue`);
      const latitude = point.latitude === undefined ? 0 : parseDouble(point.latitude, () => bad('TYPE_DOUBLE'));
      const longitude = point.longitude === undefined ? 0 : parseDouble(point.longitude, () => bad('TYPE_DOUBLE'));
      if (!(latitude >= -90 && latitude <= 90) || !(longitude >= -180 && longitude <= 180)) {
        throw firestoreErrors.invalidArgument(`GeoPoint at ${where} has an invalid latitude or longitude.`);
      }
      return { type: 'geo', latitude: latitude + 0, longitude: longitude + 0 };
    }
    case 'arrayValue': {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('type.googleapis.com/google.firestore.v1.ArrayValue');
      const array = raw as Record<string, unknown>;
      onlyKeys(array, ['values'], `${where}.arrayValue`);
      if (array.values === undefined) return { type: 'array', values: [] };
      if (!Array.isArray(array.values)) throw bad('TYPE_MESSAGE list');
      const values = array.values.map((element, i) => fromWire(element, `${where}.arrayValue.values[${i}]`, depth + 1));
      if (!options.allowNestedArrays && values.some((element) => element.type === 'array')) {
        throw firestoreErrors.invalidArgument(`Cannot have an array value directly inside an array value (at ${where}).`);
      }
      return { type: 'array', values };
    }
    case 'mapValue': {
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('type.googleapis.com/google.firestore.v1.MapValue');
      const map = raw as Record<string, unknown>;
      onlyKeys(map, ['fields'], `${where}.mapValue`);
      return { type: 'map', fields: fieldsFromWire(map.fields, `${where}.mapValue.fields`, depth + 1) };
    }
  }
  throw bad('Value');
}

export function fieldsFromWire(wire: unknown, where: string, depth = 1): Fields {
  const fields: Fields = new Map();
  if (wire === undefined || wire === null) return fields;
  if (typeof wire !== 'object' || Array.isArray(wire)) {
    throw firestoreErrors.invalidArgument(`Invalid JSON payload received. Invalid value at '${where}': expected a map of fields.`);
  }
  for (const [name, value] of Object.entries(wire)) {
    fields.set(name, fromWire(value, `${where}[${JSON.stringify(name)}]`, depth));
  }
  return fields;
}

/**
 * Fields as this server stored them: its own proto3 JSON, checked when it was written. Decoded
 * without the request checks and their messages (built for every field, they cost about 2.5x on
 * every read); the value model is the same as `fieldsFromWire`'s.
 */
export function storedFields(wire: Readonly<Record<string, StoredValue>> | undefined): Fields {
  const fields: Fields = new Map();
  if (wire) for (const name of Object.keys(wire)) fields.set(name, storedValue(wire[name]!));
  return fields;
}

type StoredValue = Readonly<Record<string, unknown>>;

function storedValue(wire: StoredValue): Value {
  if (wire.stringValue !== undefined) return { type: 'string', value: wire.stringValue as string };
  if (wire.integerValue !== undefined) return { type: 'integer', value: BigInt(wire.integerValue as string | number) };
  if (wire.doubleValue !== undefined) return { type: 'double', value: storedDouble(wire.doubleValue) };
  if (wire.booleanValue !== undefined) return { type: 'boolean', value: wire.booleanValue as boolean };
  if (wire.mapValue !== undefined) return { type: 'map', fields: storedFields((wire.mapValue as { fields?: Record<string, StoredValue> }).fields) };
  if (wire.arrayValue !== undefined) return { type: 'array', values: ((wire.arrayValue as { values?: StoredValue[] }).values ?? []).map(storedValue) };
  if (wire.timestampValue !== undefined) {
    const parsed = parseTimestamp(wire.timestampValue as string)!;
    return { type: 'timestamp', seconds: parsed.seconds, nanos: parsed.nanos };
  }
  if (wire.referenceValue !== undefined) return { type: 'reference', value: wire.referenceValue as string };
  if (wire.bytesValue !== undefined) {
    const raw = wire.bytesValue as string;
    return { type: 'bytes', value: Buffer.from(raw, raw.includes('-') || raw.includes('_') ? 'base64url' : 'base64') };
  }
  if (wire.geoPointValue !== undefined) {
    const point = wire.geoPointValue as { latitude?: unknown; longitude?: unknown };
    return { type: 'geo', latitude: (point.latitude === undefined ? 0 : storedDouble(point.latitude)) + 0, longitude: (point.longitude === undefined ? 0 : storedDouble(point.longitude)) + 0 };
  }
  return nullValue;
}

function storedDouble(raw: unknown): number {
  return typeof raw === 'number' ? raw : Number(raw);
}

function parseInt64(raw: unknown, bad: () => Error): bigint {
  let value: bigint;
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw)) throw bad();
    value = BigInt(raw);
  } else if (typeof raw === 'string' && /^-?\d{1,20}$/.test(raw)) {
    value = BigInt(raw);
  } else {
    throw bad();
  }
  if (value > int64Max || value < int64Min) throw bad();
  return value;
}

function parseDouble(raw: unknown, bad: () => Error): number {
  if (typeof raw === 'number') return raw;
  if (raw === 'NaN') return NaN;
  if (raw === 'Infinity') return Infinity;
  if (raw === '-Infinity') return -Infinity;
  if (typeof raw === 'string' && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) return Number(raw);
  throw bad();
}

/** RFC 3339, as proto3 JSON writes timestamps; offsets other than Z are accepted on input. */
export function parseTimestamp(text: string): { seconds: number; nanos: number } | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes] = match;
  const millis = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  if (Number.isNaN(millis)) return undefined;
  const check = new Date(millis);
  if (check.getUTCDate() !== Number(day) || check.getUTCMonth() !== Number(month) - 1 || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) {
    return undefined;
  }
  let seconds = Math.floor(millis / 1000);
  if (Number(year) < 100) seconds = Math.floor(setFullYear(millis, Number(year)) / 1000);
  if (sign) seconds -= (sign === '-' ? -1 : 1) * (Number(offsetHours) * 3600 + Number(offsetMinutes) * 60);
  if (seconds < minSeconds || seconds > maxSeconds) return undefined;
  const nanos = fraction ? Number(fraction.padEnd(9, '0')) : 0;
  return { seconds, nanos };
}

/** Date.UTC maps years 0-99 to 1900-1999. */
function setFullYear(millis: number, year: number): number {
  const date = new Date(millis);
  date.setUTCFullYear(year);
  return date.getTime();
}

// ---- engine → wire --------------------------------------------------------------------------

export function toWire(value: Value): WireValue {
  switch (value.type) {
    case 'null':
      return { nullValue: null };
    case 'boolean':
      return { booleanValue: value.value };
    case 'integer':
      return { integerValue: value.value.toString() };
    case 'double':
      return { doubleValue: doubleToWire(value.value) };
    case 'timestamp':
      return { timestampValue: formatTimestamp(value.seconds, value.nanos) };
    case 'string':
      return { stringValue: value.value };
    case 'bytes':
      return { bytesValue: value.value.toString('base64') };
    case 'reference':
      return { referenceValue: value.value };
    case 'geo': {
      // Zero coordinates are left out, as proto3 JSON leaves out defaults.
      const point: Record<string, number> = {};
      if (value.latitude !== 0) point.latitude = value.latitude;
      if (value.longitude !== 0) point.longitude = value.longitude;
      return { geoPointValue: point };
    }
    case 'array':
      return { arrayValue: value.values.length ? { values: value.values.map(toWire) } : {} };
    case 'map':
      return { mapValue: value.fields.size ? { fields: fieldsToWire(value.fields) } : {} };
  }
}

export function fieldsToWire(fields: Fields): WireFields {
  const wire: WireFields = {};
  for (const [name, value] of fields) {
    Object.defineProperty(wire, name, { value: toWire(value), enumerable: true, writable: true, configurable: true });
  }
  return wire;
}

function doubleToWire(value: number): number | string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  if (Object.is(value, -0)) return '-0';
  return value;
}

export function formatTimestamp(seconds: number, nanos: number): string {
  const base = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '');
  if (nanos === 0) return `${base}Z`;
  const digits = String(nanos).padStart(9, '0');
  return `${base}.${nanos % 1_000_000 === 0 ? digits.slice(0, 3) : nanos % 1000 === 0 ? digits.slice(0, 6) : digits}Z`;
}

/** Microseconds since the epoch, the engine's clock for commit and update times. */
export function timestampFromMicros(micros: number): Value & { type: 'timestamp' } {
  const seconds = Math.floor(micros / 1e6);
  return { type: 'timestamp', seconds, nanos: (micros - seconds * 1e6) * 1000 };
}

export function formatMicros(micros: number): string {
  const seconds = Math.floor(micros / 1e6);
  return formatTimestamp(seconds, (micros - seconds * 1e6) * 1000);
}

export function parseMicros(text: string): number | undefined {
  const parsed = parseTimestamp(text);
  return parsed ? parsed.seconds * 1e6 + Math.floor(parsed.nanos / 1000) : undefined;
}

