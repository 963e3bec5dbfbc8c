/**
 * The scans in name order: one collection in id order (a `__name__` start cursor seeks), and a
 * collection group (or a parent's descendants) in name-key order, bounded by `__name__` cursors.
 */
import { docFromRow, type Doc } from './documents.js';
import { encodeSegments } from './index-encoding.js';
import { relativeName } from './paths.js';
import { firstPage, type PlanContext } from './planner.js';
import { queryCollection } from './query.js';
import type { Value } from './values.js';

export async function* scanCollection(context: PlanContext, collection: string): AsyncGenerator<Doc> {
  const descending = context.query.orderBy[0]!.descending;
  let afterId: string | undefined;
  let beforeId: string | undefined;
  // A name cursor seeks; its own document is re-checked by matchesQuery.
  let fromId = keyCursorId(context);
  for (let page = firstPage(context.query); ; page = Math.min(page * 2, 1000)) {
    const rows = await context.store.scanDocuments(context.dbKey, {
      parent: collection,
      descending,
      limit: page,
      ...(afterId !== undefined ? { afterId } : {}),
      ...(beforeId !== undefined ? { beforeId } : {}),
      ...(fromId !== undefined ? { fromId } : {}),
    });
    fromId = undefined;
    for (const row of rows) yield docFromRow(row);
    if (rows.length < page) return;
    const last = rows[rows.length - 1]!.id;
    if (descending) beforeId = last;
    else afterId = last;
  }
}

/** The id a `__name__` startAt cursor points at, when the query is ordered by name first. */
function keyCursorId(context: PlanContext): string | undefined {
  const cursor = context.query.startAt;
  const value = cursor?.values[0];
  if (value?.type !== 'reference') return undefined;
  const relative = relativeName(context.db, value.value, 'Reference');
  const collection = queryCollection(context.query);
  if (!relative.startsWith(`${collection}/`) || relative.slice(collection.length + 1).includes('/')) return undefined;
  return relative.slice(collection.length + 1);
}

export async function* scanGroup(context: PlanContext): AsyncGenerator<Doc> {
  const { query } = context;
  let afterNameKey: Buffer | undefined;
  let beforeNameKey: Buffer | undefined;
  if (query.parent !== '') {
    // Every descendant's name key extends the parent's segments (without its end marker).
    const prefix = encodeSegments(query.parent.split('/')).subarray(0, -1);
    afterNameKey = prefix;
    beforeNameKey = Buffer.concat([prefix, Buffer.of(0x03)]);
  }
  const cursors = nameCursorKeys(context);
  let fromNameKey = cursors.from;
  if (cursors.after && (!afterNameKey || Buffer.compare(cursors.after, afterNameKey) > 0)) afterNameKey = cursors.after;
  if (cursors.before && (!beforeNameKey || Buffer.compare(cursors.before, beforeNameKey) < 0)) beforeNameKey = cursors.before;
  for (let page = firstPage(query); ; page = Math.min(page * 2, 1000)) {
    const rows = await context.store.scanDocuments(context.dbKey, {
      ...(query.collectionId !== undefined ? { collectionId: query.collectionId } : {}),
      ...(afterNameKey ? { afterNameKey } : {}),
      ...(beforeNameKey ? { beforeNameKey } : {}),
      ...(fromNameKey ? { fromNameKey } : {}),
      descending: false,
      limit: page,
    });
    fromNameKey = undefined;
    for (const row of rows) yield docFromRow(row);
    if (rows.length < page) return;
    afterNameKey = rows[rows.length - 1]!.nameKey;
  }
}

/**
 * A group read in name order with `__name__` cursors (what a partitioned read sends: startAt one
 * partition's first name, endBefore the next's) seeks to its start and stops at its end, rather
 * than reading the group from its first document; matchesQuery still checks every candidate.
 */
function nameCursorKeys(context: PlanContext): { from?: Buffer; after?: Buffer; before?: Buffer } {
  const { query } = context;
  if (query.orderBy.length !== 1 || !query.orderBy[0]!.field.isKey || query.orderBy[0]!.descending) return {};
  const keyOf = (value: Value | undefined) => (value?.type === 'reference' ? encodeSegments(relativeName(context.db, value.value, 'Reference').split('/')) : undefined);
  const keys: { from?: Buffer; after?: Buffer; before?: Buffer } = {};
  const start = keyOf(query.startAt?.values[0]);
  if (start) keys[query.startAt!.before ? 'from' : 'after'] = start;
  const end = keyOf(query.endAt?.values[0]);
  // endAt takes its own name: the least key above it is the same bytes and a NUL.
  if (end) keys.before = query.endAt!.before ? end : Buffer.concat([end, Buffer.of(0)]);
  return keys;
}
