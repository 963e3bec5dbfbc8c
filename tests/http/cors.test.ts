/**
 * CORS, answered by http/cors.ts since @fastify/cors's per-request delegator was replaced: the
 * headers below are the ones the plugin gave (recorded from it, byte for byte), for a client call
 * from another origin, a preflight, a refused (strict) preflight, and administration, which no
 * other site's page may read.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
before(async () => {
  server = await startHearth();
});
after(() => server.close());

async function headersOf(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string> }> {
  const response = await fetch(server.url + path, { method, headers, ...(method === 'POST' ? { body: '{}' } : {}) });
  await response.arrayBuffer();
  const kept: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name.startsWith('access-control-') || name === 'vary') kept[name] = value;
  });
  return { status: response.status, headers: kept };
}

const page = 'https://app.example';

test('a client call from another origin: its origin reflected, with credentials', async () => {
  const answer = await headersOf('POST', `/identitytoolkit.googleapis.com/v1/accounts:lookup?key=${server.apiKey}`, { origin: page, 'content-type': 'application/json' });
  assert.equal(answer.status, 400);
  assert.deepEqual(answer.headers, { 'access-control-allow-credentials': 'true', 'access-control-allow-origin': page, vary: 'Origin' });
});

test('a preflight: methods, the requested headers, an hour of caching, 204', async () => {
  const answer = await headersOf('OPTIONS', `/identitytoolkit.googleapis.com/v1/accounts:lookup?key=${server.apiKey}`, {
    origin: page,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type,x-client-version',
  });
  assert.equal(answer.status, 204);
  assert.deepEqual(answer.headers, {
    'access-control-allow-credentials': 'true',
    'access-control-allow-headers': 'content-type,x-client-version',
    'access-control-allow-methods': 'GET, POST, PATCH, PUT, DELETE, OPTIONS',
    'access-control-allow-origin': page,
    'access-control-max-age': '3600',
    vary: 'Origin, Access-Control-Request-Headers',
  });
});

test('a preflight without its method is refused (400), as the plugin\'s strict mode did', async () => {
  const response = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:lookup`, { method: 'OPTIONS', headers: { origin: page } });
  assert.equal(response.status, 400);
  assert.equal(await response.text(), 'Invalid Preflight Request');
});

test('administration gets no CORS headers, and its preflight is not answered', async () => {
  const call = await headersOf('GET', '/emulator/v1/projects/x/config', { origin: page });
  assert.deepEqual(call.headers, { vary: 'Origin' });
  const preflight = await headersOf('OPTIONS', '/emulator/v1/projects/x/accounts', { origin: page, 'access-control-request-method': 'DELETE' });
  assert.equal(preflight.status, 404);
  assert.deepEqual(preflight.headers, { vary: 'Origin' });
  const asAdmin = await headersOf('POST', `/securetoken.googleapis.com/v1/token?key=${server.apiKey}`, { origin: page, authorization: 'Bearer owner', 'content-type': 'application/json' });
  assert.equal(asAdmin.headers['access-control-allow-origin'], undefined);
});
