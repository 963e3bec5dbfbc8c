/**
 * Vector search (findNearest), differential against Google's official Firestore emulator: the same documents go
 * to both servers, then the same findNearest queries (REST runQuery, and firebase-admin over gRPC) must answer the
 * same documents in the same order with the same fields (the distance included, NaN for a zero vector's cosine),
 * or the same error status and message. Covered: each distance measure, limits, thresholds, equality, `in` and
 * range pre-filters, an explicit orderBy (the order of equal distances), distanceResultField (a literal name,
 * overwriting a field, beside `select`), documents without a vector of the query's dimension, and the refusals.
 * Not compared: the vector index Hearth requires outside --dev (the emulator requires none; Hearth in --dev
 * neither: tests/firestore/vector-search.test.ts).
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FieldValue } from 'firebase-admin/firestore';
import { errorOf, pairRoot, rest, startOraclePair, type OraclePair, type PairSide, type RestAnswer } from '../helpers/firestore-oracle-pair.js';
import { within } from '../helpers/firestore-target.js';

const pair: OraclePair | undefined = await startOraclePair();
const skip = !pair && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator; .ci/run installs them)';

const collection = `vec-${Date.now().toString(36)}`;
const double = (x: number) => ({ doubleValue: x });
const vector = (xs: readonly number[]) => ({ mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: xs.map(double) } } } } });
const int = (n: number) => ({ integerValue: String(n) });
const name = (id: string) => `${pairRoot}/${collection}/${id}`;

/** Small integer coordinates (many equal distances) from a seeded generator, plus documents that are no candidates. */
function documents(): Array<Record<string, unknown>> {
  let state = 777;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31);
  const writes: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 40; i++) {
    const xs = [0, 1, 2].map(() => (next() % 5) - 2);
    writes.push({ update: { name: name(`d${String(i).padStart(2, '0')}`), fields: { e: vector(xs), k: int(i % 4), label: { stringValue: `n${i % 5}` } } } });
  }
  writes.push({ update: { name: name('zero'), fields: { e: vector([0, 0, 0]), k: int(1) } } });
  writes.push({ update: { name: name('two-dims'), fields: { e: vector([1, 0]), k: int(1) } } });
  writes.push({ update: { name: name('plain-array'), fields: { e: { arrayValue: { values: [double(1), double(0), double(0)] } }, k: int(1) } } });
  writes.push({ update: { name: name('text'), fields: { e: { stringValue: 'near' }, k: int(1) } } });
  writes.push({ update: { name: name('none'), fields: { k: int(1) } } });
  return writes;
}

const field = (fieldPath: string) => ({ fieldPath });
const nearest = (queryVector: readonly number[], distanceMeasure: string, limit: unknown, extra: Record<string, unknown> = {}) => ({
  findNearest: { vectorField: field('e'), queryVector: vector(queryVector), distanceMeasure, limit, ...extra },
});
const where = (path: string, op: string, value: unknown) => ({ where: { fieldFilter: { field: field(path), op, value } } });

