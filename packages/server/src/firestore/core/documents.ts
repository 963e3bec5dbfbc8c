import type { DocumentChange, DocumentRow, IndexEntry, VectorChange } from '../../storage/document-store.js';
import { firestoreErrors } from './errors.js';
import { compositeKind, diffEntries, singleFieldChanges, singleFieldEntries } from './document-entries.js';
import { nameKey } from '../../storage/name-keys.js';
import { fullName, keyFromSegments, type DatabaseId, type DocumentKey } from './paths.js';
import type { Fields, Value } from './values.js';
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

/** `fieldsJson`, `storedNameKey`: the fields' stored JSON and the path's name key when already known. */
export function rowFromDoc(doc: Doc, fieldsJson?: string, storedNameKey?: Buffer): DocumentRow {
  const key = doc.key;
  // Named properties rather than a spread of the key: this runs once per document written.
  return {
    path: key.path,
    parent: key.parent,
    collectionId: key.collectionId,
    id: key.id,
    nameKey: storedNameKey ?? nameKey(key.path),
    createTime: doc.createTime,
    updateTime: doc.updateTime,
    fields: fieldsJson ?? JSON.stringify(fieldsToWire(doc.fields)),
  };
}

export { nameKey };

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

export { arrayElementKind, compositeKind, singleFieldEntries, valueKind } from './document-entries.js';

/** How a database indexes a document beyond its fields (which it always indexes): the declared composite indexes. */
export interface DocumentIndexing {
  composite(doc: Doc): IndexEntry[];
  /** The document's rows of declared vector fields that change (vector-fields.ts), if any. */
  vectors?(before: Doc | undefined, after: Doc | undefined): VectorChange | undefined;
}

/** A document's stored form worked out before its commit (commit-encoding.ts). */
export interface PreEncoded {
  fieldsJson: string;
  /** Every entry, single-field and composite. */
  entries: IndexEntry[];
  /** The single-field entries by top-level field. */
  byField: ReadonlyMap<string, IndexEntry[]>;
}

/**
 * Only the entries that differ are written: an update of one field touches one entry, and fields
 * whose value did not change are not even encoded. `encoded`: `after`'s stored JSON and entries
 * when worked out before (commit-encoding.ts); `storedNameKey`: the stored row's name key (the
 * same path's, so the same bytes), which an overwrite need not encode again.
 */
export function changeFor(before: Doc | undefined, after: Doc | undefined, indexing: DocumentIndexing, encoded?: PreEncoded, storedNameKey?: Buffer): DocumentChange {
  const key = (after ?? before)!.key;
  const row = after ? rowFromDoc(after, encoded?.fieldsJson, storedNameKey) : undefined;
  const vectors = indexing.vectors?.(before, after);
  const change = (removeEntries: IndexEntry[], addEntries: IndexEntry[]): DocumentChange => ({
    path: key.path, parent: key.parent, id: key.id, row, removeEntries, addEntries, ...(vectors ? { vectors } : {}),
  });
  // A new document has nothing to compare with, a deleted one leaves nothing.
  if (!before) return change([], after ? (encoded?.entries ?? [...singleFieldEntries(after.fields), ...indexing.composite(after)]) : []);
  if (!after) return change([...singleFieldEntries(before.fields), ...indexing.composite(before)], []);
  const single = singleFieldChanges(before.fields, after.fields, encoded?.byField);
  const composite = diffEntries(indexing.composite(before), encoded ? encoded.entries.filter((entry) => entry.kind === compositeKind) : indexing.composite(after));
  if (composite.remove.length === 0 && composite.add.length === 0) return change(single.remove, single.add);
  return change([...single.remove, ...composite.remove], [...single.add, ...composite.add]);
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

/** `sayTheSize`: the message gives the document's size (only when the caller sent all of it). */
export function checkDocumentSize(path: string, fields: Fields, { sayTheSize }: { sayTheSize: boolean } = { sayTheSize: true }): void {
  const size = documentSize(path, fields);
  if (size > maxDocumentBytes) {
    const bytes = (n: number) => n.toLocaleString('en-US');
    const its = sayTheSize ? `its size (${bytes(size)} bytes)` : 'it';
    throw firestoreErrors.invalidArgument(`Document '${path}' cannot be written because ${its} exceeds the maximum allowed size of ${bytes(maxDocumentBytes)} bytes.`);
  }
}
