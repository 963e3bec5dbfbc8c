import { deleteField, getField, setField, checkDocumentSize, type Doc } from './documents.js';
import { firestoreErrors } from './errors.js';
import { onlyKeys, wireObject as object } from './wire-checks.js';
import { checkFieldName, documentKeyFromName, fullName, parseFieldPath, type DatabaseId, type DocumentKey } from './paths.js';
import { compareValues, int64Max, int64Min, isNaNValue, isNumber, isVector, nullValue, valuesEqual, type Fields, type Value } from './values.js';
import { mapInSlices } from './time-slices.js';
import { fieldsFromWire, formatMicros, parseMicros, fromWire, toWire } from './value-wire.js';

export type Precondition = { exists: boolean } | { updateTime: number };

export type FieldTransform =
  | { path: string[]; op: 'requestTime' }
  | { path: string[]; op: 'increment' | 'maximum' | 'minimum'; operand: Value }
  | { path: string[]; op: 'append' | 'remove'; elements: Value[] };

/** One parsed write of a commit: the request's shape checked once, before anything is read. */
export interface Write {
  kind: 'update' | 'delete' | 'verify' | 'transform';
  key: DocumentKey;
  fields?: Fields;
  mask?: string[][];
  transforms: FieldTransform[];
  precondition?: Precondition;
}

export interface WriteResult {
  updateTime?: number;
  transformResults?: Value[];
}

const maxTransformsPerDocument = 500;

/** A request's `writes` (absent: none), as the commit calls of every transport carry them. */
export function parseWrites(db: DatabaseId, raw: unknown): Write[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw firestoreErrors.invalidArgument('writes must be a list.');
  return raw.map((write, i) => parseWrite(db, write, `writes[${i}]`));
}

/** `parseWrites` in time slices (time-slices.ts): a commit of hundreds of large documents does not hold the event loop while decoded. */
export async function parseWritesInSlices(db: DatabaseId, raw: unknown): Promise<Write[]> {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw firestoreErrors.invalidArgument('writes must be a list.');
  return mapInSlices(raw, (write, i) => parseWrite(db, write, `writes[${i}]`));
}

export function writeResultToWire(result: WriteResult): Record<string, unknown> {
  const wire: Record<string, unknown> = {};
  if (result.updateTime !== undefined) wire.updateTime = formatMicros(result.updateTime);
  if (result.transformResults) wire.transformResults = result.transformResults.map(toWire);
  return wire;
}

export function parseWrite(db: DatabaseId, raw: unknown, where: string): Write {
  const wire = object(raw, where);
  onlyKeys(wire, ['update', 'delete', 'verify', 'transform', 'updateMask', 'updateTransforms', 'currentDocument'], where);
  const operations = ['update', 'delete', 'verify', 'transform'].filter((name) => wire[name] !== undefined);
  if (operations.length !== 1) throw firestoreErrors.invalidArgument(`Write at ${where} must set exactly one of update, delete, verify or transform.`);
  const kind = operations[0] as Write['kind'];
  const precondition = wire.currentDocument === undefined ? undefined : parsePrecondition(wire.currentDocument, `${where}.currentDocument`);
  const write: Write = { kind, key: undefined as unknown as DocumentKey, transforms: [], ...(precondition ? { precondition } : {}) };
  if (kind === 'update') {
    const document = object(wire.update, `${where}.update`);
    onlyKeys(document, ['name', 'fields', 'createTime', 'updateTime'], `${where}.update`);
    write.key = documentKeyFromName(db, document.name);
    write.fields = storedPrecision(fieldsFromWire(document.fields, `${where}.update.fields`));
    checkFieldNames(write.fields, '');
    if (wire.updateMask !== undefined) write.mask = parseMask(wire.updateMask, `${where}.updateMask`);
  } else if (kind === 'transform') {
    const transform = object(wire.transform, `${where}.transform`);
    onlyKeys(transform, ['document', 'fieldTransforms'], `${where}.transform`);
    write.key = documentKeyFromName(db, transform.document);
    write.transforms = parseTransforms(transform.fieldTransforms, `${where}.transform.fieldTransforms`);
  } else {
    write.key = documentKeyFromName(db, wire[kind]);
    if (wire.updateMask !== undefined) throw firestoreErrors.invalidArgument(`A ${kind} write cannot have an updateMask.`);
    // Google's emulator's words: a verify is nothing but its precondition.
    if (kind === 'verify' && !precondition) throw firestoreErrors.invalidArgument('a verify must contain a precondition');
  }
  if (wire.updateTransforms !== undefined) {
    if (kind !== 'update') throw firestoreErrors.invalidArgument('updateTransforms are only allowed on update writes.');
    write.transforms = parseTransforms(wire.updateTransforms, `${where}.updateTransforms`);
  }
  if (write.transforms.length > maxTransformsPerDocument) {
    throw firestoreErrors.invalidArgument(`A document cannot be written with more than ${maxTransformsPerDocument} field transforms.`);
  }
  return write;
}

