import type { DocumentStore, IndexHit, IndexPosition } from '../../storage/document-store.js';
import { sortTies, sortWhole } from './candidate-order.js';
import { scanCollection, scanGroup } from './name-scans.js';
import { pastPlan } from './past-reads.js';
import { compositeIndexFor, groupIndexParent, type CompositeIndex, type IndexFit } from './composite-indexes.js';
import { arrayElementKind, compositeKind, docFromRow, valueKind, type Doc } from './documents.js';
import { encodeValue } from './index-encoding.js';
import type { DatabaseId } from './paths.js';
import { comparable, conjuncts, isRangeOp, matchesQuery, queryCollection, type Filter, type Query } from './query.js';
import { nullValue, type Value } from './values.js';

/**
 * Chooses where a query's candidates come from and runs it. Every source yields a superset of
 * the answer in the answer's exact order, and every candidate is checked again with the full
 * query (`matchesQuery`), so a source only has to be fast, never clever about semantics:
 * - `__name__` order with equality filters: the single-field indexes of those filters, merged
 *   (zig-zag) in id order;
 * - a field order: that field's index, bounded by the filters and cursor on it; equal values
 *   are sorted by the rest of the order as they come;
 * - a declared composite index that fits the equalities and the order exactly;
 * - for a collection group, a declared collection-group index that fits the same way;
 * - otherwise the collection (or group) in name order, sought to and bounded by `__name__`
 *   cursors (name-scans.ts).
 * The work follows the size of the result (plus what a filter without an index rejects).
 */

export interface QueryResult {
  docs: Doc[];
  skipped: number;
  /** What the planner chose, in Firestore's query-explain form. */
  indexesUsed: IndexUsed[];
  /** Candidates read and checked: the work done, which follows the result, not the collection. */
  documentsScanned: number;
}

export interface IndexUsed {
  query_scope: 'Collection' | 'Collection group';
  properties: string;
}

export interface Plan {
  /** Candidates, a superset of the answer. */
  source: AsyncGenerator<Doc>;
  /**
   * How the source's order relates to the query's: the same; the same on the first order field
   * only (its ties come in name order and are sorted by the rest); or none (sorted whole).
   */
  order: 'exact' | 'firstField' | 'none';
  indexesUsed: IndexUsed[];
}

export interface PlanContext {
  store: DocumentStore;
  dbKey: string;
  db: DatabaseId;
  query: Query;
  composites: readonly CompositeIndex[];
  /** Answer as the data was at this time (µs), not now. */
  readTime?: number;
}

/**
 * At a read time no commit has passed yet, the present is the answer and the indexes serve it;
 * otherwise the indexes' answer is corrected by what changed since (past-reads.ts). A commit that
 * lands while the present is read, past the read time, sends the query to the past.
 */
export async function executeQuery(context: PlanContext): Promise<QueryResult> {
  const { readTime } = context;
  if (readTime === undefined) return run(context, candidates(context));
  if (readTime < (await context.store.lastCommitTime(context.dbKey))) return run(context, await pastPlan(context, readTime));
  const result = await run(context, candidates(context));
  if ((await context.store.lastCommitTime(context.dbKey)) <= readTime) return result;
  return run(context, await pastPlan(context, readTime));
}

async function run(context: PlanContext, plan: Plan): Promise<QueryResult> {
  const { query, db } = context;
  const wanted = query.limit === undefined ? Infinity : query.offset + query.limit;
  const docs: Doc[] = [];
  let skipped = 0;
  let documentsScanned = 0;
  const result = { docs, indexesUsed: plan.indexesUsed };
  if (query.limit === 0) return { ...result, skipped, documentsScanned };
  // Every candidate read is counted here, before the sorting steps (which read ahead).
  const matching = async function* (): AsyncGenerator<Doc> {
    for await (const doc of plan.source) {
      documentsScanned++;
      if (matchesQuery(db, query, doc)) yield doc;
    }
  };
  const ordered = plan.order === 'exact' ? matching() : plan.order === 'firstField' ? sortTies(context, matching()) : sortWhole(context, matching());
  for await (const doc of ordered) {
    if (skipped < query.offset) {
      skipped++;
      continue;
    }
    docs.push(doc);
    if (skipped + docs.length >= wanted) break;
  }
  return { ...result, skipped, documentsScanned };
}

