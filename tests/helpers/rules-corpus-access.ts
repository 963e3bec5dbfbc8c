/**
 * The security-rules corpus, part one: who may touch what. Ownership, roles looked up with get(), collection-group
 * and recursive-wildcard matches, public/private visibility with list rules, query limits, and claims from the
 * ID token. Each ruleset is the kind an app ships, with its seed and the requests a client of that app sends.
 */
import { batchGet, commit, count, create, fromEach, get, merge, query, remove, set, transaction, update, v2 } from './rules-cases.js';
import type { Ruleset } from './rules-run.js';
import type { Caller } from './rules-tokens.js';

const everyone: Caller[] = [null, 'alice', 'bob', 'carol', 'dave', 'anon', 'mallory'];

const ownership: Ruleset = {
  name: 'ownership: users/{uid} and everything under it',
  rules: v2(`
    match /users/{userId} {
      allow read, write: if request.auth != null && request.auth.uid == userId;
      match /{document=**} {
        allow read, write: if request.auth != null && request.auth.uid == userId;
      }
    }`),
  seed: {
    'users/alice': { name: 'Alice' },
    'users/bob': { name: 'Bob' },
    'users/alice/notes/n1': { text: 'one', n: 1 },
    'users/alice/notes/n2': { text: 'two', n: 2 },
    'users/alice/notes/n1/comments/c1': { text: 'deep' },
    'users/bob/notes/b1': { text: 'bob', n: 1 },
  },
  cases: [
    ...fromEach(everyone, (caller) => get(caller, 'users/alice')),
    get('alice', 'users/alice/notes/n1/comments/c1', 'three levels down'),
    get('bob', 'users/alice/notes/n1/comments/c1'),
    get('dave', 'users/dave', 'own document, missing: allowed, so 404'),
    get('dave', 'users/dave/notes/x'),
    batchGet('alice', ['users/alice', 'users/alice/notes/n1', 'users/alice/notes/zz']),
    batchGet('alice', ['users/alice', 'users/bob'], 'one document denied denies the batch'),
    query('alice', { parent: 'users/alice', collection: 'notes' }),
    query('bob', { parent: 'users/alice', collection: 'notes' }),
    query('alice', { parent: 'users/alice', collection: 'notes', where: [['n', 'GREATER_THAN', 1]], orderBy: [['n', 'DESCENDING']] }),
    query('alice', { collection: 'users' }, 'the whole users collection'),
    query('alice', { collection: 'users', where: [['__name__', 'EQUAL', { ref: 'users/alice' }]] }),
    query('alice', { collection: 'notes', group: true }, 'no recursive rule for the group'),
    count('alice', { parent: 'users/alice', collection: 'notes' }),
    count('bob', { parent: 'users/alice', collection: 'notes' }),
    commit('alice', [create('users/alice/notes/n3', { text: 'new', n: 3 })]),
    commit('bob', [create('users/alice/notes/n3', { text: 'intruder' })]),
    commit(null, [create('users/alice/notes/n3', { text: 'nobody' })]),
    commit('alice', [update('users/alice/notes/n1', { text: 'edited' })]),
    commit('alice', [update('users/alice/notes/missing', { text: 'edited' })], 'update of a missing document: allowed, so NOT_FOUND'),
    commit('alice', [create('users/alice/notes/n1', { text: 'again' })], 'create of an existing document: allowed, so ALREADY_EXISTS'),
    commit('alice', [set('users/alice', { name: 'Alicia' }), remove('users/alice/notes/n2')]),
    commit('alice', [set('users/alice', { name: 'Alicia' }), remove('users/bob/notes/b1')], 'one write denied denies the batch'),
    commit('dave', [set('users/dave', { name: 'Dave' }), set('users/dave/a/b/c/d', { deep: true })]),
    commit('bob', [remove('users/alice')]),
    transaction('alice', ['users/alice', 'users/alice/notes/n1'], [update('users/alice/notes/n1', { n: 10 })]),
    transaction('bob', ['users/alice'], [update('users/bob/notes/b1', { n: 10 })], 'the read in the transaction is denied'),
    transaction('bob', ['users/bob'], [update('users/alice/notes/n1', { n: 10 })], 'the commit in the transaction is denied'),
  ],
};

