/**
 * `npm run bench -- vectors`: what a findNearest query costs. For each collection size, that many
 * documents with a 128-dimension vector (declared as a vector index, as production requires) are
 * written through REST :commit, then findNearest (EUCLIDEAN, limit 10) is asked through REST
 * :runQuery with random query vectors, one at a time: from the side table of declared vector
 * fields, and again at a readTime equal to the last commit, which reads and decodes every candidate
 * document as every findNearest did before the side table. Beside each, in this same process: a
 * brute-force loop in plain JS over the same vectors held in one Float64Array (distance of every
 * vector, top 10 kept by insertion), the floor of an exact search with the data already in memory.
 * Each Hearth answer is checked against the loop's.
 * Settings: HEARTH_BENCH_VECTOR_SIZES (10000,100000), HEARTH_BENCH_VECTOR_QUERIES (7 per size),
 * HEARTH_BENCH_VECTOR_DOCUMENT_QUERIES (3; 0 leaves the document path out),
 * HEARTH_BENCH_VECTOR_DIMENSION (128).
 */
import { envCount, envCounts, machineLine, progress } from './env.js';
import { documentsApi, startBenchHearth } from './hearth-setup.js';
import { ms, percentile, renderTable } from './stats.js';

const sizes = envCounts('HEARTH_BENCH_VECTOR_SIZES', [10_000, 100_000]);
const queriesPerSize = envCount('HEARTH_BENCH_VECTOR_QUERIES', 7);
/** The document path is slow (seconds at 100k): fewer queries. 0 leaves it out. */
const documentQueries = envCount('HEARTH_BENCH_VECTOR_DOCUMENT_QUERIES', 3);
const dimension = envCount('HEARTH_BENCH_VECTOR_DIMENSION', 128);
const limit = 10;
const loadBatch = 500;

/** Deterministic pseudo-random doubles in [-1, 1). */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 31 - 1;
  };
}

/** The plain-JS floor: every distance, the 10 nearest kept sorted (ties by index, as ids sort). */
function bruteForce(vectors: Float64Array, count: number, query: Float64Array): number[] {
  const bestDistance: number[] = [];
  const bestIndex: number[] = [];
  for (let doc = 0; doc < count; doc++) {
    let sum = 0;
    const base = doc * dimension;
    for (let i = 0; i < dimension; i++) {
      const d = vectors[base + i]! - query[i]!;
      sum += d * d;
    }
    const distance = Math.sqrt(sum);
    if (bestDistance.length === limit && distance >= bestDistance[limit - 1]!) continue;
    let at = bestDistance.length;
    while (at > 0 && bestDistance[at - 1]! > distance) at--;
    bestDistance.splice(at, 0, distance);
    bestIndex.splice(at, 0, doc);
    if (bestDistance.length > limit) {
      bestDistance.pop();
      bestIndex.pop();
    }
  }
  return bestIndex;
}

const vectorValue = (xs: ArrayLike<number>) => ({
  mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: Array.from(xs, (x) => ({ doubleValue: x })) } } } },
});
const idOf = (i: number) => `v${String(i).padStart(7, '0')}`;

const indexOf = (size: number) => ({ collectionGroup: `vectors${size}`, queryScope: 'COLLECTION', fields: [{ fieldPath: 'embedding', vectorConfig: { dimension, flat: {} } }] });

export async function runVectorBench(): Promise<void> {
  console.log(`Vector search: findNearest (EUCLIDEAN, limit ${limit}, dimension ${dimension}) through REST, beside a brute-force loop in plain JS over the same vectors in memory`);
  console.log(`${machineLine()}; ${queriesPerSize} queries per size from the side table, ${documentQueries} by reading documents, one at a time`);
  // Declared, as production requires: findNearest then ranks from the side table of vector fields.
  const target = await startBenchHearth({ indexes: { indexes: sizes.map(indexOf) } });
  const rows: string[][] = [];
  try {
    const { root, call } = documentsApi(target);
    for (const size of sizes) {
      const collection = `vectors${size}`;
      const random = generator(size);
      const vectors = new Float64Array(size * dimension);
      for (let i = 0; i < vectors.length; i++) vectors[i] = random();
      progress(`loading ${size} vectors of ${dimension} dimensions`);
      const loadStarted = performance.now();
      let lastCommit = '';
      for (let start = 0; start < size; start += loadBatch) {
        const writes = [];
        for (let i = start; i < Math.min(size, start + loadBatch); i++) {
          writes.push({ update: { name: `${root}/${collection}/${idOf(i)}`, fields: { embedding: vectorValue(vectors.subarray(i * dimension, (i + 1) * dimension)) } } });
        }
        lastCommit = ((await call('commit', { writes })) as { commitTime: string }).commitTime;
      }
      const loadSeconds = (performance.now() - loadStarted) / 1000;
      /** Median and max ms of `count` queries, each answer checked against the loop's; the loop's own median beside. */
      const measure = async (count: number, extra: Record<string, unknown>) => {
        const hearthMs: number[] = [];
        const loopMs: number[] = [];
        for (let q = 0; q < count; q++) {
          const query = new Float64Array(dimension).map(() => random());
          const started = performance.now();
          const answer = (await call('runQuery', {
            structuredQuery: { from: [{ collectionId: collection }], findNearest: { vectorField: { fieldPath: 'embedding' }, queryVector: vectorValue(query), distanceMeasure: 'EUCLIDEAN', limit } },
            ...extra,
          })) as Array<{ document?: { name: string } }>;
          hearthMs.push(performance.now() - started);
          const loopStarted = performance.now();
          const expected = bruteForce(vectors, size, query);
          loopMs.push(performance.now() - loopStarted);
          const got = answer.filter((a) => a.document).map((a) => a.document!.name.split('/').pop());
          if (got.join() !== expected.map(idOf).join()) throw new Error(`size ${size}: Hearth answered ${got.join()} where the loop found ${expected.map(idOf).join()}`);
        }
        hearthMs.sort((a, b) => a - b);
        loopMs.sort((a, b) => a - b);
        return { median: percentile(hearthMs, 0.5), max: hearthMs[hearthMs.length - 1]!, loop: percentile(loopMs, 0.5) };
      };
      progress(`${size}: from the side table`);
      const side = await measure(queriesPerSize, {});
      // A readTime at the last commit is the present, answered the way every findNearest was before
      // the side table: each candidate document read and decoded (past times still are).
      progress(`${size}: reading every document`);
      const documents = documentQueries > 0 ? await measure(documentQueries, { readTime: lastCommit }) : undefined;
      rows.push([
        String(size),
        ms(side.median),
        ms(side.max),
        ms(side.loop),
        (side.median / side.loop).toFixed(2),
        documents ? ms(documents.median) : '-',
        documents ? (documents.median / documents.loop).toFixed(1) : '-',
        loadSeconds.toFixed(1),
      ]);
    }
  } finally {
    await target.close();
  }
  console.log(renderTable(['vectors', 'side table median ms', 'max ms (first: the set read)', 'JS loop median ms', 'side / loop', 'documents median ms', 'documents / loop', 'load s'], rows, () => false));
  console.log("every Hearth answer equalled the loop's 10 nearest, in order");
}
