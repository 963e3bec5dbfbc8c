import type { DocumentRow, DocumentScan } from '../document-store.js';
import type { PgClient } from './pg-connection.js';
import { idFromStored, storedId } from '../sqlite/sqlite-document-rows.js';

/**
 * What the PostgreSQL document tables share: the row shape, the byte forms of ids and paths (the
 * stored id of sqlite-document-store.ts as UTF-8, so both backends order alike) and the WHERE
 * clause of a document scan over fs_documents and fs_versions alike.
 */

/** The pool, or one connection (a transaction's, a snapshot's): both answer queries alike. */
export type PgQueryable = Pick<PgClient, 'query'>;

export interface PgRowShape {
  parent: Buffer;
  doc_id: Buffer;
  collection_id: Buffer;
  name_key: Buffer;
  create_time: string;
  update_time: string;
  fields: string;
}

export const pgRowColumns = 'parent, doc_id, collection_id, name_key, create_time, update_time, fields';

/** The kept prefix of index values (storage/index-value-prefix.ts), shared with SQLite. */
export { indexValueKey, maxIndexValueBytes } from '../index-value-prefix.js';

export function bytes(text: string): Buffer {
  return Buffer.from(text, 'utf8');
}

export function idBytes(id: string): Buffer {
  return bytes(storedId(id));
}

export function rowFromPg(shape: PgRowShape): DocumentRow {
  const id = idFromStored(shape.doc_id.toString('utf8'));
  const parent = shape.parent.toString('utf8');
  return {
    path: parent === '' ? id : `${parent}/${id}`,
    parent,
    collectionId: shape.collection_id.toString('utf8'),
    id,
    nameKey: shape.name_key,
    createTime: Number(shape.create_time),
    updateTime: Number(shape.update_time),
    fields: shape.fields,
  };
}

/** The parent and stored id of a path, as the key columns hold them. */
export function pathKey(path: string): { parent: Buffer; docId: Buffer } {
  const slash = path.lastIndexOf('/');
  return { parent: bytes(path.slice(0, Math.max(slash, 0))), docId: idBytes(path.slice(slash + 1)) };
}

/** Conditions numbered from `$${params.length + 1}`, so several can share one parameter list. */
export function pgDocumentScanWhere(db: string, scan: DocumentScan, params: unknown[]): string {
  const conditions: string[] = [];
  const add = (condition: string, param: unknown) => {
    params.push(param);
    conditions.push(condition.replace('?', `$${params.length}`));
  };
  add('db = ?', db);
  if (scan.parent !== undefined) add('parent = ?', bytes(scan.parent));
  if (scan.collectionId !== undefined) add('collection_id = ?', bytes(scan.collectionId));
  if (scan.afterId !== undefined) add('doc_id > ?', idBytes(scan.afterId));
  if (scan.beforeId !== undefined) add('doc_id < ?', idBytes(scan.beforeId));
  if (scan.fromId !== undefined) add(scan.descending ? 'doc_id <= ?' : 'doc_id >= ?', idBytes(scan.fromId));
  if (scan.afterNameKey) add('name_key > ?', scan.afterNameKey);
  if (scan.beforeNameKey) add('name_key < ?', scan.beforeNameKey);
  if (scan.fromNameKey) add('name_key >= ?', scan.fromNameKey);
  return conditions.join(' AND ');
}

export function pgDocumentScanOrder(scan: DocumentScan): string {
  return scan.parent !== undefined ? 'doc_id' : 'name_key';
}
