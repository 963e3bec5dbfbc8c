/**
 * `node --cpu-prof --import tsx bench/firestore/profile-commits.ts [batch] [clients]` (BENCH_SECONDS),
 * or `… profile-commits.ts big`: one of the bench's commit workloads alone against Hearth in this
 * process, for a CPU profile of the write path.
 */
import { measureBigCommits } from './big-commits.js';
import { measureCommits } from './commits.js';
import { bigCommitLines } from './report.js';
import { startHearthTarget } from './targets.js';

const target = await startHearthTarget();
try {
  if (process.argv[2] === 'big') {
    for (const line of bigCommitLines(await measureBigCommits(target))) console.log(line);
  } else {
    const [batch = 100, clients = 4] = process.argv.slice(2).map(Number);
    const rate = await measureCommits(target, { batch, clients });
    console.log(`${batch} writes/commit, ${clients} clients: ${(rate.perSecond * batch).toFixed(0)} docs/s, p50 ${rate.p50.toFixed(2)} ms, p99 ${rate.p99.toFixed(2)} ms`);
  }
} finally {
  await target.close();
}
