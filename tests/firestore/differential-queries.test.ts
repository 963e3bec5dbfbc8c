/**
 * Differential test of the Cloud Firestore v1 REST API, the queries: the same seeded random requests go to Google's
 * official emulator (the oracle) and to Hearth (in-process, --dev), and the answers must agree, order included. Runs
 * random queries with every filter, order, cursor, offset, limit, projection and collection-group shape (a query
 * that differs is shrunk to the smallest that still does), a fixed set of invalid queries (same HTTP status and
 * error.status), and aggregations; and checks that the generator produces every shape.
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 * Knobs: FIRESTORE_DIFF_SEEDS=1,2,3 picks the seeds (a failure prints its seed);
 * FIRESTORE_DIFF_QUERIES=N sets the random queries per seed; FIRESTORE_DIFF_SUBJECT=emulator compares a second
 * emulator instead of Hearth, to check the harness and the emulator's determinism. The servers and requests are in
 * tests/helpers/firestore-differential.ts, the canonical forms compared in tests/helpers/firestore-differential-compare.ts.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, test } from 'node:test';
import {
  aggregationsPerSeed,
  both,
  call,
  compareQuery,
  context,
  datasets,
  documentFields,
  forEachConcurrently,
  oracleServer,
  queriesPerSeed,
  rngFor,
  runQueryPath,
  seeds,
  shrunk,
  skipWithoutEmulator,
  subject,
  useDifferentialServers,
} from '../helpers/firestore-differential.js';
import {
  assertNoMismatches,
  canonicalAggregateFields,
  canonicalAggregation,
  canonicalError,
  compareAnswers,
  expectedAggregateFields,
  mismatchesShown,
  mismatchesToShow,
  sortBySeedAndIndex,
  type Mismatch,
} from '../helpers/firestore-differential-compare.js';
import { inScope, invalidQueries, randomAggregationCase, randomValidQuery } from '../helpers/random-firestore.js';

describe('Firestore REST: Hearth answers like the official emulator', { skip: skipWithoutEmulator }, () => {
  useDifferentialServers();

  test('random valid queries return the same documents in the same order', async () => {
    const mismatches: Mismatch[] = [];
    const refusedByOracle: Mismatch[] = [];
    for (const seed of seeds) {
      const rng = rngFor(seed, 'queries');
      const queries = Array.from({ length: queriesPerSeed }, () => randomValidQuery(rng, datasets.get(seed)!));
      await forEachConcurrently(queries, async (query, index) => {
        const { oracleStatus, mismatch } = await compareQuery(seed, `query #${index}`, query);
        if (oracleStatus !== 200) refusedByOracle.push({ ...mismatch!, what: `${mismatch!.what}: the emulator refused a query the generator thinks valid` });
        else if (mismatch) mismatches.push(mismatch);
      });
    }
    // A refused "valid" query is a bug in the generator's validity rules, not in the subject.
    assertNoMismatches(oracleServer, sortBySeedAndIndex(refusedByOracle));
    sortBySeedAndIndex(mismatches);
    for (const shown of mismatchesToShow(mismatches, mismatchesShown)) Object.assign(shown, await shrunk(shown));
    assertNoMismatches(subject, mismatches);
  });

  test('invalid queries are refused with the same HTTP status and error.status', async () => {
    const mismatches: Mismatch[] = [];
    const acceptedByOracle: string[] = [];
    const seed = seeds[0]!;
    const dataset = datasets.get(seed)!;
    for (const { description, structuredQuery } of invalidQueries(dataset)) {
      const [fromOracle, fromSubject] = await both('POST', runQueryPath(dataset), { structuredQuery });
      if (fromOracle.status === 200) acceptedByOracle.push(description);
      const mismatch = compareAnswers({ seed, what: description, request: structuredQuery }, fromOracle, fromSubject, (answer) => (answer.status === 200 ? 'accepted' : canonicalError(answer)));
      if (mismatch) mismatches.push(mismatch);
    }
    assert.deepEqual(acceptedByOracle, [], 'the emulator accepted queries listed as invalid');
    assertNoMismatches(subject, mismatches, { showAll: true });
  });

  test('aggregations (count, sum, avg) agree, where the emulator agrees with its own runQuery', async (t) => {
    const mismatches: Mismatch[] = [];
    const distrusted: string[] = [];
    let compared = 0;
    for (const seed of seeds) {
      const dataset = datasets.get(seed)!;
      const rng = rngFor(seed, 'aggregations');
      const cases = Array.from({ length: aggregationsPerSeed }, () => randomAggregationCase(rng, dataset));
      await forEachConcurrently(cases, async ({ structuredQuery, aggregations }, index) => {
        const what = `aggregation #${index}`;
        const request = { structuredAggregationQuery: { structuredQuery, aggregations } };
        const [rows, [fromOracle, fromSubject]] = await Promise.all([
          call(oracleServer, 'POST', runQueryPath(dataset), { structuredQuery }),
          both('POST', `${dataset.parent}:runAggregationQuery`, request),
        ]);
        // The research note saw emulator counts disagree with its runQuery: check its answer before trusting it.
        const expected = rows.status === 200 ? { results: [canonicalAggregateFields(expectedAggregateFields(documentFields(rows), aggregations), context)], problems: [] } : canonicalError(rows);
        const fromEmulator = canonicalAggregation(fromOracle, context);
        if (!isDeepStrictEqual(expected, fromEmulator)) {
          distrusted.push(`seed ${seed} ${what}: ${JSON.stringify(request)}\n  from its runQuery ${JSON.stringify(expected)}, answered ${JSON.stringify(fromEmulator)}`);
        } else {
          compared++;
          const mismatch = compareAnswers({ seed, what, request }, fromOracle, fromSubject, (answer) => canonicalAggregation(answer, context));
          if (mismatch) mismatches.push(mismatch);
        }
      });
    }
    t.diagnostic(`${compared} aggregation(s) compared`);
    if (distrusted.length > 0) t.diagnostic(`${distrusted.length} aggregation(s) not compared, the emulator disagreeing with its own runQuery:\n${distrusted.join('\n')}`);
    assertNoMismatches(subject, sortBySeedAndIndex(mismatches));
  });

  test('the generated queries cover every operator and shape', () => {
    // Guards the generator itself: a change that stops producing some shape would silently weaken the test.
    const text = seeds
      .flatMap((seed) => {
        const rng = rngFor(seed, 'queries');
        return Array.from({ length: queriesPerSeed }, () => JSON.stringify(randomValidQuery(rng, datasets.get(seed)!)));
      })
      .join('\n');
    const shapes = [
      ...['EQUAL', 'NOT_EQUAL', 'LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'ARRAY_CONTAINS', 'IN', 'NOT_IN', 'ARRAY_CONTAINS_ANY'].map((op) => `"op":"${op}"`),
      ...['IS_NULL', 'IS_NAN', 'IS_NOT_NULL', 'IS_NOT_NAN', 'AND', 'OR'].map((op) => `"op":"${op}"`),
      '"DESCENDING"',
      '"fieldPath":"__name__"',
      '"startAt"',
      '"endAt"',
      '"offset"',
      '"limit"',
      '"select"',
      // Collection-group queries run from the root parent only, which even seeds use.
      ...(seeds.some((seed) => seed % 2 === 0) ? ['"allDescendants":true'] : []),
    ];
    assert.deepEqual(
      shapes.filter((shape) => !text.includes(shape)),
      [],
      'shapes no generated query has',
    );
    const dataset = datasets.get(seeds[0]!)!;
    assert.ok(inScope(dataset, true).some((doc) => doc.name.split('/').length > inScope(dataset, false)[0]!.name.split('/').length), 'no documents in subcollections');
  });
});
