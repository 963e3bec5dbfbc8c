/**
 * What the audit log counts as a change is decided by the route that matched and the verb its
 * router read, never by how the URL ends: console writes to documents whose ids end in a read-only
 * verb (`x:runQuery`, `c:lookup`, `y:explain`, `z:check`) are recorded, while the calls that only
 * read or judge (runQuery, batchGet, accounts:lookup, accounts:query, rules:check) still are not.
 * Raw HTTP with a console session, outside --dev; both backends.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let cookie = '';

before(async () => {
  server = await startHearth({ dev: false });
  const response = await fetch(`${server.url}/hearth/v1/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ adminKey: server.adminKey }),
  });
  assert.equal(response.status, 200);
  cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
});
after(() => server.close());

const consoleHeaders = () => ({ cookie, 'x-hearth-console': '1', 'sec-fetch-site': 'same-origin', origin: server.url, 'content-type': 'application/json' });
const documents = () => `/v1/projects/${server.projectId}/databases/(default)/documents`;

async function consoleCall(method: string, path: string, body?: unknown): Promise<number> {
  const response = await fetch(`${server.url}${path}`, { method, headers: consoleHeaders(), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  await response.arrayBuffer();
  return response.status;
}

async function auditedPaths(): Promise<string[]> {
  const response = await fetch(`${server.url}/hearth/v1/console/audit?pageSize=1000`, { headers: consoleHeaders() });
  assert.equal(response.status, 200);
  return ((await response.json()) as { entries: Array<{ method: string; path: string }> }).entries.map((entry) => `${entry.method} ${entry.path}`);
}

const fields = { fields: { title: { stringValue: 'changed by an operator' } } };

test("writes to documents whose ids end in a read-only verb are audited like any other", async () => {
  const writes: Array<[string, string, unknown?]> = [
    ['PATCH', `${documents()}/notes/x:runQuery`, fields],
    ['PATCH', `${documents()}/notes/c:lookup`, fields],
    ['PATCH', `${documents()}/notes/y:explain`, fields],
    ['PATCH', `${documents()}/notes/z:check`, fields],
    ['PATCH', `${documents()}/notes/q:batchGet`, fields],
    ['DELETE', `${documents()}/notes/x:runQuery`],
    ['DELETE', `${documents()}/notes/c:lookup`],
  ];
  for (const [method, path, body] of writes) assert.equal(await consoleCall(method, path, body), 200, `${method} ${path}`);
  // The writes happened: the document with the verb-like id exists until deleted, the others stay.
  const read = await fetch(`${server.url}${documents()}/notes/y:explain`, { headers: consoleHeaders() });
  assert.equal(read.status, 200);
  const audited = await auditedPaths();
  for (const [method, path] of writes) assert.ok(audited.includes(`${method} ${path}`), `${method} ${path} is not in the audit log: ${JSON.stringify(audited)}`);
});

test('calls that only read or judge are still not audited', async () => {
  const before = (await auditedPaths()).length;
  const reads: Array<[string, unknown]> = [
    [`${documents()}:runQuery`, { structuredQuery: { from: [{ collectionId: 'notes' }] } }],
    [`${documents()}/notes/y:explain:runQuery`, { structuredQuery: { from: [{ collectionId: 'sub' }] } }],
    [`${documents()}:batchGet`, { documents: [`projects/${server.projectId}/databases/(default)/documents/notes/y:explain`] }],
    [`${documents()}:runAggregationQuery`, { structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: 'notes' }] }, aggregations: [{ alias: 'n', count: {} }] } }],
    [`/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:lookup`, { localId: ['nobody'] }],
    [`/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/accounts:query`, {}],
    [`/hearth/v1/console/projects/${server.projectId}/databases/(default)/rules:check`, { source: "rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents { match /x/{y} { allow read; } } }" }],
  ];
  for (const [path, body] of reads) assert.equal(await consoleCall('POST', path, body), 200, path);
  assert.equal((await auditedPaths()).length, before, 'no entry for reads');
});
