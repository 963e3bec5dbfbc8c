/**
 * Vector search (findNearest) through firebase-admin over gRPC, checked against a brute-force
 * ranking computed here over the same vectors: each distance measure, limit, distanceResultField,
 * distanceThreshold (a maximum, a minimum for DOT_PRODUCT), equality pre-filters, documents
 * without a vector of the query's dimension skipped, ties in name order, Google's errors, a past
 * readTime; and outside --dev, the vector index that firestore.indexes.json must declare (raw REST).
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { FieldValue, getFirestore, setLogFunction, type CollectionReference, type Firestore } from 'firebase-admin/firestore';
import pino from 'pino';
import { FirestoreAccess } from '../../packages/server/src/firestore/api/access.js';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import { FirestoreGuard } from '../../packages/server/src/firestore/security/guard.js';
import { RulesRegistry } from '../../packages/server/src/firestore/security/rules-registry.js';
import { FirestoreStreams } from '../../packages/server/src/firestore/streams/streams.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { postJson, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

setLogFunction(null);
// firebase-admin would otherwise probe the GCE metadata server.
process.env.METADATA_SERVER_DETECTION ??= 'none';

type VectorQuery = ReturnType<CollectionReference['findNearest']>;
type Measure = 'EUCLIDEAN' | 'COSINE' | 'DOT_PRODUCT';
interface Seeded {
  id: string;
  vector: number[];
  k: number;
}

const dimension = 4;
const measures: Measure[] = ['EUCLIDEAN', 'COSINE', 'DOT_PRODUCT'];

/** Small integer coordinates from a seeded generator: many exact ties, so their order is tested too. */
function seededVectors(count: number): Seeded[] {
  let state = 12345;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state;
  };
  return Array.from({ length: count }, (_, i) => ({
    id: `v${String(i).padStart(3, '0')}`,
    vector: Array.from({ length: dimension }, () => (next() % 7) - 3),
    k: i % 3,
  }));
}

