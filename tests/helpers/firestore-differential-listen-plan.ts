/**
 * One seed's plan in the differential test of Firestore listeners (tests/firestore/differential-listen.test.ts): its
 * initial documents, its listeners, and the random writes that go to both servers one commit at a time.
 */
import assert from 'node:assert/strict';
import { databaseRoot, queryListenersPerSeed, relativePath, rest, run, writesPerSeed, type Side } from './firestore-differential-listen.js';
import { wireQuery, type DocumentListener, type ListenerSpec, type QueryListener } from './firestore-differential-listen-query.js';
import {
  Random,
  arrayElementValues,
  inScope,
  numberValues,
  randomDataset,
  randomFields,
  randomValidQuery,
  valuePool,
  type Dataset,
  type FieldTransform,
  type Fields,
  type StructuredQuery,
  type Value,
} from './random-firestore.js';

export interface WriteStep {
  /** Position in the seed's generated sequence (shrunk sequences keep it). */
  index: number;
  description: string;
  /** One google.firestore.v1.Write in proto3 JSON, for :commit */
  write: Record<string, unknown>;
}

export interface Plan {
  seed: number;
  /** The collection id everything of this seed lives under; replays substitute a fresh one. */
  token: string;
  dataset: Dataset;
  listeners: ListenerSpec[];
  steps: WriteStep[];
  /** Generated queries left out because the emulator refused them. */
  refusedByEmulator: number;
}

/**
 * A distinct, reproducible random stream per seed and purpose. Not firestore-differential.ts's rngFor: importing that
 * module starts an emulator of its own.
 */
