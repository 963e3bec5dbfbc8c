/**
 * The generated corpus of the rules invariant (tests/rules/rules-invariant*.test.ts): per round, a ruleset over a
 * small schema, the documents it starts with, a sequence of writes the administrator makes while callers read and
 * listen, and the queries and documents those callers ask for. Deterministic for a seed.
 *
 * The schema: `postsN/{id}` (owner, visibility, level, title, a 2-d embedding), `usersN/{uid}/notesN/{id}` (the
 * same fields but the embedding; the collection group `notesN`), `sentinelN/{id}` (read by everyone: the test's
 * marker that listeners caught up). N is the round, so each round's collections are its own and rounds need no
 * clearing. Callers: nobody (no ID token) and three users with fixed uids, two with a custom `role` claim.
 */
import { Random } from './random-firestore.js';
import { randomCondition, type CollectionRules, type RoundRules } from './invariant-rules.js';

export const userIds = ['u1', 'u2', 'u3'] as const;
export type Uid = (typeof userIds)[number];
export type CallerName = 'anonymous' | Uid;
export const callerNames: readonly CallerName[] = ['anonymous', ...userIds];
/** Custom claims the administrator gives each user before it signs in. */
export const userClaims: Record<Uid, Record<string, string>> = { u1: { role: 'editor' }, u2: {}, u3: { role: 'viewer' } };

export const visibilities = ['public', 'private', 'team'] as const;

/** A document's content as the corpus writes it; any field may be missing (rules then meet an error). */
export interface DocData {
  owner?: string;
  visibility?: string;
  level?: number;
  title?: string;
  embedding?: [number, number];
}

export const dataFields = ['owner', 'visibility', 'level', 'title', 'embedding'] as const;
export type DataField = (typeof dataFields)[number];

export interface CollectionNames {
  posts: string;
  users: string;
  notes: string;
  sentinel: string;
}

export type Filter =
  | { field: 'visibility' | 'owner'; op: '=='; value: string }
  | { field: 'visibility'; op: 'in'; values: string[] }
  | { field: 'level'; op: '<=' | '>'; value: number }
  | { field: '__name__'; op: '=='; path: string };

export type QueryScope = { kind: 'collection'; parent: string; collectionId: string } | { kind: 'group'; collectionId: string };

/** A query shape of the corpus: equalities, one range at most, the name, an optional limit (order: by name, or the range field first). */
export interface QuerySpec {
  label: string;
  scope: QueryScope;
  filters: Filter[];
  limit?: number;
}

export type WriteStep =
  | { kind: 'set'; path: string; data: DocData }
  | { kind: 'update'; path: string; data: DocData; mask: DataField[] }
  | { kind: 'delete'; path: string };

export interface Round {
  index: number;
  names: CollectionNames;
  rules: RoundRules;
  /** The documents written before anything else, as the administrator. */
  seed: Map<string, DocData>;
  writes: WriteStep[];
  /** Queries every caller runs and listens to. */
  queries: QuerySpec[];
  /** Documents every caller gets and listens to (documents targets). */
  documents: string[];
}

export interface CorpusSize {
  rounds: number;
  postsPerRound: number;
  notesPerUser: number;
  writesPerRound: number;
}

export const defaultCorpusSize: CorpusSize = { rounds: 4, postsPerRound: 7, notesPerUser: 2, writesPerRound: 18 };

/**
 * The corpus size: the default, or INVARIANT_SCALE=N times as many rounds and writes (soak); INVARIANT_ROUNDS=N
 * keeps the first N rounds only (to replay one).
 */
export function corpusSize(): CorpusSize {
  const scale = Math.max(1, Number(process.env.INVARIANT_SCALE ?? 1) || 1);
  const rounds = defaultCorpusSize.rounds * scale;
  const kept = Number(process.env.INVARIANT_ROUNDS ?? rounds) || rounds;
  return { ...defaultCorpusSize, rounds: Math.min(rounds, kept), writesPerRound: Math.round(defaultCorpusSize.writesPerRound * Math.sqrt(scale)) };
}

/** INVARIANT_SEED=N replays a run; without it each run draws a seed (printed, so a failure can be replayed). */
export function corpusSeed(): number {
  const given = process.env.INVARIANT_SEED;
  return given !== undefined && given !== '' && given !== 'random' ? Number(given) >>> 0 : Math.floor(Math.random() * 2 ** 31);
}

export function generateCorpus(seed: number, size: CorpusSize = corpusSize()): Round[] {
  const rng = new Random(seed);
  return Array.from({ length: size.rounds }, (_, index) => generateRound(rng, index, size));
}

export function namesOf(index: number): CollectionNames {
  return { posts: `posts${index}`, users: `users${index}`, notes: `notes${index}`, sentinel: `sentinel${index}` };
}

