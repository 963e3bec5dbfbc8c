/** Firestore's REST (proto3 JSON) values, the types the console shows and edits. */
export type FirestoreValue =
  | { nullValue: null }
  | { booleanValue: boolean }
  | { integerValue: string }
  | { doubleValue: number }
  | { stringValue: string }
  | { timestampValue: string }
  | { geoPointValue: { latitude: number; longitude: number } }
  | { referenceValue: string }
  | { bytesValue: string }
  | { mapValue: { fields?: Record<string, FirestoreValue> } }
  | { arrayValue: { values?: FirestoreValue[] } };

export type ValueType = 'string' | 'integer' | 'double' | 'boolean' | 'null' | 'timestamp' | 'geopoint' | 'reference' | 'bytes' | 'map' | 'array';

export const valueTypes: ValueType[] = ['string', 'integer', 'double', 'boolean', 'null', 'timestamp', 'geopoint', 'reference', 'bytes', 'map', 'array'];

export function typeOf(value: FirestoreValue): ValueType {
  if ('stringValue' in value) return 'string';
  if ('integerValue' in value) return 'integer';
  if ('doubleValue' in value) return 'double';
  if ('booleanValue' in value) return 'boolean';
  if ('timestampValue' in value) return 'timestamp';
  if ('geoPointValue' in value) return 'geopoint';
  if ('referenceValue' in value) return 'reference';
  if ('bytesValue' in value) return 'bytes';
  if ('mapValue' in value) return 'map';
  if ('arrayValue' in value) return 'array';
  return 'null';
}

/** A fresh value of a type, keeping what it can of the old one (a number stays a number). */
export function convert(value: FirestoreValue, to: ValueType, documentsRoot: string): FirestoreValue {
  const text = plainText(value);
  switch (to) {
    case 'string':
      return { stringValue: text };
    case 'integer':
      return { integerValue: /^-?\d+$/.test(text) ? text : String(Math.trunc(Number(text)) || 0) };
    case 'double':
      return { doubleValue: Number(text) || 0 };
    case 'boolean':
      return { booleanValue: text === 'true' };
    case 'null':
      return { nullValue: null };
    case 'timestamp':
      return { timestampValue: new Date().toISOString() };
    case 'geopoint':
      return { geoPointValue: { latitude: 0, longitude: 0 } };
    case 'reference':
      return { referenceValue: `${documentsRoot}/collection/document` };
    case 'bytes':
      return { bytesValue: '' };
    case 'map':
      return { mapValue: { fields: {} } };
    case 'array':
      return { arrayValue: { values: [] } };
  }
}

function plainText(value: FirestoreValue): string {
  if ('stringValue' in value) return value.stringValue;
  if ('integerValue' in value) return value.integerValue;
  if ('doubleValue' in value) return String(value.doubleValue);
  if ('booleanValue' in value) return String(value.booleanValue);
  return '';
}

/** One line that shows a value in a list. */
export function summary(value: FirestoreValue): string {
  switch (typeOf(value)) {
    case 'string':
      return JSON.stringify((value as { stringValue: string }).stringValue);
    case 'timestamp':
      return new Date((value as { timestampValue: string }).timestampValue).toISOString();
    case 'geopoint': {
      const point = (value as { geoPointValue: { latitude?: number; longitude?: number } }).geoPointValue;
      return `[${point.latitude ?? 0}° N, ${point.longitude ?? 0}° E]`;
    }
    case 'reference':
      return (value as { referenceValue: string }).referenceValue.replace(/^projects\/[^/]+\/databases\/[^/]+\/documents\//, '/');
    case 'bytes':
      return `bytes(${atobLength((value as { bytesValue: string }).bytesValue)})`;
    case 'map':
      return `{${Object.keys((value as { mapValue: { fields?: object } }).mapValue.fields ?? {}).length} fields}`;
    case 'array':
      return `[${((value as { arrayValue: { values?: unknown[] } }).arrayValue.values ?? []).length} items]`;
    case 'null':
      return 'null';
    default:
      return plainText(value);
  }
}

function atobLength(base64: string): number {
  return Math.floor((base64.replace(/=+$/, '').length * 3) / 4);
}

/** Why a value cannot be saved, or null. */
export function valueProblem(value: FirestoreValue): string | null {
  if ('integerValue' in value && !/^-?\d{1,19}$/.test(value.integerValue)) return 'An integer must be whole digits.';
  if ('doubleValue' in value && !Number.isFinite(value.doubleValue)) return 'A number must be finite.';
  if ('timestampValue' in value && Number.isNaN(Date.parse(value.timestampValue))) return 'A timestamp must be a date like 2026-01-31T12:00:00Z.';
  if ('geoPointValue' in value) {
    const { latitude, longitude } = value.geoPointValue;
    if (!(latitude >= -90 && latitude <= 90) || !(longitude >= -180 && longitude <= 180)) return 'Latitude must be within ±90 and longitude within ±180.';
  }
  if ('referenceValue' in value && !/^projects\/[^/]+\/databases\/[^/]+\/documents\/[^/]+\/[^/]+(\/[^/]+\/[^/]+)*$/.test(value.referenceValue)) return 'A reference must name a document: projects/…/databases/…/documents/collection/id.';
  if ('bytesValue' in value && !/^[A-Za-z0-9+/]*={0,2}$/.test(value.bytesValue)) return 'Bytes must be base64.';
  if ('mapValue' in value) for (const inner of Object.values(value.mapValue.fields ?? {})) { const problem = valueProblem(inner); if (problem) return problem; }
  if ('arrayValue' in value) {
    for (const inner of value.arrayValue.values ?? []) {
      if ('arrayValue' in inner) return 'An array cannot hold an array directly; put it in a map.';
      const problem = valueProblem(inner);
      if (problem) return problem;
    }
  }
  return null;
}

/** A JSON literal typed in a query filter, as a Firestore value (strings stay strings). */
export function literalToValue(text: string): FirestoreValue {
  const trimmed = text.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return { stringValue: text };
  }
  return fromJson(parsed);
}

/** Firestore's own JSON for the values plain JSON has no literal for; `{"timestampValue": "..."}` is taken as one. */
const typedValueKeys = new Set(['timestampValue', 'geoPointValue', 'bytesValue', 'referenceValue']);

export function fromJson(parsed: unknown): FirestoreValue {
  if (parsed === null) return { nullValue: null };
  if (typeof parsed === 'object' && !Array.isArray(parsed)) {
    const keys = Object.keys(parsed as object);
    if (keys.length === 1 && typedValueKeys.has(keys[0]!)) return parsed as FirestoreValue;
  }
  if (typeof parsed === 'boolean') return { booleanValue: parsed };
  if (typeof parsed === 'number') return Number.isInteger(parsed) ? { integerValue: String(parsed) } : { doubleValue: parsed };
  if (typeof parsed === 'string') return { stringValue: parsed };
  if (Array.isArray(parsed)) return { arrayValue: { values: parsed.map(fromJson) } };
  return { mapValue: { fields: Object.fromEntries(Object.entries(parsed as Record<string, unknown>).map(([key, inner]) => [key, fromJson(inner)])) } };
}
