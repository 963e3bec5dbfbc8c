/**
 * Differential test of Firestore Security Rules: the same ruleset is loaded into Google's official emulator (the
 * oracle) and into Hearth (in-process, --dev), the same seed written to both as the administrator, and the same
 * requests sent to both as the same users (unsigned ID tokens); every answer's status must agree (allowed, 403
 * PERMISSION_DENIED, or 404/409/400 when the rules allowed a request that fails for another reason), and what an
 * allowed read returned too. Three parts: a corpus of realistic rulesets with hand-written requests
 * (tests/helpers/rules-corpus-*.ts), rulesets the emulator must refuse to compile, and random rulesets with random
 * requests (tests/helpers/rules-random.ts).
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 * Knobs: RULES_DIFF_SEED=N replays a random run (without it CI runs a fixed seed, so a red run is a change in
 * Hearth, not a new draw; RULES_DIFF_SEED=random draws a new seed, printed in the test's name, to explore);
 * RULES_DIFF_CASES=N sets its size (600 random requests by default, spread over rulesets of 40);
 * RULES_DIFF_SUBJECT=emulator compares a second emulator instead of Hearth, to check the harness and the emulator's
 * determinism; RULES_DIFF_VERBOSE=1 prints every case with the emulator's answer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findCloudSdkWithFirestoreEmulator } from '../helpers/firestore-emulator.js';
import { accessCorpus } from '../helpers/rules-corpus-access.js';
import { edgesCorpus } from '../helpers/rules-corpus-edges.js';
import { validationCorpus } from '../helpers/rules-corpus-validation.js';
import { brokenRulesets, compilationMismatch } from '../helpers/rules-compile.js';
import { randomRulesets } from '../helpers/rules-random.js';
import { on, loadRules, useRulesServers, type RulesServers } from '../helpers/rules-servers.js';
import { kindOf, listResults, reportDifferences, shrinkDifference } from '../helpers/rules-report.js';
import { emptySummary, runRulesets, type Difference, type Explanation, type RunSummary } from '../helpers/rules-run.js';

const skipWithoutEmulator = !findCloudSdkWithFirestoreEmulator() && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator; .ci/run installs them)';

/** A seed whose run covers every request shape (checked below); explore others with RULES_DIFF_SEED=random. */
const defaultSeed = 1541872828;
const randomSeed = process.env.RULES_DIFF_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.RULES_DIFF_SEED ?? defaultSeed);
const randomCases = Number(process.env.RULES_DIFF_CASES ?? 600);

/**
 * Differences that are not bugs, each with its reason. Keep every entry narrow: it silences exactly the case it
 * names.
 */
const explanations: Explanation[] = [
  {
    reason:
      'an invalid query (an equality on __name__ beside an inequality on another field) is refused with 400 by Hearth before any rule runs; ' +
      'the emulator runs the rules first for this one check and answers 403 when they refuse. Both refuse; Hearth judges no rule for a query it would not run.',
    matches: (difference) =>
      (difference.rulesCase.operation.kind === 'query' || difference.rulesCase.operation.kind === 'count') &&
      /^403 /.test(difference.oracle.outcome) &&
      /^400 /.test(difference.subject.outcome) &&
      difference.subject.messages.some((message) => message.startsWith('Equality on key is not allowed if there are other inequality fields')),
  },
];

function summarize(label: string, summary: RunSummary): string {
  return `${label}: ${summary.rulesets} ruleset(s), ${summary.cases} case(s): ${summary.allowed} allowed, ${summary.denied} denied, ${summary.other} otherwise refused at the emulator; ${summary.differences.length} difference(s), ${summary.differences.filter((d) => d.explained).length} explained`;
}

const verbose = process.env.RULES_DIFF_VERBOSE === '1';

/** Kinds of difference whose first case is shrunk before the report (each shrink costs up to 60 small runs). */
const kindsShrunk = 4;

async function assertAgreement(summary: RunSummary, projectPrefix: string): Promise<void> {
  if (verbose) console.log(listResults(summary.results));
  assert.deepEqual(summary.loadDifferences, [], `rulesets loaded by one server and refused by the other:\n${summary.loadDifferences.join('\n\n')}`);
  const unexplained = summary.differences.filter((difference) => !difference.explained);
  if (unexplained.length === 0) return;
  const firstOfKind = new Map<string, Difference>();
  for (const difference of unexplained) if (!firstOfKind.has(kindOf(difference))) firstOfKind.set(kindOf(difference), difference);
  const shrunk = new Map<Difference, Difference>();
  await Promise.all(
    [...firstOfKind.values()].slice(0, kindsShrunk).map(async (difference, index) => shrunk.set(difference, await shrinkDifference(servers, difference, `${projectPrefix}-shrink-${index}`))),
  );
  const reported = unexplained.map((difference) => shrunk.get(difference) ?? difference);
  assert.fail(reportDifferences(reported, servers.subject.label));
}

