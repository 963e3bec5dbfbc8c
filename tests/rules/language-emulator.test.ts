/**
 * The rules language against Google's Firestore emulator, live: the same ruleset is loaded into
 * the emulator and compiled by compileRules, the same request is made of both (a REST get or
 * runQuery as user u1 with an unsigned ID token, which the emulator accepts), and the decisions
 * must agree. The cases are the semantics tests check first: errors under && and ||, ternaries,
 * numeric edges, list queries judged on their constraints, compile errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fieldsFromWire } from '../../packages/server/src/firestore/core/value-wire.js';
import { parseStructuredQuery } from '../../packages/server/src/firestore/core/query-parse.js';
import type { Doc } from '../../packages/server/src/firestore/core/documents.js';
import { compileRules, evaluateRules, RulesCompileError, type RulesRequest } from '../../packages/server/src/firestore/rules/index.js';
import { findCloudSdkWithFirestoreEmulator, startGoogleEmulator, type GoogleEmulator } from '../helpers/firestore-emulator.js';

const projectId = 'demo-rules-language';
const db = { projectId, databaseId: '(default)' };
const wire = {
  a: { integerValue: '1' },
  n: { nullValue: null },
  s: { stringValue: 'hello' },
  m: { mapValue: { fields: { x: { integerValue: '2' } } } },
  f: { doubleValue: 1.5 },
  owner: { stringValue: 'u1' },
};
const doc: Doc = { key: { path: 't/d1', parent: 't', collectionId: 't', id: 'd1' }, fields: fieldsFromWire(wire, 'fields'), createTime: 1, updateTime: 1 };

const skip = !findCloudSdkWithFirestoreEmulator() && 'the official Firestore emulator is not installed';

function claimsOf(uid: string): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return { sub: uid, user_id: uid, aud: projectId, iss: `https://securetoken.google.com/${projectId}`, iat: now, exp: now + 3600, auth_time: now, firebase: { sign_in_provider: 'anonymous', identities: {} } };
}

function idToken(uid: string): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claimsOf(uid))}.`;
}

const wrap = (body: string) => `rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n${body}\n  }\n}`;

describe('the rules language decides as Google\'s emulator does', { skip }, () => {
  let emulator: GoogleEmulator;
  let documents: string;

  before(async () => {
    emulator = (await startGoogleEmulator())!;
    documents = `${emulator.url}/v1/projects/${projectId}/databases/(default)/documents`;
    const seeded = await fetch(`${documents}/t/d1`, { method: 'PATCH', headers: { authorization: 'Bearer owner' }, body: JSON.stringify({ fields: wire }) });
    assert.equal(seeded.status, 200);
  });
  after(async () => emulator?.stop());

  async function loadRules(source: string): Promise<{ status: number; message: string }> {
    const response = await fetch(`${emulator.url}/emulator/v1/projects/${projectId}:securityRules`, {
      method: 'PUT',
      body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: source }] } }),
    });
    const body = (await response.json()) as { error?: { message: string } };
    return { status: response.status, message: body.error?.message ?? '' };
  }

  const reader = { get: async () => undefined, getAfter: async () => undefined };
  const base = (): Omit<RulesRequest, 'method' | 'path'> => ({ db, auth: { uid: 'u1', token: claimsOf('u1') }, time: Date.now() * 1000, reader, budget: { limit: 10, seen: new Set() } });

  test('get: errors under && and ||, ternaries, missing fields, numbers', async () => {
    const expressions = [
      'false && resource.data.zz == 1',
      'resource.data.zz == 1 && false',
      'true || resource.data.zz == 1',
      'resource.data.zz == 1 || true',
      'resource.data.zz == 1 || false',
      'true && resource.data.zz == 1',
      'resource.data.n.x == 1 || resource.data.a == 1',
      '(resource.data.zz == 1 || true) && (false || resource.data.a == 1)',
      'true ? resource.data.a == 1 : resource.data.zz',
      'false ? resource.data.zz : resource.data.f > 1',
      "'zz' in resource.data || resource.data.get('zz', 0) == 0",
      'resource.data.a + 1.5 == 2.5 && 7 / 2 == 3 && -7 % 2 == -1',
      '9223372036854775807 + 1 > 0 || false',
      '1 / 0 == 1 || true',
      '[1] == [1.0]',
      '1 == 1.0 && 1 in [1]',
      'request.auth.uid == resource.data.owner',
      'request.auth.token.firebase.sign_in_provider == "anonymous"',
      "resource.data.s.matches('h.*o') && resource.data.s.size() == 5",
      'resource.data.m.keys().hasAll(["x"]) && resource.data.m.diff({"x": 2}).affectedKeys().size() == 0',
    ];
    const disagreements: string[] = [];
    for (const expression of expressions) {
      const source = wrap(`    match /t/{id} {\n      allow get: if ${expression};\n    }`);
      assert.equal((await loadRules(source)).status, 200, expression);
      const response = await fetch(`${documents}/t/d1`, { headers: { authorization: `Bearer ${idToken('u1')}` } });
      const oracle = response.status === 200;
      const decision = await evaluateRules(compileRules(source), { ...base(), method: 'get', path: 't/d1', resource: doc });
      if (decision.allowed !== oracle) disagreements.push(`${expression}: emulator ${oracle}, Hearth ${decision.allowed} (${decision.reason})`);
    }
    assert.deepEqual(disagreements, []);
  });

  test('list: queries are judged on their constraints, never on the results', async () => {
    const field = (path: string, op: string, value: unknown) => ({ fieldFilter: { field: { fieldPath: path }, op, value } });
    const strings = (...values: string[]) => ({ arrayValue: { values: values.map((stringValue) => ({ stringValue })) } });
    const cases: [string, string, Record<string, unknown>][] = [
      ['resource.data.owner == request.auth.uid', '/t/{id}', {}],
      ['resource.data.owner == request.auth.uid', '/t/{id}', { where: field('owner', 'EQUAL', { stringValue: 'u1' }) }],
      ['resource.data.owner == request.auth.uid', '/t/{id}', { where: field('owner', 'IN', strings('u1', 'u2')) }],
      ['resource.data.owner == request.auth.uid || resource.data.public', '/t/{id}', { where: field('public', 'EQUAL', { booleanValue: true }) }],
      ['resource.data.a < 10', '/t/{id}', { where: field('a', 'LESS_THAN', { integerValue: '5' }) }],
      ['resource.data.a < 10', '/t/{id}', { where: field('a', 'LESS_THAN_OR_EQUAL', { integerValue: '10' }) }],
      ['request.query.limit <= 20', '/t/{id}', { limit: 20 }],
      ['request.query.limit <= 20', '/t/{id}', {}],
      ['id.size() > 0', '/t/{id}', {}],
      ['true', '/{path=**}/t/{id}', { from: [{ collectionId: 't', allDescendants: true }] }],
      ['true', '/t/{id}', { from: [{ collectionId: 't', allDescendants: true }] }],
    ];
    const disagreements: string[] = [];
    for (const [condition, match, query] of cases) {
      const source = wrap(`    match ${match} {\n      allow list: if ${condition};\n    }`);
      assert.equal((await loadRules(source)).status, 200, condition);
      const structuredQuery = { from: [{ collectionId: 't' }], ...query };
      const response = await fetch(`${documents}:runQuery`, {
        method: 'POST',
        headers: { authorization: `Bearer ${idToken('u1')}` },
        body: JSON.stringify({ structuredQuery }),
      });
      const oracle = response.status === 200;
      const decision = await evaluateRules(compileRules(source), { ...base(), method: 'list', path: '', query: parseStructuredQuery(db, '', structuredQuery) });
      if (decision.allowed !== oracle) disagreements.push(`${condition} ${JSON.stringify(query)}: emulator ${oracle}, Hearth ${decision.allowed} (${decision.reason})`);
    }
    assert.deepEqual(disagreements, []);
  });

  test('compile errors: the same message, warnings found beside the errors included', async () => {
    const sources = [
      wrap('    match /t/{id} {\n      allow get: true;\n    }'),
      wrap('    function f() { return true; }\n    function f() { return false; }'),
      wrap('    function f(x) { return g(x); }\n    function g(x) { return f(x); }\n    match /t/{id} { allow get: if f(1); }'),
      wrap('    match /{a=**}/x/{b=**} {\n      allow get;\n    }'),
      wrap('    match /t/{id} {\n      allow get: if "a".matches("(?=a)");\n    }'),
    ];
    for (const source of sources) {
      const oracle = await loadRules(source);
      assert.equal(oracle.status, 400, source);
      let message = '';
      try {
        compileRules(source);
      } catch (error) {
        if (!(error instanceof RulesCompileError)) throw error;
        message = error.message;
      }
      assert.equal(message, oracle.message);
    }
  });
});
