import type { DocumentStore } from '../../storage/document-store.js';
import type { FindNearest } from './vector-search.js';

/**
 * One collection's vector field as findNearest ranks it: the side table's rows (vector-fields.ts)
 * copied into one Float64Array, held in memory while the set's generation (raised in every commit
 * that changes a row of it) stays the same. A query reads the generation (one row), and only when
 * it moved reads the rows again; so a search costs one pass over contiguous doubles, like a plain
 * loop, plus the few documents it answers. Sets are kept up to a bound on their doubles, least
 * recently used out; a larger set is read for each query (still no document decoded).
 */
export interface VectorSet {
  generation: number;
  ids: string[];
  /** Row i's elements are data[starts[i] .. starts[i + 1]). */
  starts: Uint32Array;
  data: Float64Array;
}

/** 32 Mi doubles (256 MiB): 250k vectors of 128 dimensions. */
export const defaultHeldDoubles = 32 * 1024 * 1024;

export class VectorSets {
  private readonly held = new Map<string, VectorSet>();
  private heldDoubles = 0;

  constructor(private readonly maxDoubles = defaultHeldDoubles) {}

  /** The set as the store holds it now (in the caller's snapshot, for a store view that has one). */
  async current(store: DocumentStore, dbKey: string, parent: string, field: string): Promise<VectorSet> {
    const key = `${dbKey}\u0000${parent}\u0000${field}`;
    // The generation first: rows read after it are at least as new, so a set kept under it is never stale.
    const generation = await store.vectorGeneration(dbKey, parent, field);
    const kept = this.held.get(key);
    if (kept && kept.generation === generation) {
      this.held.delete(key);
      this.held.set(key, kept);
      return kept;
    }
    if (kept) this.forget(key, kept);
    const rows = await store.scanVectors(dbKey, parent, field);
    const starts = new Uint32Array(rows.length + 1);
    let doubles = 0;
    rows.forEach((row, i) => {
      starts[i] = doubles;
      doubles += row.vector.length >> 3;
    });
    starts[rows.length] = doubles;
    const data = new Float64Array(doubles);
    // Copied as bytes: a row's Buffer need not be aligned for a Float64Array view of its own.
    const bytes = new Uint8Array(data.buffer);
    rows.forEach((row, i) => bytes.set(row.vector.subarray(0, (starts[i + 1]! - starts[i]!) * 8), starts[i]! * 8));
    const set: VectorSet = { generation, ids: rows.map((row) => row.docId), starts, data };
    if (doubles <= this.maxDoubles) {
      for (const [oldest, old] of this.held) {
        if (this.heldDoubles + doubles <= this.maxDoubles) break;
        this.forget(oldest, old);
      }
      this.held.set(key, set);
      this.heldDoubles += doubles;
    }
    return set;
  }

  /** Every set of a database (cleared, or its index set rebuilt): the generations say so too; this frees the memory sooner. */
  dropDatabase(dbKey: string): void {
    for (const [key, set] of this.held) if (key.startsWith(`${dbKey}\u0000`)) this.forget(key, set);
  }

  private forget(key: string, set: VectorSet): void {
    this.held.delete(key);
    this.heldDoubles -= set.data.length;
  }
}

/**
 * The rows that may be among the `limit` nearest: every row whose rank (distance, negated for
 * DOT_PRODUCT; NaN last) is at most the limit-th best, ties included, so the exact order among
 * them (the query's order on equal distances) can be settled on their documents.
 */
export function nearestRows(set: VectorSet, nearest: FindNearest): number[] {
  const query = nearest.queryVector;
  const dimension = query.length;
  const { starts, data } = set;
  const count = set.ids.length;
  const ranks = new Float64Array(count).fill(NaN);
  const sign = nearest.measure === 'DOT_PRODUCT' ? -1 : 1;
  const threshold = nearest.threshold;
  const top = new RankHeap(nearest.limit);
  // Each sum is added in distanceOf's order, so it is the same double; only the measure's own sums
  // are computed (the query's norm once: the same additions give the same double every time).
  let queryNorm = 0;
  for (let i = 0; i < dimension; i++) queryNorm += query[i]! * query[i]!;
  const measure = nearest.measure;
  for (let row = 0; row < count; row++) {
    const start = starts[row]!;
    if (starts[row + 1]! - start !== dimension) continue;
    let distance: number;
    if (measure === 'EUCLIDEAN') {
      let squaredDistance = 0;
      for (let i = 0; i < dimension; i++) {
        const d = data[start + i]! - query[i]!;
        squaredDistance += d * d;
      }
      distance = Math.sqrt(squaredDistance);
    } else if (measure === 'DOT_PRODUCT') {
      let dot = 0;
      for (let i = 0; i < dimension; i++) dot += data[start + i]! * query[i]!;
      distance = dot;
    } else {
      let dot = 0;
      let docNorm = 0;
      for (let i = 0; i < dimension; i++) {
        const x = data[start + i]!;
        dot += x * query[i]!;
        docNorm += x * x;
      }
      distance = 1 - dot / Math.sqrt(docNorm * queryNorm);
    }
    if (threshold !== undefined && !(nearest.measure === 'DOT_PRODUCT' ? distance >= threshold : distance <= threshold)) continue;
    const rank = Number.isNaN(distance) ? Infinity : sign * distance;
    ranks[row] = rank;
    top.offer(rank);
  }
  const cutoff = top.full ? top.worst : Infinity;
  const rows: number[] = [];
  for (let row = 0; row < count; row++) if (ranks[row]! <= cutoff) rows.push(row);
  return rows;
}

/** The `size` smallest ranks seen, the largest of them on top. */
class RankHeap {
  private readonly heap: Float64Array;
  private length = 0;

  constructor(private readonly size: number) {
    this.heap = new Float64Array(size);
  }

  get full(): boolean {
    return this.length === this.size;
  }

  get worst(): number {
    return this.heap[0]!;
  }

  offer(rank: number): void {
    const heap = this.heap;
    if (this.length < this.size) {
      let at = this.length++;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (heap[parent]! >= rank) break;
        heap[at] = heap[parent]!;
        at = parent;
      }
      heap[at] = rank;
      return;
    }
    if (rank >= heap[0]!) return;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= this.length) break;
      const right = left + 1;
      const larger = right < this.length && heap[right]! > heap[left]! ? right : left;
      if (heap[larger]! <= rank) break;
      heap[at] = heap[larger]!;
      at = larger;
    }
    heap[at] = rank;
  }
}
