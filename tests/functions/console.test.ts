/**
 * The console's functions view: the code base's functions, the worker, events waiting and set
 * aside with their error, the last deliveries; a set-aside event put back is delivered again.
 * Only operators (the console session, or the admin key from scripts) see it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');

interface View {
  functions: Array<{ name: string; type: string }>;
  worker: { pid: number; starts: number; lines: unknown[] };
  events: { pending: number; setAside: Array<{ id: string; function: string; document: string; lastError?: string; attempts: number }> };
  deliveries: Array<{ id: string; target: string; ok: boolean }>;
}

describe('the console functions view', () => {
  let server: TestHearth;
  const view = async (): Promise<View> => {
    const answer = await fetch(`${server.url}/hearth/v1/console/functions`, { headers: { authorization: `Bearer ${server.adminKey}` } });
    assert.equal(answer.status, 200);
    return (await answer.json()) as View;
  };

  before(async () => {
    server = await startHearth({ functionsDir: fixture, functionsDispatcher: { pollMs: 100 } });
  });
  after(async () => {
    await server?.close();
  });

  test('shows the functions, the worker and a set-aside event, which can be put back', async () => {
    await fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/doomed/c1`, { method: 'PATCH', headers: { authorization: 'Bearer owner', 'content-type': 'application/json' }, body: '{"fields":{}}' });
    let seen: View;
    const deadline = Date.now() + 60_000;
    for (;;) {
      seen = await view();
      if (seen.events.setAside.length) break;
      if (Date.now() > deadline) throw new Error('no event was set aside');
      await new Promise((wake) => setTimeout(wake, 100));
    }
    assert.ok(seen.functions.some((fn) => fn.name === 'aggregateRatings' && fn.type === 'firestore'));
    assert.ok(seen.worker.pid > 0);
    const event = seen.events.setAside[0]!;
    assert.equal(event.function, 'alwaysFails');
    assert.equal(event.document, 'doomed/c1');
    assert.match(event.lastError ?? '', /always fails/);
    const requeue = await fetch(`${server.url}/hearth/v1/console/functions/events/${event.id}:requeue`, { method: 'POST', headers: { authorization: `Bearer ${server.adminKey}` } });
    assert.equal(requeue.status, 200);
    for (;;) {
      const now = await view();
      if (now.deliveries.filter((record) => record.id === event.id).length === 2 && now.events.setAside.length === 1) break;
      if (Date.now() > deadline) throw new Error('the requeued event was not delivered again');
      await new Promise((wake) => setTimeout(wake, 100));
    }
  });

  test('is refused without an operator credential, and unknown events are 404', async () => {
    assert.equal((await fetch(`${server.url}/hearth/v1/console/functions`)).status, 401);
    assert.equal((await fetch(`${server.url}/hearth/v1/console/functions`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    const unknown = await fetch(`${server.url}/hearth/v1/console/functions/events/00000000-0000-0000-0000-000000000000:requeue`, { method: 'POST', headers: { authorization: `Bearer ${server.adminKey}` } });
    assert.equal(unknown.status, 404);
    const malformed = await fetch(`${server.url}/hearth/v1/console/functions/events/..%2f:requeue`, { method: 'POST', headers: { authorization: `Bearer ${server.adminKey}` } });
    assert.equal(malformed.status, 404);
  });
});
