/**
 * Several instances on one PostgreSQL database share the trigger deliveries: each event is leased
 * to one instance at a time (FOR UPDATE SKIP LOCKED), so with two instances writing and delivering
 * at once, every event is delivered and none is delivered twice. SQLite has one instance: skipped.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startHearth, tempDataDir } from '../helpers/hearth.js';
import { testBackend, testDatabaseUrl } from '../helpers/test-backend.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');

test('two instances deliver each event once between them', { skip: testBackend !== 'postgres' && 'PostgreSQL only' }, async () => {
  const first = await startHearth({ functionsDir: fixture, functionsDispatcher: { pollMs: 50 } });
  const databaseUrl = (await testDatabaseUrl(first.dataDir))!;
  const second = await startHearth({ functionsDir: fixture, databaseUrl, dataDir: tempDataDir(), functionsDispatcher: { pollMs: 50 } });
  try {
    const total = 60;
    await Promise.all(Array.from({ length: total }, (_, i) => {
      const server = i % 2 ? first : second;
      return fetch(`${server.url}/v1/projects/${server.projectId}/databases/(default)/documents/notes/m${i}`, {
        method: 'PATCH',
        headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
        body: JSON.stringify({ fields: { i: { integerValue: String(i) } } }),
      }).then((answer) => assert.equal(answer.status, 200));
    }));
    const delivered = () => [...first.hearth.functions.dispatcher!.deliveries, ...second.hearth.functions.dispatcher!.deliveries].filter((record) => record.target === 'noteWritten' && record.ok);
    const deadline = Date.now() + 90_000;
    while (new Set(delivered().map((record) => record.id)).size < total) {
      if (Date.now() > deadline) throw new Error(`only ${new Set(delivered().map((record) => record.id)).size} of ${total} delivered`);
      await new Promise((wake) => setTimeout(wake, 100));
    }
    await new Promise((wake) => setTimeout(wake, 1000));
    const ids = delivered().map((record) => record.id);
    assert.equal(ids.length, total, 'no event delivered twice');
    assert.equal(new Set(ids).size, total);
    assert.deepEqual(await first.hearth.functions.eventCounts(), { pending: 0, setAside: 0 });
  } finally {
    await second.close();
    await first.close();
  }
});