/** The reference: every vector's distance, written out plainly, sorted nearest first, ties by id. */
function bruteForce(docs: readonly Seeded[], query: readonly number[], measure: Measure, limit: number, threshold?: number): Array<{ id: string; distance: number }> {
  const scored = docs.map(({ id, vector }) => {
    const dot = vector.reduce((sum, x, i) => sum + x * query[i]!, 0);
    const norm = (v: readonly number[]) => v.reduce((sum, x) => sum + x * x, 0);
    const distance =
      measure === 'EUCLIDEAN'
        ? Math.sqrt(vector.reduce((sum, x, i) => sum + (x - query[i]!) ** 2, 0))
        : measure === 'DOT_PRODUCT'
          ? dot
          : 1 - dot / Math.sqrt(norm(vector) * norm(query));
    return { id, distance };
  });
  const rank = (d: number) => (Number.isNaN(d) ? Infinity : measure === 'DOT_PRODUCT' ? -d : d);
  return scored
    .filter(({ distance }) => threshold === undefined || (measure === 'DOT_PRODUCT' ? distance >= threshold : distance <= threshold))
    .sort((a, b) => rank(a.distance) - rank(b.distance) || (Number.isNaN(a.distance) ? 1 : 0) - (Number.isNaN(b.distance) ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit);
}

async function answer(query: VectorQuery): Promise<Array<{ id: string; distance: unknown }>> {
  const snapshot = await query.get();
  return snapshot.docs.map((doc) => ({ id: doc.id, distance: doc.get('dist') }));
}

function assertSameRanking(actual: Array<{ id: string; distance: unknown }>, expected: Array<{ id: string; distance: number }>, label: string): void {
  assert.deepEqual(actual.map((r) => r.id), expected.map((r) => r.id), label);
  actual.forEach((r, i) => {
    const want = expected[i]!.distance;
    assert.equal(typeof r.distance, 'number', `${label}: ${r.id} has its distance`);
    if (Number.isNaN(want)) assert.ok(Number.isNaN(r.distance as number), `${label}: ${r.id} distance NaN`);
    else assert.ok(Math.abs((r.distance as number) - want) <= 1e-12 * Math.max(1, Math.abs(want)), `${label}: ${r.id} distance ${String(r.distance)} != ${want}`);
  });
}

/**
 * The same suite twice: without an indexes file (every candidate document is read and ranked) and
 * with the fields declared as vector indexes (ranked from the side table of declared vector
 * fields, then only the nearest documents read; pre-filters and past times still read documents).
 */
function vectorIndexesFile(): { dataDir: string; indexesFile: string } {
  const dataDir = tempDataDir();
  const indexesFile = join(dataDir, 'firestore.indexes.json');
  const vectorIndex = (collectionGroup: string, dimension: number) => ({ collectionGroup, queryScope: 'COLLECTION', fields: [{ fieldPath: 'embedding', vectorConfig: { dimension, flat: {} } }] });
  writeFileSync(indexesFile, JSON.stringify({ indexes: [vectorIndex('items', dimension), vectorIndex('moving', 2)] }));
  return { dataDir, indexesFile };
}

for (const declared of [false, true]) describe(`findNearest through firebase-admin (--dev${declared ? ', vector indexes declared' : ''})`, () => {
  let server: TestHearth;
  let app: App;
  let db: Firestore;
  let coll: CollectionReference;
  const seeded = seededVectors(120);
  // The zero vector is a candidate too: its cosine distance is NaN, ranked last.
  seeded.push({ id: 'zero', vector: [0, 0, 0, 0], k: 0 });

  before(async () => {
    server = await startHearth(declared ? vectorIndexesFile() : {});
    process.env.FIRESTORE_EMULATOR_HOST = server.hostPort;
    app = initializeApp({ projectId: server.projectId }, `vector-search-${String(declared)}`);
    db = getFirestore(app);
    coll = db.collection('items');
    const batch = db.batch();
    for (const { id, vector, k } of seeded) batch.set(coll.doc(id), { embedding: FieldValue.vector(vector), k });
    // Not candidates: another dimension, a plain array, a string, no field at all.
    batch.set(coll.doc('a-wrong-dimension'), { embedding: FieldValue.vector([1, 0, 0]), k: 0 });
    batch.set(coll.doc('a-plain-array'), { embedding: [1, 0, 0, 0], k: 0 });
    batch.set(coll.doc('a-string'), { embedding: 'near', k: 0 });
    batch.set(coll.doc('a-missing'), { k: 0 });
    await batch.commit();
  });

  after(async () => {
    await deleteApp(app);
    await server.close();
  });

  for (const measure of measures) {
    test(`${measure}: the nearest, in order, with their distances, as the brute-force ranking`, async () => {
      for (const queryVector of [[1, 2, -1, 0], [-3, 0, 2, 1], [3, 3, 3, 3]]) {
        for (const limit of [1, 7, 30, 1000]) {
          const actual = await answer(coll.findNearest({ vectorField: 'embedding', queryVector, limit, distanceMeasure: measure, distanceResultField: 'dist' }));
          assertSameRanking(actual, bruteForce(seeded, queryVector, measure, limit), `${measure} ${JSON.stringify(queryVector)} limit ${limit}`);
        }
      }
    });
  }

  test('distanceThreshold: a maximum for EUCLIDEAN and COSINE, a minimum for DOT_PRODUCT', async () => {
    const queryVector = [2, -1, 0, 1];
    for (const [measure, threshold] of [['EUCLIDEAN', 3.5], ['COSINE', 0.4], ['DOT_PRODUCT', 4]] as const) {
      const actual = await answer(coll.findNearest({ vectorField: 'embedding', queryVector, limit: 1000, distanceMeasure: measure, distanceThreshold: threshold, distanceResultField: 'dist' }));
      const expected = bruteForce(seeded, queryVector, measure, 1000, threshold);
      assert.ok(expected.length > 0 && expected.length < seeded.length, `${measure}: the threshold cuts`);
      assertSameRanking(actual, expected, `${measure} threshold ${threshold}`);
    }
  });

  test('pre-filters: only the documents the rest of the query matches are ranked', async () => {
    const queryVector = [0, 1, 2, 3];
    for (const k of [0, 1, 2]) {
      const actual = await answer(coll.where('k', '==', k).findNearest({ vectorField: 'embedding', queryVector, limit: 5, distanceMeasure: 'EUCLIDEAN', distanceResultField: 'dist' }));
      assertSameRanking(actual, bruteForce(seeded.filter((d) => d.k === k), queryVector, 'EUCLIDEAN', 5), `k == ${k}`);
    }
  });

  test('without distanceResultField the documents are returned as stored', async () => {
    const snapshot = await coll.findNearest({ vectorField: 'embedding', queryVector: [1, 1, 1, 1], limit: 3, distanceMeasure: 'DOT_PRODUCT' }).get();
    const expected = bruteForce(seeded, [1, 1, 1, 1], 'DOT_PRODUCT', 3);
    assert.deepEqual(snapshot.docs.map((doc) => doc.id), expected.map((r) => r.id));
    for (const doc of snapshot.docs) assert.deepEqual(Object.keys(doc.data()).sort(), ['embedding', 'k']);
    // The distance is the answer's, never written back.
    const stored = await coll.doc(expected[0]!.id).get();
    assert.equal(stored.get('dist'), undefined);
  });

  test("Google's errors through the SDK; a query vector of another dimension matches nothing", async () => {
    await assert.rejects(coll.findNearest({ vectorField: 'embedding', queryVector: [1, 0, 0, 0], limit: 1001, distanceMeasure: 'EUCLIDEAN' }).get(), (error: { code?: number; message?: string }) => {
      assert.equal(error.code, 3, error.message);
      assert.match(error.message ?? '', /FindNearest.limit must be a positive integer of no more than 1000/);
      return true;
    });
    assert.deepEqual(await answer(coll.findNearest({ vectorField: 'embedding', queryVector: [1, 0], limit: 5, distanceMeasure: 'EUCLIDEAN' })), []);
  });

  test('at a past readTime the vectors are ranked as they were', async () => {
    const moving = db.collection('moving');
    await moving.doc('stays').set({ embedding: FieldValue.vector([1, 1]) });
    const written = await moving.doc('moves').set({ embedding: FieldValue.vector([0, 0]) });
    await moving.doc('moves').set({ embedding: FieldValue.vector([9, 9]) });
    const base = `${server.url}/v1/projects/${server.projectId}/databases/(default)/documents:runQuery`;
    const vector = (xs: number[]) => ({ mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: xs.map((x) => ({ doubleValue: x })) } } } } });
    const search = async (extra: Record<string, unknown>) => {
      const structuredQuery = { from: [{ collectionId: 'moving' }], findNearest: { vectorField: { fieldPath: 'embedding' }, queryVector: vector([0, 0]), distanceMeasure: 'EUCLIDEAN', limit: 1, distanceResultField: 'd' } };
      const reply = await postJson(base, { structuredQuery, ...extra }, { authorization: 'Bearer owner' });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      return (reply.body as Array<{ document?: { name: string; fields: { d: unknown } } }>).filter((a) => a.document).map((a) => [a.document!.name.split('/').pop(), a.document!.fields.d]);
    };
    assert.deepEqual(await search({}), [['stays', { doubleValue: Math.SQRT2 }]]);
    const { seconds, nanoseconds } = written.writeTime;
    const readTime = new Date(seconds * 1000).toISOString().replace('.000Z', `.${String(nanoseconds).padStart(9, '0')}Z`);
    assert.deepEqual(await search({ readTime }), [['moves', { doubleValue: 0 }]]);
  });

  test('raw REST: limit and offset beside findNearest, wrong query vectors, reserved result field', async () => {
    const base = `${server.url}/v1/projects/${server.projectId}/databases/(default)/documents:runQuery`;
    const vector = (values: unknown[]) => ({ mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values } } } } });
    const nearest = (extra: Record<string, unknown> = {}) => ({ vectorField: { fieldPath: 'embedding' }, queryVector: vector([{ doubleValue: 1 }]), distanceMeasure: 'EUCLIDEAN', limit: 3, ...extra });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ findNearest: nearest(), limit: 2 }, 'A query limit cannot be used with FindNearest'],
      [{ findNearest: nearest(), offset: 2 }, 'A query offset cannot be used with FindNearest'],
      [{ findNearest: nearest({ queryVector: vector([]) }) }, 'Cannot have a zero length vector.'],
      [{ findNearest: nearest({ queryVector: vector([{ integerValue: '1' }]) }) }, "Vector must only contain values of type 'double'"],
      [{ findNearest: nearest({ queryVector: { arrayValue: { values: [{ doubleValue: 1 }] } } }) }, 'Query Value must be of type vector.'],
      [{ findNearest: nearest({ distanceMeasure: 'DISTANCE_MEASURE_UNSPECIFIED' }) }, 'Unknown Distance Measure.'],
      [{ findNearest: nearest({ limit: 0 }) }, 'FindNearest.limit must be a positive integer of no more than 1000'],
      [{ findNearest: nearest({ distanceThreshold: 'NaN' }) }, 'distanceThreshold must be a finite number.'],
      [{ findNearest: nearest({ queryVector: vector(new Array(2049).fill({ doubleValue: 1 })) }) }, 'Query vector must have no more than 2048 dimensions.'],
      [{ findNearest: nearest({ distanceResultField: '__name__' }) }, 'The distanceResultField.property.name "__name__" is reserved.'],
    ];
    for (const [extra, message] of cases) {
      const reply = await postJson(base, { structuredQuery: { from: [{ collectionId: 'items' }], ...extra } }, { authorization: 'Bearer owner' });
      assert.equal(reply.status, 400, JSON.stringify(extra));
      assert.deepEqual(reply.body.error, { code: 400, message, status: 'INVALID_ARGUMENT' }, JSON.stringify(extra));
    }
  });

  test('after updates, deletes and fields that stop being vectors, the answer is the brute-force ranking of what is stored', async () => {
    const changing = db.collection('items').doc('v000').parent;
    const current = new Map(seeded.map((doc) => [doc.id, doc]));
    const queryVector = [1, -1, 2, 0];
    const check = async (label: string) => {
      for (const measure of measures) {
        const actual = await answer(changing.findNearest({ vectorField: 'embedding', queryVector, limit: 12, distanceMeasure: measure, distanceResultField: 'dist' }));
        assertSameRanking(actual, bruteForce([...current.values()], queryVector, measure, 12), `${label}, ${measure}`);
      }
    };
    await check('before');
    const batch = db.batch();
    // The nearest become far, a far one becomes the nearest, one is deleted, one holds a string.
    for (const { id } of bruteForce([...current.values()], queryVector, 'EUCLIDEAN', 3)) {
      const moved = { ...current.get(id)!, vector: [3, 3, -3, 3] };
      current.set(id, moved);
      batch.set(changing.doc(id), { embedding: FieldValue.vector(moved.vector), k: moved.k });
    }
    const far = [...current.values()].find((doc) => doc.id !== 'zero' && doc.vector[0] === -3)!;
    current.set(far.id, { ...far, vector: queryVector });
    batch.update(changing.doc(far.id), { embedding: FieldValue.vector(queryVector) });
    const gone = bruteForce([...current.values()], queryVector, 'COSINE', 2)[1]!.id;
    current.delete(gone);
    batch.delete(changing.doc(gone));
    const worded = bruteForce([...current.values()], queryVector, 'DOT_PRODUCT', 2)[1]!.id;
    current.delete(worded);
    batch.update(changing.doc(worded), { embedding: 'no longer a vector' });
    await batch.commit();
    await check('after');
    // Back to a vector: a candidate again.
    const back = seeded.find((doc) => doc.id === worded)!;
    current.set(worded, back);
    await changing.doc(worded).update({ embedding: FieldValue.vector(back.vector) });
    await check('restored');
    // Leave the collection as the other tests seeded it.
    const restore = db.batch();
    for (const doc of seeded) restore.set(changing.doc(doc.id), { embedding: FieldValue.vector(doc.vector), k: doc.k });
    await restore.commit();
  });
});