const roles: Ruleset = {
  name: 'roles looked up with get() on the caller\'s users document',
  rules: v2(`
    function userDoc() {
      return get(/databases/$(database)/documents/users/$(request.auth.uid));
    }
    function hasRole(role) {
      return request.auth != null
        && exists(/databases/$(database)/documents/users/$(request.auth.uid))
        && userDoc().data.role == role;
    }
    match /users/{userId} {
      allow get: if request.auth != null && (request.auth.uid == userId || hasRole('admin'));
      allow list: if hasRole('admin');
      allow write: if hasRole('admin');
    }
    match /projects/{projectId} {
      allow read: if hasRole('admin') || hasRole('member');
      allow create, update: if hasRole('admin') || (hasRole('member') && request.resource.data.lead == request.auth.uid);
      allow delete: if false;
      match /tasks/{taskId} {
        allow read, write: if get(/databases/$(database)/documents/projects/$(projectId)).data.members.hasAny([request.auth.uid]);
      }
    }`),
  seed: {
    'users/alice': { role: 'admin' },
    'users/bob': { role: 'member' },
    'users/carol': { role: 'guest' },
    'projects/p1': { name: 'Apollo', lead: 'alice', members: ['alice', 'carol'] },
    'projects/p2': { name: 'Gemini', lead: 'bob', members: ['bob'] },
    'projects/p1/tasks/t1': { title: 'launch' },
    'projects/p2/tasks/t2': { title: 'dock' },
  },
  cases: [
    ...fromEach(everyone, (caller) => get(caller, 'projects/p1')),
    ...fromEach(['alice', 'bob', 'carol', 'dave'], (caller) => query(caller, { collection: 'projects' })),
    ...fromEach(['alice', 'bob', 'carol'], (caller) => get(caller, 'users/bob')),
    query('alice', { collection: 'users', where: [['role', 'EQUAL', 'member']] }),
    query('bob', { collection: 'users', where: [['role', 'EQUAL', 'member']] }),
    count('bob', { collection: 'projects' }),
    commit('alice', [create('projects/p3', { name: 'Mercury', lead: 'carol', members: [] })]),
    commit('bob', [create('projects/p3', { name: 'Mercury', lead: 'bob', members: ['bob'] })], 'a member leading it'),
    commit('bob', [create('projects/p3', { name: 'Mercury', lead: 'alice' })]),
    commit('carol', [create('projects/p3', { name: 'Mercury', lead: 'carol' })]),
    commit('alice', [remove('projects/p2')]),
    commit('alice', [set('users/dave', { role: 'member' })]),
    commit('bob', [set('users/bob', { role: 'admin' })], 'promoting oneself'),
    ...fromEach(['alice', 'bob', 'carol'], (caller) => get(caller, 'projects/p1/tasks/t1')),
    query('carol', { parent: 'projects/p1', collection: 'tasks' }),
    query('bob', { parent: 'projects/p1', collection: 'tasks' }),
    commit('carol', [merge('projects/p1/tasks/t1', { done: true })]),
    commit('bob', [merge('projects/p1/tasks/t1', { done: true })]),
    batchGet('alice', ['projects/p1', 'projects/p2', 'users/carol', 'users/bob', 'projects/p9']),
    transaction('bob', ['projects/p2'], [update('projects/p2', { name: 'Gemini 2', lead: 'bob' })]),
  ],
};

const collectionGroups: Ruleset = {
  name: 'recursive wildcards and collection-group rules',
  rules: v2(`
    match /forums/{forumId} {
      allow read: if true;
      match /posts/{postId} {
        allow read: if resource.data.published == true || request.auth.uid == resource.data.author;
        allow create: if request.auth != null && request.resource.data.author == request.auth.uid;
      }
    }
    match /{path=**}/posts/{postId} {
      allow list: if resource.data.published == true;
    }
    match /archive/{rest=**} {
      allow read: if request.auth.token.role == 'admin';
    }`),
  seed: {
    'forums/f1': { title: 'general' },
    'forums/f1/posts/p1': { published: true, author: 'bob', rank: 1 },
    'forums/f1/posts/p2': { published: false, author: 'bob', rank: 2 },
    'forums/f2/posts/p3': { published: true, author: 'carol', rank: 3 },
    'users/alice/posts/u1': { published: true, author: 'alice', rank: 4 },
    'archive/2020': { year: 2020 },
    'archive/2020/months/jan': { month: 1 },
    'archive/2020/months/jan/days/d1': { day: 1 },
  },
  cases: [
    query(null, { collection: 'posts', group: true, where: [['published', 'EQUAL', true]] }),
    query(null, { collection: 'posts', group: true }),
    query('bob', { collection: 'posts', group: true, where: [['author', 'EQUAL', 'bob']] }),
    query('bob', { collection: 'posts', group: true, where: [['published', 'EQUAL', true]], orderBy: [['rank', 'DESCENDING']], limit: 2 }),
    query(null, { collection: 'posts', group: true, where: [['published', 'IN', [true]]] }),
    query(null, { collection: 'posts', group: true, where: [['published', 'NOT_EQUAL', false]] }),
    query(null, { parent: 'forums/f1', collection: 'posts', where: [['published', 'EQUAL', true]] }),
    query('bob', { parent: 'forums/f1', collection: 'posts', where: [['author', 'EQUAL', 'bob']] }),
    query('carol', { parent: 'forums/f1', collection: 'posts', where: [['author', 'EQUAL', 'bob']] }),
    count(null, { collection: 'posts', group: true, where: [['published', 'EQUAL', true]] }),
    ...fromEach(['bob', 'carol', null], (caller) => get(caller, 'forums/f1/posts/p2')),
    get(null, 'users/alice/posts/u1', 'only a list rule matches it'),
    query(null, { parent: 'users/alice', collection: 'posts', where: [['published', 'EQUAL', true]] }),
    ...fromEach(['alice', 'bob', null], (caller) => get(caller, 'archive/2020/months/jan/days/d1')),
    query('alice', { parent: 'archive/2020', collection: 'months' }),
    query('alice', { collection: 'days', group: true }, 'archive is not a group rule'),
    query(null, { collection: 'forums' }),
    commit('carol', [create('forums/f1/posts/p9', { author: 'carol', published: false })]),
    commit('carol', [create('forums/f1/posts/p9', { author: 'bob', published: false })]),
    commit('carol', [create('users/carol/posts/p9', { author: 'carol', published: true })], 'no write rule there'),
  ],
};