const queries: Array<[string, Record<string, unknown>]> = [];
for (const measure of ['EUCLIDEAN', 'COSINE', 'DOT_PRODUCT']) {
  for (const [i, queryVector] of [[1, 0, -1], [2, 2, 2], [-1, 0.5, 3]].entries()) {
    for (const limit of [1, 6, 1000]) queries.push([`${measure} q${i} limit ${limit}`, nearest(queryVector, measure, limit, { distanceResultField: 'dist' })]);
  }
}
queries.push(
  ['EUCLIDEAN threshold 2', nearest([1, 1, 0], 'EUCLIDEAN', 100, { distanceThreshold: 2, distanceResultField: 'dist' })],
  ['COSINE threshold 0.5', nearest([1, 1, 0], 'COSINE', 100, { distanceThreshold: 0.5, distanceResultField: 'dist' })],
  ['DOT_PRODUCT threshold 2 (a minimum)', nearest([1, 1, 0], 'DOT_PRODUCT', 100, { distanceThreshold: 2, distanceResultField: 'dist' })],
  ['DOT_PRODUCT threshold -1', nearest([1, 1, 0], 'DOT_PRODUCT', 100, { distanceThreshold: -1 })],
  ['pre-filter k == 2', { ...where('k', 'EQUAL', int(2)), ...nearest([0, 1, 0], 'EUCLIDEAN', 5, { distanceResultField: 'dist' }) }],
  ['pre-filter label in', { ...where('label', 'IN', { arrayValue: { values: [{ stringValue: 'n1' }, { stringValue: 'n3' }] } }), ...nearest([0, 1, 0], 'DOT_PRODUCT', 8) }],
  ['pre-filter k > 1 (ties by k)', { ...where('k', 'GREATER_THAN', int(1)), ...nearest([1, 0, 0], 'EUCLIDEAN', 20, { distanceResultField: 'dist' }) }],
  ['orderBy k desc orders ties', { orderBy: [{ field: field('k'), direction: 'DESCENDING' }], ...nearest([1, 0, 0], 'DOT_PRODUCT', 20, { distanceResultField: 'dist' }) }],
  ['distanceResultField with a dot is a literal name', nearest([1, 0, 0], 'EUCLIDEAN', 3, { distanceResultField: 'a.b' })],
  ['distanceResultField overwrites a field', nearest([1, 0, 0], 'EUCLIDEAN', 3, { distanceResultField: 'k' })],
  ['distanceResultField beside select', { select: { fields: [field('k')] }, ...nearest([1, 0, 0], 'EUCLIDEAN', 3, { distanceResultField: 'dist' }) }],
  ['another dimension matches nothing', nearest([1, 0], 'EUCLIDEAN', 5)],
  ['a field with no vectors', { findNearest: { vectorField: field('label'), queryVector: vector([1, 0, 0]), distanceMeasure: 'EUCLIDEAN', limit: 5 } }],
  ['error: limit 0', nearest([1, 0, 0], 'EUCLIDEAN', 0)],
  ['error: limit 1001', nearest([1, 0, 0], 'EUCLIDEAN', 1001)],
  ['error: no limit', { findNearest: { vectorField: field('e'), queryVector: vector([1, 0, 0]), distanceMeasure: 'EUCLIDEAN' } }],
  ['error: no measure', { findNearest: { vectorField: field('e'), queryVector: vector([1, 0, 0]), limit: 3 } }],
  ['error: measure unspecified', nearest([1, 0, 0], 'DISTANCE_MEASURE_UNSPECIFIED', 3)],
  ['error: empty query vector', nearest([], 'EUCLIDEAN', 3)],
  ['error: query vector not a vector', { findNearest: { vectorField: field('e'), queryVector: { arrayValue: { values: [double(1)] } }, distanceMeasure: 'EUCLIDEAN', limit: 3 } }],
  ['error: integer elements', { findNearest: { vectorField: field('e'), queryVector: { mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: [int(1)] } } } } }, distanceMeasure: 'EUCLIDEAN', limit: 3 } }],
  ['error: query limit beside', { limit: 2, ...nearest([1, 0, 0], 'EUCLIDEAN', 3) }],
  ['error: offset beside', { offset: 2, ...nearest([1, 0, 0], 'EUCLIDEAN', 3) }],
  ['error: reserved result field', nearest([1, 0, 0], 'EUCLIDEAN', 3, { distanceResultField: '__name__' })],
  ['error: NaN threshold', nearest([1, 0, 0], 'EUCLIDEAN', 3, { distanceThreshold: 'NaN' })],
);

/** What must agree: the documents in order with their fields, or the error. */
function comparable(answer: RestAnswer): unknown {
  const error = errorOf(answer);
  if (error) return error;
  return (answer.body as Array<{ document?: { name: string; fields?: unknown } }>)
    .filter((element) => element.document)
    .map((element) => ({ name: element.document!.name.slice(pairRoot.length + 1), fields: element.document!.fields ?? {} }));
}

describe('findNearest: Hearth and the Firestore emulator agree', { skip }, () => {
  before(async () => {
    for (const side of pair!.sides) {
      const answer = await rest(side, 'POST', `${pairRoot}:commit`, { writes: documents() });
      assert.equal(answer.status, 200, `${side.label}: ${JSON.stringify(answer.body)}`);
    }
  });

  after(async () => {
    await pair?.close();
  });

  test('REST runQuery: the same documents, order, distances and errors', async () => {
    const ask = (side: PairSide, structuredQuery: Record<string, unknown>) =>
      rest(side, 'POST', `${pairRoot}:runQuery`, { structuredQuery: { from: [{ collectionId: collection }], ...structuredQuery } });
    let answered = 0;
    for (const [label, structuredQuery] of queries) {
      const [google, hearth] = await Promise.all(pair!.sides.map((side) => ask(side, structuredQuery)));
      assert.deepEqual(comparable(hearth!), comparable(google!), label);
      if (google!.status === 200) answered++;
    }
    assert.ok(answered >= 30, 'most queries answer documents');
  });

  test('firebase-admin (gRPC): the same snapshots', async () => {
    const run = async (side: PairSide) => {
      const coll = side.admin().collection(collection);
      const answers: unknown[] = [];
      for (const measure of ['EUCLIDEAN', 'COSINE', 'DOT_PRODUCT'] as const) {
        const query = coll.where('k', 'in', [0, 3]).findNearest({ vectorField: 'e', queryVector: FieldValue.vector([1, -1, 2]), limit: 7, distanceMeasure: measure, distanceResultField: 'd' });
        const snapshot = await within(query.get(), `${side.label} ${measure}`);
        answers.push(snapshot.docs.map((doc) => [doc.id, doc.get('d'), doc.get('k')]));
      }
      return answers;
    };
    const [google, hearth] = await Promise.all(pair!.sides.map(run));
    assert.deepEqual(hearth, google);
  });
});
