/**
 * Indexes and the planner, seen through query explain: a query reads about as many documents as it
 * returns whatever the collection's size; declared composite and collection-group indexes
 * (firestore.indexes.json) are built for data already there, kept up to date by later writes, and
 * dropped when the file no longer declares them, with the same answers every time.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startHearth, tempDataDir } from '../helpers/hearth.js';
import { explained, fieldFilter, firestoreRest, int, pathsOf, str } from '../helpers/firestore-rest.js';

const explain = { explainOptions: { analyze: true } };
const and = (...filters: unknown[]) => ({ compositeFilter: { op: 'AND', filters } });
const order = (path: string, direction = 'ASCENDING') => ({ field: { fieldPath: path }, direction });

describe('single-field indexes', () => {
  test('a query reads about as many documents as it returns, whatever the collection size', async () => {
    const server = await startHearth();
    try {
      const rest = firestoreRest(server);
      const writes = [];
      for (let i = 0; i < 3000; i++) writes.push(rest.set(`big/d${String(i).padStart(5, '0')}`, { g: int(i % 150), n: int(i), tags: { arrayValue: { values: [str(`t${i % 7}`)] } } }));
      for (let i = 0; i < writes.length; i += 500) await rest.commit(writes.slice(i, i + 500));
      const ids = (answers: Awaited<ReturnType<typeof rest.runQuery>>) => pathsOf(server, answers).map((path) => path.split('/').pop());

      const byGroup = await rest.runQuery({ from: [{ collectionId: 'big' }], where: fieldFilter('g', 'EQUAL', int(7)), limit: 20 }, explain);
      assert.equal(ids(byGroup).length, 20);
      assert.deepEqual(explained(byGroup).indexesUsed, [{ query_scope: 'Collection', properties: '(g ASC, __name__ ASC)' }]);
      assert.ok(explained(byGroup).documentsScanned <= 21);

      const range = await rest.runQuery({ from: [{ collectionId: 'big' }], where: fieldFilter('n', 'GREATER_THAN_OR_EQUAL', int(1234)), orderBy: [order('n')], limit: 20 }, explain);
      assert.deepEqual(ids(range).slice(0, 2), ['d01234', 'd01235']);
      assert.ok(explained(range).documentsScanned <= 21);

      // Two equalities: the two single-field indexes are merged, no document outside the answer is read.
      const both = await rest.runQuery({ from: [{ collectionId: 'big' }], where: and(fieldFilter('g', 'EQUAL', int(7)), fieldFilter('tags', 'ARRAY_CONTAINS', str('t0'))) }, explain);
      const expected = Array.from({ length: 3000 }, (_, i) => i).filter((i) => i % 150 === 7 && i % 7 === 0).map((i) => `d${String(i).padStart(5, '0')}`);
      assert.deepEqual(ids(both), expected);
      assert.equal(explained(both).indexesUsed.length, 2);
      assert.equal(explained(both).documentsScanned, expected.length);
    } finally {
      await server.close();
    }
  });
});

describe('declared indexes', () => {
  test('a composite index from firestore.indexes.json serves equality + order, built for data already there', async () => {
    const dataDir = tempDataDir();
    const first = await startHearth({ dataDir });
    const writes = [];
    for (let i = 0; i < 400; i++) writes.push(firestoreRest(first).set(`shop/p${i}`, { cat: str(`c${i % 4}`), price: int((i * 37) % 101) }));
    await firestoreRest(first).commit(writes);
    await first.close();

    const indexes = join(dataDir, 'firestore.indexes.json');
    writeFileSync(indexes, JSON.stringify({ indexes: [{ collectionGroup: 'shop', queryScope: 'COLLECTION', fields: [{ fieldPath: 'cat', order: 'ASCENDING' }, { fieldPath: 'price', order: 'DESCENDING' }] }], fieldOverrides: [] }));
    const second = await startHearth({ dataDir, indexesFile: indexes });
    try {
      const rest = firestoreRest(second);
      const query = { from: [{ collectionId: 'shop' }], where: fieldFilter('cat', 'EQUAL', str('c1')), orderBy: [order('price', 'DESCENDING')], limit: 10 };
      const answers = await rest.runQuery(query, explain);
      assert.deepEqual(explained(answers).indexesUsed, [{ query_scope: 'Collection', properties: '(cat ASC, price DESC, __name__ DESC)' }]);
      assert.equal(explained(answers).documentsScanned, 10);
      const expected = Array.from({ length: 400 }, (_, i) => i)
        .filter((i) => i % 4 === 1)
        .sort((a, b) => ((b * 37) % 101) - ((a * 37) % 101) || (`p${b}` < `p${a}` ? -1 : 1))
        .slice(0, 10)
        .map((i) => `shop/p${i}`);
      assert.deepEqual(pathsOf(second, answers), expected);
      // Entries follow later writes too.
      await rest.commit([rest.set('shop/p1', { cat: str('c1'), price: int(1000) })]);
      assert.equal(pathsOf(second, await rest.runQuery(query))[0], 'shop/p1');
    } finally {
      await second.close();
    }
  });
});

interface Post {
  path: string;
  g: number | string;
  n: number;
  tags: string[];
}

/** Document names sort by segments: `a/b` before `a-b/...`, unlike plain text. */
function byName(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return x.length - y.length;
}

