import type { DocumentRow, IndexEntry, IndexPosition } from '../document-store.js';
import { indexValueKey, maxIndexValueBytes } from '../index-value-prefix.js';
import { numericIdValue } from '../name-keys.js';
import type { VersionShape } from './sqlite-document-history.js';

/** How documents and index entries are laid out in the SQLite file's columns. */

/**
 * Document ids as stored in the doc_id columns, whose byte order (SQLite's BINARY collation) must
 * be Firestore's id order: numeric ids (`__id7__`) first, by number, then strings by UTF-8 bytes.
 * A numeric id becomes 00 01 + its int64 in offset binary (16 hex digits); a string starting with
 * NUL is kept behind 00 02; every other string is itself (its first byte is above 00). One-to-one,
 * so any text (a group entry's whole path) round-trips.
 */
export function storedId(id: string): string {
  if (id.charCodeAt(0) === 0) return `\u0000\u0002${id}`;
  const number = numericIdValue(id);
  return number === undefined ? id : `\u0000\u0001${BigInt.asUintN(64, number ^ (1n << 63n)).toString(16).padStart(16, '0')}`;
}

export function idFromStored(stored: string): string {
  if (stored.charCodeAt(0) !== 0) return stored;
  if (stored.charCodeAt(1) === 2) return stored.slice(2);
  return `__id${BigInt.asIntN(64, BigInt(`0x${stored.slice(2)}`) ^ (1n << 63n))}__`;
}

/** An entry's key columns: under its document's collection and id unless it says where it is filed. */
export function entryKey(db: string, parent: string, id: string, entry: IndexEntry): [string, string, string, number, Buffer, string] {
  return [db, entry.parent ?? parent, entry.field, entry.kind, indexValueKey(entry.value), storedId(entry.docId ?? id)];
}

export function addBound(conditions: string[], params: unknown[], bound: IndexPosition | undefined, direction: '>' | '<'): void {
  if (!bound) return;
  if (bound.value.length > maxIndexValueBytes) {
    // Entries keep only a prefix (index-value-prefix.ts): every entry with the bound's prefix may lie within the bound.
    conditions.push(`value ${direction}= ?`);
    params.push(indexValueKey(bound.value));
    return;
  }
  const op = bound.inclusive ? `${direction}=` : direction;
  if (bound.docId === undefined) {
    conditions.push(`value ${op} ?`);
    params.push(bound.value);
  } else {
    conditions.push(`(value, doc_id) ${op} (?, ?)`);
    params.push(bound.value, storedId(bound.docId));
  }
}

export function toShape(row: DocumentRow): VersionShape {
  return {
    parent: row.parent,
    doc_id: storedId(row.id),
    collection_id: row.collectionId,
    name_key: row.nameKey,
    create_time: row.createTime,
    update_time: row.updateTime,
    fields: row.fields,
  };
}

export function toRow(shape: VersionShape): DocumentRow {
  const id = idFromStored(shape.doc_id);
  const path = shape.parent === '' ? id : `${shape.parent}/${id}`;
  return {
    path,
    parent: shape.parent,
    collectionId: shape.collection_id,
    id,
    nameKey: shape.name_key,
    createTime: shape.create_time,
    updateTime: shape.update_time,
    fields: shape.fields,
  };
}