/** Strings and bytes may hold 1 MiB less the 89 bytes Firestore keeps for itself. */
const maxValueBytes = 1_048_487;

/**
 * Field names at every depth (not empty, not reserved `__x__`, except a vector's own marker) and
 * the size of each string and bytes value.
 */
function checkFieldNames(fields: Fields, prefix: string): void {
  for (const [name, value] of fields) {
    const where = prefix ? `${prefix}.${name}` : name;
    if (!(name === '__type__' && prefix !== '' && value.type === 'string' && value.value === '__vector__')) checkFieldName(name, where);
    checkValue(value, where);
  }
}

/** Sizes, and the names of the maps within (at any depth of arrays and maps). */
function checkValue(value: Value, where: string): void {
  checkValueSize(value, where);
  if (value.type === 'map') {
    if (!isVector(value)) checkFieldNames(value.fields, where);
  } else if (value.type === 'array') {
    for (const element of value.values) if (element.type === 'map' && !isVector(element)) checkFieldNames(element.fields, where);
  }
}

/** Stored timestamps keep microseconds (query operands keep what they were given). */
function storedPrecision(fields: Fields): Fields {
  return new Map([...fields].map(([name, value]) => [name, storedValue(value)]));
}

function storedValue(value: Value): Value {
  if (value.type === 'timestamp') return { ...value, nanos: value.nanos - (value.nanos % 1000) };
  if (value.type === 'array') return { type: 'array', values: value.values.map(storedValue) };
  if (value.type === 'map') return { type: 'map', fields: storedPrecision(value.fields) };
  return value;
}

function checkValueSize(value: Value, where: string): void {
  const size = value.type === 'string' ? Buffer.byteLength(value.value) : value.type === 'bytes' ? value.value.length : 0;
  if (size > maxValueBytes) throw firestoreErrors.invalidArgument(`The value of property "${where}" is longer than ${maxValueBytes} bytes.`);
  if (value.type === 'array') for (const element of value.values) checkValueSize(element, where);
}

export function parsePrecondition(raw: unknown, where: string): Precondition {
  const wire = object(raw, where);
  onlyKeys(wire, ['exists', 'updateTime'], where);
  if (wire.exists !== undefined && wire.updateTime === undefined) {
    if (typeof wire.exists !== 'boolean') throw firestoreErrors.invalidArgument(`Invalid value at '${where}.exists' (TYPE_BOOL).`);
    return { exists: wire.exists };
  }
  if (wire.updateTime !== undefined && wire.exists === undefined) {
    const micros = typeof wire.updateTime === 'string' ? parseMicros(wire.updateTime) : undefined;
    if (micros === undefined) throw firestoreErrors.invalidArgument(`Invalid value at '${where}.updateTime' (type.googleapis.com/google.protobuf.Timestamp).`);
    return { updateTime: micros };
  }
  throw firestoreErrors.invalidArgument(`Precondition at ${where} must set exactly one of exists or updateTime.`);
}

function parseMask(raw: unknown, where: string): string[][] {
  const wire = object(raw, where);
  onlyKeys(wire, ['fieldPaths'], where);
  if (wire.fieldPaths === undefined) return [];
  if (!Array.isArray(wire.fieldPaths) || wire.fieldPaths.some((path) => typeof path !== 'string')) {
    throw firestoreErrors.invalidArgument(`Invalid value at '${where}.fieldPaths' (TYPE_STRING list).`);
  }
  return (wire.fieldPaths as string[]).map(parseFieldPath);
}