describe('vector indexes outside --dev', () => {
  test('findNearest needs a declared vector index of its field, dimension and pre-filter; then answers', async () => {
    const dataDir = tempDataDir();
    const indexesFile = join(dataDir, 'firestore.indexes.json');
    writeFileSync(
      indexesFile,
      JSON.stringify({
        indexes: [
          { collectionGroup: 'docs', queryScope: 'COLLECTION', fields: [{ fieldPath: 'embedding', vectorConfig: { dimension: 2, flat: {} } }] },
          { collectionGroup: 'docs', queryScope: 'COLLECTION', fields: [{ fieldPath: 'color', order: 'ASCENDING' }, { fieldPath: 'embedding', vectorConfig: { dimension: 2, flat: {} } }] },
        ],
      }),
    );
    const server = await startHearth({ dev: false, dataDir, indexesFile });
    try {
      const base = `${server.url}/v1/projects/${server.projectId}/databases/(default)/documents`;
      const headers = { authorization: `Bearer ${server.adminKey}` };
      const vector = (...xs: number[]) => ({ mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: xs.map((x) => ({ doubleValue: x })) } } } } });
      const writes = [
        ['p', 1, 0, 'red'],
        ['q', 0, 1, 'blue'],
        ['r', 2, 2, 'red'],
      ].map(([id, x, y, color]) => ({ update: { name: `projects/${server.projectId}/databases/(default)/documents/docs/${String(id)}`, fields: { embedding: vector(Number(x), Number(y)), color: { stringValue: String(color) } } } }));
      assert.equal((await postJson(`${base}:commit`, { writes }, headers)).status, 200);
      const search = (queryVector: unknown, where?: unknown, field = 'embedding') =>
        postJson(`${base}:runQuery`, { structuredQuery: { from: [{ collectionId: 'docs' }], ...(where ? { where } : {}), findNearest: { vectorField: { fieldPath: field }, queryVector, distanceMeasure: 'EUCLIDEAN', limit: 2 } } }, headers);
      const ids = (body: Array<{ document?: { name: string } }>) => body.filter((a) => a.document).map((a) => a.document!.name.split('/').pop());

      const served = await search(vector(1, 0));
      assert.equal(served.status, 200, JSON.stringify(served.body));
      assert.deepEqual(ids(served.body), ['p', 'q']);
      const red = { fieldFilter: { field: { fieldPath: 'color' }, op: 'EQUAL', value: { stringValue: 'red' } } };
      const prefiltered = await search(vector(0, 1), red);
      assert.equal(prefiltered.status, 200, JSON.stringify(prefiltered.body));
      assert.deepEqual(ids(prefiltered.body), ['p', 'r']);

      const missing = (reply: { status: number; body: any }, label: string) => {
        assert.equal(reply.status, 400, label);
        assert.equal(reply.body.error.status, 'FAILED_PRECONDITION', label);
        assert.match(reply.body.error.message, /^Missing vector index configuration\. Please create the required index with the following gcloud command: gcloud firestore indexes composite create /, label);
      };
      missing(await search(vector(1, 0, 0)), 'another dimension');
      missing(await search(vector(1, 0), undefined, 'other'), 'another field');
      missing(await search(vector(1, 0), { fieldFilter: { field: { fieldPath: 'size' }, op: 'EQUAL', value: { integerValue: '1' } } }), 'a pre-filter no index has');
    } finally {
      await server.close();
    }
  });
});

