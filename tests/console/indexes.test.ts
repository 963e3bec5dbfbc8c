/**
 * Issue 14, Data: the declared indexes (the --indexes file, firestore.indexes.json format) listed
 * for the console in the Firestore Admin API's Index shape. Raw HTTP, outside --dev.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

const indexFile = {
  indexes: [
    { collectionGroup: 'posts', queryScope: 'COLLECTION', fields: [{ fieldPath: 'author', order: 'ASCENDING' }, { fieldPath: 'published', order: 'DESCENDING' }] },
    { collectionGroup: 'posts', queryScope: 'COLLECTION_GROUP', fields: [{ fieldPath: 'tags', arrayConfig: 'CONTAINS' }, { fieldPath: 'score', order: 'ASCENDING' }] },
    { collectionGroup: 'items', queryScope: 'COLLECTION', fields: [{ fieldPath: 'kind', order: 'ASCENDING' }, { fieldPath: 'embedding', vectorConfig: { dimension: 3, flat: {} } }] },
  ],
  fieldOverrides: [{ collectionGroup: 'comments', fieldPath: 'createdAt', indexes: [{ queryScope: 'COLLECTION_GROUP', order: 'ASCENDING' }, { queryScope: 'COLLECTION', order: 'ASCENDING' }] }],
};

let server: TestHearth;
let bare: TestHearth;
const admin = (s: TestHearth) => ({ authorization: `Bearer ${s.adminKey}` });
const indexesUrl = (s: TestHearth, database = '(default)', project = s.projectId) => `${s.url}/hearth/v1/console/projects/${project}/databases/${database}/indexes`;
async function getJson(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: await response.json() };
}

before(async () => {
  const dir = tempDataDir();
  const indexesFile = join(dir, 'firestore.indexes.json');
  writeFileSync(indexesFile, JSON.stringify(indexFile));
  server = await startHearth({ dev: false, dataDir: dir, indexesFile });
  bare = await startHearth({ dev: false });
});
after(async () => {
  await server.close();
  await bare.close();
});

describe('console indexes', () => {
  test('the file\'s composite, collection-group and vector indexes, in the Admin API Index shape, READY', async () => {
    const answer = await getJson(indexesUrl(server), admin(server));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const indexes: any[] = answer.body.indexes;
    assert.equal(indexes.length, 4, JSON.stringify(indexes));
    const prefix = `projects/${server.projectId}/databases/(default)/collectionGroups/`;
    for (const index of indexes) {
      assert.match(index.name, new RegExp(`^${prefix.replace(/[()]/g, '\\$&')}[a-z]+/indexes/[A-Za-z0-9_-]{12}$`));
      assert.equal(index.state, 'READY');
    }
    const strip = ({ name, ...rest }: any) => ({ group: name.split('/')[5], ...rest });
    const sorted = (list: unknown[]) => list.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    assert.deepEqual(sorted(indexes.map(strip)), sorted([
      { group: 'comments', queryScope: 'COLLECTION_GROUP', fields: [{ fieldPath: 'createdAt', order: 'ASCENDING' }], state: 'READY' },
      { group: 'items', queryScope: 'COLLECTION', fields: [{ fieldPath: 'kind', order: 'ASCENDING' }, { fieldPath: 'embedding', vectorConfig: { dimension: 3, flat: {} } }], state: 'READY' },
      { group: 'posts', queryScope: 'COLLECTION', fields: [{ fieldPath: 'author', order: 'ASCENDING' }, { fieldPath: 'published', order: 'DESCENDING' }], state: 'READY' },
      { group: 'posts', queryScope: 'COLLECTION_GROUP', fields: [{ fieldPath: 'tags', arrayConfig: 'CONTAINS' }, { fieldPath: 'score', order: 'ASCENDING' }], state: 'READY' },
    ]));
    assert.equal(new Set(indexes.map((index) => index.name)).size, 4);
    const again = await getJson(indexesUrl(server), admin(server));
    assert.deepEqual(again.body, answer.body, 'names are stable');
    const other = await getJson(indexesUrl(server, 'other-db'), admin(server));
    assert.ok(other.body.indexes.every((index: any) => index.name.startsWith(`projects/${server.projectId}/databases/other-db/`)));
  });

  test('a server started without --indexes lists none', async () => {
    const answer = await getJson(indexesUrl(bare), admin(bare));
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { indexes: [] });
  });

  test('bad project or database ids are 400 INVALID_ARGUMENT', async () => {
    for (const [database, project] of [['x', server.projectId], ['Bad_DB!', server.projectId], ['(default)', 'bad_project!']] as const) {
      const answer = await getJson(indexesUrl(server, encodeURIComponent(database), project), admin(server));
      assert.equal(answer.status, 400, `${project}/${database}`);
      assert.equal(answer.body.error.status, 'INVALID_ARGUMENT');
    }
  });

  test('only operators: no credential 401, another site 403, the console cookie needs its header', async () => {
    assert.equal((await getJson(indexesUrl(server), {})).status, 401);
    assert.equal((await getJson(indexesUrl(server), { authorization: 'Bearer wrong' })).status, 401);
    assert.equal((await getJson(indexesUrl(server), { ...admin(server), origin: 'http://evil.example' })).status, 403);
    assert.equal((await getJson(indexesUrl(server), { ...admin(server), 'sec-fetch-site': 'cross-site' })).status, 403);
    const session = await fetch(`${server.url}/hearth/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ adminKey: server.adminKey }) });
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
    assert.equal((await getJson(indexesUrl(server), { cookie, 'x-hearth-console': '1' })).status, 200);
    assert.equal((await getJson(indexesUrl(server), { cookie })).status, 403);
  });
});
