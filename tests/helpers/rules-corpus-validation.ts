/**
 * The security-rules corpus, part two: what may be written. Field validation with diff().affectedKeys(), type and
 * size checks, server timestamps against request.time, batches judged with getAfter()/existsAfter(), string
 * methods, ternaries and number types, and a v1 ruleset with overlapping matches.
 */
import { batchGet, commit, count, create, get, merge, query, remove, set, transaction, update, v2 } from './rules-cases.js';
import type { Ruleset } from './rules-run.js';

const fieldValidation: Ruleset = {
  name: 'field validation: keys().hasOnly, diff().affectedKeys(), likes + 1',
  rules: v2(`
    match /posts/{postId} {
      allow read: if true;
      allow create: if request.auth != null
        && request.resource.data.keys().hasAll(['title', 'body', 'authorId'])
        && request.resource.data.keys().hasOnly(['title', 'body', 'authorId', 'tags'])
        && request.resource.data.authorId == request.auth.uid
        && request.resource.data.title is string
        && request.resource.data.title.size() > 0 && request.resource.data.title.size() <= 20
        && request.resource.data.body is string
        && (!('tags' in request.resource.data) || (request.resource.data.tags is list && request.resource.data.tags.size() <= 3));
      allow update: if request.auth != null && resource.data.authorId == request.auth.uid
        && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['title', 'body', 'tags'])
        && request.resource.data.title is string && request.resource.data.title.size() <= 20;
      allow update: if request.auth != null
        && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['likes'])
        && request.resource.data.likes == resource.data.likes + 1;
      allow delete: if request.auth != null && resource.data.authorId == request.auth.uid;
    }`),
  seed: {
    'posts/p1': { title: 'Hello', body: 'first', authorId: 'alice', likes: 0 },
    'posts/p2': { title: 'Again', body: 'second', authorId: 'bob', likes: 5, tags: ['x'] },
  },
  cases: [
    commit('alice', [create('posts/p3', { title: 'New', body: 'text', authorId: 'alice' })]),
    commit('alice', [create('posts/p3', { title: 'New', body: 'text', authorId: 'alice', tags: ['a', 'b', 'c'] })]),
    commit('alice', [create('posts/p3', { title: 'New', body: 'text', authorId: 'alice', tags: ['a', 'b', 'c', 'd'] })]),
    commit('alice', [create('posts/p3', { title: 'New', body: 'text', authorId: 'alice', tags: 'a' })]),
    commit('alice', [create('posts/p3', { title: 'New', authorId: 'alice' })], 'body missing'),
    commit('alice', [create('posts/p3', { title: 'New', body: 'text', authorId: 'alice', likes: 100 })], 'extra key'),
    commit('alice', [create('posts/p3', { title: 'New', body: 'text', authorId: 'bob' })]),
    commit('alice', [create('posts/p3', { title: 'x'.repeat(21), body: 'text', authorId: 'alice' })]),
    commit('alice', [create('posts/p3', { title: 'x'.repeat(20), body: 'text', authorId: 'alice' })]),
    commit('alice', [create('posts/p3', { title: '', body: 'text', authorId: 'alice' })]),
    commit('alice', [create('posts/p3', { title: 7, body: 'text', authorId: 'alice' })]),
    commit(null, [create('posts/p3', { title: 'New', body: 'text', authorId: 'alice' })]),
    commit('alice', [update('posts/p1', { title: 'Edited' })]),
    commit('alice', [update('posts/p1', { title: 'Edited', authorId: 'bob' })]),
    commit('alice', [update('posts/p1', { body: 'new body', tags: ['t'] })]),
    commit('alice', [update('posts/p1', { likes: 1 })], 'the author liking, by the second rule'),
    commit('carol', [update('posts/p1', {}, { increments: { likes: 1 } })], 'like by increment'),
    commit('carol', [update('posts/p1', {}, { increments: { likes: 2 } })]),
    commit('carol', [update('posts/p2', { likes: 6 })]),
    commit('carol', [update('posts/p2', { likes: 6, title: 'hijack' })]),
    commit('carol', [update('posts/p2', { likes: 6.0 })], 'int field, written as a whole double? (JSON 6 is an int here)'),
    commit('carol', [update('posts/p2', { likes: { double: 6 } })], 'likes + 1 == 6.0'),
    commit('bob', [update('posts/p2', {}, { mask: ['tags'] })], 'removing a field by mask'),
    commit('bob', [set('posts/p2', { title: 'Again', body: 'second', authorId: 'bob', likes: 5, tags: ['x'] })], 'a set that changes nothing'),
    commit('bob', [set('posts/p2', { title: 'Again', body: 'second', authorId: 'bob', likes: 5 })], 'a set that drops tags'),
    commit('bob', [merge('posts/p2', { title: 'Merged' })]),
    commit('alice', [remove('posts/p1')]),
    commit('bob', [remove('posts/p1')]),
    commit('bob', [remove('posts/p404')], 'delete of a missing document: resource is null'),
  ],
};