describe('listeners', () => {
  test('a Listen target with findNearest is refused (INVALID_ARGUMENT), as Google refuses it', async () => {
    const dir = tempDataDir();
    const store = new SqliteStore(join(dir, 'data.sqlite'));
    try {
      const database = new DocumentDatabase(store.documents());
      const silent = pino({ level: 'silent' });
      const guard = new FirestoreGuard(new RulesRegistry(store.rules(), silent), database, { dev: false, logger: silent });
      const access = new FirestoreAccess({ isAdmin: (header) => header === 'admin', verifyIdToken: () => Promise.reject(new Error('no users here')), dev: false, guard });
      const streams = new FirestoreStreams(database, access);
      const db = { projectId: 'vector-listen', databaseId: '(default)' };
      const messages: Array<Record<string, any>> = [];
      const session = streams.open('Listen', { db, caller: { kind: 'admin' } }, { send: (message) => messages.push(message), fail: () => undefined });
      const queryVector = { mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: [{ doubleValue: 1 }] } } } } };
      const structuredQuery = { from: [{ collectionId: 'c' }], findNearest: { vectorField: { fieldPath: 'e' }, queryVector, distanceMeasure: 'EUCLIDEAN', limit: 3 } };
      session.receive({ addTarget: { targetId: 4, query: { parent: 'projects/vector-listen/databases/(default)/documents', structuredQuery } } });
      // The target is either refused (REMOVE with its cause) or answered (CURRENT): wait for one, without a clock.
      const settled = () => messages.find((m) => m.targetChange?.targetChangeType === 'REMOVE' || m.targetChange?.targetChangeType === 'CURRENT');
      for (let turn = 0; !settled() && turn < 100_000; turn++) await new Promise((resolve) => setImmediate(resolve));
      assert.ok(settled(), `the target was neither refused nor answered: ${JSON.stringify(messages)}`);
      const removal = settled()!.targetChange;
      assert.equal(removal.targetChangeType, 'REMOVE', JSON.stringify(messages));
      assert.deepEqual(removal.targetIds, [4]);
      assert.equal(removal.cause.code, 3);
      assert.equal(removal.cause.message, 'FindNearest is not supported for real-time queries.');
      assert.ok(!messages.some((m) => m.documentChange), 'no documents sent');
      session.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
