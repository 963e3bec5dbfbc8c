/**
 * The judged scenario: a FriendlyEats-style rating average written by a v2 trigger stays exactly
 * right after 200 concurrent ratings, through a kill -9 of Hearth in the middle of them, with a
 * function that throws on the first try of every event. Each rating is committed with its trigger
 * event in one transaction; events not yet delivered when Hearth dies are delivered by the next
 * start; the function counts each event id once (as functions must, at least once).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, spawnHearth, tempDataDir, type SpawnedHearth } from '../helpers/hearth.js';
import { dropTestDatabase } from '../helpers/test-backend.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');
const project = 'demo-test';
const total = 200;
const ratingOf = (i: number) => (i % 5) + 1;

test('200 concurrent ratings through a kill -9: the average is exact', { timeout: 600_000 }, async () => {
  const dataDir = tempDataDir();
  const port = await freePort();
  const args = ['--dev', '--port', String(port), '--data', dataDir, '--project', project, '--functions', fixture, '--log-level', 'warn'];
  const base = `http://127.0.0.1:${port}/v1/projects/${project}/databases/(default)/documents`;
  let hearth: SpawnedHearth | undefined = await spawnHearth(args);
  let acknowledged = 0;
  let acknowledgedAtKill = 0;
  try {
    // Every rating is written until it is acknowledged (a write cut by the kill is sent again; its id
    // is fixed, so a write that did commit before the kill becomes an update, which raises no create).
    const write = async (i: number) => {
      const deadline = Date.now() + 300_000;
      for (;;) {
        const answer = await fetch(`${base}/restaurants/r1/ratings/x${i}`, {
          method: 'PATCH',
          headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
          body: JSON.stringify({ fields: { rating: { integerValue: String(ratingOf(i)) } } }),
        }).catch(() => undefined);
        if (answer?.ok) {
          // The kill comes the moment the 20th is acknowledged: many more are in flight.
          if (++acknowledged === 20) {
            acknowledgedAtKill = acknowledged;
            hearth!.child.kill('SIGKILL');
          }
          return;
        }
        if (Date.now() > deadline) throw new Error(`rating ${i} was never acknowledged`);
        await new Promise((wake) => setTimeout(wake, 200));
      }
    };
    const writes = Promise.all(Array.from({ length: total }, (_, i) => write(i)));
    while (acknowledgedAtKill === 0) await new Promise((wake) => setTimeout(wake, 5));
    await hearth.stop('SIGKILL');
    hearth = await spawnHearth(args);
    await writes;
    assert.ok(acknowledgedAtKill < total, 'the kill came before the last rating');

    const deadline = Date.now() + 300_000;
    let restaurant: Record<string, { integerValue?: string; doubleValue?: number }> = {};
    for (;;) {
      const answer = await fetch(`${base}/restaurants/r1`, { headers: { authorization: 'Bearer owner' } });
      if (answer.ok) restaurant = ((await answer.json()) as { fields: typeof restaurant }).fields;
      if (restaurant.numRatings?.integerValue === String(total)) break;
      if (Date.now() > deadline) throw new Error(`the ratings were not all counted: ${JSON.stringify(restaurant)}`);
      await new Promise((wake) => setTimeout(wake, 250));
    }
    // Settle: a late redelivery must not count anything twice.
    await new Promise((wake) => setTimeout(wake, 3000));
    const final = ((await (await fetch(`${base}/restaurants/r1`, { headers: { authorization: 'Bearer owner' } })).json()) as { fields: typeof restaurant }).fields;
    const expectedSum = Array.from({ length: total }, (_, i) => ratingOf(i)).reduce((a, b) => a + b, 0);
    assert.equal(final.numRatings?.integerValue, String(total));
    assert.equal(final.sumRatings?.integerValue, String(expectedSum));
    assert.equal(final.avgRating?.doubleValue ?? Number(final.avgRating?.integerValue), expectedSum / total);
    const applied = await fetch(`${base}/restaurants/r1/appliedEvents?pageSize=1000`, { headers: { authorization: 'Bearer owner' } });
    assert.equal(((await applied.json()) as { documents: unknown[] }).documents.length, total, 'one applied event per rating');
  } finally {
    await hearth?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await dropTestDatabase(dataDir);
  }
});
