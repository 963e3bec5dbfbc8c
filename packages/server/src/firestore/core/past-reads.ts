import type { DocumentScan } from '../../storage/document-store.js';
import { docFromRow, type Doc } from './documents.js';
import { encodeSegments } from './index-encoding.js';
import { candidates, firstPage, type IndexUsed, type Plan, type PlanContext } from './planner.js';
import { compareDocs, queryCollection } from './query.js';

/**
 * Queries at a past read time T, when commits have passed since. The indexes hold only the
 * present, and a document as of T is either its present row (not written since T) or the kept
 * version that was current at T (storage/sqlite/sqlite-document-history.ts); the two sets are
 * disjoint. So the present indexes serve the query as now, minus what was written after T, merged
 * in the query's order with the versions current at T, which are few: they follow the writes since
 * T (at most an hour of them, the retention), not the scope. Every candidate is then matched as
 * any is. When more than `maxMergedVersions` documents of the scope changed since T, the scope's
 * documents as they were are read in name order instead, and the work follows the scope.
 */

/** Versions merged into the present indexes' answer at most; beyond, the scope is scanned. */
export const maxMergedVersions = 5_000;

/** The candidates of a query at `readTime`. */
export async function pastPlan(context: PlanContext, readTime: number): Promise<Plan> {
  const kept = await context.store.versionsAt(context.dbKey, { ...scopeScan(context), limit: maxMergedVersions + 1 }, readTime);
  if (kept.length > maxMergedVersions) return pastCandidates(context, readTime);
  const { db, query } = context;
  const order = (a: Doc, b: Doc) => compareDocs(db, query.orderBy, a, b);
  const versions = kept.map(docFromRow).sort(order);
  const present = candidates(context);
  // The merge keeps a source sorted on its first order field alone (`firstField`) sorted on it: the full order refines it.
  return { source: merged(unchangedSince(present.source, readTime), versions, order), order: present.order, indexesUsed: present.indexesUsed };
}

async function* unchangedSince(source: AsyncGenerator<Doc>, readTime: number): AsyncGenerator<Doc> {
  for await (const doc of source) if (doc.updateTime <= readTime) yield doc;
}

async function* merged(source: AsyncGenerator<Doc>, sorted: readonly Doc[], order: (a: Doc, b: Doc) => number): AsyncGenerator<Doc> {
  let next = 0;
  for await (const doc of source) {
    while (next < sorted.length && order(sorted[next]!, doc) <= 0) yield sorted[next++]!;
    yield doc;
  }
  while (next < sorted.length) yield sorted[next++]!;
}

/** The scope's documents as they were at `readTime`, in name order. */
export function pastCandidates(context: PlanContext, readTime: number): Plan {
  const { query } = context;
  const byName = query.orderBy.length === 1 && !query.orderBy[0]!.descending;
  const scope: IndexUsed['query_scope'] = query.allDescendants ? 'Collection group' : 'Collection';
  return { source: scanPast(context, readTime), order: byName ? 'exact' : 'none', indexesUsed: [{ query_scope: scope, properties: '(__name__ ASC)' }] };
}

/** The query's scope: one collection, or a group (under its parent). */
function scopeScan(context: PlanContext): DocumentScan {
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
  return scan;
}

async function* scanPast(context: PlanContext, readTime: number): AsyncGenerator<Doc> {
  const { query } = context;
  const scan = scopeScan(context);
  for (let page = firstPage(query); ; page = Math.min(page * 2, 1000)) {
    const rows = await context.store.scanDocumentsAt(context.dbKey, { ...scan, limit: page }, readTime);
    for (const row of rows) yield docFromRow(row);
    if (rows.length < page) return;
    const last = rows[rows.length - 1]!;
    if (scan.parent !== undefined) scan.afterId = last.id;
    else scan.afterNameKey = last.nameKey;
  }
}