const typeChecks: Ruleset = {
  name: 'type checks and size limits on a profile',
  rules: v2(`
    match /profiles/{uid} {
      allow read: if request.auth != null;
      allow write: if request.auth.uid == uid
        && request.resource.data.displayName is string
        && request.resource.data.displayName.size() >= 3
        && request.resource.data.displayName.size() <= 15
        && request.resource.data.age is int && request.resource.data.age >= 13 && request.resource.data.age < 130
        && (!('website' in request.resource.data) || request.resource.data.website.matches('https://.*'))
        && request.resource.data.get('score', 0) is number
        && request.resource.data.get('tags', []) is list
        && request.resource.data.get('prefs', {}) is map
        && (request.resource.data.get('birthday', null) == null || request.resource.data.birthday is timestamp)
        && request.resource.data.size() <= 8;
    }`),
  seed: { 'profiles/bob': { displayName: 'Bobby', age: 40 } },
  cases: [
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30 })]),
    commit('alice', [set('profiles/alice', { displayName: 'Al', age: 30 })]),
    commit('alice', [set('profiles/alice', { displayName: 'Zoë', age: 30 })], 'three characters, four bytes'),
    commit('alice', [set('profiles/alice', { displayName: 'x'.repeat(16), age: 30 })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 12 })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30.5 })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: { double: 30 } })], 'a whole double is not an int'),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: '30' })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, website: 'https://a.example' })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, website: 'http://a.example' })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, score: 1.5 })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, score: 'high' })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, tags: ['a'], prefs: { dark: true } })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, tags: { a: 1 } })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, prefs: ['dark'] })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, birthday: new Date('1990-05-01T00:00:00Z') })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, birthday: '1990-05-01' })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, birthday: null })]),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 })], 'nine keys'),
    commit('alice', [set('profiles/alice', { displayName: 'Alice', age: 30, a: 1, b: 2, c: 3, d: 4, e: 5 })]),
    commit('alice', [set('profiles/bob', { displayName: 'Alice', age: 30 })]),
    commit('bob', [update('profiles/bob', { age: 41 })]),
    commit('bob', [update('profiles/bob', { age: null })]),
    commit('bob', [remove('profiles/bob')], 'request.resource on a delete'),
    get('bob', 'profiles/bob'),
    get(null, 'profiles/bob'),
  ],
};