export function candidates(context: PlanContext): Plan {
  const { query } = context;
  const direction = (descending: boolean) => (descending ? 'DESC' : 'ASC');
  const nameOrder = `__name__ ${direction(query.orderBy[query.orderBy.length - 1]!.descending)}`;
  const used = (scope: IndexUsed['query_scope'], ...fields: string[]): IndexUsed => ({ query_scope: scope, properties: `(${fields.join(', ')})` });
  const fitUsed = (scope: IndexUsed['query_scope'], fit: IndexFit) => {
    const fields = fit.index.fields.map((field) => `${field.path} ${field.mode === 'CONTAINS' ? 'CONTAINS' : field.mode === 'DESCENDING' ? 'DESC' : 'ASC'}`);
    return used(scope, ...fields, `__name__ ${fit.index.fields[fit.index.fields.length - 1]!.mode === 'DESCENDING' ? 'DESC' : 'ASC'}`);
  };
  if (query.allDescendants) {
    // Group entries span every parent: they serve a group queried from the root.
    const fit = query.parent === '' && query.collectionId !== undefined ? compositeIndexFor(context.composites, 'COLLECTION_GROUP', query.collectionId, query) : undefined;
    if (fit) {
      const source = scanComposite(context, groupIndexParent(query.collectionId!), fit, (hit) => hit.docId);
      return { source, order: 'exact', indexesUsed: [fitUsed('Collection group', fit)] };
    }
    const byName = query.orderBy.length === 1 && !query.orderBy[0]!.descending;
    return { source: scanGroup(context), order: byName ? 'exact' : 'none', indexesUsed: [used('Collection group', '__name__ ASC')] };
  }
  const collection = queryCollection(query);
  const fit = compositeIndexFor(context.composites, 'COLLECTION', query.collectionId!, query);
  if (fit) {
    // A fitting index holds the query's whole order: its fields, then names.
    const source = scanComposite(context, collection, fit, (hit) => `${collection}/${hit.docId}`);
    return { source, order: 'exact', indexesUsed: [fitUsed('Collection', fit)] };
  }
  const first = query.orderBy[0]!;
  if (!first.field.isKey) {
    // The index's ties come in id order, which is name order within one collection.
    const second = query.orderBy[1];
    const exact = query.orderBy.length === 2 && second!.field.isKey && second!.descending === first.descending;
    return {
      source: scanFieldIndex(context, collection),
      order: exact ? 'exact' : 'firstField',
      indexesUsed: [used('Collection', `${first.field.path} ${direction(first.descending)}`, `__name__ ${direction(first.descending)}`)],
    };
  }
  const equalities = equalityRanges(conjuncts(query.filter));
  if (equalities.length) {
    return {
      source: zigzag(context, collection, equalities),
      order: 'exact',
      indexesUsed: equalities.map((range) => used('Collection', `${range.field} ${range.kind === arrayElementKind ? 'CONTAINS' : 'ASC'}`, nameOrder)),
    };
  }
  return { source: scanCollection(context, collection), order: 'exact', indexesUsed: [used('Collection', nameOrder)] };
}

// ---- sources --------------------------------------------------------------------------------

interface IndexRange {
  field: string;
  kind: number;
  value: Buffer;
}

/** Conjuncts that pin a field to one indexed value. */
function equalityRanges(filters: Filter[]): IndexRange[] {
  const ranges: IndexRange[] = [];
  for (const filter of filters) {
    if (filter.kind === 'unary' && !filter.field.isKey && (filter.op === 'IS_NULL' || filter.op === 'IS_NAN')) {
      const value: Value = filter.op === 'IS_NULL' ? nullValue : { type: 'double', value: NaN };
      ranges.push({ field: filter.field.path, kind: valueKind, value: encodeValue(value) });
    }
    if (filter.kind !== 'field' || filter.field.isKey || !comparable(filter.value)) continue;
    if (filter.op === 'EQUAL') ranges.push({ field: filter.field.path, kind: valueKind, value: encodeValue(filter.value) });
    if (filter.op === 'ARRAY_CONTAINS') ranges.push({ field: filter.field.path, kind: arrayElementKind, value: encodeValue(filter.value) });
  }
  return ranges;
}

