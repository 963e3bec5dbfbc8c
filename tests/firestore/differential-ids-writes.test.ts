/**
 * Differential test of three behaviours where Hearth differed from Google (issue 16), each against Google's official
 * Firestore emulator (the oracle), with the same requests to both servers:
 *  - numeric document ids (`__id7__`, `__id-2__`, Datastore's integer ids) are accepted and sort by their number
 *    before every string id, in lists, queries (name order, field order with ties, equality merges, cursors, name
 *    filters, collection groups, declared composite and collection-group indexes) and listeners; ids Google refuses
 *    (`__id0__`, `__id007__`, out of the int64 range, any `__x__`, numeric collection ids) are refused with its
 *    messages, in document names, reference values and queries;
 *  - a query on a collection under a reserved id (`a/__badpath__/b`) is refused like a write, whether listened to
 *    (firebase-admin onSnapshot), read (get, count) or sent over REST (runQuery, aggregation, list);
 *  - several writes to one document in one commit: every ordering of two writes of 13 kinds and 37 longer or rarer
 *    sequences, on an existing and on a missing document, answer as Google's do (status and message) and leave the
 *    same document.
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { both, documentNames, errorOf, pairRoot, rest, startOraclePair, type OraclePair, type PairSide, type RestAnswer } from '../helpers/firestore-oracle-pair.js';
import { within } from '../helpers/firestore-target.js';
import { buildWrite, writeSequences } from '../helpers/write-sequences.js';

const run = Date.now().toString(36);
const numeric = `numeric-${run}`;
const indexes = {
  indexes: [
    { collectionGroup: numeric, queryScope: 'COLLECTION', fields: [{ fieldPath: 'w', order: 'ASCENDING' }, { fieldPath: 'v', order: 'DESCENDING' }] },
    { collectionGroup: 'sub', queryScope: 'COLLECTION_GROUP', fields: [{ fieldPath: 'v', order: 'ASCENDING' }, { fieldPath: 'n', order: 'ASCENDING' }] },
  ],
  fieldOverrides: [],
};
const indexesFile = join(mkdtempSync(join(tmpdir(), 'hearth-indexes-')), 'firestore.indexes.json');
writeFileSync(indexesFile, JSON.stringify(indexes));

const pair: OraclePair | undefined = await startOraclePair({ indexesFile });
const skip = !pair && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator; .ci/run installs them)';

/** Numeric ids at both ends of the int64 range and around zero, beside string ids that sort low. */
const ids = ['__id9223372036854775807__', 'a', '__id-2__', '\u0000a', '__id10__', '!', '__id7__x', '__id-9223372036854775808__', '__id1__', '0', '__id7__', 'A', '__id-1__', 'é', '😀'];
const int = (n: number) => ({ integerValue: String(n) });
const ref = (path: string) => ({ referenceValue: `${pairRoot}/${path}` });
const names = (answers: [RestAnswer, RestAnswer]) => answers.map(documentNames);

/**
 * An error as compared: status and message, except ALREADY_EXISTS and NOT_FOUND of a precondition, whose emulator
 * texts print its internal keys (`entity already exists: EntityRef{…}`) where production's, and Hearth's, name the
 * document (`Document already exists: projects/…`): their status only.
 */
function comparableError(answer: RestAnswer): string | undefined {
  const error = errorOf(answer);
  return error?.startsWith('ALREADY_EXISTS') || error?.startsWith('NOT_FOUND') ? error.split(':')[0] : error;
}

