/**
 * The security-rules corpus, part three: the order of things and the finer semantics, each pinned by Google's
 * emulator. Preconditions against rules, rules against query validation, MapDiff's key sets, and queries on one
 * document's name (judged on the stored document, as a get is).
 */
import { commit, count, create, merge, query, remove, set, transaction, update, v2 } from './rules-cases.js';
import type { Ruleset } from './rules-run.js';

/**
 * A write's precondition names the method judged (exists=false: create, exists=true: update; none: the stored
 * state decides), and the rules are judged before the precondition is checked: a caller the rules refuse learns
 * nothing about whether the document exists (403, never 409 or 404).
 */
const preconditions: Ruleset = {
  name: 'preconditions and rules: which is judged first',
  rules: v2(`
    match /slots/{id} {
      allow get: if true;
      allow create: if request.resource.data.owner == request.auth.uid;
      allow update, delete: if resource.data.owner == request.auth.uid;
    }`),
  seed: { 'slots/s1': { owner: 'alice' } },
  cases: [
    commit('bob', [create('slots/s1', { owner: 'bob' })], 'create allowed by the rules, the document exists'),
    commit('bob', [create('slots/s1', { owner: 'alice' })], 'create refused by the rules, the document exists'),
    commit('bob', [set('slots/s1', { owner: 'bob' })], 'no precondition: an update, refused'),
    commit('alice', [set('slots/s1', { owner: 'alice', n: 1 })], 'no precondition: an update, allowed'),
    commit('alice', [update('slots/s9', { owner: 'alice' })], 'exists=true on a missing document: judged as an update'),
    commit('alice', [set('slots/s9', { owner: 'alice' })], 'no precondition on a missing document: a create'),
    commit('alice', [merge('slots/s9', { owner: 'alice' })]),
    commit('bob', [remove('slots/s9')], 'delete of a missing document'),
    commit('bob', [remove('slots/s1')]),
    transaction('bob', ['slots/s1'], [create('slots/s1', { owner: 'alice' })]),
    transaction('alice', ['slots/s9'], [update('slots/s9', { owner: 'alice' })]),
  ],
};

/**
 * `a.diff(b)`: addedKeys are the keys of `a` missing from `b`, removedKeys the keys of `b` missing from `a`,
 * changedKeys those in both with other values; affectedKeys all three. With `request.resource.data.diff(resource.data)`
 * "added" means written by this request.
 */
const mapDiff: Ruleset = {
  name: 'MapDiff: added, removed, changed, affected and unchanged keys',
  rules: v2(`
    match /added/{id} {
      allow update: if request.resource.data.diff(resource.data).addedKeys().hasOnly(['createdAt']);
    }
    match /addedSet/{id} {
      allow update: if request.resource.data.diff(resource.data).addedKeys() == ['createdAt'].toSet();
    }
    match /removed/{id} {
      allow update: if request.resource.data.diff(resource.data).removedKeys().hasOnly(['draft']);
    }
    match /changed/{id} {
      allow update: if request.resource.data.diff(resource.data).changedKeys().hasOnly(['n']);
    }
    match /unchanged/{id} {
      allow update: if request.resource.data.diff(resource.data).unchangedKeys().hasAll(['owner']);
    }
    match /reversed/{id} {
      allow update: if resource.data.diff(request.resource.data).addedKeys().size() == 0;
    }`),
  seed: Object.fromEntries(['added', 'addedSet', 'removed', 'changed', 'unchanged', 'reversed'].map((collection) => [`${collection}/a`, { owner: 'bob', n: 7, draft: true }])),
  cases: ['added', 'addedSet', 'removed', 'changed', 'unchanged', 'reversed'].flatMap((collection) => [
    commit('alice', [update(`${collection}/a`, {}, { serverTimestamps: ['createdAt'] })], 'adds createdAt'),
    commit('alice', [update(`${collection}/a`, { status: 'new' })], 'adds status'),
    commit('alice', [update(`${collection}/a`, { n: 8 }, { serverTimestamps: ['createdAt'] })], 'changes n, adds createdAt'),
    commit('alice', [update(`${collection}/a`, {}, { mask: ['draft'] })], 'removes draft'),
    commit('alice', [update(`${collection}/a`, { owner: 'alice' })], 'changes owner'),
    commit('alice', [update(`${collection}/a`, { n: 7 })], 'writes n unchanged'),
  ]),
};