function generateRound(rng: Random, index: number, size: CorpusSize): Round {
  const names = namesOf(index);
  const rules: RoundRules = {
    posts: collectionRules(rng, false),
    notes: collectionRules(rng, true),
    group: collectionRules(rng, false),
  };
  const seed = new Map<string, DocData>();
  for (let i = 0; i < size.postsPerRound; i++) seed.set(`${names.posts}/p${i}`, randomPost(rng));
  for (const uid of userIds) for (let i = 0; i < size.notesPerUser; i++) seed.set(`${names.users}/${uid}/${names.notes}/n${i}`, randomNote(rng, uid));
  const writes = randomWrites(rng, names, seed, size);
  // Queries naming a document, and documents read and listened to, are mostly ones the writes change.
  const written = [...new Set(writes.map((write) => write.path))];
  const everyPath = [...new Set([...seed.keys(), ...written])];
  const documents = [...new Set([...rng.sample(written, 3), ...rng.sample(everyPath, 2)])].slice(0, 4);
  return { index, names, rules, seed, writes, queries: randomQueries(rng, names, rng.chance(0.8) ? written : everyPath), documents };
}

/** get and list conditions: one `read` (same for both), split, or only one of them. */
function collectionRules(rng: Random, underUser: boolean): CollectionRules {
  const shape = rng.pick(['read', 'read', 'split', 'split', 'split', 'get only', 'list only'] as const);
  const get = randomCondition(rng, underUser);
  if (shape === 'read') return { combined: true, get, list: get };
  if (shape === 'get only') return { combined: false, get };
  const list = randomCondition(rng, underUser);
  return shape === 'list only' ? { combined: false, list } : { combined: false, get, list };
}

const ownerChoices = [...userIds, ...userIds, 'someone'];

function randomPost(rng: Random): DocData {
  const data: DocData = { title: `t${rng.int(1000)}` };
  if (rng.chance(0.9)) data.owner = rng.pick(ownerChoices);
  if (rng.chance(0.92)) data.visibility = rng.pick(visibilities);
  if (rng.chance(0.92)) data.level = rng.int(10);
  if (rng.chance(0.85)) data.embedding = [rng.int(10), rng.int(10)];
  return data;
}

function randomNote(rng: Random, uid: string): DocData {
  const data: DocData = { title: `n${rng.int(1000)}` };
  if (rng.chance(0.92)) data.owner = rng.chance(0.75) ? uid : rng.pick(ownerChoices);
  if (rng.chance(0.92)) data.visibility = rng.pick(visibilities);
  if (rng.chance(0.9)) data.level = rng.int(10);
  return data;
}

/**
 * Writes that move documents across every line the rules and queries draw: visibility flips (a public post made
 * private), owner changes, level changes, whole rewrites, deletes and re-creations, new documents.
 */
function randomWrites(rng: Random, names: CollectionNames, seed: Map<string, DocData>, size: CorpusSize): WriteStep[] {
  const state = new Map(seed);
  const writes: WriteStep[] = [];
  let created = 0;
  for (let i = 0; i < size.writesPerRound; i++) {
    const existing = [...state.keys()];
    const roll = rng.next();
    if (roll < 0.1 || existing.length === 0) {
      const path = rng.chance(0.6) ? `${names.posts}/x${created++}` : `${names.users}/${rng.pick(userIds)}/${names.notes}/x${created++}`;
      const data = path.startsWith(names.posts) ? randomPost(rng) : randomNote(rng, path.split('/')[1]!);
      state.set(path, data);
      writes.push({ kind: 'set', path, data });
    } else if (roll < 0.18) {
      const path = rng.pick(existing);
      state.delete(path);
      writes.push({ kind: 'delete', path });
    } else if (roll < 0.3) {
      const path = rng.pick(existing);
      const data = path.startsWith(names.posts) ? randomPost(rng) : randomNote(rng, path.split('/')[1]!);
      state.set(path, data);
      writes.push({ kind: 'set', path, data });
    } else {
      const path = rng.pick(existing);
      const before = state.get(path)!;
      const field = rng.pick(['visibility', 'visibility', 'owner', 'level', 'title'] as const);
      const data: DocData = { ...before };
      if (field === 'visibility') data.visibility = rng.chance(0.08) ? undefined : rng.pick(visibilities.filter((v) => v !== before.visibility));
      if (field === 'owner') data.owner = rng.chance(0.08) ? undefined : rng.pick(ownerChoices.filter((o) => o !== before.owner));
      if (field === 'level') data.level = rng.int(10);
      if (field === 'title') data.title = `t${rng.int(1000)}`;
      for (const key of dataFields) if (data[key] === undefined) delete data[key];
      state.set(path, data);
      writes.push({ kind: 'update', path, data, mask: [field] });
    }
  }
  return writes;
}