/** Seeds and cases in minutes from the time the corpus is built; the test runs well within them. */
function timestamps(now: Date): Ruleset {
  const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
  return {
    name: 'timestamps: createdAt == request.time, edit windows, future events',
    rules: v2(`
    match /messages/{id} {
      allow read: if request.auth != null;
      allow create: if request.auth != null
        && request.resource.data.createdAt == request.time
        && request.resource.data.senderId == request.auth.uid
        && request.resource.data.text is string && request.resource.data.text.size() < 100;
      allow update: if request.auth.uid == resource.data.senderId
        && request.resource.data.createdAt == resource.data.createdAt
        && request.resource.data.editedAt == request.time
        && request.time < resource.data.createdAt + duration.value(1, 'h');
      allow delete: if request.auth.uid == resource.data.senderId
        && request.time > resource.data.createdAt + duration.value(1, 'd');
    }
    match /events/{id} {
      allow read: if resource.data.startsAt > request.time;
      allow create: if request.resource.data.startsAt is timestamp
        && request.resource.data.startsAt > request.time
        && request.resource.data.startsAt.year() < 2100
        && request.resource.data.startsAt.toMillis() % 1000 == 0;
    }`),
    seed: {
      'messages/m1': { senderId: 'alice', createdAt: minutesAgo(2 * 24 * 60), text: 'old' },
      'messages/m2': { senderId: 'alice', createdAt: minutesAgo(10), text: 'recent' },
      'events/e1': { startsAt: new Date('2099-01-01T00:00:00Z'), name: 'future' },
      'events/e2': { startsAt: new Date('2001-01-01T00:00:00Z'), name: 'past' },
    },
    cases: [
      commit('alice', [create('messages/m3', { senderId: 'alice', text: 'hi' }, { serverTimestamps: ['createdAt'] })]),
      commit('alice', [create('messages/m3', { senderId: 'alice', text: 'hi', createdAt: now })], 'a client clock is not request.time'),
      commit('alice', [create('messages/m3', { senderId: 'bob', text: 'hi' }, { serverTimestamps: ['createdAt'] })]),
      commit('alice', [create('messages/m3', { senderId: 'alice', text: 'x'.repeat(100) }, { serverTimestamps: ['createdAt'] })]),
      commit('alice', [update('messages/m2', { text: 'edited' }, { serverTimestamps: ['editedAt'] })]),
      commit('alice', [update('messages/m2', { text: 'edited', editedAt: now })]),
      commit('alice', [update('messages/m1', { text: 'edited' }, { serverTimestamps: ['editedAt'] })], 'past the edit window'),
      commit('bob', [update('messages/m2', { text: 'edited' }, { serverTimestamps: ['editedAt'] })]),
      commit('alice', [update('messages/m2', { text: 'edited' }, { serverTimestamps: ['editedAt', 'createdAt'] })], 'createdAt moved'),
      commit('alice', [remove('messages/m1')]),
      commit('alice', [remove('messages/m2')]),
      get(null, 'events/e1'),
      get(null, 'events/e2'),
      query(null, { collection: 'events', where: [['startsAt', 'GREATER_THAN', new Date('2098-01-01T00:00:00Z')]] }),
      query(null, { collection: 'events', where: [['startsAt', 'GREATER_THAN', new Date('2000-01-01T00:00:00Z')]] }),
      query(null, { collection: 'events' }),
      query('alice', { collection: 'messages', orderBy: [['createdAt', 'DESCENDING']], limit: 1 }),
      commit(null, [create('events/e3', { startsAt: new Date('2050-06-01T10:00:00Z') })]),
      commit(null, [create('events/e3', { startsAt: new Date('2050-06-01T10:00:00.250Z') })], 'milliseconds'),
      commit(null, [create('events/e3', { startsAt: new Date('2150-06-01T10:00:00Z') })]),
      commit(null, [create('events/e3', { startsAt: new Date('2020-06-01T10:00:00Z') })]),
      commit(null, [create('events/e3', { startsAt: '2050-06-01' })]),
      commit(null, [create('events/e3', {}, { serverTimestamps: ['startsAt'] })], 'request.time is not after itself'),
    ],
  };
}

const batches: Ruleset = {
  name: 'batches judged with getAfter() and existsAfter()',
  rules: v2(`
    match /rooms/{roomId} {
      allow read: if true;
      allow create: if request.auth != null
        && request.resource.data.owner == request.auth.uid
        && request.resource.data.memberCount == 1
        && existsAfter(/databases/$(database)/documents/rooms/$(roomId)/members/$(request.auth.uid));
      allow update: if request.auth != null
        && request.resource.data.diff(resource.data).affectedKeys().hasOnly(['memberCount'])
        && getAfter(/databases/$(database)/documents/rooms/$(roomId)).data.memberCount == resource.data.memberCount + 1
        && existsAfter(/databases/$(database)/documents/rooms/$(roomId)/members/$(request.auth.uid))
        && !exists(/databases/$(database)/documents/rooms/$(roomId)/members/$(request.auth.uid));
      match /members/{memberId} {
        allow read: if true;
        allow create: if request.auth.uid == memberId
          && getAfter(/databases/$(database)/documents/rooms/$(roomId)).data.memberCount
            == get(/databases/$(database)/documents/rooms/$(roomId)).data.memberCount + 1;
        allow create: if request.auth.uid == memberId
          && !exists(/databases/$(database)/documents/rooms/$(roomId))
          && getAfter(/databases/$(database)/documents/rooms/$(roomId)).data.owner == memberId;
      }
    }`),
  seed: {
    'rooms/r1': { owner: 'alice', memberCount: 1 },
    'rooms/r1/members/alice': { joined: true },
  },
  cases: [
    commit('bob', [create('rooms/r2', { owner: 'bob', memberCount: 1 }), create('rooms/r2/members/bob', { joined: true })], 'a room with its first member'),
    commit('bob', [create('rooms/r2/members/bob', { joined: true }), create('rooms/r2', { owner: 'bob', memberCount: 1 })], 'the same, in the other order'),
    commit('bob', [create('rooms/r2', { owner: 'bob', memberCount: 1 })], 'a room alone'),
    commit('bob', [create('rooms/r2/members/bob', { joined: true })], 'a member of no room'),
    commit('bob', [create('rooms/r2', { owner: 'bob', memberCount: 1 }), create('rooms/r2/members/carol', { joined: true })]),
    commit('bob', [update('rooms/r1', {}, { increments: { memberCount: 1 } }), create('rooms/r1/members/bob', { joined: true })], 'joining r1'),
    commit('bob', [update('rooms/r1', { memberCount: 2 }), create('rooms/r1/members/bob', { joined: true })]),
    commit('bob', [update('rooms/r1', { memberCount: 3 }), create('rooms/r1/members/bob', { joined: true })]),
    commit('bob', [update('rooms/r1', {}, { increments: { memberCount: 1 } })], 'the count without the member'),
    commit('bob', [create('rooms/r1/members/bob', { joined: true })], 'the member without the count'),
    commit('alice', [update('rooms/r1', {}, { increments: { memberCount: 1 } }), set('rooms/r1/members/alice', { joined: true })], 'already a member'),
    commit('bob', [update('rooms/r1', {}, { increments: { memberCount: 1 } }), create('rooms/r1/members/bob', { joined: true }), update('rooms/r1', { memberCount: 2, owner: 'bob' }, { mask: ['owner'] })]),
    transaction('bob', ['rooms/r1', 'rooms/r1/members/bob'], [update('rooms/r1', { memberCount: 2 }), create('rooms/r1/members/bob', { joined: true })], 'joining in a transaction'),
    transaction('bob', ['rooms/r1'], [update('rooms/r1', { memberCount: 2 })]),
    batchGet(null, ['rooms/r1', 'rooms/r1/members/alice', 'rooms/r9']),
    query(null, { parent: 'rooms/r1', collection: 'members' }),
  ],
};

