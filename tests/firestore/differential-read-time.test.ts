/**
 * Point-in-time reads (`readTime`), differential against Google's official Firestore emulator: the same commits go
 * to both servers (creates, updates that move documents in and out of a filter, deletes, re-creations, transforms,
 * documents in subcollections), each server's own commit times are noted, and then every read is asked again at
 * each of those times (and just before each), on each server at its own times:
 *  - REST batchGet, runQuery (a filter, an order with a limit and an offset, a cursor, a collection group) and
 *    runAggregationQuery (count, sum), with `readTime`, with `newTransaction: {readOnly: {readTime}}`, and inside a
 *    transaction begun with `beginTransaction {readOnly: {readTime}}`;
 *  - firebase-admin (gRPC) `runTransaction(fn, { readOnly: true, readTime })` reading a document, `getAll`, a query
 *    and a count.
 * Answers are compared with every time replaced by the number of the commit that made it (so createTime and
 * updateTime of the versions read, and the answer's readTime, must match too). Refusals of read times in the
 * future, before the epoch and too old (8 days) are compared with Google's status and message. Not compared: a
 * read time between one hour and 7 days old, which the emulator answers (it keeps everything) and Hearth refuses
 * as too old, as production Firestore does past its one-hour retention (tests/firestore/read-time.test.ts).
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Timestamp, type Firestore } from 'firebase-admin/firestore';
import { errorOf, pairRoot, rest, startOraclePair, type OraclePair, type PairSide } from '../helpers/firestore-oracle-pair.js';
import { within } from '../helpers/firestore-target.js';

const pair: OraclePair | undefined = await startOraclePair();
const skip = !pair && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator; .ci/run installs them)';

const run = Date.now().toString(36);
const collection = `pit-${run}`;
const int = (n: number) => ({ integerValue: String(n) });
const name = (path: string) => `${pairRoot}/${collection}/${path}`;
const set = (path: string, fields: Record<string, unknown>) => ({ update: { name: name(path), fields } });

/** The commits, in order: each changes which documents exist, their values, or both. */
const steps: Array<Record<string, unknown>[]> = [
  [set('a', { v: int(1), tag: { stringValue: 'x' } }), set('b', { v: int(2) })],
  [set('c', { v: int(3) }), set('a/sub/s1', { v: int(5) })],
  [{ update: { name: name('a'), fields: { v: int(4) } }, updateMask: { fieldPaths: ['v'] } }],
  [{ delete: name('b') }],
  [set('d', { v: int(0) }), { transform: { document: name('c'), fieldTransforms: [{ fieldPath: 'v', increment: int(10) }] } }],
  [set('b', { v: int(7) }), { delete: name('a/sub/s1') }],
  [{ delete: name('a') }, set('c/sub/s2', { v: int(1) })],
  [set('a', { v: int(2) }), { update: { name: name('d'), fields: { v: int(9) } }, currentDocument: { exists: true } }],
];

const everyName = ['a', 'b', 'c', 'd', 'e', 'a/sub/s1', 'c/sub/s2'].map(name);
const query = (structuredQuery: Record<string, unknown>) => ({ structuredQuery: { from: [{ collectionId: collection }], ...structuredQuery } });
const field = (fieldPath: string) => ({ fieldPath });
const queries: Array<[string, Record<string, unknown>]> = [
  ['all', query({})],
  ['v >= 2', query({ where: { fieldFilter: { field: field('v'), op: 'GREATER_THAN_OR_EQUAL', value: int(2) } } })],
  ['v desc, limit 2, offset 1', query({ orderBy: [{ field: field('v'), direction: 'DESCENDING' }], limit: 2, offset: 1 })],
  ['startAfter v 2', query({ orderBy: [{ field: field('v') }], startAt: { values: [int(2)], before: false } })],
  ['group sub', { structuredQuery: { from: [{ collectionId: 'sub', allDescendants: true }] } }],
];
const aggregation = {
  structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: collection }] }, aggregations: [{ alias: 'n', count: {} }, { alias: 'total', sum: { field: field('v') } }] },
};

interface SideRun {
  side: PairSide;
  /** The commit time of each step, as that server gave it (RFC 3339). */
  times: string[];
}

