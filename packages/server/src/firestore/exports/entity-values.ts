import { numericIdValue, type Fields, type Value } from '../core/values.js';
import { decodeEntity, encodeEntity, meanings, type EntityMessage, type Int64, type PathElement, type PropertyMessage, type PropertyValueMessage } from './entity-schema.js';

/**
 * Firestore documents as export records and back (entity-schema.ts says what a record holds).
 * Reading is exact for every value type: int64 without rounding, timestamps in µs (what the record
 * keeps), bytes as they are, references with their project and database, maps at any depth.
 */

/** A document read from a record: where it was (project, database) and what it holds. */
export interface ExportedDocument {
  projectId: string;
  databaseId: string;
  /** `users/u1/posts/p1` */
  path: string;
  fields: Fields;
}

/** A record Hearth cannot read as a document: says which field and why. */
export class UnreadableEntity extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableEntity';
  }
}

const defaultDatabase = '(default)';
/** Written as the records' app: the emulator writes `dev~<project>`, production `<region>~<project>`; readers take what follows `~`. */
const appPrefix = 'dev~';

export function projectOfApp(app: string | undefined): string {
  const text = app ?? '';
  return text.slice(text.indexOf('~') + 1);
}

function toBigInt(value: Int64): bigint {
  return BigInt(value.toString());
}

function segmentsOf(elements: readonly PathElement[] | undefined, where: string): string[] {
  const segments: string[] = [];
  for (const element of elements ?? []) {
    if (!element.type) throw new UnreadableEntity(`${where}: a path element without a collection id`);
    segments.push(element.type);
    if (element.name !== undefined && element.name !== '') segments.push(element.name);
    else if (element.id !== undefined && toBigInt(element.id) !== 0n) segments.push(`__id${toBigInt(element.id)}__`);
    else throw new UnreadableEntity(`${where}: a path element of ${element.type} without a document id`);
  }
  return segments;
}

export function entityToDocument(record: Uint8Array): ExportedDocument {
  const entity = decodeEntity(record);
  const key = entity.key;
  const segments = segmentsOf(key?.path?.element, 'a record key');
  if (segments.length === 0) throw new UnreadableEntity('a record without a document path');
  const path = segments.join('/');
  return { projectId: projectOfApp(key?.app), databaseId: key?.database_id || defaultDatabase, path, fields: propertiesToFields(entity, path) };
}

function propertiesToFields(entity: EntityMessage, where: string): Fields {
  const fields: Fields = new Map();
  // Array elements are repeated properties of one name; both lists hold fields (raw ones are unindexed).
  for (const property of [...(entity.property ?? []), ...(entity.raw_property ?? [])]) {
    const name = property.name ?? '';
    const at = `${where} field ${name}`;
    if (property.meaning === meanings.emptyList) {
      fields.set(name, { type: 'array', values: [] });
      continue;
    }
    const value = propertyValue(property, at);
    if (property.meaning === meanings.vector) {
      const vector = fields.get(name);
      const values = vector?.type === 'map' ? (vector.fields.get('value') as { values: Value[] } | undefined)?.values : undefined;
      if (values) values.push(value);
      else fields.set(name, { type: 'map', fields: new Map<string, Value>([['__type__', { type: 'string', value: '__vector__' }], ['value', { type: 'array', values: [value] }]]) });
    } else if (property.multiple) {
      const array = fields.get(name);
      if (array?.type === 'array') array.values.push(value);
      else fields.set(name, { type: 'array', values: [value] });
    } else fields.set(name, value);
  }
  return fields;
}

function propertyValue(property: PropertyMessage, where: string): Value {
  const value: PropertyValueMessage = property.value ?? {};
  switch (property.meaning) {
    case meanings.timestamp: {
      const micros = toBigInt(value.int64Value ?? 0);
      const seconds = micros / 1_000_000n - (micros % 1_000_000n < 0n ? 1n : 0n);
      return { type: 'timestamp', seconds: Number(seconds), nanos: Number(micros - seconds * 1_000_000n) * 1000 };
    }
    case meanings.geoPoint:
      return { type: 'geo', latitude: (value.pointValue?.x ?? 0) + 0, longitude: (value.pointValue?.y ?? 0) + 0 };
    case meanings.blob:
    case meanings.byteString:
      return { type: 'bytes', value: Buffer.from(value.stringValue ?? []) };
    case meanings.entity:
      return { type: 'map', fields: propertiesToFields(decodeEntity(value.stringValue ?? new Uint8Array()), where) };
    case meanings.vector:
      return { type: 'double', value: value.doubleValue ?? 0 };
    default:
      break;
  }
  // protobufjs puts proto2 defaults on the prototype: only a field's own property says it was present.
  if (Object.hasOwn(value, 'int64Value')) return { type: 'integer', value: toBigInt(value.int64Value!) };
  if (Object.hasOwn(value, 'booleanValue')) return { type: 'boolean', value: value.booleanValue! };
  if (Object.hasOwn(value, 'doubleValue')) return { type: 'double', value: value.doubleValue! };
  if (Object.hasOwn(value, 'stringValue')) return { type: 'string', value: Buffer.from(value.stringValue!).toString('utf8') };
  if (value.pointValue) return { type: 'geo', latitude: value.pointValue.x ?? 0, longitude: value.pointValue.y ?? 0 };
  if (value.referenceValue) {
    const reference = value.referenceValue;
    const segments = segmentsOf(reference.pathElement, where);
    return { type: 'reference', value: `projects/${projectOfApp(reference.app)}/databases/${reference.database_id || defaultDatabase}/documents/${segments.join('/')}` };
  }
  if (value.userValue) throw new UnreadableEntity(`${where}: a Datastore user value, which Firestore has no type for`);
  return { type: 'null' };
}

