/**
 * Differential test of the Cloud Firestore v1 REST API, the documents: the same seeded random requests go to
 * Google's official emulator (the oracle) and to Hearth (in-process, --dev), and the answers must agree: batchGet
 * and GET (with masks, of present and missing documents), and commits with transforms and preconditions (the
 * commit's answer, then the document it left).
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 * Knobs: FIRESTORE_DIFF_SEEDS=1,2,3 picks the seeds (a failure prints its seed);
 * FIRESTORE_DIFF_SUBJECT=emulator compares a second emulator instead of Hearth, to check the harness and the
 * emulator's determinism. The servers and requests are in tests/helpers/firestore-differential.ts, the canonical
 * forms compared in tests/helpers/firestore-differential-compare.ts.
 */
import { describe, test } from 'node:test';
import {
  both,
  context,
  databaseRoot,
  datasets,
  forEachConcurrently,
  oracleServer,
  rngFor,
  runTransformCase,
  seeds,
  skipWithoutEmulator,
  subject,
  transformCasesPerSeed,
  useDifferentialServers,
} from '../helpers/firestore-differential.js';
import {
  assertNoMismatches,
  canonicalBatchGet,
  canonicalCommit,
  canonicalGet,
  compareAnswers,
  sortBySeedAndIndex,
  type Mismatch,
} from '../helpers/firestore-differential-compare.js';
import { randomTransformCase } from '../helpers/random-firestore.js';

describe('Firestore REST: Hearth answers like the official emulator', { skip: skipWithoutEmulator }, () => {
  useDifferentialServers();

  test('batchGet and GET return the same documents', async () => {
    const mismatches: Mismatch[] = [];
    for (const seed of seeds) {
      const dataset = datasets.get(seed)!;
      const rng = rngFor(seed, 'reads');
      const names = () => [
        ...rng.sample(dataset.documents, rng.between(1, 10)).map((doc) => doc.name),
        ...rng.sample(['nope', 'd99', 'A/sub/x'], rng.between(0, 2)).map((id) => `${dataset.parent}/${dataset.collectionId}/${id}`),
      ];
      const masks = () => (rng.chance(0.3) ? { mask: { fieldPaths: rng.sample(['a', 'm.x', 'tags', 'zz'], rng.between(1, 3)) } } : {});
      for (let index = 0; index < 6; index++) {
        const request = { documents: names(), ...masks() };
        const [fromOracle, fromSubject] = await both('POST', `${databaseRoot}:batchGet`, request);
        const mismatch = compareAnswers({ seed, what: `batchGet #${index}`, request }, fromOracle, fromSubject, (answer) => canonicalBatchGet(answer, context));
        if (mismatch) mismatches.push(mismatch);
      }
      for (const name of names()) {
        const mask = masks().mask?.fieldPaths.map((path) => `mask.fieldPaths=${encodeURIComponent(path)}`).join('&');
        const path = `${name}${mask ? `?${mask}` : ''}`;
        const [fromOracle, fromSubject] = await both('GET', path);
        const mismatch = compareAnswers({ seed, what: 'GET', request: `GET /v1/${path}` }, fromOracle, fromSubject, (answer) => canonicalGet(answer, context));
        if (mismatch) mismatches.push(mismatch);
      }
    }
    assertNoMismatches(subject, mismatches);
  });

  test('commits with transforms and preconditions give the same results and documents', async (t) => {
    const mismatches: Mismatch[] = [];
    let committed = 0;
    const transformContext = { ...context, maskRequestTimes: true };
    for (const seed of seeds) {
      const rng = rngFor(seed, 'transforms');
      const cases = Array.from({ length: transformCasesPerSeed }, (_, index) => randomTransformCase(rng, `${databaseRoot}/transforms${seed}/t${index}`, databaseRoot));
      // Each case has a document of its own, so they can run side by side.
      await forEachConcurrently(cases, async (testCase, index) => {
        const [fromOracle, fromSubject] = await Promise.all([runTransformCase(oracleServer, testCase), runTransformCase(subject, testCase)]);
        if (fromOracle.commit.status === 200) committed++;
        const where = { seed, what: `transform case #${index}`, request: { ...testCase, write: fromOracle.write } };
        const mismatch =
          compareAnswers(where, fromOracle.commit, fromSubject.commit, (answer) => canonicalCommit(answer, transformContext)) ??
          compareAnswers({ ...where, what: `${where.what}, the document after the commit` }, fromOracle.document, fromSubject.document, (answer) => canonicalGet(answer, transformContext));
        if (mismatch) mismatches.push(mismatch);
      });
    }
    sortBySeedAndIndex(mismatches);
    t.diagnostic(`${committed} of ${seeds.length * transformCasesPerSeed} commits succeeded on the emulator; the others were refused by a precondition or a transform`);
    assertNoMismatches(subject, mismatches);
  });
});