/** A query whose filters name one document (`__name__ ==`, or `in` of one) is judged on that document, as a get. */
const namedQueries: Ruleset = {
  name: 'queries on one document name',
  rules: v2(`
    match /items/{itemId} {
      allow list: if resource.data.secret == 'x';
    }
    match /tagged/{itemId} {
      allow list: if 'a' in resource.data.tags && itemId.size() == 2;
    }`),
  seed: {
    'items/a': { secret: 'x', n: 1 },
    'items/b': { secret: 'y', n: 2 },
    'tagged/t1': { tags: ['a', 'b'] },
    'tagged/t2': { tags: ['b'] },
  },
  cases: [
    query('alice', { collection: 'items', where: [['__name__', 'EQUAL', { ref: 'items/a' }]] }),
    query('alice', { collection: 'items', where: [['__name__', 'EQUAL', { ref: 'items/b' }]] }),
    query('alice', { collection: 'items', where: [['__name__', 'EQUAL', { ref: 'items/zz' }]] }, 'a missing document'),
    query('alice', { collection: 'items', where: [['__name__', 'IN', [{ ref: 'items/a' }]]] }),
    query('alice', { collection: 'items', where: [['__name__', 'IN', [{ ref: 'items/a' }, { ref: 'items/b' }]]] }),
    query('alice', { collection: 'items', where: [['__name__', 'GREATER_THAN_OR_EQUAL', { ref: 'items/a' }]] }),
    query('alice', { collection: 'items', where: [['secret', 'EQUAL', 'x']] }),
    query('alice', { collection: 'items', where: [['__name__', 'EQUAL', { ref: 'items/a' }], ['n', 'EQUAL', 1]] }),
    count('alice', { collection: 'items', where: [['__name__', 'EQUAL', { ref: 'items/a' }]], limit: 1 }),
    query('alice', { collection: 'tagged', where: [['tags', 'ARRAY_CONTAINS', 'b'], ['__name__', 'EQUAL', { ref: 'tagged/t1' }]] }),
    query('alice', { collection: 'tagged', where: [['tags', 'ARRAY_CONTAINS', 'b'], ['__name__', 'EQUAL', { ref: 'tagged/t2' }]] }),
  ],
};

/**
 * Invalid queries, allowed by the rules or not: most checks come before the rules (400 either way), but the emulator
 * makes the one on `__name__ ==` beside an inequality after them (403 when the rules refuse the query).
 */
const invalidQueries: Ruleset = {
  name: 'invalid queries: which checks come before the rules',
  rules: v2(`
    match /open/{id} {
      allow list: if true;
    }
    match /closed/{id} {
      allow get: if true;
    }`),
  seed: { 'open/a': { m: { x: 1 }, n: 1 }, 'closed/a': { m: { x: 1 }, n: 1 } },
  cases: ['open', 'closed'].flatMap((collection) => [
    query('alice', { collection, where: [['m.x', 'LESS_THAN', 5], ['__name__', 'EQUAL', { ref: `${collection}/a` }]] }, 'equality on the key beside an inequality'),
    query('alice', { collection, where: [['n', 'IN', [1, 2]], ['m.x', 'NOT_IN', [3]]] }, 'in beside not-in'),
    query('alice', { collection, orderBy: [['n']], limit: -1 }, 'a negative limit'),
  ]),
};

/** An OR query (or an `in`) may be allowed branch by branch, each branch by another allow statement. */
const disjunctions: Ruleset = {
  name: 'OR and in queries, each branch allowed by another statement',
  rules: v2(`
    match /docs/{id} {
      allow list: if resource.data.visibility == 'public';
      allow list: if request.auth != null && resource.data.owner == request.auth.uid;
      allow list: if resource.data.visibility == 'shared' && resource.data.n < 5;
    }
    match /mixed/{itemId} {
      allow list: if ((resource.data.title.size() >= 5 || itemId.matches('i[0-2]')) || resource.data.n <= 8.5);
      allow list: if !(resource.data.status.size() == 6);
    }`),
  seed: {
    'docs/a': { visibility: 'public', owner: 'bob', n: 1 },
    'docs/b': { visibility: 'private', owner: 'alice', n: 2 },
    'docs/c': { visibility: 'shared', owner: 'carol', n: 3 },
    'mixed/i1': { n: 0, status: 'draft' },
    'mixed/i4': { n: 10, status: 'open', title: 'Hello World' },
  },
  cases: [
    query('alice', { collection: 'docs', where: [['visibility', 'EQUAL', 'public'], ['owner', 'EQUAL', 'alice']], or: true }),
    query('bob', { collection: 'docs', where: [['visibility', 'EQUAL', 'public'], ['owner', 'EQUAL', 'alice']], or: true }, 'one branch refused'),
    query(null, { collection: 'docs', where: [['visibility', 'IN', ['public', 'shared']]] }, 'the shared branch says nothing of n'),
    query(null, { collection: 'docs', where: [['visibility', 'IN', ['public', 'shared']], ['n', 'LESS_THAN', 5]] }),
    query(null, { collection: 'docs', where: [['visibility', 'EQUAL', 'public'], ['n', 'LESS_THAN', 4]], or: true }, 'the n branch says nothing of visibility'),
    count('alice', { collection: 'docs', where: [['visibility', 'EQUAL', 'public'], ['owner', 'EQUAL', 'alice']], or: true }),
    query(null, { collection: 'mixed', where: [['status', 'IN', ['open']], ['n', 'LESS_THAN', 8]], or: true }, 'errors beside an int range under a float bound'),
    query(null, { collection: 'mixed', where: [['n', 'LESS_THAN', 8]] }),
    query(null, { collection: 'mixed', where: [['n', 'LESS_THAN_OR_EQUAL', 8]] }),
    query(null, { collection: 'mixed', where: [['n', 'LESS_THAN', 9]] }, 'n < 9 lets 8.7 through'),
    query(null, { collection: 'mixed', where: [['status', 'IN', ['open']]] }),
  ],
};

export const edgesCorpus: Ruleset[] = [preconditions, mapDiff, namedQueries, invalidQueries, disjunctions];
