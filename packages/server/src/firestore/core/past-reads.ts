import type { DocumentScan } from '../../storage/document-store.js';
import { docFromRow, type Doc } from './documents.js';
import { encodeSegments } from './index-encoding.js';
import { firstPage, type IndexUsed, type Plan, type PlanContext } from './planner.js';
import { queryCollection } from './query.js';

/**
 * Queries at a past read time, when commits have passed since: the indexes hold only the present,
 * so the documents of the query's scope are read as they were then (the current rows written by
 * then and the kept versions current then, storage/sqlite/sqlite-document-history.ts) and every
 * one is matched and ordered like any candidate. The work follows the scope's size, not the
 * answer's: point-in-time reads are for exports and consistent snapshots, not hot paths.
 */

/** The scope's documents as they were at `readTime`, in name order. */
export function pastCandidates(context: PlanContext, readTime: number): Plan {
  const { query } = context;
  const byName = query.orderBy.length === 1 && !query.orderBy[0]!.descending;
  const scope: IndexUsed['query_scope'] = query.allDescendants ? 'Collection group' : 'Collection';
  return { source: scanPast(context, readTime), order: byName ? 'exact' : 'none', indexesUsed: [{ query_scope: scope, properties: '(__name__ ASC)' }] };
}

async function* scanPast(context: PlanContext, readTime: number): AsyncGenerator<Doc> {
  const { query } = context;
  const scan: DocumentScan = { descending: false, limit: 0 };
  if (query.allDescendants) {
    if (query.collectionId !== undefined) scan.collectionId = query.collectionId;
    if (query.parent !== '') {
      const prefix = encodeSegments(query.parent.split('/')).subarray(0, -1);
      scan.afterNameKey = prefix;
      scan.beforeNameKey = Buffer.concat([prefix, Buffer.of(0x03)]);
    }
  } else {
    scan.parent = queryCollection(query);
  }
  for (let page = firstPage(query); ; page = Math.min(page * 2, 1000)) {
    const rows = await context.store.scanDocumentsAt(context.dbKey, { ...scan, limit: page }, readTime);
    for (const row of rows) yield docFromRow(row);
    if (rows.length < page) return;
    const last = rows[rows.length - 1]!;
    if (scan.parent !== undefined) scan.afterId = last.id;
    else scan.afterNameKey = last.nameKey;
  }
}
