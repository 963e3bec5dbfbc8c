/** Running one target through everything: the commit shapes, then loading and querying each size. */
import { progress } from '../env.js';
import { count, measureConcurrent, medianRate, seconds, type Rate } from '../stats.js';
import { measureCommits, type InProcessBaselines } from './commits.js';
import { layoutFor, load, type LoadResult } from './data.js';
import { measureQueries, queryKinds, type Latency } from './queries.js';
import { baselineKey, commitShapes, settings, shapeKey } from './settings.js';
import type { Target } from './targets.js';

export interface SizeResult {
  size: number;
  load?: LoadResult;
  /** Why this size was not measured, when it was not. */
  skipped?: string;
  queries: (Latency | undefined)[];
  footprint?: string;
}

/** The in-process rates by writes per commit and overwriting (baselineKey): raw SQLite, and Hearth's database without HTTP. */
export interface BaselineRates {
  raw: Map<string, Rate>;
  core: Map<string, Rate>;
  /** Raw SQLite writing the document and one index row per field (the floor automatic indexing sets). */
  rawIndexed: Map<string, Rate>;
}

export interface TargetResult {
  name: string;
  projectId: string;
  commits: Map<string, Rate>;
  sizes: SizeResult[];
}

/** Fills `result` as it goes, so a failure part-way still leaves what was measured. */
export async function runTarget(
  target: Target,
  result: TargetResult,
  sizes: number[],
  baselines: InProcessBaselines | undefined,
  baselineRates: BaselineRates,
  budgetSeconds: number,
): Promise<void> {
  // Hearth and its in-process baselines take turns, round after round: this machine's disk and
  // cores drift by more between two runs minutes apart than the ratios they are compared by.
  for (const shape of commitShapes) {
    const what = `${shape.batch} ${shape.overwrite ? 'overwrite' : 'write'}${shape.batch > 1 ? 's' : ''}`;
    const key = baselineKey(shape);
    const withBaselines = baselines !== undefined && !baselineRates.raw.has(key);
    const runs: Record<'target' | 'raw' | 'rawIndexed' | 'core', Rate[]> = { target: [], raw: [], rawIndexed: [], core: [] };
    for (let round = 1; round <= settings.commitRounds; round++) {
      const of = `round ${round} of ${settings.commitRounds}`;
      progress(`${target.name}: commits of ${what} from ${shape.clients} client${shape.clients > 1 ? 's' : ''}, ${of}`);
      runs.target.push(await measureCommits(target, shape));
      if (!withBaselines) continue;
      const overwrite = shape.overwrite === true;
      progress(`baseline: raw better-sqlite3 transactions of ${what}, ${of}`);
      runs.raw.push(await measureConcurrent(1, settings.warmupSeconds, settings.seconds, baselines.raw.op(shape.batch, overwrite)));
      progress(`baseline: raw better-sqlite3 with one index row per field, ${what}, ${of}`);
      runs.rawIndexed.push(await measureConcurrent(1, settings.warmupSeconds, settings.seconds, baselines.rawIndexed.op(shape.batch, overwrite)));
      progress(`reference: Hearth's database commits of ${what} in this process, no HTTP, ${of}`);
      runs.core.push(await measureConcurrent(1, settings.warmupSeconds, settings.seconds, baselines.core.op(shape.batch, overwrite)));
    }
    result.commits.set(shapeKey(shape), medianRate(runs.target));
    if (withBaselines) {
      baselineRates.raw.set(key, medianRate(runs.raw));
      baselineRates.rawIndexed.set(key, medianRate(runs.rawIndexed));
      baselineRates.core.set(key, medianRate(runs.core));
    }
  }
  let lastRate: number | undefined;
  for (const size of sizes) {
    const layout = layoutFor(size, 'items');
    const entry: SizeResult = { size, queries: [] };
    result.sizes.push(entry);
    if (lastRate !== undefined && size / lastRate > budgetSeconds) {
      entry.skipped = `loading would take about ${seconds(size / lastRate)} s at the last size's ${lastRate.toFixed(0)} docs/s, over the ${budgetSeconds} s budget`;
      progress(`${target.name}: skipping ${count(size)}: ${entry.skipped}`);
      continue;
    }
    progress(`${target.name}: loading ${count(size)} documents into ${layout.collection} (commits of ${settings.loadBatch}, ${settings.loadParallel} in flight)`);
    entry.load = await load(target, layout, budgetSeconds);
    lastRate = entry.load.docs / entry.load.seconds;
    progress(`${target.name}: loaded ${entry.load.docs} in ${seconds(entry.load.seconds)} s (${lastRate.toFixed(0)} docs/s)`);
    if (!entry.load.complete) {
      entry.skipped = `loading passed the ${budgetSeconds} s budget with ${entry.load.docs} of ${size} documents written`;
      continue;
    }
    entry.footprint = target.footprint();
    for (const [k, kind] of queryKinds.entries()) {
      progress(`${target.name}: ${kind.name} on ${count(size)}`);
      entry.queries[k] = await measureQueries(target, layout, kind, size * 31 + k);
    }
  }
}
