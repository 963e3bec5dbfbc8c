import { createRequire } from 'node:module';
import protobuf from 'protobufjs';
import { requestErrors, type ApiError } from '../../http/api-error.js';
import { firestoreErrors } from '../core/errors.js';
import { formatTimestamp, parseTimestamp } from '../core/value-wire.js';

/**
 * The Firestore v1 protos, and the conversion between their binary messages and the proto3 JSON
 * that Hearth's core speaks (RFC 3339 timestamps, base64 bytes, int64 as strings, enum names,
 * bare wrapper values, null for NullValue). The conversion walks the protobufjs reflection, so
 * every message converts the same way; only the well-known types are special.
 */

type Json = Record<string, unknown>;

/**
 * Loads google.firestore.v1 from the descriptor @google-cloud/firestore ships, and adds the
 * `verify` write (field 5 of Write's `operation` oneof): Google's published protos lack it, the
 * client SDK sends it for documents a transaction read but did not write.
 */
export function loadFirestoreRoot(): protobuf.Root {
  // Read-only once resolved: one per process, not one per server (a fiftieth of a second each).
  processRoot ??= buildFirestoreRoot();
  return processRoot;
}

let processRoot: protobuf.Root | undefined;

function buildFirestoreRoot(): protobuf.Root {
  const require = createRequire(import.meta.url);
  const root = protobuf.Root.fromJSON(require('@google-cloud/firestore/build/protos/v1.json') as protobuf.INamespace);
  const write = root.lookupType('google.firestore.v1.Write');
  if (!write.fields.verify) {
    const verify = new protobuf.Field('verify', 5, 'string');
    write.add(verify);
    write.oneofs.operation!.add(verify);
  }
  root.resolveAll();
  return root;
}

const int64Types = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const wrapperTypes = new Set(
  ['DoubleValue', 'FloatValue', 'Int64Value', 'UInt64Value', 'Int32Value', 'UInt32Value', 'BoolValue', 'StringValue', 'BytesValue'].map((name) => `.google.protobuf.${name}`),
);
const nullValueEnum = '.google.protobuf.NullValue';

const fullNames = new WeakMap<protobuf.ReflectionObject, string>();

/** protobufjs rebuilds `fullName` on every read; on the listener path that was a tenth of the CPU. */
function nameOf(type: protobuf.ReflectionObject | null | undefined): string | undefined {
  if (!type) return undefined;
  let name = fullNames.get(type);
  if (name === undefined) {
    name = type.fullName;
    fullNames.set(type, name);
  }
  return name;
}

// ---- binary message → proto3 JSON -----------------------------------------------------------

/** Where a request that could not be decoded keeps the error to answer it with. */
export const malformedRequest: unique symbol = Symbol('malformedRequest');

/** A request as the handlers receive it; see `decodeRequest`. */
export type DecodedRequest = Json & { [malformedRequest]?: ApiError };

/**
 * A request message as proto3 JSON. It never throws: @grpc/grpc-js answers any error thrown while
 * deserializing with INTERNAL "Error deserializing request", where Google answers INVALID_ARGUMENT.
 * Bytes that are not the message (truncated, wrong wire types, nesting past the stack) come back
 * as an empty request carrying the error under `malformedRequest`; `requestProblem` finds it.
 */
export function decodeRequest(type: protobuf.Type, bytes: Uint8Array, limitBytes = Number.POSITIVE_INFINITY): DecodedRequest {
  if (bytes.length > limitBytes) return { [malformedRequest]: requestErrors.payloadTooLarge(limitBytes) };
  try {
    return messageToJson(type, type.decode(bytes) as unknown as Json) as Json;
  } catch (error) {
    const reason = error instanceof RangeError && /call stack/.test(error.message) ? 'it nests too deeply' : 'it is not a valid message of this type';
    return { [malformedRequest]: firestoreErrors.invalidArgument(`Invalid request: ${type.name} could not be decoded (${reason}).`) };
  }
}

/** The error a request that could not be decoded must be answered with, if it is one. */
export function requestProblem(request: unknown): ApiError | undefined {
  return typeof request === 'object' && request !== null ? (request as DecodedRequest)[malformedRequest] : undefined;
}