/** Index intersection in id order: each range seeks to the largest id any other range proposed. */
async function* zigzag(context: PlanContext, collection: string, ranges: IndexRange[]): AsyncGenerator<Doc> {
  const descending = context.query.orderBy[0]!.descending;
  const { store, dbKey } = context;
  if (ranges.length === 1) {
    const range = ranges[0]!;
    let position: IndexPosition = { value: range.value, inclusive: true };
    for (let page = firstPage(context.query); ; page = Math.min(page * 2, 1000)) {
      const bound = { value: range.value, inclusive: true };
      const hits = await store.scanIndex(dbKey, { parent: collection, field: range.field, kind: range.kind, descending, limit: page, ...(descending ? { upper: position, lower: bound } : { lower: position, upper: bound }) });
      yield* fetchInOrder(context, collection, hits.map((hit) => hit.docId));
      if (hits.length < page) return;
      position = { value: range.value, docId: hits[hits.length - 1]!.docId, inclusive: false };
    }
  }
  let candidate: string | undefined;
  let inclusive = true;
  for (;;) {
    let agreed = 0;
    for (let i = 0; agreed < ranges.length; i = (i + 1) % ranges.length) {
      const range = ranges[i]!;
      const position: IndexPosition = candidate === undefined ? { value: range.value, inclusive: true } : { value: range.value, docId: candidate, inclusive };
      const bound = { value: range.value, inclusive: true };
      const [hit] = await store.scanIndex(dbKey, { parent: collection, field: range.field, kind: range.kind, descending, limit: 1, ...(descending ? { upper: position, lower: bound } : { lower: position, upper: bound }) });
      if (!hit) return;
      if (hit.docId === candidate) {
        agreed++;
      } else {
        candidate = hit.docId;
        inclusive = true;
        agreed = 1;
      }
    }
    yield* fetchInOrder(context, collection, [candidate!]);
    inclusive = false;
  }
}

/** A field's index from the first bound the filters and cursor allow, in the first order's direction. */
async function* scanFieldIndex(context: PlanContext, collection: string): AsyncGenerator<Doc> {
  const { query, store, dbKey } = context;
  const first = query.orderBy[0]!;
  const { lower, upper } = boundsFor(first.field.path, conjuncts(query.filter), query.startAt?.values[0], first.descending);
  let position = first.descending ? upper : lower;
  for (let page = firstPage(query); ; page = Math.min(page * 2, 1000)) {
    const hits = await store.scanIndex(dbKey, {
      parent: collection,
      field: first.field.path,
      kind: valueKind,
      descending: first.descending,
      limit: page,
      ...(first.descending ? { ...(lower ? { lower } : {}), ...(position ? { upper: position } : {}) } : { ...(position ? { lower: position } : {}), ...(upper ? { upper } : {}) }),
    });
    yield* fetchInOrder(context, collection, hits.map((hit) => hit.docId));
    if (hits.length < page) return;
    const last = hits[hits.length - 1]!;
    position = { value: last.value, docId: last.docId, inclusive: false };
  }
}

interface Bounds {
  lower?: IndexPosition;
  upper?: IndexPosition;
}

