/**
 * The corpus's documents on the wire (proto3 JSON, as REST, WebChannel and Hearth's gRPC codec speak it) and back,
 * and from what the SDKs hand an app; read times in microseconds.
 */
import { dataFields, type DocData } from './invariant-world.js';

export type WireValue = Record<string, unknown>;
export type WireFields = Record<string, WireValue>;

export function toWireFields(data: DocData): WireFields {
  const fields: WireFields = {};
  if (data.owner !== undefined) fields.owner = { stringValue: data.owner };
  if (data.visibility !== undefined) fields.visibility = { stringValue: data.visibility };
  if (data.level !== undefined) fields.level = { integerValue: String(data.level) };
  if (data.title !== undefined) fields.title = { stringValue: data.title };
  if (data.embedding !== undefined) fields.embedding = vectorValue(data.embedding);
  return fields;
}

export function vectorValue(vector: readonly number[]): WireValue {
  return { mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: vector.map((x) => ({ doubleValue: x })) } } } } };
}

/** A delivered document's fields as the corpus's data; a field of another type is kept as a marker (never equal to the model). */
export function fromWireFields(fields: unknown): DocData {
  const wire = (fields ?? {}) as WireFields;
  const data: DocData = {};
  const text = (value: WireValue | undefined) => (value === undefined ? undefined : typeof value.stringValue === 'string' ? value.stringValue : `<${JSON.stringify(value)}>`);
  if (wire.owner) data.owner = text(wire.owner);
  if (wire.visibility) data.visibility = text(wire.visibility);
  if (wire.title) data.title = text(wire.title);
  if (wire.level) data.level = wire.level.integerValue !== undefined ? Number(wire.level.integerValue) : Number.NaN;
  if (wire.embedding) {
    const values = ((wire.embedding.mapValue as { fields?: WireFields } | undefined)?.fields?.value?.arrayValue as { values?: WireValue[] } | undefined)?.values ?? [];
    data.embedding = values.map((value) => Number(value.doubleValue ?? value.integerValue)) as [number, number];
  }
  for (const key of Object.keys(wire)) if (!(dataFields as readonly string[]).includes(key)) data.title = `<unexpected field ${key}>`;
  return data;
}

/** What an SDK's `snapshot.data()` holds (firebase's VectorValue and the admin SDK's both have toArray()). */
export function fromSdkData(raw: Record<string, unknown> | undefined): DocData {
  const data: DocData = {};
  if (!raw) return data;
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'owner' || key === 'visibility' || key === 'title') data[key] = typeof value === 'string' ? value : `<${String(value)}>`;
    else if (key === 'level') data.level = typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : Number.NaN;
    else if (key === 'embedding') data.embedding = (value as { toArray(): number[] }).toArray() as [number, number];
    else data.title = `<unexpected field ${key}>`;
  }
  return data;
}

/** RFC 3339 (up to nanoseconds) to microseconds since the epoch. */
export function micros(text: string): number {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(text);
  if (!match) throw new Error(`not a timestamp: ${text}`);
  const fraction = (match[2] ?? '').padEnd(6, '0').slice(0, 6);
  return Date.parse(`${match[1]}Z`) * 1000 + Number(fraction);
}

/** Microseconds to RFC 3339 with six digits. */
export function rfc3339(microseconds: number): string {
  const seconds = Math.floor(microseconds / 1e6);
  const iso = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '');
  return `${iso}.${String(microseconds - seconds * 1e6).padStart(6, '0')}Z`;
}
