/**
 * Firestore triggers of an unmodified code base, written through firebase-admin: v2
 * onDocumentWritten (created, updated, deleted: the CloudEvent's type, source, document, params and
 * DocumentEventData decoded by firebase-functions), v1 onCreate ((snap, context) with the legacy
 * event type and resource), a FriendlyEats rating average kept by a v2 trigger that fails the first
 * try of every event (retried with the same event id), a failing function without retry set aside,
 * and the web app's note count (packages/web/functions, loaded by the fixture).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getAuth } from 'firebase-admin/auth';
import { getFirestore, type Firestore } from 'firebase-admin/firestore';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { waitFor } from '../helpers/wait-for.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');
let appCount = 0;

describe('Firestore triggers', () => {
  let server: TestHearth;
  let app: App;
  let db: Firestore;

  before(async () => {
    server = await startHearth({ functionsDir: fixture, functionsDispatcher: { firstBackoffMs: 200, pollMs: 100 } });
    process.env.FIRESTORE_EMULATOR_HOST = server.hostPort;
    process.env.FIREBASE_AUTH_EMULATOR_HOST = server.hostPort;
    app = initializeApp({ projectId: server.projectId }, `triggers-${appCount++}`);
    db = getFirestore(app);
  });
  after(async () => {
    await deleteApp(app);
    delete process.env.FIRESTORE_EMULATOR_HOST;
    delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
    await server?.close();
  });

  async function noteEvents(noteId: string): Promise<Array<Record<string, unknown>>> {
    const snap = await db.collection('noteEvents').where('noteId', '==', noteId).get();
    return snap.docs.map((doc) => ({ id: doc.id, ...doc.data() }));
  }

  test('v2 onDocumentWritten sees creates, updates and deletes as Google sends them', async () => {
    const ref = db.doc('notes/n1');
    await ref.set({ title: 'first', tags: ['a'], at: new Date('2024-01-02T03:04:05.678Z') });
    await waitFor('the create event', async () => ((await noteEvents('n1')).length === 1 ? true : undefined));
    await ref.update({ title: 'second' });
    await waitFor('the update event', async () => ((await noteEvents('n1')).length === 2 ? true : undefined));
    await ref.delete();
    const events = await waitFor('the delete event', async () => {
      const all = await noteEvents('n1');
      return all.length === 3 ? all : undefined;
    });
    for (const event of events) {
      assert.equal(event.type, 'google.cloud.firestore.document.v1.written');
      assert.equal(event.document, 'notes/n1');
      assert.equal(event.source, `//firestore.googleapis.com/projects/${server.projectId}/databases/(default)`);
      assert.match(event.id as string, /^[0-9a-f-]{36}$/);
    }
    const created = events.find((event) => event.before === null)!;
    assert.equal((created.after as { title: string }).title, 'first');
    assert.deepEqual((created.after as { tags: string[] }).tags, ['a']);
    assert.equal(((created.after as { at: { toDate(): Date } }).at).toDate().toISOString(), '2024-01-02T03:04:05.678Z');
    const updated = events.find((event) => event.before !== null && event.after !== null)!;
    assert.equal((updated.before as { title: string }).title, 'first');
    assert.equal((updated.after as { title: string }).title, 'second');
    const deleted = events.find((event) => event.after === null)!;
    assert.equal((deleted.before as { title: string }).title, 'second');
    // Each try's printed lines are kept with it.
    // The function's own write can be seen before the dispatcher has recorded the try that made it.
    const triesOf = () => server.hearth.functions.dispatcher!.deliveries.filter((record) => record.target === 'noteWritten' && events.some((event) => event.id === record.id));
    const tries = await waitFor('each try recorded', async () => (triesOf().length >= 3 ? triesOf() : undefined), 10_000);
    assert.equal(tries.length, 3);
    await waitFor('the logs', async () => (tries.every((record) => record.logs.some((line) => line.includes('note n1 written'))) ? true : undefined), 10_000);
  });

  test('v1 onCreate gets (snapshot, context) with params, event id, type and resource', async () => {
    await db.doc('inbox/m7').set({ text: 'hello' });
    const copy = await waitFor('the copy', async () => {
      const snap = await db.doc('copies/m7').get();
      return snap.exists ? snap.data()! : undefined;
    });
    assert.equal(copy.text, 'hello');
    assert.equal(copy.eventType, 'google.firestore.document.create');
    assert.equal(copy.resource, `projects/${server.projectId}/databases/(default)/documents/inbox/m7`);
    assert.match(copy.eventId, /^[0-9a-f-]{36}$/);
    // An update is not a create.
    await db.doc('inbox/m7').update({ text: 'changed' });
    await db.doc('inbox/m8').set({ text: 'later' });
    await waitFor('the second copy', async () => ((await db.doc('copies/m8').get()).exists ? true : undefined));
    assert.equal((await db.doc('copies/m7').get()).get('text'), 'hello');
  });

  test('a rating average kept by a trigger that fails every first try, with the same event id each time', async () => {
    const ratings = [5, 3, 4, 1, 2, 5, 5, 4];
    await Promise.all(ratings.map((rating, i) => db.doc(`restaurants/r1/ratings/x${i}`).set({ rating })));
    const restaurant = await waitFor('every rating counted', async () => {
      const snap = await db.doc('restaurants/r1').get();
      return snap.get('numRatings') === ratings.length ? snap.data()! : undefined;
    });
    assert.equal(restaurant.sumRatings, 29);
    assert.equal(restaurant.avgRating, 29 / 8);
    // The function's own write can be seen before the dispatcher has recorded the try that made it.
    const settled = () => {
      const records = server.hearth.functions.dispatcher!.deliveries.filter((record) => record.target === 'aggregateRatings');
      const okIds = new Set(records.filter((record) => record.ok).map((record) => record.id));
      return okIds.size >= ratings.length ? records : undefined;
    };
    const deliveries = await waitFor('each event\'s successful try recorded', async () => settled(), 10_000);
    const ids = new Set(deliveries.map((record) => record.id));
    assert.equal(ids.size, ratings.length);
    for (const id of ids) {
      const tries = deliveries.filter((record) => record.id === id);
      assert.equal(tries[0]!.ok, false, 'the first try fails');
      assert.match(tries[0]!.error!, /first try of .* fails on purpose/);
      assert.ok(tries.some((record) => record.ok), 'a later try of the same event succeeds');
    }
    // Nothing left waiting.
    await waitFor('the queue to drain', async () => ((await server.hearth.functions.eventCounts()).pending === 0 ? true : undefined));
  });

  test('a failing function without retry has its event set aside, not retried', async () => {
    await db.doc('doomed/d1').set({ x: 1 });
    const counts = await waitFor('the event set aside', async () => {
      const now = await server.hearth.functions.eventCounts();
      return now.setAside >= 1 ? now : undefined;
    });
    assert.equal(counts.setAside, 1);
    const tries = server.hearth.functions.dispatcher!.deliveries.filter((record) => record.target === 'alwaysFails');
    assert.equal(tries.length, 1);
  });

  test('writes no function listens to raise nothing', async () => {
    const before = await server.hearth.functions.eventCounts();
    await db.doc('elsewhere/e1').set({ x: 1 });
    await db.doc('notes/n9/sub/s1').set({ x: 1 }); // deeper than notes/{noteId}
    await db.doc('restaurants/r2').set({ name: 'no rating' });
    const afterCounts = await server.hearth.functions.eventCounts();
    assert.deepEqual(afterCounts, before);
  });

  test('the web app\'s note count: each create and delete counted once, edits not, nothing for a deleted account', async () => {
    const { uid } = await getAuth(app).createUser({ email: 'counted@notes.example' });
    const notes = db.collection(`users/${uid}/notes`);
    const drained = () => waitFor('the queue to drain', async () => ((await server.hearth.functions.eventCounts()).pending === 0 ? true : undefined));
    // Concurrent changes: their events are delivered at once and in any order (a delete can be
    // counted before its note's create), each +1/-1 in a transaction on the same document.
    await Promise.all(['a', 'b', 'c', 'd'].map((id) => notes.doc(id).set({ text: id, createdAt: new Date() })));
    await notes.doc('a').update({ text: 'edited' });
    await Promise.all([notes.doc('b').delete(), notes.doc('c').delete()]);
    await notes.doc('e').set({ text: 'e', createdAt: new Date() });
    await drained();
    // What each try did, to tell a lost increment from a missing delivery should this ever fail.
    const tries = () => JSON.stringify(server.hearth.functions.dispatcher!.deliveries.filter((record) => record.target === 'countNotes').map((record) => ({ id: record.id, ok: record.ok, error: record.error })));
    assert.equal((await db.doc(`users/${uid}`).get()).get('noteCount'), 3, tries());
    // One ledger entry per create and delete (7), none for the edit.
    assert.equal((await db.collection(`users/${uid}/noteCountEvents`).get()).size, 7, tries());
    // Notes of an account that no longer exists (Hearth erases its data) bring no document back.
    await db.doc('users/no-such-account/notes/x').set({ text: 'x', createdAt: new Date() });
    await waitFor('the queue to drain', async () => ((await server.hearth.functions.eventCounts()).pending === 0 ? true : undefined));
    assert.equal((await db.doc('users/no-such-account').get()).exists, false);
  });
});
