import type { DocumentChange, DocumentRow, IndexEntry } from '../../storage/document-store.js';
import { indexValueKey } from '../../storage/index-value-prefix.js';
import { firestoreErrors } from './errors.js';
import { encodeSegments, encodeValue } from './index-encoding.js';
import { formatFieldPath, fullName, keyFromSegments, type DatabaseId, type DocumentKey } from './paths.js';
import { isVector, type Fields, type Value } from './values.js';
import { fieldsToWire, formatMicros, storedFields } from './value-wire.js';

/** A stored document as the engine sees it; times in microseconds since the epoch. */
export interface Doc {
  key: DocumentKey;
  fields: Fields;
  createTime: number;
  updateTime: number;
}

export const maxDocumentBytes = 1024 * 1024;

export function docFromRow(row: DocumentRow): Doc {
  return {
    key: { path: row.path, parent: row.parent, collectionId: row.collectionId, id: row.id },
    fields: storedFields(JSON.parse(row.fields) as Parameters<typeof storedFields>[0]),
    createTime: row.createTime,
    updateTime: row.updateTime,
  };
}

/** `fieldsJson`: the fields' stored JSON when already known. */
export function rowFromDoc(doc: Doc, fieldsJson?: string): DocumentRow {
  return {
    ...doc.key,
    nameKey: nameKey(doc.key.path),
    createTime: doc.createTime,
    updateTime: doc.updateTime,
    fields: fieldsJson ?? JSON.stringify(fieldsToWire(doc.fields)),
  };
}

export function nameKey(path: string): Buffer {
  return encodeSegments(path.split('/'));
}

export function keyOfPath(path: string): DocumentKey {
  return keyFromSegments(path.split('/'));
}

export interface WireDocument {
  name: string;
  fields?: Record<string, unknown>;
  createTime: string;
  updateTime: string;
}

/** `mask` keeps only the named field paths (a missing one is left out). */
export function docToWire(db: DatabaseId, doc: Doc, mask?: readonly string[][]): WireDocument {
  const fields = mask ? applyMask(doc.fields, mask) : doc.fields;
  const wire: WireDocument = { name: fullName(db, doc.key.path), createTime: formatMicros(doc.createTime), updateTime: formatMicros(doc.updateTime) };
  if (fields.size) wire.fields = fieldsToWire(fields);
  return wire;
}

function applyMask(fields: Fields, mask: readonly string[][]): Fields {
  const out: Fields = new Map();
  for (const path of mask) {
    const value = getField(fields, path);
    if (value !== undefined) setField(out, path, value);
  }
  return out;
}

export function getField(fields: Fields, path: readonly string[]): Value | undefined {
  let current: Value | undefined = { type: 'map', fields };
  for (const segment of path) {
    if (current?.type !== 'map') return undefined;
    current = current.fields.get(segment);
  }
  return current;
}

/** Sets a nested field, turning non-map values on the way into maps (Firestore's merge semantics). */
export function setField(fields: Fields, path: readonly string[], value: Value): void {
  let current = fields;
  for (const segment of path.slice(0, -1)) {
    const next = current.get(segment);
    if (next?.type === 'map') {
      const copy: Fields = new Map(next.fields);
      current.set(segment, { type: 'map', fields: copy });
      current = copy;
    } else {
      const created: Fields = new Map();
      current.set(segment, { type: 'map', fields: created });
      current = created;
    }
  }
  current.set(path[path.length - 1]!, value);
}

export function deleteField(fields: Fields, path: readonly string[]): void {
  let current = fields;
  for (const segment of path.slice(0, -1)) {
    const next = current.get(segment);
    if (next?.type !== 'map') return;
    const copy: Fields = new Map(next.fields);
    current.set(segment, { type: 'map', fields: copy });
    current = copy;
  }
  current.delete(path[path.length - 1]!);
}

// ---- index entries --------------------------------------------------------------------------

export const valueKind = 0;
export const arrayElementKind = 1;
export const compositeKind = 2;