/** Microseconds of an RFC 3339 time with up to 9 fraction digits. */
function micros(time: string): bigint {
  const match = /^(.*?)(?:\.(\d+))?Z$/.exec(time)!;
  return BigInt(Date.parse(`${match[1]}Z`)) * 1000n + BigInt((match[2] ?? '').padEnd(6, '0').slice(0, 6));
}

function rfc3339(us: bigint): string {
  const seconds = new Date(Number(us / 1000000n) * 1000).toISOString().slice(0, 19);
  return `${seconds}.${String(us % 1000000n).padStart(6, '0')}Z`;
}

/**
 * Left out of comparisons: transaction ids (random), and skippedResults, which the emulator sometimes leaves out
 * (an offset of 1 with one result after it: none; with two: on the first) where Hearth always counts the skip.
 */
const leftOut = new Set(['transaction', 'skippedResults']);

/**
 * Every RFC 3339 time in an answer replaced by the step whose commit made it ("t3"), or "t3-" just before it; keys
 * sorted, and `leftOut` left out.
 */
function stepsFor(value: unknown, times: string[]): unknown {
  const byMicros = new Map(times.map((time, i) => [micros(time), `t${i}`]));
  const replace = (node: unknown): unknown => {
    if (typeof node === 'string' && /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(node)) {
      const us = micros(node);
      return byMicros.get(us) ?? (byMicros.has(us + 1n) ? `${byMicros.get(us + 1n)}-` : `time ${node}`);
    }
    if (Array.isArray(node)) return node.map(replace);
    // Keys sorted: the emulator keeps fields in the order written, Hearth by name (as production does).
    if (node && typeof node === 'object') {
      const entries = Object.entries(node).filter(([key]) => !leftOut.has(key));
      return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, inner]) => [key, replace(inner)]));
    }
    return node;
  };
  return replace(value);
}

