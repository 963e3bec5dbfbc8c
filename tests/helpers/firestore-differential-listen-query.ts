/**
 * The listeners of the differential test of Firestore listeners (tests/firestore/differential-listen.test.ts), and
 * the firebase-admin queries that put the exact generated query on the wire.
 */
import { FieldPath, Query, type Firestore } from 'firebase-admin/firestore';
import { databaseRoot, relativePath } from './firestore-differential-listen.js';
import type { Cursor, Filter, Order, StructuredQuery, Value } from './random-firestore.js';

export interface QueryListener {
  kind: 'query';
  /** The runQuery parent: the database root or a document */
  parent: string;
  query: StructuredQuery;
  limitToLast: boolean;
}
export interface DocumentListener {
  kind: 'document';
  /** Full resource name */
  name: string;
}
export type ListenerSpec = QueryListener | DocumentListener;

export function describeListener(spec: ListenerSpec): string {
  if (spec.kind === 'document') return `document ${relativePath(spec.name)}`;
  const parent = spec.parent === databaseRoot ? '' : ` under ${relativePath(spec.parent)}`;
  return `query${parent} ${JSON.stringify(spec.query)}${spec.limitToLast ? ' as limitToLast' : ''}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The exact generated query on the wire

/** proto3 JSON → the object form of the SDK's protobuf messages (its requests go through protobufjs fromObject). */
function protoValue(value: Value): unknown {
  if ('nullValue' in value) return { nullValue: 'NULL_VALUE' };
  if ('doubleValue' in value) return { doubleValue: Number(value.doubleValue) };
  if ('timestampValue' in value) return { timestampValue: protoTimestamp(value.timestampValue) };
  if ('bytesValue' in value) return { bytesValue: Buffer.from(value.bytesValue, 'base64') };
  if ('arrayValue' in value) return { arrayValue: { values: (value.arrayValue.values ?? []).map(protoValue) } };
  if ('mapValue' in value) return { mapValue: { fields: Object.fromEntries(Object.entries(value.mapValue.fields ?? {}).map(([key, inner]) => [key, protoValue(inner)])) } };
  return value;
}

function protoTimestamp(text: string): { seconds: number; nanos: number } {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(text);
  if (!match) throw new Error(`not an RFC 3339 UTC timestamp: ${text}`);
  return { seconds: Date.parse(`${match[1]}Z`) / 1000, nanos: Number((match[2] ?? '').padEnd(9, '0')) };
}

function protoFilter(filter: Filter): unknown {
  if ('compositeFilter' in filter) return { compositeFilter: { op: filter.compositeFilter.op, filters: filter.compositeFilter.filters.map(protoFilter) } };
  if ('fieldFilter' in filter) return { fieldFilter: { ...filter.fieldFilter, value: protoValue(filter.fieldFilter.value) } };
  return filter;
}

function protoCursor(cursor: Cursor): unknown {
  return { values: cursor.values.map(protoValue), before: cursor.before ?? false };
}

function protoQuery(query: StructuredQuery): unknown {
  return {
    ...(query.select && { select: query.select }),
    from: query.from,
    ...(query.where && { where: protoFilter(query.where) }),
    ...(query.orderBy && { orderBy: query.orderBy }),
    ...(query.startAt && { startAt: protoCursor(query.startAt) }),
    ...(query.endAt && { endAt: protoCursor(query.endAt) }),
    ...(query.offset !== undefined && { offset: query.offset }),
    ...(query.limit !== undefined && { limit: { value: query.limit } }),
  };
}

/** What the SDKs send for limitToLast: the orders reversed and the cursors swapped; the client reverses back. */
function flippedForLimitToLast(query: StructuredQuery): StructuredQuery {
  const flip = (order: Order): Order => ({ field: order.field, direction: order.direction === 'DESCENDING' ? 'ASCENDING' : 'DESCENDING' });
  const { startAt, endAt, ...rest } = query;
  return {
    ...rest,
    orderBy: (query.orderBy ?? []).map(flip),
    ...(endAt && { startAt: { values: endAt.values, before: !endAt.before } }),
    ...(startAt && { endAt: { values: startAt.values, before: !startAt.before } }),
  };
}

/** The query as sent: for limitToLast, the flipped one. */
export function wireQuery(spec: QueryListener): StructuredQuery {
  return spec.limitToLast ? flippedForLimitToLast(spec.query) : spec.query;
}

if (typeof (Query.prototype as unknown as { toProto?: unknown }).toProto !== 'function') {
  throw new Error('firebase-admin internals changed: Query.prototype.toProto, which this test replaces to send the exact generated query, is gone');
}

/**
 * A firebase-admin query that sends exactly `spec.query`. The SDK sorts snapshot documents by the query's orderBy
 * (then the name), and reverses limitToLast results: both are set through the public API; everything else the
 * server sees comes from the replaced toProto(), which both Listen and get() call.
 */
export function adminQuery(db: Firestore, spec: QueryListener): Query {
  const selector = spec.query.from[0]!;
  const parent = spec.parent === databaseRoot ? '' : `${relativePath(spec.parent)}/`;
  // A collection group under a document parent is not generated (the emulator refuses filtered or ordered ones).
  let query: Query = selector.allDescendants ? db.collectionGroup(selector.collectionId!) : db.collection(`${parent}${selector.collectionId!}`);
  for (const order of spec.query.orderBy ?? []) {
    query = query.orderBy(order.field.fieldPath === '__name__' ? FieldPath.documentId() : order.field.fieldPath, order.direction === 'DESCENDING' ? 'desc' : 'asc');
  }
  if (spec.limitToLast) query = query.limitToLast(spec.query.limit!);
  const request = { parent: spec.parent, structuredQuery: protoQuery(wireQuery(spec)) };
  Object.defineProperty(query, 'toProto', {
    value: (...args: unknown[]) => {
      if (args.some((arg) => arg !== undefined)) throw new Error('the replaced toProto() takes no transaction, read time or explain options');
      return request;
    },
  });
  return query;
}
