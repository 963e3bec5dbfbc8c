import type { DocumentScan } from '../document-store.js';

/**
 * The WHERE clause of a document scan, over any table with the documents' columns (db, parent,
 * collection_id, doc_id, name_key): the current rows and the kept versions are read alike.
 * `storedId` maps an id to its stored (sortable) form.
 */
export function documentScanWhere(db: string, scan: DocumentScan, storedId: (id: string) => string): { where: string; params: unknown[] } {
  const conditions = ['db = ?'];
  const params: unknown[] = [db];
  const add = (condition: string, param: unknown) => {
    conditions.push(condition);
    params.push(param);
  };
  if (scan.parent !== undefined) add('parent = ?', scan.parent);
  if (scan.collectionId !== undefined) add('collection_id = ?', scan.collectionId);
  if (scan.afterId !== undefined) add('doc_id > ?', storedId(scan.afterId));
  if (scan.beforeId !== undefined) add('doc_id < ?', storedId(scan.beforeId));
  if (scan.fromId !== undefined) add(scan.descending ? 'doc_id <= ?' : 'doc_id >= ?', storedId(scan.fromId));
  if (scan.afterNameKey) add('name_key > ?', scan.afterNameKey);
  if (scan.beforeNameKey) add('name_key < ?', scan.beforeNameKey);
  if (scan.fromNameKey) add('name_key >= ?', scan.fromNameKey);
  return { where: conditions.join(' AND '), params };
}

/** The order of a scan: ids within one collection, name keys otherwise. */
export function documentScanOrder(scan: DocumentScan): string {
  return scan.parent !== undefined ? 'doc_id' : 'name_key';
}