/** Every field at every depth of maps, both as a value and, for arrays, per distinct element. */
export function singleFieldEntries(fields: Fields): IndexEntry[] {
  const entries: IndexEntry[] = [];
  const visit = (map: Fields, prefix: string[]) => {
    for (const [name, value] of map) {
      const path = [...prefix, name];
      const field = formatFieldPath(path);
      entries.push({ field, kind: valueKind, value: indexValueKey(encodeValue(value)) });
      if (value.type === 'array') {
        // Distinct by the kept prefix: two long elements sharing it are one entry (an update removing one keeps it).
        const seen = new Set<string>();
        for (const element of value.values) {
          const encoded = indexValueKey(encodeValue(element));
          const id = encoded.toString('latin1');
          if (seen.has(id)) continue;
          seen.add(id);
          entries.push({ field, kind: arrayElementKind, value: encoded });
        }
      } else if (value.type === 'map' && !isVector(value)) {
        visit(value.fields, path);
      }
    }
  };
  visit(fields, []);
  return entries;
}

function entryId(entry: IndexEntry): string {
  return `${entry.kind}\u0000${entry.field}\u0000${entry.value.toString('latin1')}`;
}

/**
 * Only the entries that differ are written: an update of one field touches one entry. `encoded`:
 * `after`'s stored JSON and entries when worked out before (commit-encoding.ts).
 */
export function changeFor(
  before: Doc | undefined,
  after: Doc | undefined,
  entriesOf: (doc: Doc) => IndexEntry[],
  encoded?: { fieldsJson: string; entries: IndexEntry[] },
): DocumentChange {
  const key = (after ?? before)!.key;
  const next = after ? (encoded?.entries ?? entriesOf(after)) : [];
  const row = after ? rowFromDoc(after, encoded?.fieldsJson) : undefined;
  // A new document has nothing to compare with.
  if (!before) return { path: key.path, parent: key.parent, id: key.id, row, removeEntries: [], addEntries: next };
  const old = entriesOf(before);
  const oldIds = new Set(old.map(entryId));
  const nextIds = new Set(next.map(entryId));
  return {
    path: key.path,
    parent: key.parent,
    id: key.id,
    row,
    removeEntries: old.filter((entry) => !nextIds.has(entryId(entry))),
    addEntries: next.filter((entry) => !oldIds.has(entryId(entry))),
  };
}

// ---- size -----------------------------------------------------------------------------------

/** Firestore's storage size: name + fields + 32 bytes (strings count their UTF-8 bytes + 1). */
export function documentSize(path: string, fields: Fields): number {
  let size = 32 + 16;
  for (const segment of path.split('/')) size += Buffer.byteLength(segment) + 1;
  return size + fieldsSize(fields);
}

function fieldsSize(fields: Fields): number {
  let size = 0;
  for (const [name, value] of fields) size += Buffer.byteLength(name) + 1 + valueSize(value);
  return size;
}

function valueSize(value: Value): number {
  switch (value.type) {
    case 'null':
    case 'boolean':
      return 1;
    case 'integer':
    case 'double':
    case 'timestamp':
      return 8;
    case 'geo':
      return 16;
    case 'string':
      return Buffer.byteLength(value.value) + 1;
    case 'bytes':
      return value.value.length;
    case 'reference':
      return Buffer.byteLength(value.value) + 1;
    case 'array':
      return value.values.reduce((sum, element) => sum + valueSize(element), 0);
    case 'map':
      return fieldsSize(value.fields);
  }
}

export function checkDocumentSize(path: string, fields: Fields): void {
  const size = documentSize(path, fields);
  if (size > maxDocumentBytes) {
    const bytes = (n: number) => n.toLocaleString('en-US');
    throw firestoreErrors.invalidArgument(
      `Document '${path}' cannot be written because its size (${bytes(size)} bytes) exceeds the maximum allowed size of ${bytes(maxDocumentBytes)} bytes.`,
    );
  }
}
