/**
 * The bounded fuzz, one corpus per endpoint family: identity v1, v2 (multi-factor) and v3, securetoken, admin,
 * Firestore REST, WebChannel, gRPC and the hosted pages. Bodies come from the identity API's own
 * JSON schemas and from Firestore request shapes, mutated; seeds are fixed, so a finding names the
 * request that reproduces it. No answer may be a 5xx, take over 5 s, or (JSON APIs) leave Google's
 * error shape. HEARTH_FUZZ_ROUNDS raises the rounds per family (default 60).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mfaBodySchemas } from '../../packages/server/src/auth/api/mfa-routes.js';
import * as schemas from '../../packages/server/src/auth/api/schemas.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { bodyFromSchema, check, checkGrpc, mutateJson, randomJson, seeded, type Finding, type Probe, type Rand } from '../helpers/soak-fuzz.js';

const rounds = Number(process.env.HEARTH_FUZZ_ROUNDS ?? 60);
const owner = { authorization: 'Bearer owner' };
const json = { 'content-type': 'application/json' };

let server: TestHearth;
before(async () => {
  server = await startHearth();
});
after(async () => {
  await server.close();
});

type Schema = Parameters<typeof bodyFromSchema>[1];
const bodySchemas = Object.entries(schemas).filter(([, value]) => typeof value === 'object' && value !== null && (value as Schema).properties) as Array<[string, Schema]>;

const v1 = '/identitytoolkit.googleapis.com/v1';
const v3 = '/www.googleapis.com/identitytoolkit/v3/relyingparty';
const families: Record<string, { paths: string[]; headers?: Record<string, string>; method?: string; shape: boolean; body: (rand: Rand) => string | undefined }> = {
  'identity v1': {
    paths: ['signUp', 'signInWithPassword', 'lookup', 'update', 'delete', 'createAuthUri', 'sendOobCode', 'resetPassword', 'signInWithEmailLink', 'signInWithIdp'].map((m) => `${v1}/accounts:${m}?key=any`),
    shape: true,
    body: (rand) => JSON.stringify(bodyFromSchema(rand, pickSchema(rand))),
  },
  'identity v3': {
    paths: ['signupNewUser', 'verifyPassword', 'getAccountInfo', 'setAccountInfo', 'deleteAccount', 'createAuthUri', 'getOobConfirmationCode', 'resetPassword', 'emailLinkSignin', 'verifyAssertion', 'getProjectConfig'].map((m) => `${v3}/${m}?key=any`),
    shape: true,
    body: (rand) => JSON.stringify(bodyFromSchema(rand, pickSchema(rand))),
  },
  'identity v2 (multi-factor)': {
    paths: Object.keys(mfaBodySchemas).map((call) => `/identitytoolkit.googleapis.com/v2/accounts/${call}?key=any`),
    shape: true,
    body: (rand) => JSON.stringify(bodyFromSchema(rand, pick(rand, Object.values(mfaBodySchemas)) as Schema)),
  },
  securetoken: {
    paths: ['/securetoken.googleapis.com/v1/token?key=any'],
    shape: true,
    // URLSearchParams, not encodeURIComponent: a random string may hold a lone surrogate, which the latter throws on.
    body: (rand) => (rand() < 0.5 ? JSON.stringify(bodyFromSchema(rand, schemas.tokenBody as Schema)) : new URLSearchParams({ grant_type: String(randomJson(rand)), refresh_token: String(randomJson(rand)) }).toString()),
  },
  admin: {
    paths: ['accounts', 'accounts:lookup', 'accounts:update', 'accounts:delete', 'accounts:batchDelete', 'accounts:sendOobCode', 'accounts:query'].map((m) => `${v1}/projects/demo-test/${m}`).concat(['/identitytoolkit.googleapis.com/v2/projects/demo-test/oauthIdpConfigs?oauthIdpConfigId=oidc.fuzz']),
    headers: owner,
    shape: true,
    body: (rand) => JSON.stringify(bodyFromSchema(rand, pickSchema(rand))),
  },
  'Firestore REST': {
    paths: ['commit', 'runQuery', 'batchGet', 'runAggregationQuery', 'beginTransaction', 'rollback', 'batchWrite', 'listCollectionIds'].map((m) => `/v1/projects/demo-test/databases/(default)/documents:${m}`).concat(['/v1/projects/demo-test/databases/(default)/documents/fuzz/doc1:runQuery']),
    headers: owner,
    shape: true,
    body: (rand) => JSON.stringify(mutateJson(rand, pick(rand, firestoreShapes))),
  },
  WebChannel: {
    paths: ['Listen', 'Write'].map((s) => `/google.firestore.v1.Firestore/${s}/channel?VER=8&database=projects%2Fdemo-test%2Fdatabases%2F(default)&RID=${1000}&CVER=22&X-HTTP-Session-Id=gsessionid&zx=fuzz&t=1`),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    shape: true,
    body: (rand) => `count=1&ofs=0&req0___data__=${encodeURIComponent(JSON.stringify(mutateJson(rand, pick(rand, channelShapes))))}`,
  },
  'hosted pages': {
    paths: ['/__/auth/handler', '/__/auth/iframe', '/__/auth/action', '/emulator/auth/handler', '/__/auth/handler.js', '/__/firebase/init.json'],
    method: 'GET',
    shape: false,
    body: () => undefined,
  },
};

const firestoreShapes: unknown[] = [
  { writes: [{ update: { name: 'projects/demo-test/databases/(default)/documents/fuzz/a', fields: { n: { integerValue: '1' }, m: { mapValue: { fields: { s: { stringValue: 'x' } } } } } }, updateMask: { fieldPaths: ['n'] }, currentDocument: { exists: true } }] },
  { writes: [{ transform: { document: 'projects/demo-test/databases/(default)/documents/fuzz/a', fieldTransforms: [{ fieldPath: 'n', increment: { integerValue: '1' } }] } }] },
  { structuredQuery: { from: [{ collectionId: 'fuzz', allDescendants: false }], where: { compositeFilter: { op: 'AND', filters: [{ fieldFilter: { field: { fieldPath: 'n' }, op: 'IN', value: { arrayValue: { values: [{ integerValue: '1' }] } } } }] } }, orderBy: [{ field: { fieldPath: 'n' }, direction: 'DESCENDING' }], startAt: { values: [{ integerValue: '3' }], before: true }, limit: 5 } },
  { structuredAggregationQuery: { structuredQuery: { from: [{ collectionId: 'fuzz' }] }, aggregations: [{ alias: 'total', sum: { field: { fieldPath: 'n' } } }] } },
  { documents: ['projects/demo-test/databases/(default)/documents/fuzz/a'], mask: { fieldPaths: ['n'] } },
  { options: { readOnly: { readTime: '2026-01-01T00:00:00Z' } } },
  { transaction: 'dHg=' },
  { pageSize: 10, pageToken: 'x' },
];

const channelShapes: unknown[] = [
  { database: 'projects/demo-test/databases/(default)', addTarget: { query: { parent: 'projects/demo-test/databases/(default)/documents', structuredQuery: { from: [{ collectionId: 'fuzz' }] } }, targetId: 2 } },
  { database: 'projects/demo-test/databases/(default)', removeTarget: 2 },
  { database: 'projects/demo-test/databases/(default)' },
  { streamToken: 'AQ==', writes: [{ update: { name: 'projects/demo-test/databases/(default)/documents/fuzz/w', fields: {} } }] },
];

function pick<T>(rand: Rand, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

let schemaRand: Rand = seeded(1);
function pickSchema(rand: Rand): Schema {
  schemaRand = rand;
  return pick(schemaRand, bodySchemas)[1];
}

/** Unusual requests every family also gets: bad JSON, wrong content types, odd query strings. */
function oddProbe(rand: Rand, family: string, path: string, headers: Record<string, string> = {}): Probe {
  const variants: Array<() => Probe> = [
    () => ({ family, method: 'POST', path, headers: { ...headers, ...json }, body: '{"unterminated": ' }),
    () => ({ family, method: 'POST', path, headers: { ...headers, 'content-type': 'text/plain' }, body: JSON.stringify(randomJson(rand)) }),
    () => ({ family, method: 'POST', path, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=%ZZ&&=&b' }),
    () => ({ family, method: 'POST', path: `${path}${path.includes('?') ? '&' : '?'}${encodeURIComponent(String(randomJson(rand)).slice(0, 1000))}=%ff`, headers: { ...headers, ...json }, body: '{}' }),
    () => ({ family, method: 'PUT', path, headers: { ...headers, ...json }, body: '[]' }),
    () => ({ family, method: 'POST', path, headers: { ...headers, ...json }, body: JSON.stringify(Array(2000).fill({ a: [[[[[[[[1]]]]]]]] })) }),
  ];
  return pick(rand, variants)();
}

describe('bounded fuzz: no 5xx, no hang, Google-shaped errors', () => {
  for (const [family, spec] of Object.entries(families)) {
    test(family, async () => {
      const rand = seeded(family.length * 7919 + 17);
      const findings: Finding[] = [];
      for (let round = 0; round < rounds; round++) {
        const path = pick(rand, spec.paths);
        const probe: Probe =
          round % 4 === 3
            ? oddProbe(rand, family, path, spec.headers)
            : { family, method: spec.method ?? 'POST', path: spec.method === 'GET' ? `${path}?${new URLSearchParams({ apiKey: String(randomJson(rand)), mode: String(randomJson(rand)), oobCode: 'x', v: String(randomJson(rand)) })}` : path, headers: { ...json, ...spec.headers }, body: spec.body(rand) };
        const problem = await check(server.url, probe, spec.shape);
        if (problem) findings.push({ probe: { ...probe, body: probe.body?.slice(0, 500) }, problem });
      }
      assert.deepEqual(findings, [], JSON.stringify(findings.slice(0, 5), null, 2));
    });
  }

  test('gRPC', async () => {
    const rand = seeded(4242);
    const methods = ['GetDocument', 'ListDocuments', 'CreateDocument', 'UpdateDocument', 'DeleteDocument', 'BatchGetDocuments', 'BeginTransaction', 'Commit', 'Rollback', 'RunQuery', 'RunAggregationQuery', 'BatchWrite', 'ListCollectionIds', 'PartitionQuery', 'NoSuchMethod'];
    const findings: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const method = pick(rand, methods);
      const length = Math.floor(rand() * 64);
      const message = Buffer.from(Array.from({ length }, () => Math.floor(rand() * 256)));
      const problem = await checkGrpc(server.url, method, message, 'Bearer owner');
      // Bytes that are not a protobuf message answer INVALID_ARGUMENT (grpc-js alone answers INTERNAL,
      // Google's emulator UNKNOWN): the gRPC adapter decodes requests itself.
      if (problem) findings.push(`${method} ${message.toString('hex')}: ${problem}`);
    }
    assert.deepEqual(findings, []);
  });
});