let servers: RulesServers;

describe('Firestore Security Rules: Hearth judges requests like the official emulator', { skip: skipWithoutEmulator }, () => {
  servers = useRulesServers();

  test('the corpus of realistic rulesets', async (t) => {
    const corpus = [...accessCorpus, ...validationCorpus(new Date()), ...edgesCorpus];
    const summary = await runRulesets(servers, corpus, 'demo-corpus', explanations);
    t.diagnostic(summarize('corpus', summary));
    for (const explained of summary.differences.filter((d) => d.explained)) t.diagnostic(`explained: ruleset "${explained.ruleset.name}" case #${explained.index}: ${explained.explained}`);
    await assertAgreement(summary, 'demo-corpus');
    assert.equal(summary.rulesets, corpus.length, 'every corpus ruleset loads');
  });

  test('broken rulesets are refused alike: 400, "Error compiling rules:\\nL<line>:<col> <message>", same line', async () => {
    const mismatches: string[] = [];
    for (const [index, broken] of brokenRulesets.entries()) {
      const projectId = `demo-broken-${index}`;
      const [fromOracle, fromSubject] = await Promise.all([loadRules(on(servers.oracle, projectId), broken.rules), loadRules(on(servers.subject, projectId), broken.rules)]);
      const mismatch = compilationMismatch(broken, fromOracle, fromSubject, servers.subject.label);
      if (mismatch) mismatches.push(mismatch);
    }
    assert.deepEqual(mismatches, []);
  });

  test(`random rulesets and requests (RULES_DIFF_SEED=${randomSeed} RULES_DIFF_CASES=${randomCases})`, async (t) => {
    const rulesets = randomRulesets(randomSeed, randomCases);
    const summary = await runRulesets(servers, rulesets, `demo-random-${randomSeed}`, explanations, emptySummary());
    t.diagnostic(summarize(`random (RULES_DIFF_SEED=${randomSeed})`, summary));
    await assertAgreement(summary, `demo-random-${randomSeed}`);
    // Guards the generator's balance; a small RULES_DIFF_CASES run is too few to judge it.
    if (summary.cases >= 200) assert.ok(summary.allowed > summary.cases / 10 && summary.denied > summary.cases / 10, `the random requests should be neither all allowed nor all denied: ${summarize('random', summary)}`);
  });
});

test('the random requests cover every kind of request, write, query shape and caller', () => {
  // Guards the generator: a change that stopped producing some shape would silently weaken the random test.
  const cases = randomRulesets(randomSeed, randomCases).flatMap((ruleset) => ruleset.cases);
  const seen = new Set<string>();
  for (const { caller, operation } of cases) {
    seen.add(`caller ${caller ?? 'none'}`);
    seen.add(operation.kind);
    if (operation.kind === 'commit' || operation.kind === 'transaction') {
      for (const write of operation.writes) seen.add(`write ${write.op}${write.serverTimestamps ? ' serverTimestamp' : ''}${write.increments ? ' increment' : ''}`);
      if (operation.writes.length > 1) seen.add('multi-write');
    }
    if (operation.kind === 'query' || operation.kind === 'count') {
      const { query } = operation;
      seen.add(query.group ? 'group query' : query.parent ? 'subcollection query' : 'collection query');
      for (const [field, op] of query.where ?? []) seen.add(field === '__name__' ? 'filter __name__' : `filter ${op}`);
      if (query.or) seen.add('or query');
      if (query.orderBy) seen.add('orderBy');
      if (query.limit !== undefined) seen.add('limit');
    }
  }
  const expected = [
    ...['none', 'alice', 'bob', 'carol', 'dave', 'anon', 'mallory'].map((caller) => `caller ${caller}`),
    'get', 'batchGet', 'query', 'count', 'commit', 'transaction', 'multi-write',
    'write create', 'write update', 'write set', 'write merge', 'write delete', 'write create serverTimestamp', 'write update increment',
    'collection query', 'subcollection query', 'group query', 'orderBy', 'limit', 'or query', 'filter __name__',
    ...['EQUAL', 'NOT_EQUAL', 'IN', 'NOT_IN', 'ARRAY_CONTAINS', 'ARRAY_CONTAINS_ANY', 'LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL'].map((op) => `filter ${op}`),
  ];
  assert.deepEqual(expected.filter((shape) => !seen.has(shape)), [], `RULES_DIFF_SEED=${randomSeed} RULES_DIFF_CASES=${randomCases}`);
});
