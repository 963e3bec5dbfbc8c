import type { DocumentRow, DocumentScan, DocumentStore } from '../../storage/document-store.js';
import { firestoreErrors } from './errors.js';
import { encodeSegments } from './index-encoding.js';
import type { Query } from './query.js';

/**
 * PartitionQuery: split points of a collection-group query (ordered by name, nothing else), so
 * that bulk readers (firebase-admin `getPartitions(n)`) can read a group in parallel: for cursors
 * A < B, `endBefore A`, `startAt A endBefore B` and `startAt B` together return every document once.
 * The points are documents at even steps through the group in name order, at most
 * `partitionCount`, each partition holding at least one document when it was cut; fewer when the
 * group is smaller. The group is read once, names only.
 */

/** Only a kindless or collection-group query ordered by name ascending can be partitioned (as Google says). */
export function checkPartitionable(query: Query): void {
  if (!query.allDescendants) throw firestoreErrors.invalidArgument('PartitionQuery requires a query over all descendants (a collection group).');
  const onlyByName = query.orderBy.length === 1 && query.orderBy[0]!.field.isKey && !query.orderBy[0]!.descending;
  if (query.filter || !onlyByName || query.startAt || query.endAt || query.offset > 0 || query.limit !== undefined || query.select || query.findNearest) {
    throw firestoreErrors.invalidArgument('PartitionQuery supports only a query ordered by __name__ ascending, without filters, cursors, offset, limit, projection or findNearest.');
  }
}

const page = 1000;

/** The relative paths of the split documents, in name order. */
export async function partitionPoints(store: DocumentStore, dbKey: string, query: Query, partitionCount: number, readTime?: number): Promise<string[]> {
  const scan: DocumentScan = { descending: false, limit: page };
  if (query.collectionId !== undefined) scan.collectionId = query.collectionId;
  if (query.parent !== '') {
    const prefix = encodeSegments(query.parent.split('/')).subarray(0, -1);
    scan.afterNameKey = prefix;
    scan.beforeNameKey = Buffer.concat([prefix, Buffer.of(0x03)]);
  }
  const paths: string[] = [];
  for (;;) {
    const rows: DocumentRow[] = readTime === undefined ? await store.scanDocuments(dbKey, scan) : await store.scanDocumentsAt(dbKey, scan, readTime);
    for (const row of rows) paths.push(row.path);
    if (rows.length < page) break;
    scan.afterNameKey = rows[rows.length - 1]!.nameKey;
  }
  const points = Math.min(partitionCount, paths.length - 1);
  const chosen: string[] = [];
  for (let i = 1; i <= points; i++) chosen.push(paths[Math.floor((i * paths.length) / (points + 1))]!);
  return chosen;
}
