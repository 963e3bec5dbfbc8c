/**
 * Cloud Storage triggers of an unmodified code base: an upload through firebase-admin's storage
 * reaches a v2 onObjectFinalized (the CloudEvent's type, bucket, id and object metadata), a delete
 * reaches a v1 object().onDelete ((object, context) with Google's event type and resource), and
 * objects in other buckets raise nothing.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getFirestore, type Firestore } from 'firebase-admin/firestore';
import { getStorage } from 'firebase-admin/storage';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { waitFor } from '../helpers/wait-for.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');

describe('Cloud Storage triggers', () => {
  let server: TestHearth;
  let app: App;
  let db: Firestore;

  before(async () => {
    server = await startHearth({ functionsDir: fixture, functionsDispatcher: { pollMs: 100 } });
    process.env.FIRESTORE_EMULATOR_HOST = server.hostPort;
    process.env.FIREBASE_STORAGE_EMULATOR_HOST = server.hostPort;
    app = initializeApp({ projectId: server.projectId, storageBucket: `${server.projectId}.appspot.com` }, 'storage-triggers');
    db = getFirestore(app);
  });
  after(async () => {
    await deleteApp(app);
    delete process.env.FIRESTORE_EMULATOR_HOST;
    delete process.env.FIREBASE_STORAGE_EMULATOR_HOST;
    await server?.close();
  });

  test('an upload reaches onObjectFinalized, a delete reaches v1 onDelete', async () => {
    const file = getStorage(app).bucket().file('photos/cat 1.png');
    await file.save(Buffer.from('not really a png'), { contentType: 'image/png', resumable: false });
    const key = encodeURIComponent('photos/cat 1.png');
    const upload = await waitFor('the finalize event', async () => {
      const snap = await db.doc(`uploads/${key}`).get();
      return snap.exists ? snap.data()! : undefined;
    });
    assert.deepEqual({ name: upload.name, size: upload.size, contentType: upload.contentType, bucket: upload.bucket, type: upload.type }, {
      name: 'photos/cat 1.png',
      size: '16',
      contentType: 'image/png',
      bucket: `${server.projectId}.appspot.com`,
      type: 'google.cloud.storage.object.v1.finalized',
    });
    assert.match(upload.id, /^[0-9a-f-]{36}$/);
    await file.delete();
    const removed = await waitFor('the delete event', async () => {
      const snap = await db.doc(`removed/${key}`).get();
      return snap.exists ? snap.data()! : undefined;
    });
    assert.equal(removed.eventType, 'google.storage.object.delete');
    assert.equal(removed.resource, `projects/_/buckets/${server.projectId}.appspot.com/objects/photos/cat 1.png`);
  });

  test('objects in another bucket raise nothing', async () => {
    // Events raised from now on: the previous test's may still be being recorded (a function's
    // write shows before its delivery is noted), and those are not this test's.
    const since = Date.now() * 1000;
    await getStorage(app).bucket('other-bucket.appspot.com').file('x.txt').save('x', { resumable: false }).catch(() => undefined);
    await new Promise((wake) => setTimeout(wake, 1500));
    const storageDeliveries = server.hearth.functions.dispatcher!.deliveries.filter((record) => record.commitTime >= since && (record.target === 'onUpload' || record.target === 'onRemoved'));
    assert.equal(storageDeliveries.length, 0);
  });
});