function parseTransforms(raw: unknown, where: string): FieldTransform[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw firestoreErrors.invalidArgument(`Invalid value at '${where}': expected a list.`);
  return raw.map((item, i) => parseTransform(item, `${where}[${i}]`));
}

function parseTransform(raw: unknown, where: string): FieldTransform {
  const wire = object(raw, where);
  onlyKeys(wire, ['fieldPath', 'setToServerValue', 'increment', 'maximum', 'minimum', 'appendMissingElements', 'removeAllFromArray'], where);
  if (typeof wire.fieldPath !== 'string') throw firestoreErrors.invalidArgument(`Field transform at ${where} needs a fieldPath.`);
  const path = parseFieldPath(wire.fieldPath);
  const ops = Object.keys(wire).filter((key) => key !== 'fieldPath');
  if (ops.length !== 1) throw firestoreErrors.invalidArgument(`Field transform at ${where} must set exactly one transformation.`);
  const op = ops[0]!;
  const operand = wire[op];
  switch (op) {
    case 'setToServerValue':
      if (operand !== 'REQUEST_TIME' && operand !== 1) throw firestoreErrors.invalidArgument(`Unknown server value "${String(operand)}" at ${where}.`);
      return { path, op: 'requestTime' };
    case 'increment':
    case 'maximum':
    case 'minimum': {
      const value = fromWire(operand, `${where}.${op}`);
      if (!isNumber(value)) throw firestoreErrors.invalidArgument(`The ${op} transform at ${where} needs a number.`);
      return { path, op, operand: value };
    }
    default: {
      const array = fromWire({ arrayValue: operand }, `${where}.${op}`);
      // Elements are stored (or compared with stored values) like any field's value.
      const elements = array.type === 'array' ? array.values.map(storedValue) : [];
      for (const element of elements) checkValue(element, wire.fieldPath);
      return { path, op: op === 'appendMissingElements' ? 'append' : 'remove', elements };
    }
  }
}

// ---- applying -------------------------------------------------------------------------------

export interface WriteContext {
  db: DatabaseId;
  commitTime: number;
  /** REQUEST_TIME: the commit's time at millisecond precision, the same for every field. */
  requestTime: Value;
  /**
   * Planning a commit for security rules: the size is checked when the commit is made, after the
   * rules allowed it, so a refused caller never learns how large a stored document is.
   */
  planning?: boolean;
  /**
   * The caller is judged by security rules, and may be allowed to write a document it may not
   * read: messages name nothing stored (the stored version, the size of a merged document). The
   * administrator gets Google's own messages.
   */
  discreet?: boolean;
}

/** Applies one write to the document's state so far in this commit. */
export function applyWrite(write: Write, current: Doc | undefined, context: WriteContext): { after: Doc | undefined; result: WriteResult } {
  checkPrecondition(write, current, context);
  switch (write.kind) {
    case 'delete':
      return { after: undefined, result: {} };
    case 'verify':
      return { after: current, result: current ? { updateTime: current.updateTime } : {} };
    case 'update':
    case 'transform': {
      const fields = baseFields(write, current);
      const transformResults = write.transforms.map((transform) => applyTransform(fields, transform, context.requestTime));
      // The size of a write merged into stored fields would tell the stored document's.
      if (!context.planning) checkDocumentSize(write.key.path, fields, { sayTheSize: !context.discreet || !current || (write.kind === 'update' && !write.mask) });
      const changed = !current || !sameFields(current.fields, fields);
      const after: Doc = {
        key: write.key,
        fields,
        createTime: current?.createTime ?? context.commitTime,
        updateTime: changed ? context.commitTime : current.updateTime,
      };
      const result: WriteResult = { updateTime: after.updateTime };
      if (write.transforms.length) result.transformResults = transformResults;
      return { after, result };
    }
  }
}

