import { setField, docFromRow, type Doc } from './documents.js';
import { visitMatches, type PlanContext, type QueryResult } from './planner.js';
import { queryCollection, type Query } from './query.js';
import type { VectorFields } from './vector-fields.js';
import { NearestHeap } from './vector-search.js';
import { nearestRows, type VectorSets } from './vector-sets.js';

/** Where a findNearest query can rank from the side table of declared vector fields. */
export interface NearestSide {
  fields: VectorFields;
  sets: VectorSets;
}

/**
 * A findNearest query. When the side table can answer it (a declared vector field of one
 * collection, no pre-filter, the present: nearestFromSide), the vectors are ranked as doubles and
 * only the nearest documents are read. Otherwise the pre-filter (the query without its vector
 * stage) is answered by the planner like any query (equalities from the indexes), each match is
 * ranked as it comes, and only the `limit` nearest are kept. Either way the last ranking is
 * NearestHeap's over documents, so both answer the same. The distance goes into
 * `distanceResultField` of the answer's copies (never the stored documents); `select` still decides
 * what is returned.
 */
export async function executeFindNearest(context: PlanContext, side?: NearestSide): Promise<QueryResult> {
  const nearest = context.query.findNearest!;
  const { findNearest: _vectorStage, ...preFilter } = context.query;
  let heap: NearestHeap | undefined;
  let stats: Pick<QueryResult, 'indexesUsed' | 'documentsScanned'>;
  if (side && sideServes(side.fields, context, preFilter)) {
    heap = new NearestHeap(nearest, context.db, preFilter.orderBy);
    stats = await nearestFromSide(context, side.sets, heap);
  } else {
    stats = await visitMatches({ ...context, query: preFilter }, () => {
      const fresh = new NearestHeap(nearest, context.db, preFilter.orderBy);
      heap = fresh;
      return (doc) => fresh.offer(doc);
    });
  }
  const docs = heap!.results().map(({ doc, distance }): Doc => {
    if (nearest.resultField === undefined) return doc;
    const fields = new Map(doc.fields);
    setField(fields, [nearest.resultField], { type: 'double', value: distance });
    return { ...doc, fields };
  });
  return { docs, skipped: 0, indexesUsed: stats.indexesUsed, documentsScanned: stats.documentsScanned };
}

/**
 * The side table holds the present of declared fields, per collection. A past read time, a
 * collection group, a filter, cursors or an order beyond names (which drops documents without the
 * field) need the documents, so they take the planner's path.
 */
function sideServes(fields: VectorFields, context: PlanContext, preFilter: Query): boolean {
  const nearest = context.query.findNearest!;
  if (context.readTime !== undefined || preFilter.allDescendants || preFilter.collectionId === undefined) return false;
  if (preFilter.filter || preFilter.startAt || preFilter.endAt || preFilter.offset !== 0 || preFilter.limit !== undefined) return false;
  if (!preFilter.orderBy.every((order) => order.field.isKey)) return false;
  return fields.get(preFilter.collectionId)?.some((field) => field.path === nearest.field.path) ?? false;
}

/** Documents read per getDocuments call. */
const readBatch = 500;

/**
 * Ranks the set's doubles, then reads the rows that may be among the nearest (ties included) and
 * offers their documents to the heap, which settles the order exactly. A row whose document moved
 * on since (SQLite reads outside one snapshot) is ranked on the document as read.
 */
async function nearestFromSide(context: PlanContext, sets: VectorSets, heap: NearestHeap): Promise<Pick<QueryResult, 'indexesUsed' | 'documentsScanned'>> {
  const nearest = context.query.findNearest!;
  const collection = queryCollection(context.query);
  const set = await sets.current(context.store, context.dbKey, collection, nearest.field.path);
  const rows = nearestRows(set, nearest);
  for (let at = 0; at < rows.length; at += readBatch) {
    const paths = rows.slice(at, at + readBatch).map((row) => `${collection}/${set.ids[row]!}`);
    const found = await context.store.getDocuments(context.dbKey, paths);
    for (const path of paths) {
      const row = found.get(path);
      if (row) heap.offer(docFromRow(row));
    }
  }
  return { indexesUsed: [{ query_scope: 'Collection', properties: '(__name__ ASC)' }], documentsScanned: rows.length };
}