// ---- writing ------------------------------------------------------------------------------

function elementsOf(segments: readonly string[]): PathElement[] {
  const elements: PathElement[] = [];
  for (let i = 0; i + 1 < segments.length; i += 2) {
    const id = numericIdValue(segments[i + 1]!);
    elements.push(id === undefined ? { type: segments[i]!, name: segments[i + 1]! } : { type: segments[i]!, id: id.toString() });
  }
  return elements;
}

/** A document as the emulator writes it: fields in raw_property, empty arrays in property. */
export function documentToEntity(projectId: string, databaseId: string, path: string, fields: Fields): Uint8Array {
  const segments = path.split('/');
  const elements = elementsOf(segments);
  const key: EntityMessage['key'] = { app: `${appPrefix}${projectId}`, path: { element: elements } };
  if (databaseId !== defaultDatabase) key.database_id = databaseId;
  const entity = fieldsToEntity(fields);
  return encodeEntity({ key, ...entity, entity_group: { element: elements.slice(0, 1) } });
}

function fieldsToEntity(fields: Fields): Pick<EntityMessage, 'property' | 'raw_property'> {
  const property: PropertyMessage[] = [];
  const raw: PropertyMessage[] = [];
  for (const [name, value] of fields) {
    if (value.type === 'array' && value.values.length === 0) property.push({ meaning: meanings.emptyList, name, multiple: false, value: {} });
    else if (value.type === 'array') for (const element of value.values) raw.push(propertyOf(name, element, true));
    else if (isVectorValue(value)) {
      const values = (value.fields.get('value') as { values: Value[] }).values;
      for (const element of values) raw.push({ meaning: meanings.vector, name, multiple: true, value: { doubleValue: element.type === 'double' ? element.value : Number((element as { value: bigint }).value) } });
    } else raw.push(propertyOf(name, value, false));
  }
  return { property, raw_property: raw };
}

function isVectorValue(value: Value): value is { type: 'map'; fields: Fields } {
  if (value.type !== 'map') return false;
  const marker = value.fields.get('__type__');
  const values = value.fields.get('value');
  return value.fields.size === 2 && marker?.type === 'string' && marker.value === '__vector__' && values?.type === 'array' && values.values.length > 0;
}

function propertyOf(name: string, value: Value, multiple: boolean): PropertyMessage {
  const property = (meaning: number | undefined, wire: PropertyValueMessage): PropertyMessage => (meaning === undefined ? { name, multiple, value: wire } : { meaning, name, multiple, value: wire });
  switch (value.type) {
    case 'null':
      return property(undefined, {});
    case 'boolean':
      return property(undefined, { booleanValue: value.value });
    case 'integer':
      return property(undefined, { int64Value: value.value.toString() });
    case 'double':
      return property(undefined, { doubleValue: value.value });
    case 'timestamp':
      return property(meanings.timestamp, { int64Value: (BigInt(value.seconds) * 1_000_000n + BigInt(Math.floor(value.nanos / 1000))).toString() });
    case 'string':
      return property(undefined, { stringValue: Buffer.from(value.value, 'utf8') });
    case 'bytes':
      return property(meanings.blob, { stringValue: value.value });
    case 'reference':
      return property(undefined, { referenceValue: referenceOf(value.value) });
    case 'geo':
      return property(meanings.geoPoint, { pointValue: { x: value.latitude, y: value.longitude } });
    case 'map': {
      const nested = encodeEntity({ key: { app: '', path: {} }, ...fieldsToEntity(value.fields), entity_group: {} });
      return property(meanings.entity, { stringValue: nested });
    }
    case 'array':
      throw new UnreadableEntity(`field ${name}: an array directly in an array`);
  }
}

function referenceOf(name: string): PropertyValueMessage['referenceValue'] {
  const match = /^projects\/([^/]+)\/databases\/([^/]+)\/documents\/(.+)$/.exec(name);
  if (!match) throw new UnreadableEntity(`a reference that is not a document name: ${name}`);
  const reference: NonNullable<PropertyValueMessage['referenceValue']> = { app: `${appPrefix}${match[1]!}`, pathElement: elementsOf(match[3]!.split('/')) };
  if (match[2] !== defaultDatabase) reference.database_id = match[2]!;
  return reference;
}