/** A decoded message (fields absent from the wire are not own properties) as proto3 JSON. */
export function messageToJson(type: protobuf.Type, message: Json): unknown {
  switch (nameOf(type)) {
    case '.google.protobuf.Timestamp':
      return formatTimestamp(longToNumber(message.seconds), Number(message.nanos ?? 0));
    case '.google.protobuf.Duration': {
      const seconds = longToNumber(message.seconds);
      const nanos = Number(message.nanos ?? 0);
      return `${nanos === 0 ? seconds : (seconds + nanos / 1e9).toFixed(9).replace(/0+$/, '')}s`;
    }
    case '.google.protobuf.Struct':
      return Object.fromEntries(Object.entries((message.fields ?? {}) as Record<string, Json>).map(([key, value]) => [key, structValueToJson(value)]));
    case '.google.protobuf.ListValue':
      return ((message.values ?? []) as Json[]).map(structValueToJson);
    case '.google.protobuf.Value':
      return structValueToJson(message);
  }
  if (wrapperTypes.has(nameOf(type)!)) {
    const field = type.fields.value!;
    return scalarToJson(field, has(message, 'value') ? message.value : field.typeDefault);
  }
  const json: Json = {};
  for (const field of type.fieldsArray) {
    if (!has(message, field.name)) continue;
    const value = message[field.name];
    if (value === null || value === undefined) continue;
    if (field.map) {
      const entries = Object.entries(value as Json);
      if (entries.length) json[field.name] = Object.fromEntries(entries.map(([key, entry]) => [key, fieldToJson(field, entry)]));
    } else if (field.repeated) {
      if ((value as unknown[]).length) json[field.name] = (value as unknown[]).map((element) => fieldToJson(field, element));
    } else if (field.partOf || field.resolvedType instanceof protobuf.Type || !isDefault(field, value)) {
      // Oneof members and messages have presence; other proto3 scalars are left out at their default.
      json[field.name] = fieldToJson(field, value);
    }
  }
  return json;
}

function fieldToJson(field: protobuf.Field, value: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return messageToJson(resolved, value as Json);
  return scalarToJson(field, value);
}

function scalarToJson(field: protobuf.Field, value: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) {
    if (nameOf(resolved) === nullValueEnum) return null;
    return resolved.valuesById[value as number] ?? value;
  }
  if (int64Types.has(field.type)) return String(value);
  if (field.type === 'bytes') return Buffer.from(value as Uint8Array).toString('base64');
  if (field.type === 'double' || field.type === 'float') {
    const number = value as number;
    if (Number.isNaN(number)) return 'NaN';
    if (number === Infinity) return 'Infinity';
    if (number === -Infinity) return '-Infinity';
    return number;
  }
  return value;
}

function structValueToJson(value: Json): unknown {
  if (has(value, 'nullValue')) return null;
  if (has(value, 'numberValue')) return value.numberValue;
  if (has(value, 'stringValue')) return value.stringValue;
  if (has(value, 'boolValue')) return value.boolValue;
  if (has(value, 'structValue')) return Object.fromEntries(Object.entries(((value.structValue as Json).fields ?? {}) as Record<string, Json>).map(([key, entry]) => [key, structValueToJson(entry)]));
  if (has(value, 'listValue')) return (((value.listValue as Json).values ?? []) as Json[]).map(structValueToJson);
  return null;
}

function isDefault(field: protobuf.Field, value: unknown): boolean {
  if (field.resolvedType instanceof protobuf.Enum) return value === 0;
  if (int64Types.has(field.type)) return String(value) === '0';
  if (field.type === 'bytes') return (value as Uint8Array).length === 0;
  if (field.type === 'double' || field.type === 'float') return value === 0 && !Object.is(value, -0);
  return value === 0 || value === false || value === '';
}

function longToNumber(value: unknown): number {
  if (value === undefined || value === null) return 0;
  return typeof value === 'number' ? value : Number(String(value));
}

