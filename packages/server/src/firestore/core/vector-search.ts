import { firestoreErrors } from './errors.js';
import type { Doc } from './documents.js';
import { getField } from './documents.js';
import type { DatabaseId } from './paths.js';
import { compareDocs, type FieldRef, type Order } from './query.js';
import { fromWire } from './value-wire.js';
import { isNumber, isVector, type Value } from './values.js';
import { onlyKeys, wireObject as object } from './wire-checks.js';

/**
 * Vector search: the `findNearest` stage of a structured query. The candidates (the documents the
 * rest of the query matches: the pre-filter) are ranked by their distance to the query vector,
 * exactly, as Firestore's flat index does; the `limit` nearest are kept in a bounded heap.
 * Documents whose field is not a vector of the query vector's dimension are not candidates.
 * Messages are the Firestore emulator's (tests/firestore/differential-vector-search.test.ts).
 */

export type DistanceMeasure = 'EUCLIDEAN' | 'COSINE' | 'DOT_PRODUCT';

export interface FindNearest {
  field: FieldRef;
  queryVector: Float64Array;
  measure: DistanceMeasure;
  limit: number;
  /** A top-level field name (taken literally, dots included) that receives the distance. */
  resultField?: string;
  /** EUCLIDEAN, COSINE: distance <= threshold; DOT_PRODUCT: distance >= threshold. */
  threshold?: number;
}

export const maxNearestLimit = 1000;
export const maxVectorDimension = 2048;
const measures = new Set<string>(['EUCLIDEAN', 'COSINE', 'DOT_PRODUCT']);

export function parseFindNearest(raw: unknown, parseField: (raw: unknown, where: string) => FieldRef): FindNearest {
  const where = 'structured_query.find_nearest';
  const wire = object(raw, where);
  onlyKeys(wire, ['vectorField', 'queryVector', 'distanceMeasure', 'limit', 'distanceResultField', 'distanceThreshold'], where);
  const field = parseField(wire.vectorField ?? { fieldPath: '' }, `${where}.vector_field`);
  if (wire.queryVector === undefined) throw firestoreErrors.invalidArgument('Cannot convert firestore.v1.Value with type unset.');
  const queryVector = vectorOf(fromWire(wire.queryVector, `${where}.query_vector`));
  if (wire.distanceMeasure !== undefined && (typeof wire.distanceMeasure !== 'string' || !(measures.has(wire.distanceMeasure) || wire.distanceMeasure === 'DISTANCE_MEASURE_UNSPECIFIED'))) {
    throw firestoreErrors.invalidArgument("Payload isn't valid for request.");
  }
  if (typeof wire.distanceMeasure !== 'string' || !measures.has(wire.distanceMeasure)) throw firestoreErrors.invalidArgument('Unknown Distance Measure.');
  const limit = unwrap(wire.limit);
  const limitNumber = typeof limit === 'string' && /^-?\d+$/.test(limit) ? Number(limit) : limit;
  if (typeof limitNumber !== 'number' || !Number.isInteger(limitNumber) || limitNumber < 1 || limitNumber > maxNearestLimit) {
    throw firestoreErrors.invalidArgument(`FindNearest.limit must be a positive integer of no more than ${maxNearestLimit}`);
  }
  const nearest: FindNearest = { field, queryVector, measure: wire.distanceMeasure as DistanceMeasure, limit: limitNumber };
  if (wire.distanceResultField !== undefined && wire.distanceResultField !== '') {
    if (typeof wire.distanceResultField !== 'string') throw firestoreErrors.invalidArgument("Payload isn't valid for request.");
    if (/^__.*__$/.test(wire.distanceResultField)) {
      throw firestoreErrors.invalidArgument(`The distanceResultField.property.name "${wire.distanceResultField}" is reserved.`);
    }
    nearest.resultField = wire.distanceResultField;
  }
  const threshold = unwrap(wire.distanceThreshold);
  if (threshold !== undefined) {
    const number = typeof threshold === 'string' ? Number(threshold) : threshold;
    if (typeof number !== 'number' || !Number.isFinite(number)) throw firestoreErrors.invalidArgument('distanceThreshold must be a finite number.');
    nearest.threshold = number;
  }
  return nearest;
}

/** Int32Value / DoubleValue wrappers: bare in proto3 JSON, `{value: n}` from some clients. */
function unwrap(raw: unknown): unknown {
  return typeof raw === 'object' && raw !== null && 'value' in raw ? (raw as { value: unknown }).value : raw;
}

