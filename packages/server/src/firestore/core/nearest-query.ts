import { setField, type Doc } from './documents.js';
import { visitMatches, type PlanContext, type QueryResult } from './planner.js';
import { NearestHeap } from './vector-search.js';

/**
 * A findNearest query: the pre-filter (the query without its vector stage) is answered by the
 * planner like any query (equalities from the indexes), each match is ranked as it comes, and
 * only the `limit` nearest are kept. The distance goes into `distanceResultField` of the answer's
 * copies (never the stored documents); `select` still decides what is returned.
 */
export async function executeFindNearest(context: PlanContext): Promise<QueryResult> {
  const nearest = context.query.findNearest!;
  const { findNearest: _vectorStage, ...preFilter } = context.query;
  let heap: NearestHeap | undefined;
  const stats = await visitMatches({ ...context, query: preFilter }, () => {
    const fresh = new NearestHeap(nearest, context.db, preFilter.orderBy);
    heap = fresh;
    return (doc) => fresh.offer(doc);
  });
  const docs = heap!.results().map(({ doc, distance }): Doc => {
    if (nearest.resultField === undefined) return doc;
    const fields = new Map(doc.fields);
    setField(fields, [nearest.resultField], { type: 'double', value: distance });
    return { ...doc, fields };
  });
  return { docs, skipped: 0, indexesUsed: stats.indexesUsed, documentsScanned: stats.documentsScanned };
}