/** The queries of a round: the ones an app would write (and that rules may prove), and some they must refuse. */
function randomQueries(rng: Random, names: CollectionNames, paths: string[]): QuerySpec[] {
  const posts: QueryScope = { kind: 'collection', parent: '', collectionId: names.posts };
  const group: QueryScope = { kind: 'group', collectionId: names.notes };
  const notesOf = (uid: string): QueryScope => ({ kind: 'collection', parent: `${names.users}/${uid}`, collectionId: names.notes });
  const visibility = () => rng.pick(visibilities);
  const specs: Array<Omit<QuerySpec, 'label'>> = [
    { scope: posts, filters: [{ field: 'visibility', op: '==', value: 'public' }] },
    { scope: posts, filters: [{ field: 'visibility', op: '==', value: visibility() }], limit: 2 },
    { scope: posts, filters: [{ field: 'owner', op: '==', value: rng.pick(userIds) }] },
    { scope: posts, filters: [{ field: 'level', op: rng.pick(['<=', '>'] as const), value: rng.int(10) }] },
    { scope: posts, filters: [{ field: 'visibility', op: 'in', values: rng.sample(visibilities, 2) }] },
    { scope: posts, filters: [] },
    { scope: posts, filters: [{ field: '__name__', op: '==', path: rng.pick(paths.filter((path) => path.startsWith(`${names.posts}/`))) }] },
    { scope: group, filters: [{ field: 'owner', op: '==', value: rng.pick(userIds) }] },
    { scope: group, filters: [{ field: 'visibility', op: '==', value: visibility() }] },
    { scope: notesOf(rng.pick(userIds)), filters: [] },
    { scope: notesOf(rng.pick(userIds)), filters: [{ field: 'visibility', op: '==', value: visibility() }] },
  ];
  const notePaths = paths.filter((path) => path.includes(`/${names.notes}/`));
  if (notePaths.length) {
    const path = rng.pick(notePaths);
    specs.push({ scope: notesOf(path.split('/')[1]!), filters: [{ field: '__name__', op: '==', path }] });
  }
  return specs.map((spec) => ({ ...spec, label: queryLabel(spec) }));
}

export function queryLabel(spec: Omit<QuerySpec, 'label'>): string {
  const from = spec.scope.kind === 'group' ? `group(${spec.scope.collectionId})` : `${spec.scope.parent ? `${spec.scope.parent}/` : ''}${spec.scope.collectionId}`;
  const filters = spec.filters.map((filter) => {
    if (filter.field === '__name__') return `__name__ == ${filter.path}`;
    if (filter.op === 'in') return `${filter.field} in [${filter.values.join(', ')}]`;
    return `${filter.field} ${filter.op} ${JSON.stringify(filter.value)}`;
  });
  return `${from}${filters.length ? ` where ${filters.join(' && ')}` : ''}${spec.limit !== undefined ? ` limit ${spec.limit}` : ''}`;
}

// ---- documents as the model keeps them ------------------------------------------------------------

/** The collection id and parent of a document path. */
export function splitPath(path: string): { parent: string; collectionId: string; id: string } {
  const segments = path.split('/');
  return { parent: segments.slice(0, -2).join('/'), collectionId: segments[segments.length - 2]!, id: segments[segments.length - 1]! };
}

/** Whether a version matches a query's scope and filters (Firestore's semantics for the corpus's shapes). */
export function matchesQuery(spec: QuerySpec, path: string, data: DocData): boolean {
  const { parent, collectionId } = splitPath(path);
  if (collectionId !== spec.scope.collectionId) return false;
  if (spec.scope.kind === 'collection' && parent !== spec.scope.parent) return false;
  return spec.filters.every((filter) => {
    if (filter.field === '__name__') return path === filter.path;
    const value = data[filter.field];
    if (filter.op === 'in') return typeof value === 'string' && filter.values.includes(value);
    if (filter.field === 'level') return typeof value === 'number' && (filter.op === '<=' ? value <= filter.value : value > filter.value);
    return value === filter.value;
  });
}

/**
 * Query results in Firestore's order (the range field first, then the name) and limit. `withField`: only the
 * documents that have that field, as an aggregation over it considers (with several aggregations, the documents
 * having every field aggregated, count included).
 */
export function queryResults(spec: QuerySpec, docs: ReadonlyMap<string, DocData>, withField?: DataField): string[] {
  const range = spec.filters.find((filter) => filter.field === 'level');
  const matching = [...docs].filter(([path, data]) => matchesQuery(spec, path, data) && (withField === undefined || data[withField] !== undefined));
  matching.sort(([a, x], [b, y]) => (range ? x.level! - y.level! : 0) || compareNames(a, b));
  const paths = matching.map(([path]) => path);
  return spec.limit === undefined ? paths : paths.slice(0, spec.limit);
}

/** Document names in Firestore's order: segment by segment (the corpus has no numeric ids). */
export function compareNames(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return Buffer.compare(Buffer.from(x[i]!), Buffer.from(y[i]!));
  }
  return x.length - y.length;
}

export function sameData(a: DocData | undefined, b: DocData | undefined): boolean {
  return canonicalData(a) === canonicalData(b);
}

export function canonicalData(data: DocData | undefined): string {
  if (!data) return 'missing';
  return JSON.stringify(Object.fromEntries(dataFields.filter((key) => data[key] !== undefined).map((key) => [key, data[key]])));
}