function checkPrecondition(write: Write, current: Doc | undefined, { db, discreet }: WriteContext): void {
  const precondition = write.precondition;
  if (!precondition) return;
  const name = fullName(db, write.key.path);
  if ('exists' in precondition) {
    if (precondition.exists && !current) throw firestoreErrors.notFound(`No document to update: ${name}`);
    if (!precondition.exists && current) throw firestoreErrors.alreadyExists(`Document already exists: ${name}`);
    return;
  }
  if (current?.updateTime !== precondition.updateTime) {
    const stored = discreet ? 'the stored version' : `the stored version (${current?.updateTime ?? 0})`;
    throw firestoreErrors.failedPrecondition(`${stored} does not match the required base version (${precondition.updateTime})`);
  }
}

function baseFields(write: Write, current: Doc | undefined): Fields {
  if (write.kind === 'transform') return new Map(current?.fields ?? []);
  if (!write.mask) return new Map(write.fields);
  const fields: Fields = new Map(current?.fields ?? []);
  for (const path of write.mask) {
    const value = getField(write.fields!, path);
    if (value === undefined) deleteField(fields, path);
    else setField(fields, path, value);
  }
  return fields;
}

function applyTransform(fields: Fields, transform: FieldTransform, requestTime: Value): Value {
  const current = getField(fields, transform.path);
  let next: Value;
  let result: Value;
  switch (transform.op) {
    case 'requestTime':
      next = result = requestTime;
      break;
    case 'increment':
      next = result = current && isNumber(current) ? add(current, transform.operand) : transform.operand;
      break;
    case 'maximum':
    case 'minimum':
      next = result = current && isNumber(current) ? extreme(transform.op, current, transform.operand) : transform.operand;
      break;
    case 'append': {
      const values = current?.type === 'array' ? [...current.values] : [];
      for (const element of transform.elements) if (!values.some((existing) => valuesEqual(existing, element))) values.push(element);
      next = { type: 'array', values };
      result = nullValue;
      break;
    }
    case 'remove': {
      const values = current?.type === 'array' ? current.values.filter((existing) => !transform.elements.some((element) => valuesEqual(existing, element))) : [];
      next = { type: 'array', values };
      result = nullValue;
      break;
    }
  }
  setField(fields, transform.path, next);
  return result;
}

/** int + int stays an int and saturates; anything with a double is a double. */
function add(left: Value, right: Value): Value {
  if (left.type === 'integer' && right.type === 'integer') {
    const sum = left.value + right.value;
    return { type: 'integer', value: sum > int64Max ? int64Max : sum < int64Min ? int64Min : sum };
  }
  return { type: 'double', value: asDouble(left) + asDouble(right) };
}

function asDouble(value: Value): number {
  return value.type === 'integer' ? Number(value.value) : value.type === 'double' ? value.value : 0;
}

/** NaN wins; equal values (3 and 3.0, 0 and -0.0) keep what is stored. */
function extreme(op: 'maximum' | 'minimum', current: Value, operand: Value): Value {
  if (isNaNValue(current)) return current;
  if (isNaNValue(operand)) return operand;
  const order = compareValues(operand, current);
  return (op === 'maximum' ? order > 0 : order < 0) ? operand : current;
}

/**
 * Whether a write leaves the stored document as it was (then its updateTime stays): the same
 * types and values at every depth, in any key order. Unlike compareValues, 1 and 1.0 differ.
 */
function sameFields(left: Fields, right: Fields): boolean {
  if (left.size !== right.size) return false;
  for (const [name, value] of left) {
    const other = right.get(name);
    if (!other || !sameValue(value, other)) return false;
  }
  return true;
}

function sameValue(left: Value, right: Value): boolean {
  if (left.type !== right.type) return false;
  switch (left.type) {
    case 'null':
      return true;
    case 'double': {
      const other = (right as typeof left).value;
      return left.value === other || (Number.isNaN(left.value) && Number.isNaN(other));
    }
    case 'timestamp':
      return left.seconds === (right as typeof left).seconds && left.nanos === (right as typeof left).nanos;
    case 'bytes':
      return left.value.equals((right as typeof left).value);
    case 'geo':
      return left.latitude === (right as typeof left).latitude && left.longitude === (right as typeof left).longitude;
    case 'array': {
      const others = (right as typeof left).values;
      return left.values.length === others.length && left.values.every((element, i) => sameValue(element, others[i]!));
    }
    case 'map':
      return sameFields(left.fields, (right as typeof left).fields);
    default:
      return left.value === (right as typeof left).value;
  }
}
