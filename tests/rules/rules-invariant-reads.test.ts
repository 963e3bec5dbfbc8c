/**
 * The rules invariant on reads (issue 28): every document version that leaves Hearth on a read path is allowed to
 * that caller by the rules in force, judged on that exact version. A generated corpus (tests/helpers/
 * invariant-world.ts: rulesets over owners, visibility flags, levels, claims, get/list split, subcollections and a
 * collection group; documents; four callers with ID tokens Hearth signed, in production mode) runs each round's
 * writes as the administrator; at checkpoints every caller reads on every path, over REST and gRPC (raw, as an
 * attacker would) and through the server SDK: get, batchGet, list, runQuery, count/sum/avg, findNearest,
 * partitionQuery, now, at a past read time, in read-write and read-only transactions (begun apart or inline).
 * Every document answered is judged (tests/helpers/invariant-rules.ts: the judge, itself checked against Hearth's
 * evaluator and Google's emulator by tests/rules/rules-invariant.test.ts); aggregates must cover only documents the
 * caller may list, partition cursors name only such documents, reads at a past time answer that time's version,
 * and a `verify` write about a document the caller may not get is refused whatever the document's state.
 *
 * INVARIANT_SEED=N replays a run (the seed is printed); INVARIANT_SCALE=N runs N times the rounds (soak).
 * HEARTH_TEST_BACKEND=postgres runs it on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AdminSdkReads, adminSdkAs } from '../helpers/invariant-admin-sdk.js';
import { History, Ledger } from '../helpers/invariant-ledger.js';
import { CallerReads, type Consistency } from '../helpers/invariant-reads.js';
import { rulesSource } from '../helpers/invariant-rules.js';
import { commitAsAdmin, releaseRules, startInvariantHearth } from '../helpers/invariant-servers.js';
import { callerNames, corpusSeed, generateCorpus, type CallerName, type QuerySpec, type Round } from '../helpers/invariant-world.js';
import { Random } from '../helpers/random-firestore.js';
import { testBackend } from '../helpers/test-backend.js';

const seed = corpusSeed();
const rounds = generateCorpus(seed);
const ledger = new Ledger(seed);
let hearth: Awaited<ReturnType<typeof startInvariantHearth>>;

/** Checkpoints per round: after these many writes, everyone reads everything. */
const checkpointsPerRound = 3;

describe(`rules invariant on reads (seed ${seed}, ${testBackend}; INVARIANT_SEED=${seed} replays it)`, () => {
  before(async () => {
    hearth = await startInvariantHearth(rounds);
  });
  after(async () => {
    console.log(`rules invariant on reads, ${testBackend}: ${rounds.length} round(s), ${rounds.reduce((n, round) => n + round.seed.size + round.writes.length, 0)} document write(s)\n${ledger.summary()}`);
    await hearth?.close();
  });

  for (const round of rounds) {
    test(`round ${round.index}: every version read on every path is allowed to its reader`, { timeout: 600_000 }, async () => {
      const before = ledger.breaches.length;
      await runRound(round);
      const breaches = ledger.breaches.slice(before);
      const local = new Ledger(seed);
      local.breaches.push(...breaches);
      assert.equal(breaches.length, 0, `round ${round.index} (seed ${seed}):\n${rulesSource(round.rules, round.names)}\n${local.report()}`);
    });
  }
});

