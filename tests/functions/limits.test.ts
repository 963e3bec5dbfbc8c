/**
 * Limits on what a code base's functions can do to Hearth: a trigger that keeps writing the
 * document it listens to is stopped by the re-trigger loop guard (its events set aside, not
 * delivered), and a function past its timeoutSeconds fails (a trigger's event set aside; an HTTP
 * function answers 504) while Hearth goes on serving.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getFirestore, type Firestore } from 'firebase-admin/firestore';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { waitFor } from '../helpers/wait-for.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');

describe('function limits', () => {
  let server: TestHearth;
  let app: App;
  let db: Firestore;

  before(async () => {
    server = await startHearth({ functionsDir: fixture, functionsDispatcher: { loopLimitPerMinute: 5, pollMs: 100 } });
    process.env.FIRESTORE_EMULATOR_HOST = server.hostPort;
    app = initializeApp({ projectId: server.projectId }, 'limits');
    db = getFirestore(app);
  });
  after(async () => {
    await deleteApp(app);
    delete process.env.FIRESTORE_EMULATOR_HOST;
    await server?.close();
  });

  test('a trigger re-triggering itself is stopped by the loop guard', async () => {
    await db.doc('loops/l1').set({ n: 0 });
    const dispatcher = server.hearth.functions.dispatcher!;
    const stopped = await waitFor('the guard', async () => dispatcher.deliveries.find((record) => record.target === 'loopy' && /re-trigger loop/.test(record.error ?? '')));
    assert.ok(stopped);
    // It stays stopped: n no longer grows.
    const n = (await db.doc('loops/l1').get()).get('n') as number;
    await new Promise((wake) => setTimeout(wake, 1500));
    assert.equal((await db.doc('loops/l1').get()).get('n'), n);
    assert.ok(n >= 4 && n <= 6, `n = ${n}`);
    const delivered = dispatcher.deliveries.filter((record) => record.target === 'loopy' && record.ok).length;
    assert.equal(delivered, 5);
  });

  test('a trigger past its timeoutSeconds fails, and its event is set aside', async () => {
    const before = (await server.hearth.functions.eventCounts()).setAside;
    await db.doc('slow/s1').set({ x: 1 });
    const record = await waitFor('the timeout', async () => server.hearth.functions.dispatcher!.deliveries.find((r) => r.target === 'slowTrigger'));
    assert.equal(record.ok, false);
    assert.match(record.error ?? '', /did not finish within 1 s/);
    await waitFor('set aside', async () => ((await server.hearth.functions.eventCounts()).setAside > before ? true : undefined));
  });

  test('a function past the memory limit ends its worker, not Hearth; the worker starts again', async () => {
    const worker = server.hearth.functions.worker!;
    assert.equal(server.hearth.functions.endpoints.find((endpoint) => endpoint.name === 'hog')!.availableMemoryMb, 256);
    const starts = worker.starts;
    const answer = await fetch(`${server.url}/functions/hog`);
    assert.equal(answer.status, 503);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const again = await fetch(`${server.url}/functions/grouped-hello/after`);
      if (again.status === 200) break;
      if (Date.now() > deadline) throw new Error('the worker did not come back');
      await new Promise((wake) => setTimeout(wake, 200));
    }
    assert.ok(worker.starts > starts);
    assert.ok(worker.lines.some((line) => /heap limit|out of memory/i.test(line.text)), 'the worker said why it died');
  });

  test('an HTTP function past its timeoutSeconds answers 504, and Hearth goes on', async () => {
    const answer = await fetch(`${server.url}/functions/slowRequest`);
    assert.equal(answer.status, 504);
    assert.equal((await fetch(`${server.url}/functions/grouped-hello/ok`)).status, 200);
  });
});
