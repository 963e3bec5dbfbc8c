/**
 * `npm run bench -- past-reads`: what a query at a past readTime costs beside the same query now
 * (issue 36, item 3). HEARTH_BENCH_PAST_SIZE documents (100,000) are written through REST :commit,
 * a read time T is taken, then HEARTH_BENCH_PAST_CHANGES of them (200) are updated after T, so the
 * indexes no longer hold T's state. Each query (20 results: by name; an equality; an order on a
 * field) is asked through REST :runQuery now and at T, HEARTH_BENCH_PAST_QUERIES times each (7),
 * alternating; the answers at T are checked against what the documents were at T.
 */
import { envCount, machineLine, progress } from './env.js';
import { documentsApi, startBenchHearth } from './hearth-setup.js';
import { ms, percentile, renderTable } from './stats.js';

const size = envCount('HEARTH_BENCH_PAST_SIZE', 100_000);
const changes = envCount('HEARTH_BENCH_PAST_CHANGES', 200);
const repeats = envCount('HEARTH_BENCH_PAST_QUERIES', 7);
const loadBatch = 500;
const idOf = (i: number) => `d${String(i).padStart(7, '0')}`;

export async function runPastReadsBench(): Promise<void> {
  console.log(`Past-time queries: 20 results over ${size} documents at a readTime with ${changes} documents changed since, beside the same query now`);
  console.log(`${machineLine()}; ${repeats} queries of each, alternating`);
  const target = await startBenchHearth();
  const rows: string[][] = [];
  try {
    const { root, call } = documentsApi(target);
    const fields = (i: number, round: number) => ({ n: { integerValue: String(i) }, cat: { integerValue: String(i % 10) }, round: { integerValue: String(round) } });
    progress(`loading ${size} documents`);
    let readTime = '';
    for (let start = 0; start < size; start += loadBatch) {
      const writes = [];
      for (let i = start; i < Math.min(size, start + loadBatch); i++) writes.push({ update: { name: `${root}/items/${idOf(i)}`, fields: fields(i, 0) } });
      readTime = ((await call('commit', { writes })) as { commitTime: string }).commitTime;
    }
    // After T: the first documents by name and by n move to the end of the order on n, and change round.
    for (let i = 0; i < changes; i++) await call('commit', { writes: [{ update: { name: `${root}/items/${idOf(i)}`, fields: { ...fields(i, 1), n: { integerValue: String(size + i) } } } }] });
    const queries: Array<[string, Record<string, unknown>, (id: number) => boolean]> = [
      ['by name', {}, () => true],
      ['cat == 3', { where: { fieldFilter: { field: { fieldPath: 'cat' }, op: 'EQUAL', value: { integerValue: '3' } } } }, (i) => i % 10 === 3],
      ['order by n', { orderBy: [{ field: { fieldPath: 'n' }, direction: 'ASCENDING' }] }, () => true],
    ];
    for (const [label, shape, wanted] of queries) {
      progress(label);
      const now: number[] = [];
      const past: number[] = [];
      const expected = Array.from({ length: size }, (_, i) => i).filter(wanted).slice(0, 20).map(idOf).join();
      for (let q = 0; q < repeats; q++) {
        for (const [times, extra] of [[now, {}], [past, { readTime }]] as const) {
          const started = performance.now();
          const answer = (await call('runQuery', { structuredQuery: { from: [{ collectionId: 'items' }], ...shape, limit: 20 }, ...extra })) as Array<{ document?: { name: string } }>;
          times.push(performance.now() - started);
          const ids = answer.filter((a) => a.document).map((a) => a.document!.name.split('/').pop()).join();
          if (times === past && ids !== expected) throw new Error(`${label} at T answered ${ids}, not ${expected}`);
        }
      }
      now.sort((a, b) => a - b);
      past.sort((a, b) => a - b);
      const nowMedian = percentile(now, 0.5);
      const pastMedian = percentile(past, 0.5);
      rows.push([label, ms(nowMedian), ms(pastMedian), ms(past[past.length - 1]!), (pastMedian / nowMedian).toFixed(1)]);
    }
  } finally {
    await target.close();
  }
  console.log(renderTable(['query (limit 20)', 'now median ms', 'at T median ms', 'at T max ms', 'at T / now'], rows));
  console.log('every answer at T was the 20 documents as they were at T');
}