describe('Hearth answers like Google: numeric ids, reserved paths, several writes to one document', { skip }, () => {
  before(async () => {
    const writes = ids.flatMap((id, i) => [
      { update: { name: `${pairRoot}/${numeric}/${id}`, fields: { v: int(i % 3), w: int(i % 2), n: int(i), tags: { arrayValue: { values: [{ stringValue: i % 4 ? 'x' : 'y' }] } } } } },
      { update: { name: `${pairRoot}/${numeric}/${id}/sub/${ids[(i + 3) % ids.length]}`, fields: { v: int(i % 2), n: int(i) } } },
    ]);
    for (const side of pair!.sides) assert.equal((await rest(side, 'POST', `${pairRoot}:commit`, { writes })).status, 200, side.label);
  });

  after(async () => {
    await pair?.close();
  });

  test('numeric ids sort by number before every string id, in lists, queries, cursors and collection groups', async () => {
    const query = (structuredQuery: Record<string, unknown>) => ({ structuredQuery: { from: [{ collectionId: numeric }], ...structuredQuery } });
    const group = (structuredQuery: Record<string, unknown>) => ({ structuredQuery: { from: [{ collectionId: 'sub', allDescendants: true }], ...structuredQuery } });
    const field = (fieldPath: string) => ({ fieldPath });
    const equal = (fieldPath: string, value: unknown) => ({ fieldFilter: { field: field(fieldPath), op: 'EQUAL', value } });
    const and = (...filters: unknown[]) => ({ compositeFilter: { op: 'AND', filters } });
    const byName = { orderBy: [{ field: field('__name__') }] };
    const cases: Array<[string, Record<string, unknown>]> = [
      ['name order', query({})],
      ['name order, limit', query({ limit: 4 })],
      ['field order: ties by name', query({ orderBy: [{ field: field('v') }] })],
      ['field order descending: ties by name descending', query({ orderBy: [{ field: field('v'), direction: 'DESCENDING' }] })],
      ['one equality (its index in id order)', query({ where: equal('v', int(1)) })],
      ['two equalities (merged indexes)', query({ where: and(equal('v', int(1)), equal('w', int(0))) })],
      ['array-contains and equality', query({ where: and({ fieldFilter: { field: field('tags'), op: 'ARRAY_CONTAINS', value: { stringValue: 'x' } } }, equal('w', int(1))) })],
      ['equality and order (declared composite index)', query({ where: equal('w', int(0)), orderBy: [{ field: field('v'), direction: 'DESCENDING' }] })],
      ['startAt a numeric id', query({ ...byName, startAt: { values: [ref(`${numeric}/__id-1__`)], before: true } })],
      ['startAfter a numeric id, endBefore a string id', query({ ...byName, startAt: { values: [ref(`${numeric}/__id7__`)], before: false }, endAt: { values: [ref(`${numeric}/a`)], before: true } })],
      ['field cursor with a numeric tie-break', query({ orderBy: [{ field: field('v') }, { field: field('__name__') }], startAt: { values: [int(1), ref(`${numeric}/__id1__`)], before: false } })],
      ['__name__ range', query({ where: { fieldFilter: { field: field('__name__'), op: 'GREATER_THAN', value: ref(`${numeric}/__id-2__`) } }, limit: 5 })],
      ['__name__ in', query({ where: { fieldFilter: { field: field('__name__'), op: 'IN', value: { arrayValue: { values: [ref(`${numeric}/a`), ref(`${numeric}/__id10__`), ref(`${numeric}/__id-9223372036854775808__`)] } } } } })],
      ['collection group by name', group({})],
      ['collection group with a filter (declared group index)', group({ where: equal('v', int(1)), orderBy: [{ field: field('n') }] })],
      ['collection group, field order', group({ orderBy: [{ field: field('v'), direction: 'DESCENDING' }] })],
    ];
    const problems: string[] = [];
    let documentsCompared = 0;
    for (const [label, body] of cases) {
      const [fromOracle, fromHearth] = names(await both(pair!, 'POST', `${pairRoot}:runQuery`, body));
      if (typeof fromOracle === 'string' || fromOracle.length === 0) problems.push(`${label}: the emulator answered ${JSON.stringify(fromOracle)} (the case tests nothing)`);
      else documentsCompared += fromOracle.length;
      if (JSON.stringify(fromOracle) !== JSON.stringify(fromHearth)) problems.push(`${label}:\n  emulator ${JSON.stringify(fromOracle)}\n  Hearth   ${JSON.stringify(fromHearth)}`);
    }
    assert.deepEqual(problems, []);
    assert.ok(documentsCompared > 100);

    // The whole collection through ListDocuments, three at a time, and the numeric ids first in number order.
    const pages = async (side: PairSide) => {
      const seen: string[] = [];
      for (let token: string | undefined, page = 0; page < 10; page++) {
        const answer = await rest(side, 'GET', `${pairRoot}/${numeric}?pageSize=3${token ? `&pageToken=${token}` : ''}`);
        seen.push(...(documentNames(answer) as string[]));
        token = answer.body.nextPageToken;
        if (!token) break;
      }
      return seen;
    };
    const [listedByOracle, listedByHearth] = await Promise.all(pair!.sides.map(pages));
    assert.deepEqual(listedByHearth, listedByOracle);
    assert.deepEqual(listedByOracle!.slice(0, 6).map((path) => path.split('/')[1]), ['__id-9223372036854775808__', '__id-2__', '__id-1__', '__id1__', '__id7__', '__id10__']);

    // The planner took the declared indexes for those cases (so their order was the index's, not a sort).
    const explain = async (body: Record<string, unknown>) => {
      const answer = await rest(pair!.sides[1], 'POST', `${pairRoot}:runQuery`, { ...body, explainOptions: { analyze: true } });
      return (answer.body as Array<{ explainMetrics?: { planSummary: { indexesUsed: unknown[] } } }>).find((element) => element.explainMetrics)!.explainMetrics!.planSummary.indexesUsed;
    };
    assert.deepEqual(await explain(cases[7]![1]), [{ query_scope: 'Collection', properties: '(w ASC, v DESC, __name__ DESC)' }]);
    assert.deepEqual(await explain(cases[14]![1]), [{ query_scope: 'Collection group', properties: '(v ASC, n ASC, __name__ ASC)' }]);
  });

  test('listeners hold numeric ids in the same order, and a new one arrives where Google puts it', async () => {
    const listen = async (side: PairSide) => {
      const db = side.admin();
      const query = db.collection(numeric).orderBy('v').limit(6);
      const snapshots: string[][] = [];
      let resolveNext: (() => void) | undefined;
      const unsubscribe = query.onSnapshot((snapshot) => {
        snapshots.push(snapshot.docs.map((doc) => doc.id));
        resolveNext?.();
      });
      const next = (count: number) =>
        within(
          new Promise<void>((resolve) => {
            resolveNext = () => snapshots.length >= count && resolve();
            resolveNext();
          }),
          `${side.label}: snapshot #${count}`,
        );
      return { snapshots, next, unsubscribe };
    };
    const listeners = await Promise.all(pair!.sides.map(listen));
    await Promise.all(listeners.map((listener) => listener.next(1)));
    assert.deepEqual(listeners[1]!.snapshots[0], listeners[0]!.snapshots[0]);
    // v = 0 ties: a new numeric id below the others enters the limit first.
    for (const side of pair!.sides) await rest(side, 'POST', `${pairRoot}:commit`, { writes: [{ update: { name: `${pairRoot}/${numeric}/__id-5__`, fields: { v: int(0) } } }] });
    await Promise.all(listeners.map((listener) => listener.next(2)));
    const latest = listeners.map((listener) => listener.snapshots[listener.snapshots.length - 1]);
    for (const listener of listeners) listener.unsubscribe();
    assert.deepEqual(latest[1], latest[0]);
    assert.ok(latest[0]!.includes('__id-5__'), `the emulator's listener took the new document in: ${JSON.stringify(latest[0])}`);
  });

  test('ids Google refuses are refused with its messages: in names, references, collection ids and queries', async () => {
    const refused = ['__id0__', '__id-0__', '__id007__', '__id+7__', '__id__', '__idabc__', '__id 7__', '__x__', '__id9223372036854775808__', '__id-9223372036854775809__', '__id99999999999999999999__'];
    const accepted = ['__id9223372036854775807__', '__id-1__', '__id7__x', '___id7_'];
    const requests: Array<[string, 'GET' | 'POST', string, unknown?]> = [];
    for (const id of [...refused, ...accepted]) {
      requests.push([`write ${id}`, 'POST', `${pairRoot}:commit`, { writes: [{ update: { name: `${pairRoot}/checked-${run}/${id}`, fields: {} } }] }]);
      requests.push([`get ${id}`, 'GET', `${pairRoot}/checked-${run}/${encodeURIComponent(id)}`]);
      requests.push([`reference to ${id}`, 'POST', `${pairRoot}:commit`, { writes: [{ update: { name: `${pairRoot}/checked-${run}/r`, fields: { r: ref(`c/${id}`) } } }] }]);
      requests.push([`collection ${id}`, 'POST', `${pairRoot}:commit`, { writes: [{ update: { name: `${pairRoot}/${id}/d`, fields: {} } }] }]);
      requests.push([`query of collection ${id}`, 'POST', `${pairRoot}:runQuery`, { structuredQuery: { from: [{ collectionId: id }] } }]);
      requests.push([`create with documentId ${id}`, 'POST', `${pairRoot}/created-${run}?documentId=${encodeURIComponent(id)}`, {}]);
    }
    for (const malformed of ['', 'foo', 'projects/p', 'projects/p/databases/d', `${pairRoot}`, `${pairRoot}/`, `${pairRoot}/c`, `${pairRoot}/c//d`, `${pairRoot}/c/.`, `${pairRoot}/c/d/`, 'projects//databases/(default)/documents/c/d', 'projects/p/databases/(default)/docs/c/d']) {
      requests.push([`reference ${JSON.stringify(malformed)}`, 'POST', `${pairRoot}:commit`, { writes: [{ update: { name: `${pairRoot}/checked-${run}/r`, fields: { r: { referenceValue: malformed } } } }] }]);
    }
    const problems: string[] = [];
    let refusals = 0;
    for (const [label, method, path, body] of requests) {
      const [fromOracle, fromHearth] = (await both(pair!, method, path, body)).map(comparableError);
      if (fromOracle) refusals++;
      if (fromOracle !== fromHearth) problems.push(`${label}:\n  emulator ${fromOracle ?? 'OK'}\n  Hearth   ${fromHearth ?? 'OK'}`);
    }
    assert.deepEqual(problems, []);
    assert.ok(refusals >= refused.length * 5, `${refusals} refusals`);
  });

  test('a query under a reserved id is refused like a write: listeners, gets, counts, runQuery, aggregation, list', async () => {
    const outcomes = async (side: PairSide) => {
      const db = side.admin();
      const listened = (target: { onSnapshot: (next: () => void, error: (error: Error) => void) => () => void }) =>
        within(
          new Promise<string>((resolve) => {
            const unsubscribe = target.onSnapshot(
              () => {
                unsubscribe();
                resolve('a snapshot');
              },
              (error) => resolve(String((error as { details?: string }).details ?? error.message)),
            );
          }),
          `${side.label}: listener`,
        );
      const got = (promise: Promise<unknown>) => promise.then(() => 'answered', (error: { code?: number; details?: string }) => `${error.code}: ${error.details}`);
      // firebase-admin retries a refused get for about 7 s before it gives up: all at once.
      const asked = {
        'query listener': listened(db.collection('a/__badpath__/b')),
        'document listener': listened(db.doc('a/__badpath__/b/c')),
        'query listener under __id0__': listened(db.collection('a/__id0__/b')),
        'query listener with a reserved cursor': listened(db.collection('c').orderBy('__name__').startAt(db.doc('c/__x__'))),
        'query listener under a numeric id (allowed)': listened(db.collection('a/__id7__/b')),
        'query get': got(db.collection('a/__badpath__/b').get()),
        'document get': got(db.doc('a/__badpath__/b/c').get()),
        count: got(db.collection('a/__badpath__/b').count().get()),
        'REST runQuery': rest(side, 'POST', `${pairRoot}/a/__badpath__:runQuery`, { structuredQuery: { from: [{ collectionId: 'b' }] } }).then(errorOf),
        'REST aggregation': rest(side, 'POST', `${pairRoot}/a/__badpath__:runAggregationQuery`, {
          structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: 'b' }] }, aggregations: [{ alias: 'n', count: {} }] },
        }).then(errorOf),
        'REST list': rest(side, 'GET', `${pairRoot}/a/__badpath__/b`).then(errorOf),
      };
      const answered: Record<string, string | undefined> = {};
      for (const [label, promise] of Object.entries(asked)) answered[label] = await promise;
      return answered;
    };
    const [fromOracle, fromHearth] = await Promise.all(pair!.sides.map(outcomes));
    assert.deepEqual(fromHearth, fromOracle);
    assert.match(fromOracle!['query listener'] ?? '', /Resource id "__badpath__" is invalid because it is reserved\./);
  });

  test('several writes to one document in one commit: every ordering of two, and longer sequences, as Google answers', async () => {
    const outcome = async (side: PairSide, sequence: readonly string[], exists: boolean, id: string) => {
      const name = `${pairRoot}/sequences-${run}/${id}`;
      let updateTime: string | undefined;
      if (exists) updateTime = (await rest(side, 'POST', `${pairRoot}:commit`, { writes: [{ update: { name, fields: { a: int(0) } } }] })).body.commitTime;
      const writes = sequence.map((kind) => buildWrite(kind as Parameters<typeof buildWrite>[0], name, updateTime));
      const answer = await rest(side, 'POST', `${pairRoot}:commit`, { writes });
      const after = await rest(side, 'GET', name);
      let error = comparableError(answer);
      // Versions in messages are that server's own update time.
      if (updateTime) error = error?.replaceAll(String(Date.parse(updateTime) * 1000 + Number(updateTime.match(/\.\d{3}(\d{3})/)?.[1] ?? 0)), '<its update time>');
      return { error: error ?? 'OK', document: after.status === 200 ? (after.body.fields ?? {}) : 'absent' };
    };
    const cases = writeSequences.flatMap((sequence) => [true, false].map((exists) => ({ sequence, exists })));
    const problems: string[] = [];
    let refused = 0;
    let index = 0;
    const worker = async () => {
      while (index < cases.length) {
        const i = index++;
        const { sequence, exists } = cases[i]!;
        const [fromOracle, fromHearth] = await Promise.all(pair!.sides.map((side) => outcome(side, sequence, exists, `s${i}`)));
        if (fromOracle!.error !== 'OK') refused++;
        if (JSON.stringify(fromOracle) !== JSON.stringify(fromHearth)) {
          problems.push(`${exists ? 'existing' : 'missing'} document, ${sequence.join(' then ')}:\n  emulator ${JSON.stringify(fromOracle)}\n  Hearth   ${JSON.stringify(fromHearth)}`);
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    assert.deepEqual(problems, []);
    // Both kinds of outcome were exercised.
    assert.ok(refused > cases.length / 4 && refused < cases.length, `${refused} of ${cases.length} refused`);
  });
});