function rngFor(seed: number, purpose: string): Random {
  let hash = seed >>> 0;
  for (const char of `listen:${purpose}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return new Random(hash);
}

/** The same JSON with the seed's collection id replaced: a fresh, empty place for a replay. */
export function retoken<T>(value: T, from: string, to: string): T {
  if (from === to) return value;
  const text = JSON.stringify(value).replaceAll(`/${from}/`, `/${to}/`).replaceAll(`"collectionId":"${from}"`, `"collectionId":"${to}"`);
  return JSON.parse(text) as T;
}

/**
 * Production refuses projections in listeners (INVALID_ARGUMENT "'select' clauses are not supported for real-time
 * queries", googleapis/nodejs-firestore#1090) while emulator 1.19.9 applies them: select is left out.
 */
function listenable(query: StructuredQuery): StructuredQuery {
  const { select: _select, ...rest } = query;
  return rest;
}

export async function makePlan(seed: number, oracleSide: Side): Promise<Plan> {
  const token = `listen${seed}x${run}`;
  // As in the REST differential, even seeds query a root collection (collection-group queries are generated, and
  // taken by the emulator, from the root only) and odd seeds a collection under a document. Either way every name
  // holds the token, which replays replace.
  const layout = seed % 2 === 0 ? { databaseRoot, parent: databaseRoot, collectionId: token } : { databaseRoot, parent: `${databaseRoot}/${token}/p`, collectionId: 'c' };
  const dataset = randomDataset(rngFor(seed, 'documents'), layout, 40);
  const collection = `${dataset.parent}/${dataset.collectionId}`;
  const topLevel = inScope(dataset, false).map((doc) => doc.name);
  const nested = inScope(dataset, true)
    .map((doc) => doc.name)
    .filter((name) => !topLevel.includes(name));
  const rng = rngFor(seed, 'plan');
  const fresh = [`${collection}/new0`, `${collection}/new1`, `${collection}/zz`, `${collection}/${rng.pick(topLevel).split('/').pop()}/${dataset.collectionId}/new2`];
  // No listener may ever hold it: another collection id, or the same one under another parent.
  const outsider = seed % 2 === 0 ? `${collection}/${rng.pick(topLevel).split('/').pop()}/other/new3` : `${databaseRoot}/${token}/q/${dataset.collectionId}/new3`;
  const written = [...rng.sample(topLevel, 16), ...rng.sample(nested, 4), ...fresh, outsider];
  const watched = [written[0]!, written[1]!, written[16]!, fresh[0]!];

  const listeners: ListenerSpec[] = [];
  let refusedByEmulator = 0;
  const queries = rngFor(seed, 'queries');
  await writeDataset(oracleSide, dataset);
  while (listeners.length < queryListenersPerSeed) {
    const query = listenable(randomValidQuery(queries, dataset));
    const limitToLast = query.orderBy !== undefined && query.limit !== undefined && query.offset === undefined && queries.chance(0.6);
    const spec: QueryListener = { kind: 'query', parent: dataset.parent, query, limitToLast };
    const answer = await rest(oracleSide, `${dataset.parent}:runQuery`, { structuredQuery: wireQuery(spec) });
    if (answer.status === 200) listeners.push(spec);
    else refusedByEmulator++;
  }
  listeners.push(...watched.map((name): DocumentListener => ({ kind: 'document', name })));

  const writes = rngFor(seed, 'writes');
  const pool = valuePool(databaseRoot);
  const steps = Array.from({ length: writesPerSeed }, (_, index) => randomStep(writes, writes.chance(0.3) ? writes.pick(watched) : writes.pick(written), index, pool));
  return { seed, token, dataset, listeners, steps, refusedByEmulator };
}

const mergeablePaths = ['a', 'b', 'c', 'tags', 'm', 'm.x'] as const;
const transformablePaths = ['b', 'm.x', 'tags', 'c'] as const;

function randomStep(rng: Random, name: string, index: number, pool: Value[]): WriteStep {
  const marker: Fields = { w: { integerValue: String(index + 1) } };
  const path = relativePath(name);
  const roll = rng.next();
  if (roll < 0.28) return { index, description: `set ${path}`, write: { update: { name, fields: { ...randomFields(rng, pool), ...marker } } } };
  if (roll < 0.58) {
    let paths: string[] = rng.sample(mergeablePaths, rng.between(1, 3));
    if (paths.includes('m')) paths = paths.filter((p) => p !== 'm.x');
    // Values drawn like the generator's documents; a masked path left without one is deleted.
    const source = randomFields(rng, pool);
    const fields: Fields = { ...marker };
    for (const p of paths) {
      if (p === 'm.x') {
        const m = source.m;
        const x = m && 'mapValue' in m ? m.mapValue.fields?.x : undefined;
        if (x) fields.m = { mapValue: { fields: { x } } };
      } else if (source[p]) fields[p] = source[p]!;
    }
    const mustExist = rng.chance(0.3);
    return {
      index,
      description: `merge ${path} mask [${paths.join(', ')}]${mustExist ? ' if it exists' : ''}`,
      write: { update: { name, fields }, updateMask: { fieldPaths: [...paths, 'w'] }, ...(mustExist && { currentDocument: { exists: true } }) },
    };
  }
  if (roll < 0.73) return { index, description: `delete ${path}`, write: { delete: name } };
  if (roll < 0.93) {
    const transforms = rng.sample(transformablePaths, rng.between(1, 2)).map((fieldPath) => randomTransform(rng, fieldPath));
    return {
      index,
      description: `transform ${path}: ${transforms.map((t) => Object.keys(t).find((key) => key !== 'fieldPath') + ' ' + t.fieldPath).join(', ')}`,
      write: { update: { name, fields: marker }, updateMask: { fieldPaths: ['w'] }, updateTransforms: transforms },
    };
  }
  return { index, description: `create ${path}`, write: { update: { name, fields: { ...randomFields(rng, pool), ...marker } }, currentDocument: { exists: false } } };
}

function randomTransform(rng: Random, fieldPath: string): FieldTransform {
  if (fieldPath === 'c') return { fieldPath, setToServerValue: 'REQUEST_TIME' };
  if (fieldPath === 'tags') {
    const values = rng.sample(arrayElementValues, rng.between(1, 3));
    return rng.chance(0.6) ? { fieldPath, appendMissingElements: { values } } : { fieldPath, removeAllFromArray: { values } };
  }
  const operand = rng.pick(numberValues);
  const roll = rng.int(fieldPath === 'b' ? 3 : 1);
  return roll === 0 ? { fieldPath, increment: operand } : roll === 1 ? { fieldPath, maximum: operand } : { fieldPath, minimum: operand };
}

export async function writeDataset(side: Side, dataset: Dataset): Promise<void> {
  const answer = await rest(side, `${databaseRoot}:commit`, { writes: dataset.documents.map(({ name, fields }) => ({ update: { name, fields } })) });
  assert.equal(answer.status, 200, `${side.label} refused the initial documents: ${JSON.stringify(answer.body).slice(0, 2000)}`);
}

export function stepDocument(step: WriteStep): string {
  const write = step.write as { update?: { name: string }; delete?: string };
  return write.update?.name ?? write.delete!;
}

/** Whether a listener could ever hold that document (names in the seed's own collection). */
export function mayHold(spec: ListenerSpec, name: string): boolean {
  if (spec.kind === 'document') return spec.name === name;
  const selector = spec.query.from[0]!;
  const segments = name.split('/');
  if (segments.at(-2) !== selector.collectionId || !name.startsWith(`${spec.parent}/`)) return false;
  // A plain query holds its collection's own documents; a collection group all of that id under its parent.
  return selector.allDescendants === true || segments.slice(0, -2).join('/') === spec.parent;
}