describe('point-in-time reads answer as Google does, at every commit of a history', { skip }, () => {
  const runs: SideRun[] = [];

  before(async () => {
    for (const side of pair!.sides) {
      const times: string[] = [];
      for (const writes of steps) {
        const answer = await rest(side, 'POST', `${pairRoot}:commit`, { writes });
        assert.equal(answer.status, 200, `${side.label}: ${JSON.stringify(answer.body)}`);
        times.push(answer.body.commitTime);
      }
      runs.push({ side, times });
    }
  });

  after(async () => {
    await pair?.close();
  });

  /** Each read at each step's time and just before it, on both servers, in the step form. */
  async function compareAtEveryStep(read: (side: PairSide, readTime: string) => Promise<unknown>): Promise<number> {
    const problems: string[] = [];
    let compared = 0;
    for (let i = 0; i < steps.length; i++) {
      for (const before of [false, true]) {
        const [fromOracle, fromHearth] = await Promise.all(
          runs.map(async ({ side, times }) => stepsFor(await read(side, before ? rfc3339(micros(times[i]!) - 1n) : times[i]!), times)),
        );
        compared++;
        if (JSON.stringify(fromOracle) !== JSON.stringify(fromHearth)) problems.push(`at t${i}${before ? '-' : ''}:\n  emulator ${JSON.stringify(fromOracle)}\n  Hearth   ${JSON.stringify(fromHearth)}`);
      }
    }
    assert.deepEqual(problems, []);
    return compared;
  }

  const answerOf = (response: { status: number; body: unknown }) => (response.status === 200 ? response.body : errorOf(response as Parameters<typeof errorOf>[0]));

  test('batchGet, runQuery and runAggregationQuery with readTime', async () => {
    await compareAtEveryStep(async (side, readTime) => answerOf(await rest(side, 'POST', `${pairRoot}:batchGet`, { documents: everyName, readTime })));
    for (const [label, body] of queries) {
      await compareAtEveryStep(async (side, readTime) => ({ [label]: answerOf(await rest(side, 'POST', `${pairRoot}:runQuery`, { ...body, readTime })) }));
    }
    await compareAtEveryStep(async (side, readTime) => answerOf(await rest(side, 'POST', `${pairRoot}:runAggregationQuery`, { ...aggregation, readTime })));
    // The history is not trivial: the first and last states differ.
    const [{ side, times }] = runs;
    const at = async (time: string) => JSON.stringify(stepsFor((await rest(side!, 'POST', `${pairRoot}:runQuery`, { ...queries[0]![1], readTime: time })).body, times!));
    assert.notEqual(await at(times![0]!), await at(times![times!.length - 1]!));
  });

  test('read-only transactions at a read time: newTransaction and beginTransaction', async () => {
    await compareAtEveryStep(async (side, readTime) => {
      const batch = answerOf(await rest(side, 'POST', `${pairRoot}:batchGet`, { documents: everyName, newTransaction: { readOnly: { readTime } } }));
      const begun = await rest(side, 'POST', `${pairRoot}:beginTransaction`, { options: { readOnly: { readTime } } });
      if (begun.status !== 200) return { batch, begun: errorOf(begun) };
      const { transaction } = begun.body;
      const inside = answerOf(await rest(side, 'POST', `${pairRoot}:runQuery`, { ...queries[1]![1], transaction }));
      const counted = answerOf(await rest(side, 'POST', `${pairRoot}:runAggregationQuery`, { ...aggregation, transaction }));
      await rest(side, 'POST', `${pairRoot}:rollback`, { transaction });
      // The transaction's answers keep its read time even after later commits.
      return { batch, inside, counted };
    });
  });

  test('firebase-admin: runTransaction({ readOnly: true, readTime }) reads documents, queries and counts as they were', async () => {
    const read = async (side: PairSide, readTime: string) => {
      const db: Firestore = side.admin();
      const us = micros(readTime);
      const at = new Timestamp(Number(us / 1000000n), Number(us % 1000000n) * 1000);
      const coll = db.collection(collection);
      return within(
        db.runTransaction(
          async (transaction) => {
            const one = await transaction.get(coll.doc('a'));
            const all = await transaction.getAll(...['a', 'b', 'c', 'd'].map((id) => coll.doc(id)));
            const ordered = await transaction.get(coll.orderBy('v', 'desc'));
            const counted = await transaction.get(coll.where('v', '>=', 2).count());
            return {
              one: one.exists ? { data: one.data(), updateTime: rfc3339(BigInt(one.updateTime!.seconds) * 1000000n + BigInt(Math.floor(one.updateTime!.nanoseconds / 1000))) } : 'missing',
              all: all.map((snapshot) => (snapshot.exists ? snapshot.data() : null)),
              ordered: ordered.docs.map((doc) => [doc.id, doc.data()]),
              count: counted.data().count,
            };
          },
          { readOnly: true, readTime: at },
        ),
        `${side.label}: read-only transaction at ${readTime}`,
      );
    };
    const compared = await compareAtEveryStep(read);
    assert.equal(compared, steps.length * 2);
  });

  test('read times in the future, at or before the epoch, or older than any history are refused as Google refuses them', async () => {
    const now = Date.now();
    const readTimes: Array<[string, string]> = [
      ['a minute ahead', new Date(now + 60_000).toISOString()],
      ['the epoch', '1970-01-01T00:00:00Z'],
      ['year 1', '0001-01-01T00:00:00Z'],
      ['8 days ago, a whole minute', new Date(Math.floor((now - 8 * 86400_000) / 60_000) * 60_000).toISOString()],
    ];
    const problems: string[] = [];
    for (const [label, readTime] of readTimes) {
      const requests: Array<[string, string, Record<string, unknown>]> = [
        ['batchGet', `${pairRoot}:batchGet`, { documents: everyName, readTime }],
        ['runQuery', `${pairRoot}:runQuery`, { ...queries[0]![1], readTime }],
        ['runAggregationQuery', `${pairRoot}:runAggregationQuery`, { ...aggregation, readTime }],
        ['beginTransaction', `${pairRoot}:beginTransaction`, { options: { readOnly: { readTime } } }],
      ];
      for (const [verb, path, body] of requests) {
        const [fromOracle, fromHearth] = await Promise.all(pair!.sides.map(async (side) => errorOf(await rest(side, 'POST', path, body))));
        if (!fromOracle) problems.push(`${verb} at ${label}: the emulator answered (the case tests nothing)`);
        if (fromOracle !== fromHearth) problems.push(`${verb} at ${label}:\n  emulator ${fromOracle ?? 'OK'}\n  Hearth   ${fromHearth ?? 'OK'}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
