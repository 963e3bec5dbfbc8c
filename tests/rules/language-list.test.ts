/**
 * List requests ("rules are not filters"): a query is judged on what its filters say about the
 * documents it could return. Each case's answer was recorded from Google's Firestore emulator
 * (1.19.9) with the same rule (`allow list: if <cond>` in `match <path>`) and the same query,
 * signed in as u1; firestore-rules-language-emulator.test.ts re-checks a sample live.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseStructuredQuery } from '../../packages/server/src/firestore/core/query-parse.js';
import { compileRules, evaluateRules, type RulesRequest } from '../../packages/server/src/firestore/rules/index.js';

const f = (field: string, op: string, value: unknown) => ({ fieldFilter: { field: { fieldPath: field }, op, value } });
const u = (field: string, op: string) => ({ unaryFilter: { field: { fieldPath: field }, op } });
const and = (...filters: unknown[]) => ({ compositeFilter: { op: 'AND', filters } });
const or = (...filters: unknown[]) => ({ compositeFilter: { op: 'OR', filters } });
const s = (v: string) => ({ stringValue: v }), i = (v: number) => ({ integerValue: String(v) });
const arr = (...v: unknown[]) => ({ arrayValue: { values: v } });
const group = [{ collectionId: 'posts', allDescendants: true }];
const name = (p: string) => ({ referenceValue: `projects/demo-probe/databases/(default)/documents/${p}` });
const groups: [string, string, [string, Record<string, unknown>, string?][]][] = [
  ['resource.data.owner == request.auth.uid', '/posts/{id}', [['none', {}], ['eq', { where: f('owner', 'EQUAL', s('u1')) }], ['in', { where: f('owner', 'IN', arr(s('u1'), s('u2'))) }], ['in-same', { where: f('owner', 'IN', arr(s('u1'))) }], ['or', { where: or(f('owner', 'EQUAL', s('u1')), f('owner', 'EQUAL', s('u1'))) }], ['or2', { where: or(f('owner', 'EQUAL', s('u1')), f('x', 'EQUAL', s('u1'))) }], ['and-other', { where: and(f('owner', 'EQUAL', s('u1')), f('x', 'EQUAL', i(1))) }], ['eq-other', { where: f('owner', 'EQUAL', s('u2')) }], ['ne', { where: f('owner', 'NOT_EQUAL', s('u2')) }]]],
  ['resource.data.n < 100', '/posts/{id}', [['lt50', { where: f('n', 'LESS_THAN', i(50)) }], ['lt150', { where: f('n', 'LESS_THAN', i(150)) }], ['le100', { where: f('n', 'LESS_THAN_OR_EQUAL', i(100)) }], ['lt100', { where: f('n', 'LESS_THAN', i(100)) }], ['eq5', { where: f('n', 'EQUAL', i(5)) }], ['gt5', { where: f('n', 'GREATER_THAN', i(5)) }], ['range', { where: and(f('n', 'GREATER_THAN', i(5)), f('n', 'LESS_THAN', i(10))) }], ['in', { where: f('n', 'IN', arr(i(1), i(2))) }], ['in-big', { where: f('n', 'IN', arr(i(1), i(200))) }], ['lt50-float', { where: f('n', 'LESS_THAN', { doubleValue: 50.5 }) }]]],
  ['resource.data.n >= 10 && resource.data.n <= 20', '/posts/{id}', [['range', { where: and(f('n', 'GREATER_THAN_OR_EQUAL', i(10)), f('n', 'LESS_THAN', i(20))) }], ['wide', { where: and(f('n', 'GREATER_THAN_OR_EQUAL', i(5)), f('n', 'LESS_THAN', i(20))) }]]],
  ['resource.data.n == 5', '/posts/{id}', [['lt50', { where: f('n', 'LESS_THAN', i(50)) }]]],
  ['resource.data.n != 5', '/posts/{id}', [['ne5', { where: f('n', 'NOT_EQUAL', i(5)) }], ['eq6', { where: f('n', 'EQUAL', i(6)) }], ['notin', { where: f('n', 'NOT_IN', arr(i(5), i(7))) }], ['ne6', { where: f('n', 'NOT_EQUAL', i(6)) }]]],
  ['resource.data.n == null', '/posts/{id}', [['isnull', { where: u('n', 'IS_NULL') }]]],
  ['request.query.limit <= 10', '/posts/{id}', [['nolimit', {}], ['limit5', { limit: 5 }], ['limit20', { limit: 20 }]]],
  ['request.query.limit == null', '/posts/{id}', [['nolimit', {}]]],
  ['request.query.offset == 0', '/posts/{id}', [['nooffset', {}], ['off3', { offset: 3 }]]],
  ['request.query.orderBy.a == "ASC"', '/posts/{id}', [['ordera', { orderBy: [{ field: { fieldPath: 'a' } }] }], ['orderadesc', { orderBy: [{ field: { fieldPath: 'a' }, direction: 'DESCENDING' }] }]]],
  ['request.query.orderBy.size() == 0', '/posts/{id}', [['none', {}]]],
  ['id == "x"', '/posts/{id}', [['none', {}], ['name', { where: f('__name__', 'EQUAL', name('posts/x')) }], ['name-other', { where: f('__name__', 'EQUAL', name('posts/y')) }]]],
  ['true', '/posts/{id}', [['none', {}], ['group', { from: group }]]],
  ['resource.id == "x"', '/posts/{id}', [['none', {}]]],
  ['request.path == /databases/$(database)/documents/posts', '/posts/{id}', [['none', {}]]],
  ['resource == null', '/posts/{id}', [['none', {}]]],
  ['resource.data.m.k == 1', '/posts/{id}', [['nested', { where: f('m.k', 'EQUAL', i(1)) }], ['none', {}]]],
  ["'owner' in resource.data", '/posts/{id}', [['none', {}], ['eq', { where: f('owner', 'EQUAL', s('u1')) }]]],
  ["resource.data.tags.hasAny(['a'])", '/posts/{id}', [['ac', { where: f('tags', 'ARRAY_CONTAINS', s('a')) }], ['ac-b', { where: f('tags', 'ARRAY_CONTAINS', s('b')) }], ['none', {}]]],
  ["resource.data.tags.hasAll(['a'])", '/posts/{id}', [['ac', { where: f('tags', 'ARRAY_CONTAINS', s('a')) }]]],
  ["'a' in resource.data.tags", '/posts/{id}', [['ac', { where: f('tags', 'ARRAY_CONTAINS', s('a')) }], ['aca', { where: f('tags', 'ARRAY_CONTAINS_ANY', arr(s('a'), s('b'))) }]]],
  ['true', '/{path=**}/posts/{id}', [['group', { from: group }], ['plain', {}]]],
  ['true', '/{document=**}', [['group', { from: group }], ['plain', {}]]],
  ['true', '/users/{u}/posts/{p}', [['group-under', { from: group }, 'users/u1'], ['plain-under', {}, 'users/u1']]],
  ['true', '/users/{u}/{path=**}', [['group-under', { from: group }, 'users/u1'], ['group-root', { from: group }]]],
  ["u == 'u1'", '/users/{u}/{path=**}', [['group-under', { from: group }, 'users/u1'], ['plain-under', {}, 'users/u1']]],
  ['resource.data.visibility == "public" || resource.data.owner == request.auth.uid', '/posts/{id}', [['pub', { where: f('visibility', 'EQUAL', s('public')) }], ['own', { where: f('owner', 'EQUAL', s('u1')) }], ['or', { where: or(f('visibility', 'EQUAL', s('public')), f('owner', 'EQUAL', s('u1'))) }], ['none', {}]]],
  ['resource.data.visibility == "public" && resource.data.n > 3', '/posts/{id}', [['both', { where: and(f('visibility', 'EQUAL', s('public')), f('n', 'GREATER_THAN', i(4))) }], ['one', { where: f('visibility', 'EQUAL', s('public')) }]]],
];

/** `<cond> | <match> | <query name>` -> whether the emulator allowed the query. */
const recorded: Record<string, boolean> = {
  "resource.data.owner == request.auth.uid | /posts/{id} | none": false,
  "resource.data.owner == request.auth.uid | /posts/{id} | eq": true,
  "resource.data.owner == request.auth.uid | /posts/{id} | in": false,
  "resource.data.owner == request.auth.uid | /posts/{id} | in-same": true,
  "resource.data.owner == request.auth.uid | /posts/{id} | or": true,
  "resource.data.owner == request.auth.uid | /posts/{id} | or2": false,
  "resource.data.owner == request.auth.uid | /posts/{id} | and-other": true,
  "resource.data.owner == request.auth.uid | /posts/{id} | eq-other": false,
  "resource.data.owner == request.auth.uid | /posts/{id} | ne": false,
  "resource.data.n < 100 | /posts/{id} | lt50": true,
  "resource.data.n < 100 | /posts/{id} | lt150": false,
  "resource.data.n < 100 | /posts/{id} | le100": false,
  "resource.data.n < 100 | /posts/{id} | lt100": true,
  "resource.data.n < 100 | /posts/{id} | eq5": true,
  "resource.data.n < 100 | /posts/{id} | gt5": false,
  "resource.data.n < 100 | /posts/{id} | range": true,
  "resource.data.n < 100 | /posts/{id} | in": true,
  "resource.data.n < 100 | /posts/{id} | in-big": false,
  "resource.data.n < 100 | /posts/{id} | lt50-float": false,
  "resource.data.n >= 10 && resource.data.n <= 20 | /posts/{id} | range": true,
  "resource.data.n >= 10 && resource.data.n <= 20 | /posts/{id} | wide": false,
  "resource.data.n == 5 | /posts/{id} | lt50": false,
  "resource.data.n != 5 | /posts/{id} | ne5": true,
  "resource.data.n != 5 | /posts/{id} | eq6": true,
  "resource.data.n != 5 | /posts/{id} | notin": true,
  "resource.data.n != 5 | /posts/{id} | ne6": false,
  "resource.data.n == null | /posts/{id} | isnull": true,
  "request.query.limit <= 10 | /posts/{id} | nolimit": false,
  "request.query.limit <= 10 | /posts/{id} | limit5": true,
  "request.query.limit <= 10 | /posts/{id} | limit20": false,
  "request.query.limit == null | /posts/{id} | nolimit": true,
  "request.query.offset == 0 | /posts/{id} | nooffset": true,
  "request.query.offset == 0 | /posts/{id} | off3": false,
  "request.query.orderBy.a == \"ASC\" | /posts/{id} | ordera": true,
  "request.query.orderBy.a == \"ASC\" | /posts/{id} | orderadesc": false,
  "request.query.orderBy.size() == 0 | /posts/{id} | none": true,
  "id == \"x\" | /posts/{id} | none": false,
  "id == \"x\" | /posts/{id} | name": true,
  "id == \"x\" | /posts/{id} | name-other": false,
  "true | /posts/{id} | none": true,
  "true | /posts/{id} | group": false,
  "resource.id == \"x\" | /posts/{id} | none": false,
  "request.path == /databases/$(database)/documents/posts | /posts/{id} | none": true,
  "resource == null | /posts/{id} | none": false,
  "resource.data.m.k == 1 | /posts/{id} | nested": true,
  "resource.data.m.k == 1 | /posts/{id} | none": false,
  "'owner' in resource.data | /posts/{id} | none": false,
  "'owner' in resource.data | /posts/{id} | eq": true,
  "resource.data.tags.hasAny(['a']) | /posts/{id} | ac": true,
  "resource.data.tags.hasAny(['a']) | /posts/{id} | ac-b": false,
  "resource.data.tags.hasAny(['a']) | /posts/{id} | none": false,
  // The emulator: "Function not found error: Name: [hasAll]." (a random differential run, seed 228565279).
  "resource.data.tags.hasAll(['a']) | /posts/{id} | ac": false,
  "'a' in resource.data.tags | /posts/{id} | ac": true,
  "'a' in resource.data.tags | /posts/{id} | aca": false,
  "true | /{path=**}/posts/{id} | group": true,
  "true | /{path=**}/posts/{id} | plain": true,
  "true | /{document=**} | group": true,
  "true | /{document=**} | plain": true,
  "true | /users/{u}/posts/{p} | group-under": false,
  "true | /users/{u}/posts/{p} | plain-under": true,
  "true | /users/{u}/{path=**} | group-under": true,
  "true | /users/{u}/{path=**} | group-root": false,
  "u == 'u1' | /users/{u}/{path=**} | group-under": true,
  "u == 'u1' | /users/{u}/{path=**} | plain-under": true,
  "resource.data.visibility == \"public\" || resource.data.owner == request.auth.uid | /posts/{id} | pub": true,
  "resource.data.visibility == \"public\" || resource.data.owner == request.auth.uid | /posts/{id} | own": true,
  "resource.data.visibility == \"public\" || resource.data.owner == request.auth.uid | /posts/{id} | or": true,
  "resource.data.visibility == \"public\" || resource.data.owner == request.auth.uid | /posts/{id} | none": false,
  "resource.data.visibility == \"public\" && resource.data.n > 3 | /posts/{id} | both": true,
  "resource.data.visibility == \"public\" && resource.data.n > 3 | /posts/{id} | one": false
};