function has(object: Json, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

// ---- proto3 JSON → message object for encoding ------------------------------------------------

/**
 * Proto3 JSON as a plain object protobufjs can encode. Fields the proto lacks are dropped: the core
 * also answers REST, where a few extras exist (`done` on aggregation responses).
 */
export function messageFromJson(type: protobuf.Type, json: unknown): Json {
  const name = nameOf(type);
  if (name === documentType && typeof json === 'object' && json !== null) {
    // A committed document goes to every listener as one shared wire object: convert it once.
    let message = convertedDocuments.get(json);
    if (!message) {
      message = convertMessage(type, name, json);
      convertedDocuments.set(json, message);
    }
    return message;
  }
  return convertMessage(type, name, json);
}

const documentType = '.google.firestore.v1.Document';
let lastTimestamp: { text: string | undefined; message: Json } = { text: undefined, message: {} };
/** Wire objects are never changed once built, so a conversion stays valid as long as its input lives. */
const convertedDocuments = new WeakMap<object, Json>();

function convertMessage(type: protobuf.Type, name: string | undefined, json: unknown): Json {
  switch (name) {
    case '.google.protobuf.Timestamp': {
      // Every listener's snapshot of one commit carries the same read time, one after another.
      if (json === lastTimestamp.text) return { ...lastTimestamp.message };
      const parsed = typeof json === 'string' ? parseTimestamp(json) : undefined;
      if (!parsed) throw firestoreErrors.invalidArgument(`Invalid timestamp: ${String(json)}`);
      lastTimestamp = { text: json as string, message: { seconds: parsed.seconds, nanos: parsed.nanos } };
      return { ...lastTimestamp.message };
    }
    case '.google.protobuf.Duration': {
      const match = typeof json === 'string' ? /^(-?)(\d+)(?:\.(\d{1,9}))?s$/.exec(json) : null;
      if (!match) throw firestoreErrors.invalidArgument(`Invalid duration: ${String(json)}`);
      const sign = match[1] ? -1 : 1;
      return { seconds: sign * Number(match[2]), nanos: sign * Number((match[3] ?? '').padEnd(9, '0')) };
    }
    case '.google.protobuf.Struct':
      return structFromJson(json);
    case '.google.protobuf.ListValue':
      return { values: (Array.isArray(json) ? json : []).map(structValueFromJson) };
    case '.google.protobuf.Value':
      return structValueFromJson(json);
  }
  if (wrapperTypes.has(name!)) {
    const field = type.fields.value!;
    // The Node SDKs' own form, `{value: n}`, is accepted too.
    const bare = typeof json === 'object' && json !== null && !Buffer.isBuffer(json) ? (json as Json).value : json;
    return { value: scalarFromJson(field, bare) };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw firestoreErrors.invalidArgument(`Expected an object for ${type.name}.`);
  const message: Json = {};
  for (const [key, value] of Object.entries(json)) {
    const field = type.fields[key];
    if (!field || value === undefined) continue;
    if (field.map) {
      message[key] = Object.fromEntries(Object.entries(value as Json).map(([name, entry]) => [name, fieldFromJson(field, entry)]));
    } else if (field.repeated) {
      message[key] = (value as unknown[]).map((element) => fieldFromJson(field, element));
    } else if (value !== null || nameOf(field.resolvedType) === nullValueEnum || nameOf(field.resolvedType) === '.google.protobuf.Value') {
      message[key] = fieldFromJson(field, value);
    }
  }
  return message;
}

function fieldFromJson(field: protobuf.Field, value: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return messageFromJson(resolved, value);
  return scalarFromJson(field, value);
}

function scalarFromJson(field: protobuf.Field, value: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) {
    if (nameOf(resolved) === nullValueEnum) return 0;
    return typeof value === 'string' ? (resolved.values[value] ?? 0) : value;
  }
  if (field.type === 'bytes') return typeof value === 'string' ? Buffer.from(value, 'base64') : value;
  if (field.type === 'double' || field.type === 'float') return typeof value === 'string' ? Number(value) : value;
  // int64 strings are encoded as they are (protobufjs parses them with Long).
  return value;
}

function structFromJson(json: unknown): Json {
  const fields: Json = {};
  if (typeof json === 'object' && json !== null) {
    for (const [key, value] of Object.entries(json)) fields[key] = structValueFromJson(value);
  }
  return { fields };
}

function structValueFromJson(json: unknown): Json {
  if (json === null || json === undefined) return { nullValue: 0 };
  if (typeof json === 'number') return { numberValue: json };
  if (typeof json === 'string') return { stringValue: json };
  if (typeof json === 'boolean') return { boolValue: json };
  if (Array.isArray(json)) return { listValue: { values: json.map(structValueFromJson) } };
  return { structValue: structFromJson(json) };
}