function vectorOf(value: Value): Float64Array {
  if (value.type !== 'map' || !isVector(value)) throw firestoreErrors.invalidArgument('Query Value must be of type vector.');
  const elements = value.fields.get('value');
  const items = elements?.type === 'array' ? elements.values : [];
  if (items.length === 0) throw firestoreErrors.invalidArgument('Cannot have a zero length vector.');
  if (items.length > maxVectorDimension) throw firestoreErrors.invalidArgument(`Query vector must have no more than ${maxVectorDimension} dimensions.`);
  const vector = new Float64Array(items.length);
  items.forEach((item, i) => {
    if (item.type !== 'double') throw firestoreErrors.invalidArgument("Vector must only contain values of type 'double'");
    vector[i] = item.value;
  });
  return vector;
}

// ---- ranking ---------------------------------------------------------------------------------

/** The distance of a document's vector, or undefined when it has no vector of the right dimension. */
export function distanceOf(nearest: FindNearest, doc: Doc): number | undefined {
  const value = getField(doc.fields, nearest.field.segments);
  if (value === undefined || value.type !== 'map' || !isVector(value)) return undefined;
  const elements = value.fields.get('value');
  if (elements?.type !== 'array') return undefined;
  const items = elements.values;
  const query = nearest.queryVector;
  if (items.length !== query.length) return undefined;
  // One pass, no allocation: the sums every measure needs.
  let dot = 0;
  let squaredDistance = 0;
  let docNorm = 0;
  let queryNorm = 0;
  for (let i = 0; i < query.length; i++) {
    const item = items[i]!;
    if (!isNumber(item)) return undefined;
    const x = item.type === 'integer' ? Number(item.value) : item.value;
    const q = query[i]!;
    dot += x * q;
    const d = x - q;
    squaredDistance += d * d;
    docNorm += x * x;
    queryNorm += q * q;
  }
  if (nearest.measure === 'EUCLIDEAN') return Math.sqrt(squaredDistance);
  if (nearest.measure === 'DOT_PRODUCT') return dot;
  // A zero vector has no direction: NaN, ranked after every number (as the emulator answers).
  return 1 - dot / Math.sqrt(docNorm * queryNorm);
}

export interface Ranked {
  doc: Doc;
  distance: number;
}

/**
 * The nearest `limit` candidates, nearest first; equal distances in the query's order (its
 * explicit orderBy, then name). A bounded max-heap keeps the worst kept result on top, so the
 * memory follows the limit, not the number of candidates.
 */
export class NearestHeap {
  private readonly heap: Ranked[] = [];
  private readonly worse: (a: Ranked, b: Ranked) => boolean;

  constructor(
    private readonly nearest: FindNearest,
    db: DatabaseId,
    orderBy: readonly Order[],
  ) {
    const sign = nearest.measure === 'DOT_PRODUCT' ? -1 : 1;
    // NaN (a zero vector's cosine) ranks last.
    const rank = (distance: number) => (Number.isNaN(distance) ? Infinity : sign * distance);
    this.worse = (a, b) => {
      const ra = rank(a.distance);
      const rb = rank(b.distance);
      if (ra !== rb) return ra > rb;
      if (Number.isNaN(a.distance) !== Number.isNaN(b.distance)) return Number.isNaN(a.distance);
      return compareDocs(db, orderBy, a.doc, b.doc) > 0;
    };
  }

  /** Ranks a candidate: kept if it has a vector of the dimension, passes the threshold and is among the nearest so far. */
  offer(doc: Doc): void {
    const distance = distanceOf(this.nearest, doc);
    if (distance === undefined) return;
    const { threshold, measure } = this.nearest;
    if (threshold !== undefined && !(measure === 'DOT_PRODUCT' ? distance >= threshold : distance <= threshold)) return;
    const entry = { doc, distance };
    const heap = this.heap;
    if (heap.length < this.nearest.limit) {
      heap.push(entry);
      this.siftUp(heap.length - 1);
    } else if (this.worse(heap[0]!, entry)) {
      heap[0] = entry;
      this.siftDown(0);
    }
  }

  /** The kept results, nearest first. */
  results(): Ranked[] {
    return [...this.heap].sort((a, b) => (this.worse(a, b) ? 1 : this.worse(b, a) ? -1 : 0));
  }

  private siftUp(index: number): void {
    const heap = this.heap;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.worse(heap[index]!, heap[parent]!)) return;
      [heap[index], heap[parent]] = [heap[parent]!, heap[index]!];
      index = parent;
    }
  }

  private siftDown(index: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let worst = index;
      if (left < heap.length && this.worse(heap[left]!, heap[worst]!)) worst = left;
      if (right < heap.length && this.worse(heap[right]!, heap[worst]!)) worst = right;
      if (worst === index) return;
      [heap[index], heap[worst]] = [heap[worst]!, heap[index]!];
      index = worst;
    }
  }
}