const db = { projectId: 'demo-probe', databaseId: '(default)' };
const wrap = (body: string) => `rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n${body}\n  }\n}`;

function listRequest(structuredQuery: Record<string, unknown>, parent = ''): RulesRequest {
  return {
    db,
    method: 'list',
    path: '',
    query: parseStructuredQuery(db, parent, { from: [{ collectionId: 'posts' }], ...structuredQuery }),
    auth: { uid: 'u1', token: {} },
    time: 0,
    reader: { get: async () => undefined, getAfter: async () => undefined },
    budget: { limit: 10, seen: new Set() },
  };
}

test('every recorded list query is judged as Google\'s emulator judged it', async () => {
  const disagreements: string[] = [];
  let checked = 0;
  for (const [condition, match, queries] of groups) {
    const rules = compileRules(wrap(`    match ${match} {\n      allow list: if ${condition};\n    }`));
    for (const [name, structuredQuery, parent] of queries) {
      const expected = recorded[`${condition} | ${match} | ${name}`];
      assert.equal(typeof expected, 'boolean', `${condition} ${name} has a recorded answer`);
      const decision = await evaluateRules(rules, listRequest(structuredQuery, parent));
      checked++;
      if (decision.allowed !== expected) disagreements.push(`${condition} | ${match} | ${name}: expected ${expected}, got ${decision.allowed} (${decision.reason})`);
    }
  }
  assert.equal(checked, Object.keys(recorded).length);
  assert.deepEqual(disagreements, []);
});

