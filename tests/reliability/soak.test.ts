/**
 * The short form of `npm run soak`: a few kill -9 cycles under concurrent writers (document batches,
 * sign-ups, reset mails); every acknowledged write survives, no batch is half applied, and every
 * acknowledged mail reaches the SMTP server.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runKillCycles } from '../helpers/soak-cycles.js';

test('kill -9 cycles lose no acknowledged batch, account or mail, and apply no batch by halves', async () => {
  const report = await runKillCycles({ cycles: 3, writersPerKind: 2, maxRunMs: 1200, log: (line) => console.log(line) });
  assert.equal(report.cycles, 3);
  assert.ok(report.acknowledged.batches > 0 && report.acknowledged.accounts > 0, `nothing was acknowledged: ${JSON.stringify(report.acknowledged)}`);
  assert.deepEqual(report.lost, []);
  assert.deepEqual(report.halfApplied, []);
  console.log(`restart to healthy: median ${report.restartMs.median} ms, max ${report.restartMs.max} ms`);
});
