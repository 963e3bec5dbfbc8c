/** The Firestore bench's header and tables. */
import { loadavg } from 'node:os';
import { machineLine } from '../env.js';
import { commitClientLine } from '../load.js';
import { count, mib, ms, renderTable, seconds, type Rate } from '../stats.js';
import { layoutFor } from './data.js';
import { queryKinds, type Latency } from './queries.js';
import type { BigCommitResult, ReadLatency } from './big-commits.js';
import { bigCommitSettings } from './big-commits.js';
import type { BaselineRates, SizeResult, TargetResult } from './run-target.js';
import { baselineKey, commitShapes, minimumQueries, overwritePool, peerSizes, settings, shapeKey } from './settings.js';

const docsPerSecond = (rate: Rate | undefined, batch: number) => (rate ? (rate.perSecond * batch).toFixed(0) : '—');
const latencyCell = (rate: Rate | undefined) => (rate ? `${ms(rate.p50)} / ${ms(rate.p99)}` : '—');
const queryCell = (latency: Latency | undefined) => (latency ? `${ms(latency.median)} / ${ms(latency.p99)} (${latency.n}${latency.capped ? ', capped' : ''})` : '—');
const plural = (n: number, word: string) => `${n} ${word}${n > 1 ? 's' : ''}`;

function commitTable(hearth: TargetResult | undefined, peer: TargetResult | undefined, baselineRates: BaselineRates): string {
  const body = commitShapes.map((shape) => {
    const h = hearth?.commits.get(shapeKey(shape));
    const e = peer?.commits.get(shapeKey(shape));
    const raw = baselineRates.raw.get(baselineKey(shape));
    const core = baselineRates.core.get(baselineKey(shape));
    const indexed = baselineRates.rawIndexed.get(baselineKey(shape));
    const ratio = (x: Rate | undefined, y: Rate | undefined) => (x && y ? (x.perSecond / y.perSecond).toFixed(3) : '—');
    return [
      `${plural(shape.batch, shape.overwrite ? 'overwrite' : 'write')}/commit, ${plural(shape.clients, 'client')}`,
      docsPerSecond(h, shape.batch),
      latencyCell(h),
      h?.cpuMsPerOp === undefined ? '—' : ms(h.cpuMsPerOp),
      docsPerSecond(raw, shape.batch),
      latencyCell(raw),
      ratio(h, raw),
      docsPerSecond(indexed, shape.batch),
      ratio(h, indexed),
      docsPerSecond(core, shape.batch),
      ratio(core, raw),
      docsPerSecond(e, shape.batch),
      latencyCell(e),
      ratio(h, e),
    ];
  });
  return renderTable(['commit shape', 'Hearth docs/s', 'p50/p99 ms', 'CPU ms/commit', 'raw SQLite docs/s', 'p50/p99 ms', 'Hearth÷raw', 'raw+index docs/s', 'Hearth÷raw+index', 'core docs/s', 'core÷raw', 'emulator docs/s', 'p50/p99 ms', 'Hearth÷emulator'], body);
}