test('list reasons: an unconstrained field, one failure per in value, no matching statement', async () => {
  const rules = compileRules(wrap('    match /posts/{id} {\n      allow list: if resource.data.owner == request.auth.uid;\n    }'));
  const owner = (op: string, value: unknown) => ({ where: { fieldFilter: { field: { fieldPath: 'owner' }, op, value } } });
  assert.deepEqual(await evaluateRules(rules, listRequest({})), { allowed: false, reason: "Property owner is undefined on object. for 'list' @ L5" });
  assert.deepEqual(await evaluateRules(rules, listRequest(owner('IN', { arrayValue: { values: [{ stringValue: 'u1' }, { stringValue: 'u2' }] } }))), {
    allowed: false,
    reason: "false for 'list' @ L5",
  });
  assert.deepEqual(await evaluateRules(rules, listRequest(owner('EQUAL', { stringValue: 'u1' }))), {
    allowed: true,
    reason: "allowed by 'list' @ L5",
    decidedBy: { line: 5, column: 7, match: '/databases/{database}/documents/posts/{id}', condition: 'resource.data.owner == request.auth.uid' },
  });
  const group = listRequest({ from: [{ collectionId: 'posts', allDescendants: true }] });
  assert.deepEqual(await evaluateRules(rules, group), { allowed: false, reason: 'No matching allow statements' });
});

test('a query with more disjuncts than can be judged is refused, not guessed', async () => {
  const rules = compileRules(wrap('    match /posts/{id} {\n      allow list: if true;\n    }'));
  const values = (prefix: string) => ({ arrayValue: { values: Array.from({ length: 30 }, (_, k) => ({ stringValue: `${prefix}${k}` })) } });
  const crossed = {
    where: {
      compositeFilter: {
        op: 'AND',
        filters: ['a', 'b', 'c'].map((field) => ({ fieldFilter: { field: { fieldPath: field }, op: 'IN', value: values(field) } })),
      },
    },
  };
  const request = listRequest({});
  request.query = parseStructuredQuery(db, '', { from: [{ collectionId: 'posts' }], ...crossed }, { maxInValues: 30, maxNotInValues: 10, maxDisjunctions: 100000 });
  const decision = await evaluateRules(rules, request);
  assert.equal(decision.allowed, false);
  assert.match(decision.reason, /too many disjunctions/);
});
