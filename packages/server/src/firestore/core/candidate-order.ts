import type { Doc } from './documents.js';
import type { PlanContext } from './planner.js';
import { compareDocs } from './query.js';

/** Putting a source's candidates in the query's order, when the source does not yield them so. */

/** A source in order on the first field: documents tied on it are sorted by the rest. */
export async function* sortTies(context: PlanContext, source: AsyncGenerator<Doc>): AsyncGenerator<Doc> {
  const { db, query } = context;
  const first = query.orderBy.slice(0, 1);
  let group: Doc[] = [];
  const flush = () => group.sort((a, b) => compareDocs(db, query.orderBy, a, b));
  for await (const doc of source) {
    if (group.length && compareDocs(db, first, group[0]!, doc) !== 0) {
      yield* flush();
      group = [];
    }
    group.push(doc);
  }
  yield* flush();
}

/**
 * A source in no useful order, sorted. With a limit only the first offset + limit are kept (each
 * candidate inserted in order, the last dropped), so memory follows the answer, not the scope.
 */
export async function* sortWhole(context: PlanContext, source: AsyncGenerator<Doc>): AsyncGenerator<Doc> {
  const { query, db } = context;
  const order = (a: Doc, b: Doc) => compareDocs(db, query.orderBy, a, b);
  const kept = query.limit === undefined ? Infinity : query.offset + query.limit;
  const best: Doc[] = [];
  for await (const doc of source) {
    if (kept === Infinity) {
      best.push(doc);
      continue;
    }
    if (best.length >= kept && order(doc, best[best.length - 1]!) >= 0) continue;
    let low = 0;
    let high = best.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (order(best[middle]!, doc) <= 0) low = middle + 1;
      else high = middle;
    }
    best.splice(low, 0, doc);
    if (best.length > kept) best.pop();
  }
  yield* kept === Infinity ? best.sort(order) : best;
}
