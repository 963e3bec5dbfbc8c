/**
 * `--functions DIR`: the code base's functions are learned from its own firebase-functions manifest
 * (v2 and firebase-functions/v1, grouped exports), its code runs in a worker process of its own whose
 * firebase-admin reaches Hearth (Firestore over gRPC, Auth) with no change to the code, a worker
 * that dies is started again, and the worker's port refuses callers without Hearth's key.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createHearth, createLogger } from '../../packages/server/src/server.js';
import { defaultOptions } from '../../packages/server/src/config.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((wake) => setTimeout(wake, 100));
  }
}

describe('a functions code base beside Hearth', () => {
  let server: TestHearth;

  before(async () => {
    server = await startHearth({ functionsDir: fixture });
  });
  after(async () => {
    await server?.close();
  });

  test('its functions are read from its manifest, v2 and v1', () => {
    const byName = new Map(server.hearth.functions.endpoints.map((endpoint) => [endpoint.name, endpoint]));
    for (const name of ['adminRoundTrip', 'aggregateRatings', 'alwaysFails', 'copyOnCreate', 'crash', 'grouped-hello', 'noteWritten', 'vetSignIn', 'vetSignUp', 'whoAmI', 'slowTrigger']) assert.ok(byName.has(name), name);
    assert.equal(byName.get('slowTrigger')!.timeoutSeconds, 1);
    assert.equal(byName.get('vetSignUp')!.kind.type, 'blocking');
    assert.deepEqual(byName.get('aggregateRatings')!.kind, { type: 'firestore', eventType: 'google.cloud.firestore.document.v1.created', database: '(default)', namespace: '(default)', document: 'restaurants/{restaurantId}/ratings/{ratingId}' });
    assert.equal(byName.get('aggregateRatings')!.retry, true);
    assert.equal(byName.get('copyOnCreate')!.platform, 'gcfv1');
    assert.equal(byName.get('copyOnCreate')!.kind.type, 'firestore');
    assert.equal(byName.get('whoAmI')!.kind.type, 'callable');
    assert.equal(byName.get('adminRoundTrip')!.kind.type, 'https');
  });

  test('the code runs in another process, and its firebase-admin reaches Hearth unchanged', async () => {
    const worker = server.hearth.functions.worker!;
    const answer = await worker.request('/__hearth/http/adminRoundTrip/some/path?id=a1', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hello: 'world' }), timeoutMs: 60_000 });
    assert.equal(answer.status, 200, answer.body.toString());
    const body = JSON.parse(answer.body.toString()) as { stored: unknown; users: number; pid: number };
    assert.notEqual(body.pid, process.pid);
    assert.equal(body.pid, worker.pid);
    assert.deepEqual(body.stored, { path: '/some/path', method: 'POST', body: { hello: 'world' } });
    // Written through the worker's firebase-admin, read back from Hearth's own REST API.
    const rest = await fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/adminChecks/a1`, { headers: { authorization: 'Bearer owner' } });
    assert.equal(rest.status, 200);
    assert.equal(((await rest.json()) as { fields: { method: { stringValue: string } } }).fields.method.stringValue, 'POST');
  });

  test('grouped exports are called by their deployed name', async () => {
    const answer = await server.hearth.functions.worker!.request('/__hearth/http/grouped-hello/x', { method: 'GET', timeoutMs: 60_000 });
    assert.equal(answer.body.toString(), 'hello /x');
  });

  test('a worker that dies is started again', async () => {
    const worker = server.hearth.functions.worker!;
    const starts = worker.starts;
    const first = JSON.parse((await worker.request('/__hearth/http/crash', { method: 'GET', timeoutMs: 60_000 })).body.toString()) as { pid: number };
    const pid = await waitFor('a new worker', async () => (worker.starts > starts && worker.pid !== undefined && worker.pid !== first.pid ? worker.pid : undefined));
    const again = await worker.request('/__hearth/http/adminRoundTrip?id=a2', { method: 'GET', timeoutMs: 60_000 });
    assert.equal(again.status, 200);
    assert.equal((JSON.parse(again.body.toString()) as { pid: number }).pid, pid);
  });

  test("the worker's port refuses a caller without Hearth's key, and unknown functions", async () => {
    const worker = server.hearth.functions.worker!;
    const port = await waitFor('the worker port', async () => {
      const probe = await worker.request('/__hearth/ping', { method: 'GET', timeoutMs: 60_000 });
      return probe.status === 200 ? (worker as unknown as { port: number }).port : undefined;
    });
    const stranger = await fetch(`http://127.0.0.1:${port}/__hearth/http/adminRoundTrip`);
    assert.equal(stranger.status, 403);
    const forged = await fetch(`http://127.0.0.1:${port}/__hearth/http/adminRoundTrip`, { headers: { 'x-hearth-worker-key': 'guess' } });
    assert.equal(forged.status, 403);
    const unknown = await worker.request('/__hearth/events/noSuchFunction', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"signature":"event"}', timeoutMs: 60_000 });
    assert.equal(unknown.status, 404);
    const badShape = await worker.request('/__hearth/events/noteWritten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"signature":"nonsense"}', timeoutMs: 60_000 });
    assert.equal(badShape.status, 400);
    const traversal = await worker.request('/__hearth/http/constructor', { method: 'GET', timeoutMs: 60_000 });
    assert.equal(traversal.status, 404);
  });
});

describe('a folder that is not a functions code base', () => {
  test('is refused at start with a message naming the problem', async () => {
    const dataDir = tempDataDir();
    const options = defaultOptions({ port: 0, dataDir, dev: true, logLevel: 'silent', webRoot: undefined, functionsDir: join(import.meta.dirname, 'no-such-folder') });
    await assert.rejects(createHearth(options, createLogger('silent')), /has no package\.json/);
  });
});
