/** The Firestore bench's settings (see index.ts for the variables) and the shapes it runs. */
import { envCount, envList, envNumber } from '../env.js';

function envSizes(name: string, fallback: readonly number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const sizes = raw.split(',').map((part) => Number(part.trim().replace(/_/g, '')));
  for (const size of sizes) {
    if (!Number.isInteger(size) || size < 20 || size % 20 !== 0) throw new Error(`${name}: every size must be a whole multiple of 20, not "${raw}"`);
  }
  return sizes;
}

export const settings = {
  seconds: envNumber('BENCH_SECONDS', 5),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 1),
  /** Each commit shape and its in-process baselines run this many times in turn; the median of each is reported. */
  commitRounds: envCount('HEARTH_BENCH_FIRESTORE_ROUNDS', 3),
  clients: envCount('HEARTH_BENCH_FIRESTORE_CLIENTS', 4),
  sizes: envSizes('HEARTH_BENCH_FIRESTORE_SIZES', [10_000, 100_000, 1_000_000]),
  queries: envCount('HEARTH_BENCH_FIRESTORE_QUERIES', 300),
  querySeconds: envNumber('HEARTH_BENCH_FIRESTORE_QUERY_SECONDS', 60),
  queryWarmup: 20,
  loadBatch: envCount('HEARTH_BENCH_FIRESTORE_LOAD_BATCH', 500),
  loadParallel: envCount('HEARTH_BENCH_FIRESTORE_LOAD_PARALLEL', 4),
  peerLoadSeconds: envNumber('HEARTH_BENCH_FIRESTORE_PEER_LOAD_SECONDS', 900),
  targets: envList('HEARTH_BENCH_FIRESTORE_TARGETS', ['hearth', 'emulator']),
};
export const peerSizes = envSizes('HEARTH_BENCH_FIRESTORE_PEER_SIZES', settings.sizes);

export interface CommitShape {
  /** Writes per commit. */
  batch: number;
  /** Concurrent clients. */
  clients: number;
  /** Writes replace documents that exist (updates) rather than create new ones. */
  overwrite?: boolean;
}

export const commitShapes: CommitShape[] = [
  { batch: 1, clients: 1 },
  { batch: 1, clients: settings.clients },
  { batch: 100, clients: settings.clients },
  { batch: 1, clients: 1, overwrite: true },
  { batch: 100, clients: settings.clients, overwrite: true },
];

export const shapeKey = (shape: CommitShape) => `${shape.batch}x${shape.clients}${shape.overwrite ? 'u' : ''}`;
/** The in-process references depend on the writes per commit and whether they overwrite. */
export const baselineKey = (shape: CommitShape) => `${shape.batch}${shape.overwrite ? 'u' : ''}`;
/** Overwriting shapes cycle through this many documents per writer. */
export const overwritePool = 1000;

/** A slow target stops at the time cap once it has this many measured queries. */
export const minimumQueries = 3;
