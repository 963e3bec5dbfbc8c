/**
 * `npm run bench -- firestore`: Hearth's Cloud Firestore v1 REST API.
 *
 * 1. Commit throughput (documents written per second through `:commit`, sent by the load client in a
 *    process of its own, bench/load.ts, with Hearth's CPU per commit), beside raw better-sqlite3
 *    inserts of the same rows (the same JSON text, one row per document, WAL, synchronous=FULL, one
 *    transaction per batch) measured in this same process run: the ratio is the price of Hearth's
 *    HTTP, validation and index upkeep over the bare durable write. Beside them, Hearth's database
 *    commit called in this process ("core"): the same work without HTTP, so the two ratios tell the
 *    index upkeep from the HTTP layer. (commits.ts)
 * 2. Query latency for results of exactly 20 documents in collections of 10k, 100k and 1M documents:
 *    equality on one field, a range in the order of one field, and two equalities (answered by
 *    merging two single-field indexes). The claim under test: a query's time follows the size of its
 *    result, not of the collection, so the three sizes should be close. (data.ts, queries.ts)
 * 3. The same workload against Google's Firestore emulator (`gcloud emulators firestore start`) on
 *    this machine, when installed. (targets.ts)
 * 4. Small reads beside big commits: one client reads a small document alone, then while 12 commits
 *    of 500 documents of ~12 KB (~6 MB each) run from 2 clients; p50/p99/max of the reads and the
 *    longest event-loop block. (big-commits.ts; HEARTH_BENCH_FIRESTORE_BIG_COMMITS, _BIG_WRITERS,
 *    _BIG_DOCS, _BIG_DOC_BYTES, _BIG_READS)
 *
 * Settings: BENCH_SECONDS (5) and BENCH_WARMUP_SECONDS (1) per commit run; HEARTH_BENCH_FIRESTORE_ROUNDS (3:
 * each commit shape and its in-process baselines run in turn this many times, and the median of each
 * is reported);
 * HEARTH_BENCH_FIRESTORE_SIZES (10000,100000,1000000), HEARTH_BENCH_FIRESTORE_PEER_SIZES (the same);
 * HEARTH_BENCH_FIRESTORE_QUERIES (300 per query kind and size), HEARTH_BENCH_FIRESTORE_QUERY_SECONDS
 * (60, cap per query kind and size), HEARTH_BENCH_FIRESTORE_CLIENTS (4 concurrent committers),
 * HEARTH_BENCH_FIRESTORE_LOAD_BATCH (500 writes per loading commit), HEARTH_BENCH_FIRESTORE_LOAD_PARALLEL
 * (4 loading commits in flight), HEARTH_BENCH_FIRESTORE_PEER_LOAD_SECONDS (900, the emulator's
 * budget per size; a size that would take longer is skipped), HEARTH_BENCH_FIRESTORE_TARGETS
 * (hearth,emulator). JVM_FLAGS reaches the emulator's JVM (e.g. -Xmx12g). (settings.ts)
 *
 * With the defaults a run took about 15 minutes on a 2-core machine: Hearth loaded 1M documents in
 * ~3.5 min; the emulator loaded them in ~30 s but held ~6 GB and took 5–25 s per query at 1M, so its
 * largest size stops at the time cap after a few queries (marked "capped").
 */
import { progress } from '../env.js';
import { count } from '../stats.js';
import { measureBigCommits, type BigCommitResult } from './big-commits.js';
import { inProcessBaselines } from './commits.js';
import { roundTripFloor, type Latency } from './queries.js';
import { bigCommitLines, header, report } from './report.js';
import { runTarget, type BaselineRates, type TargetResult } from './run-target.js';
import { peerSizes, settings } from './settings.js';
import { startEmulatorTarget, startHearthTarget } from './targets.js';

export async function runFirestoreBench(): Promise<void> {
  console.log(header());
  const started = performance.now();
  const baselineRates: BaselineRates = { raw: new Map(), core: new Map(), rawIndexed: new Map() };
  let hearthResult: TargetResult | undefined;
  let peerResult: TargetResult | undefined;
  let peerNote: string | undefined;
  let floor: Latency | undefined;
  let bigCommits: BigCommitResult | undefined;
  try {
    floor = await roundTripFloor();
    if (settings.targets.includes('hearth')) {
      const baselines = await inProcessBaselines();
      const hearth = await startHearthTarget();
      try {
        progress(`Hearth at ${hearth.origin}`);
        hearthResult = { name: hearth.name, projectId: hearth.projectId, commits: new Map(), sizes: [] };
        await runTarget(hearth, hearthResult, settings.sizes, baselines, baselineRates, Infinity);
        progress('Hearth: small reads alone, then beside big commits');
        bigCommits = await measureBigCommits(hearth);
      } finally {
        baselines.raw.close();
        baselines.rawIndexed.close();
        await baselines.core.close();
        await hearth.close();
      }
    }
    if (settings.targets.includes('emulator')) {
      progress('starting the Firestore emulator (gcloud emulators firestore start)');
      const emulator = await startEmulatorTarget(hearthResult?.projectId ?? 'demo-hearth');
      if (typeof emulator === 'string') {
        peerNote = `skipped: ${emulator}`;
        progress(`emulator ${peerNote}`);
      } else {
        try {
          progress(`emulator at ${emulator.origin}`);
          const result: TargetResult = { name: emulator.name, projectId: emulator.projectId, commits: new Map(), sizes: [] };
          peerResult = result;
          await runTarget(emulator, result, peerSizes, undefined, baselineRates, settings.peerLoadSeconds);
          const notMeasured = settings.sizes.filter((size) => !result.sizes.some((s) => s.size === size && s.queries.length > 0));
          if (notMeasured.length > 0) {
            peerNote = `not measured at ${notMeasured.map(count).join(', ')} (${peerSizes.length < settings.sizes.length ? 'HEARTH_BENCH_FIRESTORE_PEER_SIZES' : 'see the loading table'})`;
          }
        } catch (error) {
          peerNote = `failed: ${error instanceof Error ? error.message : String(error)}`;
          progress(`emulator ${peerNote}`);
        } finally {
          await emulator.close();
        }
      }
    }
  } finally {
    report(hearthResult, peerResult, peerNote, baselineRates, floor);
    if (bigCommits) console.log(['', ...bigCommitLines(bigCommits)].join('\n'));
    progress(`firestore bench done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}