const strings: Ruleset = {
  name: 'string methods: matches, size, lower, split, slicing',
  rules: v2(`
    match /handles/{handle} {
      allow get: if true;
      allow create: if request.auth != null
        && handle.matches('[a-z0-9_]{3,15}')
        && handle == handle.lower()
        && request.resource.data.uid == request.auth.uid
        && request.resource.data.display.lower() == handle.replace('_', ' ')
        && request.resource.data.display.trim() == request.resource.data.display;
    }
    match /mail/{id} {
      allow create: if request.auth.token.email.lower().matches('.*@example[.]com')
        && request.resource.data.to is list && request.resource.data.to.size() in [1, 2, 3]
        && request.resource.data.subject.split(' ').size() <= 5
        && request.resource.data.subject[0] == request.resource.data.subject[0].upper()
        && request.resource.data.get('code', 'abc')[0:3] == 'abc';
    }`),
  seed: { 'handles/taken': { uid: 'bob', display: 'taken' } },
  cases: [
    commit('alice', [create('handles/alice_1', { uid: 'alice', display: 'Alice 1' })]),
    commit('alice', [create('handles/al', { uid: 'alice', display: 'al' })]),
    commit('alice', [create('handles/Alice', { uid: 'alice', display: 'alice' })]),
    commit('alice', [create('handles/alice.b', { uid: 'alice', display: 'alice.b' })]),
    commit('alice', [create('handles/alice', { uid: 'alice', display: ' alice' })]),
    commit('alice', [create('handles/alice', { uid: 'bob', display: 'alice' })]),
    commit('alice', [create('handles/a_b_c', { uid: 'alice', display: 'a b_c' })], 'replace replaces every match'),
    commit('alice', [create('handles/taken', { uid: 'alice', display: 'taken' })]),
    get(null, 'handles/taken'),
    ...(['alice', 'carol', 'dave', 'anon'] as const).map((caller) => commit(caller, [create('mail/m1', { to: ['x@example.com'], subject: 'Hello there' })])),
    commit('alice', [create('mail/m1', { to: [], subject: 'Hello' })]),
    commit('alice', [create('mail/m1', { to: ['a', 'b', 'c', 'd'], subject: 'Hello' })]),
    commit('alice', [create('mail/m1', { to: ['a'], subject: 'one two three four five six' })]),
    commit('alice', [create('mail/m1', { to: ['a'], subject: 'lower' })]),
    commit('alice', [create('mail/m1', { to: ['a'], subject: 'Hello', code: 'abcdef' })]),
    commit('alice', [create('mail/m1', { to: ['a'], subject: 'Hello', code: 'xbc' })]),
    commit('alice', [create('mail/m1', { to: ['a'], subject: 'Hello', code: 'ab' })], 'slice past the end'),
    commit('alice', [create('mail/m1', { to: ['a'], subject: '' })], 'index of an empty string'),
  ],
};