const visibility: Ruleset = {
  name: 'public/private visibility: functions with let, list rules on resource.data',
  rules: v2(`
    function signedIn() {
      return request.auth != null;
    }
    function canSee(doc) {
      let isPublic = doc.visibility == 'public';
      let isOwner = signedIn() && doc.owner == request.auth.uid;
      let isShared = signedIn() && doc.get('sharedWith', []).hasAny([request.auth.uid]);
      return isPublic || isOwner || isShared;
    }
    match /docs/{docId} {
      allow get: if canSee(resource.data);
      allow list: if resource.data.visibility == 'public' || (signedIn() && resource.data.owner == request.auth.uid);
      allow create: if signedIn() && request.resource.data.owner == request.auth.uid
        && request.resource.data.visibility in ['public', 'private'];
      allow update: if signedIn() && resource.data.owner == request.auth.uid
        && request.resource.data.owner == resource.data.owner;
      allow delete: if signedIn() && resource.data.owner == request.auth.uid;
    }`),
  seed: {
    'docs/d1': { owner: 'alice', visibility: 'public', title: 'a', score: 3 },
    'docs/d2': { owner: 'alice', visibility: 'private', title: 'b', score: 1, sharedWith: ['bob'] },
    'docs/d3': { owner: 'bob', visibility: 'private', title: 'c', score: 2 },
    'docs/d4': { owner: 'carol', visibility: 'public', title: 'd', score: 5 },
  },
  cases: [
    ...fromEach(['alice', 'bob', 'carol', null], (caller) => get(caller, 'docs/d2')),
    get(null, 'docs/d1'),
    get(null, 'docs/nope', 'resource is null: the rule errs'),
    query(null, { collection: 'docs', where: [['visibility', 'EQUAL', 'public']] }),
    query(null, { collection: 'docs', where: [['visibility', 'EQUAL', 'public']], orderBy: [['score', 'DESCENDING']], limit: 1 }),
    query(null, { collection: 'docs', where: [['visibility', 'IN', ['public']]] }),
    query(null, { collection: 'docs', where: [['visibility', 'IN', ['public', 'private']]] }),
    query(null, { collection: 'docs' }),
    query('alice', { collection: 'docs', where: [['owner', 'EQUAL', 'alice']] }),
    query('bob', { collection: 'docs', where: [['owner', 'EQUAL', 'alice']] }),
    query('alice', { collection: 'docs', where: [['owner', 'EQUAL', 'alice'], ['visibility', 'EQUAL', 'private']] }),
    query('alice', { collection: 'docs', where: [['visibility', 'EQUAL', 'public'], ['owner', 'EQUAL', 'alice']], or: true }, 'OR of two allowed halves'),
    query('bob', { collection: 'docs', where: [['sharedWith', 'ARRAY_CONTAINS', 'bob']] }),
    query(null, { collection: 'docs', where: [['visibility', 'NOT_EQUAL', 'private']] }),
    query(null, { collection: 'docs', where: [['visibility', 'GREATER_THAN_OR_EQUAL', 'public'], ['visibility', 'LESS_THAN_OR_EQUAL', 'public']] }),
    count(null, { collection: 'docs', where: [['visibility', 'EQUAL', 'public']] }),
    count('alice', { collection: 'docs' }),
    batchGet('bob', ['docs/d1', 'docs/d2', 'docs/d3']),
    batchGet('carol', ['docs/d1', 'docs/d2']),
    commit('carol', [create('docs/d5', { owner: 'carol', visibility: 'private' })]),
    commit('carol', [create('docs/d5', { owner: 'carol', visibility: 'secret' })]),
    commit('carol', [create('docs/d5', { owner: 'alice', visibility: 'public' })]),
    commit('alice', [update('docs/d2', { visibility: 'public' })]),
    commit('alice', [update('docs/d2', { owner: 'bob' })]),
    commit('bob', [update('docs/d2', { title: 'mine' })]),
    commit('alice', [set('docs/d1', { title: 'replaced' })], 'a set without owner drops it'),
    commit('alice', [merge('docs/d1', { title: 'merged' })]),
    commit('bob', [remove('docs/d3'), remove('docs/d1')]),
    commit('bob', [remove('docs/d3'), remove('docs/d404')]),
  ],
};