async function runRound(round: Round): Promise<void> {
  const rng = new Random(seed ^ (round.index * 7919));
  await releaseRules(hearth, rulesSource(round.rules, round.names));
  const history = new History();
  const seedWrites = [...round.seed].map(([path, data]) => ({ kind: 'set' as const, path, data }));
  const times = [await commitAsAdmin(hearth, seedWrites)];
  history.apply(times[0]!, seedWrites);
  const every = Math.max(1, Math.floor(round.writes.length / checkpointsPerRound));
  for (const [i, write] of round.writes.entries()) {
    const time = await commitAsAdmin(hearth, [write]);
    history.apply(time, [write]);
    times.push(time);
    if ((i + 1) % every !== 0) continue;
    // A moment before the last write: what was true then is what a read at that time must be judged on.
    const past = times[rng.int(times.length - 1)]!;
    for (const caller of callerNames) {
      let answered = new Map<string, boolean>();
      for (const transport of ['rest', 'grpc'] as const) {
        const reads = new CallerReads(hearth, round, caller, transport, ledger, history);
        try {
          await readEverything(reads, round, caller, { kind: 'now' }, rng);
          await readEverything(reads, round, caller, { kind: 'readTime', time: past }, rng);
          await readInTransactions(reads, round, past);
        } finally {
          reads.close();
        }
        if (transport === 'grpc') answered = reads.outcomes;
      }
      await readThroughTheServerSdk(round, caller, history, past, rng, answered);
    }
  }
  for (const caller of callerNames) {
    const reads = new CallerReads(hearth, round, caller, rng.pick(['rest', 'grpc'] as const), ledger, history);
    try {
      for (const path of [...round.documents, `${round.names.posts}/never-written`]) await reads.verify(path);
    } finally {
      reads.close();
    }
  }
}

/** The findNearest queries: over all posts, or with the equalities the vector indexes declare. */
function nearestSpecs(round: Round, caller: CallerName): QuerySpec[] {
  const scope = { kind: 'collection' as const, parent: '', collectionId: round.names.posts };
  return [
    { label: `${round.names.posts}`, scope, filters: [] },
    { label: `${round.names.posts} where visibility == "public"`, scope, filters: [{ field: 'visibility', op: '==', value: 'public' }] },
    { label: `${round.names.posts} where owner == "${caller}"`, scope, filters: [{ field: 'owner', op: '==', value: caller }] },
  ];
}

async function readEverything(reads: CallerReads, round: Round, caller: CallerName, consistency: Consistency, rng: Random): Promise<void> {
  for (const path of round.documents) await reads.get(path, consistency);
  // A batch is refused whole when one document is: each alone, and all together.
  for (const path of round.documents) await reads.batchGet([path], consistency);
  await reads.batchGet(round.documents, consistency);
  await reads.list('', round.names.posts, consistency);
  await reads.list(`${round.names.users}/${rng.pick(callerNames.filter((name) => name !== 'anonymous'))}`, round.names.notes, consistency);
  for (const spec of round.queries) {
    await reads.runQuery(spec, consistency);
    await reads.aggregate(spec, consistency);
  }
  for (const spec of nearestSpecs(round, caller)) await reads.findNearest(spec, [rng.int(10), rng.int(10)], consistency);
  await reads.partition(consistency);
}

async function readInTransactions(reads: CallerReads, round: Round, past: number): Promise<void> {
  const readWrite = await reads.begin();
  if (readWrite) {
    const inside: Consistency = { kind: 'transaction', id: readWrite };
    await reads.batchGet(round.documents, inside);
    for (const spec of round.queries.slice(0, 4)) await reads.runQuery(spec, inside);
    await reads.rollback(readWrite);
  }
  const readOnly = await reads.begin(past);
  if (readOnly) {
    const inside: Consistency = { kind: 'transaction', id: readOnly, readOnlyAt: past };
    await reads.batchGet(round.documents, inside);
    for (const spec of round.queries) {
      await reads.runQuery(spec, inside);
      await reads.aggregate(spec, inside);
    }
  }
  const inline: Consistency = { kind: 'newReadOnly', time: past };
  await reads.batchGet(round.documents, inline);
  for (const spec of round.queries) {
    await reads.runQuery(spec, inline);
    await reads.aggregate(spec, inline);
  }
}

async function readThroughTheServerSdk(round: Round, caller: CallerName, history: History, past: number, rng: Random, answered: ReadonlyMap<string, boolean>): Promise<void> {
  const db = adminSdkAs(hearth, caller);
  const checks = new CallerReads(hearth, round, caller, 'sdk:admin-grpc', ledger, history);
  const sdk = new AdminSdkReads(db, checks, answered);
  try {
    await sdk.now(round.queries, round.documents);
    for (const spec of nearestSpecs(round, caller)) await sdk.findNearest(spec, [rng.int(10), rng.int(10)]);
    await sdk.partitions(round.names.notes);
    await sdk.readOnlyAt(past, round.queries, round.documents);
  } finally {
    checks.close();
    await db.terminate();
  }
}
