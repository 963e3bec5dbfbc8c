/**
 * The document database over raw HTTP: exact error shapes, hostile input, who may read and write,
 * server transactions (the admin SDKs' locks and ABORTED). Indexes and the planner: firestore-indexes.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signedInOnlyRules, withRules } from '../helpers/security-rules.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;

const owner = { authorization: 'Bearer owner' };
const base = (s: TestHearth = server) => `${s.url}/v1/projects/${s.projectId}/databases/(default)/documents`;
const name = (path: string, s: TestHearth = server) => `projects/${s.projectId}/databases/(default)/documents/${path}`;
const int = (n: number) => ({ integerValue: String(n) });
const str = (s: string) => ({ stringValue: s });

async function call(url: string, body: unknown, headers: Record<string, string> = owner): Promise<{ status: number; body: any }> {
  return postJson(url, body, headers);
}

async function commit(writes: unknown[], s: TestHearth = server, extra: Record<string, unknown> = {}, headers: Record<string, string> = owner) {
  return call(`${base(s)}:commit`, { writes, ...extra }, headers);
}

function set(path: string, fields: Record<string, unknown>, s: TestHearth = server) {
  return { update: { name: name(path, s), fields } };
}

async function runQuery(structuredQuery: unknown, extra: Record<string, unknown> = {}, s: TestHearth = server) {
  const answer = await call(`${base(s)}:runQuery`, { structuredQuery, ...extra });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body as Array<{ document?: { name: string; fields?: Record<string, any> }; explainMetrics?: any; transaction?: string }>;
}

const ids = (answers: Array<{ document?: { name: string } }>) => answers.filter((a) => a.document).map((a) => a.document!.name.split('/').pop());

function assertGoogleError(answer: { status: number; body: any }, status: number, code: string): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body?.error?.code, status);
  assert.equal(answer.body?.error?.status, code);
  assert.equal(typeof answer.body?.error?.message, 'string');
}

async function signUp(s: TestHearth): Promise<string> {
  const answer = await postJson(`${s.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${s.apiKey}`, { returnSecureToken: true });
  assert.equal(answer.status, 200);
  return answer.body.idToken as string;
}

before(async () => {
  server = await startHearth();
});

after(async () => {
  await server.close();
});

describe('errors and hostile input', () => {
  test('malformed JSON, unknown fields, wrong types and bad names answer 400 INVALID_ARGUMENT', async () => {
    const raw = await fetch(`${base()}:commit`, { method: 'POST', headers: { ...owner, 'content-type': 'text/plain' }, body: '{"writes": [' });
    assertGoogleError({ status: raw.status, body: await raw.json() }, 400, 'INVALID_ARGUMENT');
    assertGoogleError(await commit([{ update: { name: name('c/a'), fields: {} }, bogus: 1 }]), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await commit([set('c/a', { n: { integerValue: 'twelve' } })]), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await commit([set('c/a', { n: { integerValue: '9223372036854775808' } })]), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await commit([set('c/__x__', { n: int(1) })]), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await commit([set('c/a', { __x__: int(1) })]), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await commit([set('c', { n: int(1) })]), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await commit([{ update: { name: 'projects/other/databases/(default)/documents/c/a', fields: {} } }]), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await commit([set('c/a', { s: { stringValue: '\ud800' } })]), 400, 'INVALID_ARGUMENT');
    const missing = await fetch(`${base()}/c/missing`, { headers: owner });
    assertGoogleError({ status: missing.status, body: await missing.json() }, 404, 'NOT_FOUND');
  });

  test('a failed commit writes nothing: a later write failing its precondition undoes the earlier ones', async () => {
    const answer = await commit([set('atomic/a', { n: int(1) }), { update: { name: name('atomic/b'), fields: {} }, currentDocument: { exists: true } }]);
    assertGoogleError(answer, 404, 'NOT_FOUND');
    assert.match(answer.body.error.message, /No document to update: .*atomic\/b/);
    const read = await call(`${base()}:batchGet`, { documents: [name('atomic/a')] });
    assert.ok(read.body[0].missing, 'the first write was rolled back');
  });

  test('array transform elements are held to the rules of stored values: reserved map keys refused, timestamps kept to the microsecond', async () => {
    const union = (path: string, element: unknown) => ({ transform: { document: name(path), fieldTransforms: [{ fieldPath: 'arr', appendMissingElements: { values: [element] } }] } });
    const reserved = await commit([union('elements/a', { mapValue: { fields: { __bad__: int(1) } } })]);
    assertGoogleError(reserved, 400, 'INVALID_ARGUMENT');
    assert.match(reserved.body.error.message, /__bad__.*reserved/);
    assert.equal((await commit([union('elements/b', { timestampValue: '2020-01-01T00:00:00.123456789Z' })])).status, 200);
    const read = await call(`${base()}:batchGet`, { documents: [name('elements/a'), name('elements/b')] });
    assert.ok(read.body.find((entry: any) => entry.missing === name('elements/a')), 'the refused write stored nothing');
    const stored = read.body.find((entry: any) => entry.found?.name === name('elements/b')).found;
    assert.deepEqual(stored.fields.arr.arrayValue.values, [{ timestampValue: '2020-01-01T00:00:00.123456Z' }]);
  });

  test('rewriting the same content keeps updateTime, whatever the order of nested keys; 1 to 1.0 is a change', async () => {
    const nested = (first: [string, unknown], second: [string, unknown]) => ({ m: { mapValue: { fields: Object.fromEntries([first, second]) } } });
    const updateTimeOf = (answer: { body: any }) => answer.body.writeResults[0].updateTime as string;
    const written = updateTimeOf(await commit([set('same/d', nested(['x', int(1)], ['y', { arrayValue: { values: [int(2)] } }]))]));
    const reordered = updateTimeOf(await commit([set('same/d', nested(['y', { arrayValue: { values: [int(2)] } }], ['x', int(1)]))]));
    assert.equal(reordered, written);
    const retyped = updateTimeOf(await commit([set('same/d', nested(['x', { doubleValue: 1 }], ['y', { arrayValue: { values: [int(2)] } }]))]));
    assert.ok(retyped > written, `${retyped} should follow ${written}`);
  });

  test('query limits: in over 30 values, not-in over 10, two negations, two array-contains', async () => {
    const values = (n: number) => ({ arrayValue: { values: Array.from({ length: n }, (_, i) => int(i)) } });
    const where = (filter: unknown) => call(`${base()}:runQuery`, { structuredQuery: { from: [{ collectionId: 'c' }], where: filter } });
    const field = (path: string, op: string, value: unknown) => ({ fieldFilter: { field: { fieldPath: path }, op, value } });
    assert.equal((await where(field('n', 'IN', values(30)))).status, 200);
    assertGoogleError(await where(field('n', 'IN', values(31))), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await where(field('n', 'ARRAY_CONTAINS_ANY', values(31))), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await where(field('n', 'NOT_IN', values(11))), 400, 'INVALID_ARGUMENT');
    const and = (...filters: unknown[]) => ({ compositeFilter: { op: 'AND', filters } });
    assertGoogleError(await where(and(field('a', 'NOT_EQUAL', int(1)), field('b', 'NOT_EQUAL', int(1)))), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await where(and(field('a', 'ARRAY_CONTAINS', int(1)), field('b', 'ARRAY_CONTAINS', int(1)))), 400, 'INVALID_ARGUMENT');
  });

  test('the in-value bound is configurable for old clients (10)', async () => {
    const old = await startHearth({ maxInValues: 10 });
    try {
      const values = (n: number) => ({ arrayValue: { values: Array.from({ length: n }, (_, i) => int(i)) } });
      const q = (n: number) => call(`${base(old)}:runQuery`, { structuredQuery: { from: [{ collectionId: 'c' }], where: { fieldFilter: { field: { fieldPath: 'n' }, op: 'IN', value: values(n) } } } });
      assert.equal((await q(10)).status, 200);
      const refused = await q(11);
      assertGoogleError(refused, 400, 'INVALID_ARGUMENT');
      assert.match(refused.body.error.message, /up to 10 comparison values/);
    } finally {
      await old.close();
    }
  });

  test('a body over 10 MiB is refused with the Google error shape, and the server stays up', async () => {
    const big = 'x'.repeat(11 * 1024 * 1024);
    const answer = await call(`${base()}:commit`, { writes: [set('big/a', { s: str(big) })] });
    assert.ok(answer.status === 413 || answer.status === 400, String(answer.status));
    assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    assert.equal((await commit([set('big/b', { n: int(1) })])).status, 200);
  });

  test('a sum beside a limit counts among the documents that have its field, as an orderBy would (answers taken from Google\'s emulator)', async () => {
    assert.equal((await commit([set('aggr/a', { v: str('x') }), set('aggr/b', { v: str('x'), n: int(1) }), set('aggr/c', { v: str('x'), n: int(2) })])).status, 200);
    const aggregations = [{ alias: 'k', count: {} }, { alias: 's', sum: { field: { fieldPath: 'n' } } }];
    const aggregate = async (structuredQuery: Record<string, unknown>) => {
      const answer = await call(`${base()}:runAggregationQuery`, { structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: 'aggr' }], ...structuredQuery }, aggregations } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const fields = (answer.body as Array<{ result?: { aggregateFields: Record<string, { integerValue: string }> } }>).find((a) => a.result)!.result!.aggregateFields;
      return [Number(fields.k!.integerValue), Number(fields.s!.integerValue)];
    };
    // The first two matches are a (no n) and b; Firestore counts the first two with an n: b and c.
    assert.deepEqual(await aggregate({ where: { fieldFilter: { field: { fieldPath: 'v' }, op: 'EQUAL', value: str('x') } }, limit: 2 }), [2, 3]);
    assert.deepEqual(await aggregate({ offset: 1, limit: 1 }), [1, 2]);
    // count alone covers every match, with or without the field.
    const counted = await call(`${base()}:runAggregationQuery`, { structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: 'aggr' }], limit: 2 }, aggregations: [{ alias: 'k', count: {} }] } });
    assert.equal((counted.body as Array<{ result?: { aggregateFields: { k: { integerValue: string } } } }>).find((a) => a.result)!.result!.aggregateFields.k.integerValue, '2');
  });

  test('six aggregations are refused as Google refuses them (the SDK\'s own suite matches /maximum number of aggregations/)', async () => {
    const aggregations = Array.from({ length: 6 }, (_, i) => ({ alias: `a${i}`, count: {} }));
    const answer = await fetch(`${base()}:runAggregationQuery`, {
      method: 'POST',
      headers: { ...owner, 'content-type': 'application/json' },
      body: JSON.stringify({ structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: 'c' }] }, aggregations } }),
    });
    const body = (await answer.json()) as { error: { status: string; message: string } };
    assert.equal(answer.status, 400);
    assert.equal(body.error.status, 'INVALID_ARGUMENT');
    assert.match(body.error.message, /maximum number of aggregations/);
  });

  test('random and hostile bodies on every verb never answer 5xx', async () => {
    const verbs = ['commit', 'batchGet', 'runQuery', 'runAggregationQuery', 'beginTransaction', 'rollback', 'batchWrite', 'listCollectionIds'];
    const shapes: unknown[] = [
      null,
      [],
      'text',
      42,
      { __proto__: { polluted: true } },
      { writes: 'x' },
      { writes: [null] },
      { writes: [{ update: { name: 5 } }] },
      { writes: [{ update: { name: name('h/a'), fields: { a: { mapValue: { fields: { b: null } } } } } }] },
      { writes: [{ transform: { document: name('h/a'), fieldTransforms: [{ fieldPath: 'n', increment: { stringValue: 'x' } }] } }] },
      { documents: [name('h'), 7] },
      { structuredQuery: { from: [{ collectionId: 'c' }], where: { fieldFilter: { field: { fieldPath: 'a..b' }, op: 'EQUAL', value: int(1) } } } },
      { structuredQuery: { from: [{ collectionId: 'c' }], orderBy: [{ field: { fieldPath: 'a' }, direction: 'SIDEWAYS' }] } },
      { structuredQuery: { from: [{ collectionId: 'c' }], startAt: { values: [int(1), int(2), int(3)] } } },
      { structuredQuery: { from: [{ collectionId: 'c' }], limit: -1 } },
      { structuredQuery: { from: [{ collectionId: 'c' }], where: { compositeFilter: { op: 'XOR', filters: [] } } } },
      { structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: 'c' }] }, aggregations: [{ sum: {} }] } },
      { transaction: 'not-a-transaction' },
      { options: { readOnly: {}, readWrite: {} } },
    ];
    for (let seed = 0; seed < 40; seed++) shapes.push(randomJson(seed, 0));
    for (const verb of verbs) {
      for (const shape of shapes) {
        const answer = await fetch(`${base()}:${verb}`, { method: 'POST', headers: { ...owner, 'content-type': 'application/json' }, body: JSON.stringify(shape) });
        const text = await answer.text();
        assert.ok(answer.status < 500, `${verb} ${JSON.stringify(shape)} -> ${answer.status} ${text}`);
      }
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

function randomJson(seed: number, depth: number): unknown {
  const pick = (seed * 7919 + depth * 104729) % 9;
  if (depth > 3) return seed % 2 ? 'x' : 1;
  switch (pick) {
    case 0:
      return null;
    case 1:
      return -1.5e308;
    case 2:
      return '\u0000\ud800';
    case 3:
      return [randomJson(seed + 1, depth + 1), randomJson(seed + 2, depth + 1)];
    case 4:
      return { writes: [randomJson(seed + 3, depth + 1)] };
    case 5:
      return { structuredQuery: randomJson(seed + 4, depth + 1) };
    case 6:
      return { from: [{ collectionId: randomJson(seed + 5, depth + 1) }], where: randomJson(seed + 6, depth + 1) };
    case 7:
      return { update: { name: name('r/x'), fields: { f: randomJson(seed + 7, depth + 1) } } };
    default:
      return { fieldFilter: { field: { fieldPath: 'f' }, op: 'IN', value: randomJson(seed + 8, depth + 1) } };
  }
}

describe('documents over REST (get, list, create, patch, delete)', () => {
  const request = async (method: string, url: string, body?: unknown) => {
    const answer = await fetch(url, { method, headers: { ...owner, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: answer.status, body: (await answer.json()) as any };
  };

  test('create with and without an id, 409 when it exists; get with a mask', async () => {
    const created = await request('POST', `${base()}/rest?documentId=fixed`, { fields: { a: int(1), b: str('x') } });
    assert.equal(created.status, 200);
    assert.equal(created.body.name, name('rest/fixed'));
    assertGoogleError(await request('POST', `${base()}/rest?documentId=fixed`, { fields: {} }), 409, 'ALREADY_EXISTS');
    const auto = await request('POST', `${base()}/rest`, { fields: { a: int(2) } });
    assert.match(auto.body.name, /\/rest\/[A-Za-z0-9]{20}$/);
    const masked = await request('GET', `${base()}/rest/fixed?mask.fieldPaths=b`);
    assert.deepEqual(masked.body.fields, { b: str('x') });
    assert.equal(typeof masked.body.createTime, 'string');
  });

  test('patch with an update mask and preconditions; delete with a precondition', async () => {
    await request('POST', `${base()}/rest?documentId=patched`, { fields: { a: int(1), b: int(2), m: { mapValue: { fields: { x: int(1), y: int(2) } } } } });
    const patched = await request('PATCH', `${base()}/rest/patched?updateMask.fieldPaths=a&updateMask.fieldPaths=m.x&updateMask.fieldPaths=gone`, { fields: { a: int(10), m: { mapValue: { fields: { x: int(5) } } } } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body.fields, { a: int(10), b: int(2), m: { mapValue: { fields: { x: int(5), y: int(2) } } } });
    assertGoogleError(await request('PATCH', `${base()}/rest/nothere?currentDocument.exists=true`, { fields: {} }), 404, 'NOT_FOUND');
    assertGoogleError(await request('PATCH', `${base()}/rest/patched?currentDocument.updateTime=2020-01-01T00:00:00Z`, { fields: {} }), 400, 'FAILED_PRECONDITION');
    const ok = await request('PATCH', `${base()}/rest/patched?currentDocument.updateTime=${encodeURIComponent(patched.body.updateTime)}`, { fields: { only: int(1) } });
    assert.deepEqual(ok.body.fields, { only: int(1) });
    assertGoogleError(await request('DELETE', `${base()}/rest/patched?currentDocument.exists=false`), 409, 'ALREADY_EXISTS');
    assert.deepEqual((await request('DELETE', `${base()}/rest/patched`)).body, {});
    assert.equal((await request('DELETE', `${base()}/rest/patched`)).status, 200, 'deleting a missing document succeeds');
  });

  test('list pages through a collection in name order; showMissing adds parents of subcollections', async () => {
    const writes = Array.from({ length: 7 }, (_, i) => set(`paged/d${i}`, { i: int(i) }));
    writes.push(set('paged/ghost/sub/x', { i: int(99) }));
    assert.equal((await commit(writes)).status, 200);
    const seen: string[] = [];
    let token = '';
    for (let pages = 0; pages < 10; pages++) {
      const page = await request('GET', `${base()}/paged?pageSize=3${token ? `&pageToken=${token}` : ''}`);
      seen.push(...page.body.documents.map((d: { name: string }) => d.name.split('/').pop()));
      if (!page.body.nextPageToken) break;
      token = page.body.nextPageToken;
    }
    assert.deepEqual(seen, ['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6']);
    const withMissing = await request('GET', `${base()}/paged?showMissing=true`);
    assert.deepEqual(withMissing.body.documents.map((d: { name: string }) => d.name.split('/').pop()), ['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', 'ghost']);
    assert.equal(withMissing.body.documents[7].fields, undefined);
    const descending = await request('GET', `${base()}/paged?orderBy=i%20desc&pageSize=2`);
    assert.deepEqual(descending.body.documents.map((d: { name: string }) => d.name.split('/').pop()), ['d6', 'd5']);
    for (const pageSize of ['abc', '-1', '2.5']) assertGoogleError(await request('GET', `${base()}/paged?pageSize=${pageSize}`), 400, 'INVALID_ARGUMENT');
  });
});

describe('who may read and write', () => {
  test('in --dev: open to every caller until rules are released, then the rules decide; a forged token is UNAUTHENTICATED', async () => {
    const token = await signUp(server);
    assert.equal((await commit([set('access/open', { n: int(1) })], server, {}, {})).status, 200);
    await withRules(server.url, server.projectId, signedInOnlyRules, async () => {
      assert.equal((await commit([set('access/a', { n: int(1) })], server, {}, { authorization: `Bearer ${token}` })).status, 200);
      const anonymous = await commit([set('access/b', { n: int(1) })], server, {}, {});
      assertGoogleError(anonymous, 403, 'PERMISSION_DENIED');
      assert.equal(anonymous.body.error.message, 'Missing or insufficient permissions.');
    });
    const forged = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    assertGoogleError(await commit([set('access/c', { n: int(1) })], server, {}, { authorization: `Bearer ${forged}` }), 401, 'UNAUTHENTICATED');
    assertGoogleError(await commit([set('access/c', { n: int(1) })], server, {}, { authorization: 'Bearer owner-not' }), 401, 'UNAUTHENTICATED');
  });

  test('outside --dev the database is closed to users until rules exist; the admin key opens it', async () => {
    const closed = await startHearth({ dev: false });
    try {
      const token = await signUp(closed);
      assertGoogleError(await commit([set('x/a', { n: int(1) })], closed, {}, { authorization: `Bearer ${token}` }), 403, 'PERMISSION_DENIED');
      assertGoogleError(await commit([set('x/a', { n: int(1) })], closed, {}, owner), 401, 'UNAUTHENTICATED');
      assert.equal((await commit([set('x/a', { n: int(1) })], closed, {}, { authorization: `Bearer ${closed.adminKey}` })).status, 200);
    } finally {
      await closed.close();
    }
  });

  test('listCollectionIds is for the admin only, and lists the collections under a document', async () => {
    assert.equal((await commit([set('lists/a', { n: int(1) }), set('lists/a/sub1/x', {}), set('lists/a/sub2/y/deeper/z', {})])).status, 200);
    const answer = await call(`${base()}/lists/a:listCollectionIds`, {});
    assert.deepEqual(answer.body, { collectionIds: ['sub1', 'sub2'] });
    const token = await signUp(server);
    assertGoogleError(await call(`${base()}/lists/a:listCollectionIds`, {}, { authorization: `Bearer ${token}` }), 403, 'PERMISSION_DENIED');
  });
});

describe('server transactions (admin SDKs)', () => {
  const begin = async () => (await call(`${base()}:beginTransaction`, { options: { readWrite: {} } })).body.transaction as string;
  const read = (transaction: string, path: string) => call(`${base()}:batchGet`, { documents: [name(path)], transaction });

  test('a write to a document a transaction read waits until the transaction ends', async () => {
    await commit([set('tx/wait', { n: int(1) })]);
    const transaction = await begin();
    assert.equal((await read(transaction, 'tx/wait')).status, 200);
    let outsideDone = false;
    const outside = commit([set('tx/wait', { n: int(100) })]).then((answer) => {
      outsideDone = true;
      return answer;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(outsideDone, false, 'the plain write waits for the lock');
    const inside = await commit([set('tx/wait', { n: int(2) })], server, { transaction });
    assert.equal(inside.status, 200, JSON.stringify(inside.body));
    assert.equal((await outside).status, 200);
    const final = await call(`${base()}:batchGet`, { documents: [name('tx/wait')] });
    assert.equal(final.body[0].found.fields.n.integerValue, '100', 'the waiting write came after the transaction');
  });

  test('two transactions on one document: the older wins, the younger gets ABORTED and nothing is lost', async () => {
    await commit([set('tx/race', { n: int(0) })]);
    const older = await begin();
    const younger = await begin();
    assert.equal((await read(older, 'tx/race')).status, 200);
    assert.equal((await read(younger, 'tx/race')).status, 200);
    const youngerCommit = commit([set('tx/race', { n: int(10) })], server, { transaction: younger });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const olderCommit = await commit([set('tx/race', { n: int(1) })], server, { transaction: older });
    assert.equal(olderCommit.status, 200, JSON.stringify(olderCommit.body));
    assertGoogleError(await youngerCommit, 409, 'ABORTED');
    const final = await call(`${base()}:batchGet`, { documents: [name('tx/race')] });
    assert.equal(final.body[0].found.fields.n.integerValue, '1');
  });

  test('a read-only transaction cannot commit writes (as Google answers), and the refused write stores nothing', async () => {
    const begun = await call(`${base()}:beginTransaction`, { options: { readOnly: {} } });
    assert.equal(begun.status, 200);
    const refused = await commit([set('readonly/d', { n: int(1) })], server, { transaction: begun.body.transaction });
    assertGoogleError(refused, 400, 'INVALID_ARGUMENT');
    assert.equal(refused.body.error.message, 'Cannot modify entities in a read-only transaction.');
    const read = await call(`${base()}:batchGet`, { documents: [name('readonly/d')] });
    assert.ok(read.body[0].missing);
  });

  test('newTransaction on a read returns the id first; rollback ends it; unknown ids are refused', async () => {
    await commit([set('tx/new', { n: int(5) })]);
    const answers = await runQuery({ from: [{ collectionId: 'tx' }], where: { fieldFilter: { field: { fieldPath: 'n' }, op: 'EQUAL', value: int(5) } } }, { newTransaction: { readWrite: {} } });
    const transaction = answers[0]!.transaction!;
    assert.equal(typeof transaction, 'string');
    assert.deepEqual(ids(answers), ['new']);
    assert.equal((await call(`${base()}:rollback`, { transaction })).status, 200);
    assertGoogleError(await call(`${base()}:rollback`, { transaction }), 400, 'INVALID_ARGUMENT');
    assertGoogleError(await commit([], server, { transaction: 'bm90LWEtdHJhbnNhY3Rpb24=' }), 400, 'INVALID_ARGUMENT');
  });
});