export function report(hearth: TargetResult | undefined, peer: TargetResult | undefined, peerNote: string | undefined, baselineRates: BaselineRates, floor: Latency | undefined): void {
  console.log('');
  console.log('Commit throughput (documents written per second; p50/p99 ms per commit)');
  console.log(commitTable(hearth, peer, baselineRates));
  console.log('CPU ms/commit: Hearth\'s process (every thread, not the load client) per commit.');
  console.log('raw SQLite: better-sqlite3 in this process, WAL, synchronous=FULL, one transaction per batch of the same rows');
  console.log('(document name, the same fields JSON), one writer (SQLite serialises writers anyway), no index but the name key.');
  console.log('overwrite: the commits cycle through ' + overwritePool + ' documents per client, written before the clock started, so every write replaces');
  console.log('a version (raw SQLite: INSERT OR REPLACE of the row).');
  console.log('raw+index: the same, plus one WITHOUT ROWID index row per field (an overwrite reads the old row and replaces its');
  console.log('entries): the least any store that indexes every field, as Firestore does, must write. Hearth÷raw+index is Hearth\'s own cost.');
  console.log('core: Hearth\'s DocumentDatabase.commit called in this process, one writer: the same documents, index entries and');
  console.log('fsync as :commit without HTTP and JSON; Hearth÷core is what the HTTP layer costs.');
  console.log('Hearth÷emulator: above 1 when Hearth writes faster. The emulator keeps everything in memory and never syncs');
  console.log('to disk: its rate is not a durable one.');

  console.log('');
  for (const line of targetLines(hearth, peer, baselineRates)) console.log(line);

  console.log('');
  console.log('Loading the query collections (commits of ' + settings.loadBatch + ' writes, ' + settings.loadParallel + ' in flight)');
  const sizes = [...new Set([...(hearth?.sizes ?? []), ...(peer?.sizes ?? [])].map((s) => s.size))].sort((x, y) => x - y);
  const loadCell = (entry: SizeResult | undefined) => {
    if (!entry) return 'not run';
    if (!entry.load) return 'skipped';
    return `${seconds(entry.load.seconds)} s, ${(entry.load.docs / entry.load.seconds).toFixed(0)} docs/s${entry.load.complete ? '' : ` (stopped at ${entry.load.docs})`}`;
  };
  const find = (result: TargetResult | undefined, size: number) => result?.sizes.find((s) => s.size === size);
  console.log(renderTable(['documents', 'Hearth', 'emulator'], sizes.map((size) => [count(size), loadCell(find(hearth, size)), loadCell(find(peer, size))])));
  for (const size of sizes) {
    for (const entry of [find(hearth, size), find(peer, size)]) {
      if (entry?.footprint) console.log(`  after ${count(size)}: ${entry.footprint}`);
      if (entry?.skipped) console.log(`  ${count(size)} skipped: ${entry.skipped}`);
    }
  }

  console.log('');
  console.log('Query latency, each answer exactly 20 documents (checked): median / p99 ms (queries measured), one client');
  const body: string[][] = [];
  for (const [k, kind] of queryKinds.entries()) {
    for (const size of sizes) {
      const h = find(hearth, size)?.queries[k];
      const e = find(peer, size)?.queries[k];
      body.push([
        kind.name,
        count(size),
        kind.describe(layoutFor(size, 'items')),
        queryCell(h),
        h?.scanned === undefined ? '—' : String(h.scanned),
        queryCell(e),
        h && e ? (e.median / h.median).toFixed(2) : '—',
      ]);
    }
  }
  console.log(renderTable(['query', 'collection', 'data', 'Hearth', 'scanned', 'emulator', 'emulator÷Hearth'], body, (column) => column < 3));
  const plans = queryKinds.map((kind, k) => `${kind.name}: ${[...new Set(sizes.map((size) => find(hearth, size)?.queries[k]?.plan).filter(Boolean))].join(' | ') || '—'}`);
  console.log(`scanned: documents Hearth read for one such query (query explain). Hearth's indexes: ${plans.join('; ')}`);
  console.log(`emulator÷Hearth: ratio of medians, above 1 when Hearth answers faster. "capped": the ${settings.querySeconds} s per kind and size ran out first.`);
  if (floor) console.log(`(context) fetch round trip to a bare Fastify route in this process: ${ms(floor.median)} / ${ms(floor.p99)} ms`);
  if (sizes.length > 1) {
    console.log('');
    console.log(`Growth of the median from ${count(sizes[0] ?? 0)} to each larger collection (1 = the size of the collection does not matter)`);
    for (const [k, kind] of queryKinds.entries()) {
      for (const result of [hearth, peer]) {
        if (!result) continue;
        const base = find(result, sizes[0] ?? 0)?.queries[k];
        const steps = sizes.slice(1).map((size) => {
          const other = find(result, size)?.queries[k];
          return `${count(size)} ×${base && other ? (other.median / base.median).toFixed(2) : '—'}`;
        });
        console.log(`  ${result.name.padEnd(8)} ${kind.name.padEnd(30)} ${steps.join('   ')}`);
      }
    }
  }
  if (peerNote) console.log(`\nemulator: ${peerNote}`);
}

