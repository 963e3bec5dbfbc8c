/** The documents the Firestore bench writes, and loading a query collection of them. */
import { progress } from '../env.js';
import { settings } from './settings.js';
import { documentName, post, type Endpoint, type Json, type Target } from './targets.js';

export const int = (value: number) => ({ integerValue: String(value) });

/**
 * The query collection of `size` documents d0000000… with, for document i:
 *   group = i mod (size/20)   → every group has exactly 20 members
 *   n     = i                 → a range of 20 consecutive values is 20 documents
 *   a     = i mod A, b = ⌊i/A⌋ mod B with A·B = size/20 → each (a, b) pair has exactly 20 members,
 *           while a alone matches size/A documents and b alone size/B (both grow with the collection)
 *   s     = a short string, as real documents carry one
 */
export interface Layout {
  size: number;
  collection: string;
  groups: number;
  A: number;
  B: number;
  idWidth: number;
}

export function layoutFor(size: number, prefix: string): Layout {
  const cells = size / 20;
  let A = 1;
  for (let d = 1; d * d <= cells; d++) if (cells % d === 0) A = d;
  return { size, collection: `${prefix}${size}`, groups: cells, A, B: cells / A, idWidth: Math.max(7, String(size - 1).length) };
}

const docId = (layout: Layout, i: number) => `d${String(i).padStart(layout.idWidth, '0')}`;

export function fieldsFor(layout: Layout, i: number): Json {
  return {
    group: int(i % layout.groups),
    n: int(i),
    a: int(i % layout.A),
    b: int(Math.floor(i / layout.A) % layout.B),
    s: { stringValue: `item number ${i}` },
  };
}

export function commitBody(target: Endpoint, collection: string, docs: { id: string; fields: Json }[]): string {
  return JSON.stringify({ writes: docs.map((doc) => ({ update: { name: documentName(target, collection, doc.id), fields: doc.fields } })) });
}

export function checkCommit(target: Endpoint, text: string, writes: number): void {
  const json = JSON.parse(text) as Json;
  const results = json.writeResults;
  if (!Array.isArray(results) || results.length !== writes || typeof json.commitTime !== 'string') {
    throw new Error(`${target.name} :commit of ${writes} writes answered ${text.slice(0, 300)}`);
  }
}

export interface LoadResult {
  docs: number;
  seconds: number;
  complete: boolean;
}

/** Writes the collection in commits of `loadBatch`, `loadParallel` at once; stops early past `budgetSeconds`. */
export async function load(target: Target, layout: Layout, budgetSeconds = Infinity): Promise<LoadResult> {
  const batches = Math.ceil(layout.size / settings.loadBatch);
  const started = performance.now();
  const deadline = started + budgetSeconds * 1000;
  let nextBatch = 0;
  let written = 0;
  let lastReport = started;
  const worker = async (): Promise<void> => {
    for (let b = nextBatch++; b < batches; b = nextBatch++) {
      if (performance.now() > deadline) return;
      const docs = [];
      for (let i = b * settings.loadBatch; i < Math.min(layout.size, (b + 1) * settings.loadBatch); i++) docs.push({ id: docId(layout, i), fields: fieldsFor(layout, i) });
      checkCommit(target, await post(target, ':commit', commitBody(target, layout.collection, docs)), docs.length);
      written += docs.length;
      if (performance.now() - lastReport > 15_000) {
        lastReport = performance.now();
        const elapsed = (lastReport - started) / 1000;
        progress(`${target.name}: ${written} of ${layout.size} loaded in ${elapsed.toFixed(0)} s (${(written / elapsed).toFixed(0)} docs/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: settings.loadParallel }, worker));
  return { docs: written, seconds: (performance.now() - started) / 1000, complete: written === layout.size };
}