/** Tightest bounds on one field from top-level filters; range filters also bound the type class. */
function boundsFor(field: string, filters: Filter[], cursorValue: Value | undefined, descending: boolean): Bounds {
  const bounds: Bounds = {};
  const tighten = (side: 'lower' | 'upper', value: Value, inclusive: boolean) => {
    const position = { value: encodeValue(value), inclusive };
    const current = bounds[side];
    const order = current ? Buffer.compare(position.value, current.value) : 0;
    if (!current || (side === 'lower' ? order > 0 : order < 0) || (order === 0 && !inclusive)) bounds[side] = position;
  };
  for (const filter of filters) {
    if (filter.kind !== 'field' || filter.field.path !== field || filter.field.isKey) continue;
    const value = filter.value;
    if (filter.op === 'EQUAL' && comparable(value)) {
      tighten('lower', value, true);
      tighten('upper', value, true);
    } else if (isRangeOp(filter.op) && comparable(value)) {
      const below = filter.op === 'LESS_THAN' || filter.op === 'LESS_THAN_OR_EQUAL';
      tighten(below ? 'upper' : 'lower', value, filter.op.endsWith('EQUAL'));
    } else if (filter.op === 'IN' && value.type === 'array') {
      const members = value.values.filter(comparable).map(encodeValue).sort(Buffer.compare);
      if (members.length) {
        tightenEncoded(bounds, 'lower', members[0]!);
        tightenEncoded(bounds, 'upper', members[members.length - 1]!);
      }
    }
  }
  if (cursorValue) tighten(descending ? 'upper' : 'lower', cursorValue, true);
  return bounds;
}

function tightenEncoded(bounds: Bounds, side: 'lower' | 'upper', value: Buffer): void {
  const current = bounds[side];
  const order = current ? Buffer.compare(value, current.value) : 0;
  if (!current || (side === 'lower' ? order > 0 : order < 0)) bounds[side] = { value, inclusive: true };
}

/** A declared index's key range; `pathOf` names a hit's document (group entries carry the whole path). */
async function* scanComposite(context: PlanContext, parent: string, fit: IndexFit, pathOf: (hit: IndexHit) => string): AsyncGenerator<Doc> {
  const { lower, upper, descending } = fit;
  let position = descending ? upper : lower;
  for (let page = firstPage(context.query); ; page = Math.min(page * 2, 1000)) {
    const hits = await context.store.scanIndex(context.dbKey, {
      parent,
      field: fit.index.id,
      kind: compositeKind,
      descending,
      limit: page,
      ...(descending ? { lower, upper: position } : { lower: position, upper }),
    });
    yield* fetchPaths(context, hits.map(pathOf));
    if (hits.length < page) return;
    position = { value: hits[hits.length - 1]!.value, inclusive: false };
  }
}

async function* fetchInOrder(context: PlanContext, collection: string, ids: string[]): AsyncGenerator<Doc> {
  yield* fetchPaths(context, ids.map((id) => `${collection}/${id}`));
}

async function* fetchPaths(context: PlanContext, paths: string[]): AsyncGenerator<Doc> {
  if (!paths.length) return;
  const rows = await context.store.getDocuments(context.dbKey, paths);
  for (const path of paths) {
    const row = rows.get(path);
    if (row) yield docFromRow(row);
  }
}

export function firstPage(query: Query): number {
  const wanted = query.limit === undefined ? 100 : query.offset + query.limit;
  return Math.max(16, Math.min(wanted + 1, 1000));
}


/**
 * Hands every document the query matches to `visit`, in no particular order (vector search
 * ranks them itself, so nothing is sorted or kept here). At a read time, as executeQuery: a
 * commit landing past it while the present is read sends the scan to the past, with a fresh
 * visitor.
 */
export async function visitMatches(context: PlanContext, visitor: () => (doc: Doc) => void): Promise<{ indexesUsed: IndexUsed[]; documentsScanned: number }> {
  const { readTime } = context;
  const drain = async (plan: Plan) => {
    const visit = visitor();
    let documentsScanned = 0;
    for await (const doc of plan.source) {
      documentsScanned++;
      if (matchesQuery(context.db, context.query, doc)) visit(doc);
    }
    return { indexesUsed: plan.indexesUsed, documentsScanned };
  };
  if (readTime !== undefined && readTime < (await context.store.lastCommitTime(context.dbKey))) return drain(await pastPlan(context, readTime));
  const present = await drain(candidates(context));
  if (readTime === undefined || (await context.store.lastCommitTime(context.dbKey)) <= readTime) return present;
  return drain(await pastPlan(context, readTime));
}