const queryLimits: Ruleset = {
  name: 'request.query.limit and orderBy',
  rules: v2(`
    match /feed/{id} {
      allow get: if true;
      allow list: if request.query.limit <= 10;
    }
    match /leaderboard/{id} {
      allow list: if request.auth != null && request.query.limit != null && request.query.limit <= 3
        && resource.data.hidden == false;
    }`),
  seed: Object.fromEntries([
    ...Array.from({ length: 12 }, (_, i) => [`feed/f${String(i).padStart(2, '0')}`, { n: i, topic: i % 2 ? 'odd' : 'even' }] as const),
    ...Array.from({ length: 5 }, (_, i) => [`leaderboard/u${i}`, { score: 10 * i, hidden: i === 4 }] as const),
  ]),
  cases: [
    query(null, { collection: 'feed', limit: 5 }),
    query(null, { collection: 'feed', limit: 10, orderBy: [['n', 'DESCENDING']] }),
    query(null, { collection: 'feed', limit: 11 }),
    query(null, { collection: 'feed' }, 'no limit'),
    query(null, { collection: 'feed', where: [['topic', 'EQUAL', 'odd']], limit: 3 }),
    count(null, { collection: 'feed', limit: 5 }),
    count(null, { collection: 'feed' }),
    query('alice', { collection: 'leaderboard', where: [['hidden', 'EQUAL', false]], orderBy: [['score', 'DESCENDING']], limit: 3 }),
    query('alice', { collection: 'leaderboard', where: [['hidden', 'EQUAL', false]], limit: 4 }),
    query('alice', { collection: 'leaderboard', where: [['hidden', 'EQUAL', false]] }),
    query('alice', { collection: 'leaderboard', orderBy: [['score', 'DESCENDING']], limit: 3 }),
    query(null, { collection: 'leaderboard', where: [['hidden', 'EQUAL', false]], limit: 3 }),
    get(null, 'feed/f03'),
    get(null, 'leaderboard/u1', 'list only'),
    batchGet(null, ['feed/f01', 'feed/f02']),
  ],
};

const tokenClaims: Ruleset = {
  name: 'email_verified, sign_in_provider and custom claims',
  rules: v2(`
    match /reports/{id} {
      allow read: if request.auth != null && request.auth.token.email_verified == true;
      allow create: if request.auth.token.firebase.sign_in_provider != 'anonymous' && request.auth.token.email_verified;
      allow update: if request.auth.token.role in ['admin', 'editor'];
      allow delete: if request.auth.token.role == 'admin' || request.auth.token.get('admin', false) == true;
    }
    match /staff/{id} {
      allow read: if request.auth.token.firebase.sign_in_provider == 'google.com'
        || 'google.com' in request.auth.token.firebase.identities;
      allow write: if request.auth.token.email.matches('.*@example[.]com$') && request.auth.token.email_verified == true;
    }
    match /tokens/{uid} {
      allow get: if request.auth.uid == uid && request.auth.token.sub == uid
        && request.auth.token.firebase.identities.keys().hasAny(['email', 'google.com']);
    }`),
  seed: {
    'reports/r1': { title: 'q1' },
    'staff/s1': { name: 'Sam' },
    'tokens/alice': {},
    'tokens/anon1': {},
  },
  cases: [
    ...fromEach(everyone, (caller) => get(caller, 'reports/r1')),
    ...fromEach(everyone, (caller) => commit(caller, [create('reports/r2', { title: 'q2' })])),
    ...fromEach(everyone, (caller) => commit(caller, [update('reports/r1', { title: 'edited' })])),
    ...fromEach(everyone, (caller) => commit(caller, [remove('reports/r1')])),
    ...fromEach(everyone, (caller) => get(caller, 'staff/s1')),
    ...fromEach(everyone, (caller) => commit(caller, [set('staff/s2', { name: 'new' })])),
    query('alice', { collection: 'reports' }),
    query('anon', { collection: 'reports' }),
    get('alice', 'tokens/alice'),
    get('anon', 'tokens/anon1'),
  ],
};

export const accessCorpus: Ruleset[] = [ownership, roles, collectionGroups, visibility, queryLimits, tokenClaims];