export function header(): string {
  return [
    'Hearth Firestore benchmark: REST :commit and :runQuery, beside raw SQLite and Google\'s emulator, measured in this process run',
    machineLine(),
    `load average at start: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`,
    `commits: ${settings.seconds} s measured after ${settings.warmupSeconds} s warm-up per shape, each shape and its baselines in turn for ${settings.commitRounds} rounds (HEARTH_BENCH_FIRESTORE_ROUNDS), the median of each shown; queries: ${settings.queries} per kind and size after up to ${settings.queryWarmup} warm-up (at most ${settings.querySeconds} s, at least ${minimumQueries})`,
    `sizes: Hearth ${settings.targets.includes('hearth') ? settings.sizes.map(count).join(', ') : 'not run'}; emulator ${settings.targets.includes('emulator') ? peerSizes.map(count).join(', ') : 'not run'}`,
    `commits: ${commitClientLine()}; queries and the small reads beside big commits use fetch in this process`,
  ].join('\n');
}

const readCell = (latency: ReadLatency) => `${ms(latency.p50)} / ${ms(latency.p99)} / ${ms(latency.max)} (${latency.n})`;

/** Section 4: small reads alone and beside big commits. */
export function bigCommitLines(result: BigCommitResult): string[] {
  const { docs, commits, writers } = bigCommitSettings;
  return [
    `Small reads beside big commits (${commits} commits of ${docs} documents, ${mib(result.requestBytes)} each (${(result.requestBytes / 2 ** 20).toFixed(1)} MiB), from ${writers} clients)`,
    renderTable(
      ['reads of one small document', 'p50 / p99 / max ms (reads)', 'longest event-loop block ms'],
      [
        ['alone', readCell(result.alone), ms(result.alone.longestBlock)],
        ['while the big commits run', readCell(result.during), ms(result.during.longestBlock)],
      ],
    ),
    `big commit p50 ${ms(result.bigCommitMs.p50)} ms, max ${ms(result.bigCommitMs.max)} ms; read p99 during÷alone ${(result.during.p99 / result.alone.p99).toFixed(1)} (target: no read waits behind a whole big commit; the longest block well under one commit's time)`,
  ];
}

/** Issue 19's write-path targets, each ratio beside its goal. */
function targetLines(hearth: TargetResult | undefined, peer: TargetResult | undefined, baselineRates: BaselineRates): string[] {
  const ratio = (x: number | undefined, y: number | undefined) => (x !== undefined && y !== undefined && y > 0 ? x / y : undefined);
  const line = (what: string, value: number | undefined, goal: number) =>
    `  ${what.padEnd(52)} ${value === undefined ? '—' : value.toFixed(3)}  (target ≥ ${goal}${value === undefined ? '' : value >= goal ? ', met' : ', not met'})`;
  const rate = (result: TargetResult | undefined, key: string) => result?.commits.get(key)?.perSecond;
  const loadedBy = (result: TargetResult | undefined) => new Set((result?.sizes ?? []).filter((size) => size.load?.complete).map((size) => size.size));
  const both = [...loadedBy(hearth)].filter((size) => loadedBy(peer).has(size));
  const loadRate = (result: TargetResult | undefined) => {
    const loads = (result?.sizes ?? []).flatMap((size) => (size.load && both.includes(size.size) ? [size.load] : []));
    const docs = loads.reduce((sum, load) => sum + load.docs, 0);
    const secs = loads.reduce((sum, load) => sum + load.seconds, 0);
    return secs > 0 ? docs / secs : undefined;
  };
  return [
    'Targets (issue 19):',
    line('1-write commit, 1 client: Hearth÷raw SQLite', ratio(rate(hearth, '1x1'), baselineRates.raw.get('1')?.perSecond), 0.5),
    line(`100-write commits, ${settings.clients} clients: Hearth÷raw SQLite`, ratio(rate(hearth, `100x${settings.clients}`), baselineRates.raw.get('100')?.perSecond), 0.5),
    line('1-write commit, 1 client: Hearth÷raw+index (context)', ratio(rate(hearth, '1x1'), baselineRates.rawIndexed.get('1')?.perSecond), 0.5),
    line(`100-write commits, ${settings.clients} clients: Hearth÷raw+index (context)`, ratio(rate(hearth, `100x${settings.clients}`), baselineRates.rawIndexed.get('100')?.perSecond), 0.5),
    line(`100-write commits, ${settings.clients} clients: Hearth÷emulator`, ratio(rate(hearth, `100x${settings.clients}`), rate(peer, `100x${settings.clients}`)), 5),
    line(`bulk load (${both.map(count).join(' + ') || 'no size loaded by both'}): Hearth÷emulator`, ratio(loadRate(hearth), loadRate(peer)), 5),
  ];
}