function postsAt(paths: string[]): Post[] {
  return paths.map((path, n) => ({ path, n, g: n % 97 === 5 ? 'seven' : n % 40, tags: [`t${n % 5}`, `t${(n % 3) + 5}`] }));
}

describe('collection-group indexes', () => {
  const paths: string[] = [];
  for (let k = 0; k < 30; k++) for (let j = 0; j < 20; j++) paths.push(`users/u${k}/posts/p${j}`);
  for (let j = 0; j < 50; j++) paths.push(`posts/r${j}`);
  for (let j = 0; j < 30; j++) paths.push(`orgs/o1/teams/t-1/posts/x${j}`);
  // Same fields, another collection id: never part of the `posts` group.
  for (let k = 0; k < 10; k++) for (let j = 0; j < 10; j++) paths.push(`users/u${k}/comments/c${j}`);
  let posts = postsAt(paths);
  const inGroup = () => posts.filter((post) => post.path.split('/').at(-2) === 'posts');
  const fieldsOf = (post: Post) => ({ g: typeof post.g === 'string' ? str(post.g) : int(post.g), n: int(post.n), tags: { arrayValue: { values: post.tags.map(str) } } });
  const group = { collectionId: 'posts', allDescendants: true };

  const indexFile = {
    indexes: [{ collectionGroup: 'posts', queryScope: 'COLLECTION_GROUP', fields: [{ fieldPath: 'g', order: 'ASCENDING' }, { fieldPath: 'n', order: 'DESCENDING' }] }],
    fieldOverrides: [
      { collectionGroup: 'posts', fieldPath: 'g', indexes: [{ order: 'ASCENDING', queryScope: 'COLLECTION' }, { order: 'ASCENDING', queryScope: 'COLLECTION_GROUP' }] },
      { collectionGroup: 'posts', fieldPath: 'n', indexes: [{ order: 'ASCENDING', queryScope: 'COLLECTION_GROUP' }, { order: 'DESCENDING', queryScope: 'COLLECTION_GROUP' }] },
      { collectionGroup: 'posts', fieldPath: 'tags', indexes: [{ arrayConfig: 'CONTAINS', queryScope: 'COLLECTION_GROUP' }] },
    ],
  };

  /** Each case: the query, the answer from the model, and, with the indexes declared, the index and the most documents read. */
  const cases = () => {
    const nums = inGroup().filter((post) => typeof post.g === 'number');
    const byN = (a: Post, b: Post) => a.n - b.n;
    const g7 = inGroup().filter((post) => post.g === 7).sort((a, b) => byName(a.path, b.path));
    return [
      { label: 'g == 7', query: { from: [group], where: fieldFilter('g', 'EQUAL', int(7)) }, expected: g7, index: '(g ASC, __name__ ASC)', reads: g7.length },
      { label: 'g == 7 limit 3', query: { from: [group], where: fieldFilter('g', 'EQUAL', int(7)), limit: 3 }, expected: g7.slice(0, 3), index: '(g ASC, __name__ ASC)', reads: 4 },
      {
        label: 'n >= 300 orderBy n limit 20',
        query: { from: [group], where: fieldFilter('n', 'GREATER_THAN_OR_EQUAL', int(300)), orderBy: [order('n')], limit: 20 },
        expected: inGroup().filter((post) => post.n >= 300).sort(byN).slice(0, 20),
        index: '(n ASC, __name__ ASC)',
        reads: 21,
      },
      {
        label: '100 < n < 110 orderBy n desc',
        query: { from: [group], where: and(fieldFilter('n', 'GREATER_THAN', int(100)), fieldFilter('n', 'LESS_THAN', int(110))), orderBy: [order('n', 'DESCENDING')] },
        expected: inGroup().filter((post) => post.n > 100 && post.n < 110).sort((a, b) => b.n - a.n),
        index: '(n DESC, __name__ DESC)',
        reads: 9,
      },
      {
        label: 'orderBy n desc startAfter 500 limit 10',
        query: { from: [group], orderBy: [order('n', 'DESCENDING')], startAt: { values: [int(500)], before: false }, limit: 10 },
        expected: inGroup().filter((post) => post.n < 500).sort((a, b) => b.n - a.n).slice(0, 10),
        index: '(n DESC, __name__ DESC)',
        reads: 12,
      },
      {
        label: 'g >= 38 orderBy g (numbers only, strings are another type)',
        query: { from: [group], where: fieldFilter('g', 'GREATER_THAN_OR_EQUAL', int(38)), orderBy: [order('g')], limit: 5 },
        expected: nums.filter((post) => (post.g as number) >= 38).sort((a, b) => (a.g as number) - (b.g as number) || byName(a.path, b.path)).slice(0, 5),
        index: '(g ASC, __name__ ASC)',
        reads: 6,
      },
      {
        label: 'tags array-contains t3 limit 10',
        query: { from: [group], where: fieldFilter('tags', 'ARRAY_CONTAINS', str('t3')), limit: 10 },
        expected: inGroup().filter((post) => post.tags.includes('t3')).sort((a, b) => byName(a.path, b.path)).slice(0, 10),
        index: '(tags CONTAINS, __name__ ASC)',
        reads: 11,
      },
      {
        label: 'g == 7 orderBy n desc limit 5 (the composite)',
        query: { from: [group], where: fieldFilter('g', 'EQUAL', int(7)), orderBy: [order('n', 'DESCENDING')], limit: 5 },
        expected: [...g7].sort((a, b) => b.n - a.n).slice(0, 5),
        index: '(g ASC, n DESC, __name__ DESC)',
        reads: 5,
      },
    ];
  };

  async function checkAnswers(server: Awaited<ReturnType<typeof startHearth>>, declared: boolean): Promise<void> {
    const rest = firestoreRest(server);
    for (const { label, query, expected, index, reads } of cases()) {
      const answers = await rest.runQuery(query, explain);
      assert.deepEqual(pathsOf(server, answers), expected.map((post) => post.path), label);
      const { indexesUsed, documentsScanned } = explained(answers);
      if (declared) {
        assert.deepEqual(indexesUsed, [{ query_scope: 'Collection group', properties: index }], label);
        assert.ok(documentsScanned <= reads, `${label}: ${documentsScanned} documents read for ${expected.length}`);
      } else {
        assert.deepEqual(indexesUsed, [{ query_scope: 'Collection group', properties: '(__name__ ASC)' }], label);
      }
    }
    // Under one parent the group's entries (which span every parent) are not used; the answer is the same.
    const underParent = await rest.runQuery({ from: [group], where: fieldFilter('g', 'EQUAL', int(7)) }, {}, 'users/u3');
    assert.deepEqual(pathsOf(server, underParent), inGroup().filter((post) => post.g === 7 && post.path.startsWith('users/u3/')).map((post) => post.path).sort(byName));
  }

  test('declared in firestore.indexes.json: built for data already there, followed by later writes, dropped when no longer declared', async () => {
    const dataDir = tempDataDir();
    const first = await startHearth({ dataDir });
    await firestoreRest(first).commit(posts.map((post) => firestoreRest(first).set(post.path, fieldsOf(post))));
    await checkAnswers(first, false);
    await first.close();

    const file = join(dataDir, 'firestore.indexes.json');
    writeFileSync(file, JSON.stringify(indexFile));
    const second = await startHearth({ dataDir, indexesFile: file });
    try {
      await checkAnswers(second, true);
      // Later writes: a post leaves g == 7, another is deleted, a new one arrives in a new parent.
      const rest = firestoreRest(second);
      const [moved, deleted] = inGroup().filter((post) => post.g === 7);
      posts = posts.map((post) => (post.path === moved!.path ? { ...post, g: 8 } : post)).filter((post) => post.path !== deleted!.path);
      posts.push({ path: 'users/new/posts/a', g: 7, n: 5000, tags: ['t3'] });
      await rest.commit([rest.set(moved!.path, fieldsOf(posts.find((post) => post.path === moved!.path)!)), rest.remove(deleted!.path), rest.set('users/new/posts/a', fieldsOf(posts.at(-1)!))]);
      await checkAnswers(second, true);
    } finally {
      await second.close();
    }

    const third = await startHearth({ dataDir });
    try {
      await checkAnswers(third, false);
    } finally {
      await third.close();
    }
  });
});