const inventory: Ruleset = {
  name: 'ternaries, int and float, math and maps',
  rules: v2(`
    function isAdmin() {
      return request.auth != null && request.auth.token.get('role', '') == 'admin';
    }
    match /inventory/{sku} {
      allow read: if true;
      allow update: if request.resource.data.qty is int
        && request.resource.data.qty >= 0
        && (isAdmin() ? true : request.resource.data.qty < resource.data.qty)
        && request.resource.data.price == resource.data.price
        && math.abs(request.resource.data.qty - resource.data.qty) <= (isAdmin() ? 100 : 5)
        && request.resource.data.meta.keys().hasOnly(['color', 'size'])
        && (request.resource.data.meta.size == 'L' || request.resource.data.meta.size in ['S', 'M']);
      allow create: if isAdmin() && request.resource.data.price is float
        && request.resource.data.price * 100 == math.round(request.resource.data.price * 100)
        && request.resource.data.qty == int(request.resource.data.qty);
    }`),
  seed: {
    'inventory/a': { qty: 10, price: 1.5, meta: { color: 'red', size: 'M' } },
    'inventory/b': { qty: 3, price: 2, meta: { color: 'blue', size: 'L' } },
  },
  cases: [
    commit('bob', [update('inventory/a', { qty: 9 })]),
    commit('bob', [update('inventory/a', { qty: 11 })]),
    commit('bob', [update('inventory/a', { qty: 4 })], 'more than 5 at once'),
    commit('alice', [update('inventory/a', { qty: 50 })]),
    commit('alice', [update('inventory/a', { qty: 200 })]),
    commit('alice', [update('inventory/a', { qty: -1 })]),
    commit('bob', [update('inventory/a', { qty: 9, price: 1.25 })]),
    commit('bob', [update('inventory/b', { qty: 2, price: { double: 2 } })], 'int 2 == float 2.0'),
    commit('bob', [update('inventory/b', { qty: 2 })]),
    commit('bob', [update('inventory/a', { qty: 9, 'meta': { color: 'red', size: 'XL' } })]),
    commit('bob', [update('inventory/a', { qty: 9, 'meta': { color: 'red', size: 'S', weight: 3 } })]),
    commit('bob', [update('inventory/a', { 'meta.size': 'S' }, { increments: { qty: -1 } })], 'a dotted mask and an increment'),
    commit(null, [update('inventory/a', { qty: 9 })]),
    commit('alice', [create('inventory/c', { qty: 1, price: 9.99, meta: {} })]),
    commit('alice', [create('inventory/c', { qty: 1, price: 9.999, meta: {} })]),
    commit('alice', [create('inventory/c', { qty: 1, price: 10, meta: {} })], 'an int is not a float'),
    commit('bob', [create('inventory/c', { qty: 1, price: 9.99, meta: {} })]),
    query(null, { collection: 'inventory', where: [['qty', 'GREATER_THAN', 5]] }),
    count(null, { collection: 'inventory' }),
  ],
};

const versionOne: Ruleset = {
  name: 'rules version 1 with overlapping matches',
  rules: `service cloud.firestore {
  match /databases/{database}/documents {
    match /{document=**} {
      allow read: if request.auth != null;
    }
    match /locked/{id} {
      allow read: if false;
      allow write: if request.auth.uid == 'alice';
    }
    match /open/{id} {
      allow read, write;
    }
  }
}
`,
  seed: { 'locked/l1': { a: 1 }, 'open/o1': { a: 1 }, 'open/o1/sub/s1': { a: 2 }, 'other/x': { a: 3 } },
  cases: [
    get(null, 'locked/l1'),
    get('bob', 'locked/l1', 'any allow that matches wins'),
    get(null, 'open/o1'),
    get(null, 'open/o1/sub/s1', 'no cascade into subcollections'),
    get('bob', 'open/o1/sub/s1'),
    get(null, 'other/x'),
    query('bob', { collection: 'other' }),
    query(null, { collection: 'open' }),
    query('bob', { collection: 'sub', group: true }, 'collection groups in rules v1'),
    commit(null, [set('open/o2', { a: 1 }), remove('open/o1')]),
    commit('alice', [set('locked/l2', { a: 1 })]),
    commit('bob', [set('locked/l2', { a: 1 })]),
    commit('bob', [set('other/y', { a: 1 })]),
  ],
};

export function validationCorpus(now: Date): Ruleset[] {
  return [fieldValidation, typeChecks, timestamps(now), batches, strings, inventory, versionOne];
}
