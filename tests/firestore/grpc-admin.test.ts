/**
 * Cloud Firestore over gRPC, the transport of the Node SDKs: firebase-admin (FIRESTORE_EMULATOR_HOST,
 * `Bearer owner`) writing: every value type, updates with field paths and transforms, failed
 * preconditions and their gRPC status codes, batches, BulkWriter (BatchWrite), and server
 * transactions (concurrent increments, reads by query, read-only, rollback). Then below the SDKs:
 * the unary document RPCs no SDK sends (GetDocument, CreateDocument, UpdateDocument, DeleteDocument,
 * ListDocuments) from a bare gRPC client, and Hearth's transport itself: HTTP/1.1 and gRPC on one
 * port, or a separate gRPC port.
 *
 * It runs against Hearth (in-process, --dev; gRPC shares the HTTP port). With
 * HEARTH_FIRESTORE_TARGET=google-emulator the same assertions run against Google's official
 * emulator, which is how they were checked; set HEARTH_FIRESTORE_EMULATOR=127.0.0.1:PORT as well to
 * reuse a running emulator; the tests of the transport are about Hearth and skipped there.
 * The target and its clients are in tests/helpers/firestore-grpc-clients.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  FieldPath as AdminFieldPath,
  FieldValue,
  GeoPoint as AdminGeoPoint,
  Timestamp as AdminTimestamp,
} from 'firebase-admin/firestore';
import { loadFirestoreRoot, messageFromJson, messageToJson } from '../../packages/server/src/firestore/api/grpc-codec.js';
import { admin, adminIds, coll, newAdmin, rejectsWith, run, target, useGoogleEmulator, useGrpcTarget, within } from '../helpers/firestore-grpc-clients.js';
import { freePort, startHearth } from '../helpers/hearth.js';

useGrpcTarget();

// ---- firebase-admin ----------------------------------------------------------------------------

describe('firebase-admin over gRPC', () => {
  test('set and get round-trip every value type', async () => {
    const ref = coll('values').doc('all');
    const written = await within(
      ref.set({
        nothing: null,
        yes: true,
        int: 42,
        negative: -7,
        double: 1.5,
        nan: NaN,
        negZero: -0,
        inf: Infinity,
        minusInf: -Infinity,
        text: 'héllo 🔥',
        bytes: Buffer.from([0, 1, 254, 255]),
        time: new AdminTimestamp(1700000000, 123456789),
        geo: new AdminGeoPoint(45.5, -73.25),
        zeroGeo: new AdminGeoPoint(0, 0),
        ref: admin.doc('other/doc'),
        array: [1, 'two', null, { three: 3 }],
        map: { nested: { deep: true } },
        emptyMap: {},
        emptyArray: [],
        vector: FieldValue.vector([1, 2.5]),
      }),
      'set',
    );
    const snap = await within(ref.get(), 'get');
    assert.equal(snap.exists, true);
    assert.ok(snap.updateTime!.isEqual(written.writeTime), 'updateTime is the write time');
    assert.ok(snap.createTime!.isEqual(snap.updateTime!), 'a new document was created at its update time');
    assert.ok(snap.readTime.toMillis() >= written.writeTime.toMillis());
    const data = snap.data()!;
    assert.equal(data.nothing, null);
    assert.equal(data.yes, true);
    assert.equal(data.int, 42);
    assert.equal(data.negative, -7);
    assert.equal(data.double, 1.5);
    assert.ok(Number.isNaN(data.nan));
    assert.ok(Object.is(data.negZero, -0), 'negative zero survives');
    assert.equal(data.inf, Infinity);
    assert.equal(data.minusInf, -Infinity);
    assert.equal(data.text, 'héllo 🔥');
    assert.deepEqual([...data.bytes], [0, 1, 254, 255]);
    // Stored to the microsecond.
    assert.deepEqual([data.time.seconds, data.time.nanoseconds], [1700000000, 123456000]);
    assert.ok(data.geo.isEqual(new AdminGeoPoint(45.5, -73.25)));
    assert.ok(data.zeroGeo.isEqual(new AdminGeoPoint(0, 0)));
    assert.equal(data.ref.path, 'other/doc');
    assert.deepEqual(data.array, [1, 'two', null, { three: 3 }]);
    assert.deepEqual(data.map, { nested: { deep: true } });
    assert.deepEqual(data.emptyMap, {});
    assert.deepEqual(data.emptyArray, []);
    assert.deepEqual(data.vector.toArray(), [1, 2.5]);

    // int64 beyond 2^53, read as BigInt by a second client.
    const big = newAdmin('bigint', target.hostPort, { useBigInt: true });
    const bigRef = big.doc(ref.path);
    await within(bigRef.set({ max: 9223372036854775807n, min: -9223372036854775808n }), 'set int64');
    assert.deepEqual((await within(bigRef.get(), 'get int64')).data(), { max: 9223372036854775807n, min: -9223372036854775808n });
  });

  test('update: field paths, transforms, deletes and merges', async () => {
    const ref = coll('updates').doc('u');
    await within(ref.set({ count: 1, m: { a: 1, b: 2 }, list: [1, 2], keep: 'k', 'dot.ted': 0 }), 'set');
    const result = await within(
      ref.update({
        count: FieldValue.increment(4),
        'm.a': FieldValue.delete(),
        'm.c': 3,
        list: FieldValue.arrayUnion(2, 3),
        stamp: FieldValue.serverTimestamp(),
      }),
      'update',
    );
    await within(ref.update(new AdminFieldPath('dot.ted'), 5), 'update with a FieldPath');
    let data = (await within(ref.get(), 'get')).data()!;
    assert.equal(data.count, 5);
    assert.deepEqual(data.m, { b: 2, c: 3 });
    assert.deepEqual(data.list, [1, 2, 3]);
    assert.equal(data.keep, 'k');
    assert.equal(data['dot.ted'], 5);
    assert.ok(data.stamp instanceof AdminTimestamp);
    assert.ok(Math.abs(data.stamp.toMillis() - result.writeTime.toMillis()) < 1000, 'the server timestamp is the commit time');

    await within(ref.update({ list: FieldValue.arrayRemove(1), count: FieldValue.increment(0.5) }), 'update again');
    await within(ref.set({ m: { d: 4 }, extra: true }, { merge: true }), 'set with merge');
    data = (await within(ref.get(), 'get')).data()!;
    assert.deepEqual(data.list, [2, 3]);
    assert.equal(data.count, 5.5);
    assert.deepEqual(data.m, { b: 2, c: 3, d: 4 });
    assert.equal(data.extra, true);

    await within(ref.delete(), 'delete');
    assert.equal((await within(ref.get(), 'get deleted')).exists, false);
    await within(ref.delete(), 'deleting a missing document succeeds');
  });

  test('failed preconditions and bad writes carry their gRPC status codes', async () => {
    const c = coll('errors');
    await within(c.doc('exists').set({ a: 1 }), 'set');
    await rejectsWith(c.doc('exists').create({ a: 2 }), 6, 'create over an existing document (ALREADY_EXISTS)');
    await rejectsWith(c.doc('missing').update({ a: 1 }), 5, 'update of a missing document (NOT_FOUND)');
    const stale = new AdminTimestamp(1, 0);
    await rejectsWith(c.doc('exists').delete({ lastUpdateTime: stale }), 9, 'delete with a stale updateTime (FAILED_PRECONDITION)');
    await rejectsWith(c.doc('exists').update({ a: 3 }, { lastUpdateTime: stale }), 9, 'update with a stale updateTime (FAILED_PRECONDITION)');
    await rejectsWith(c.doc('reserved').set({ __x__: 1 }), 3, 'a reserved field name (INVALID_ARGUMENT)');
    assert.deepEqual((await within(c.doc('exists').get(), 'get')).data(), { a: 1 });
    // create of a new document works, and a matching updateTime is accepted
    await within(c.doc('fresh').create({ b: 1 }), 'create');
    const current = await within(c.doc('fresh').get(), 'get fresh');
    await within(c.doc('fresh').update({ b: 2 }, { lastUpdateTime: current.updateTime! }), 'update with the current updateTime');
    assert.equal((await within(c.doc('fresh').get(), 'get fresh again')).get('b'), 2);
  });

  test('batches commit atomically', async () => {
    const c = coll('batch');
    await within(c.doc('b').set({ n: 0 }), 'seed b');
    await within(c.doc('c').set({ n: 0 }), 'seed c');
    const batch = admin.batch();
    batch.set(c.doc('a'), { n: 1 });
    batch.update(c.doc('b'), { n: 2 });
    batch.delete(c.doc('c'));
    const results = await within(batch.commit(), 'batch commit');
    assert.equal(results.length, 3);
    assert.ok(results.every((r) => r.writeTime.isEqual(results[0].writeTime)), 'one commit time');
    assert.deepEqual(await adminIds(c.orderBy(AdminFieldPath.documentId())), ['a', 'b']);

    const failing = admin.batch();
    failing.set(c.doc('d'), { n: 4 });
    failing.update(c.doc('missing'), { n: 5 });
    await rejectsWith(failing.commit(), 5, 'a batch with an update of a missing document');
    assert.equal((await within(c.doc('d').get(), 'get d')).exists, false, 'nothing of the failed batch was written');
  });

  test('BulkWriter (BatchWrite): each write succeeds or fails on its own', async () => {
    const c = coll('bulk');
    await within(c.doc('taken').set({}), 'seed');
    const writer = admin.bulkWriter();
    writer.onWriteError(() => false);
    const failed = writer.create(c.doc('taken'), { n: 1 }).then(
      () => 'no error',
      (error: { code?: number }) => error.code,
    );
    const written = writer.set(c.doc('new'), { n: 2 }).then((result) => result.writeTime);
    await within(writer.close(), 'bulkWriter.close');
    assert.equal(await failed, 6);
    assert.ok((await written) instanceof AdminTimestamp);
    assert.deepEqual(await adminIds(c), ['new', 'taken']);
  });

  test('transactions: concurrent increments lose no update, reads by query, read-only, rollback', async () => {
    const c = coll('tx');
    const counter = c.doc('counter');
    await within(counter.set({ n: 0 }), 'seed');
    const attempts = { count: 0 };
    const increments = 5;
    await within(
      Promise.all(
        Array.from({ length: increments }, () =>
          admin.runTransaction(
            async (t) => {
              attempts.count++;
              const snap = await t.get(counter);
              t.update(counter, { n: snap.get('n') + 1 });
            },
            { maxAttempts: 20 },
          ),
        ),
      ),
      'concurrent transactions',
      40_000,
    );
    assert.equal((await within(counter.get(), 'get counter')).get('n'), increments);
    assert.ok(attempts.count >= increments);

    // A query read inside a transaction, and a write based on it.
    await within(c.doc('a').set({ tag: 'x', v: 1 }), 'seed a');
    await within(c.doc('b').set({ tag: 'x', v: 2 }), 'seed b');
    const total = await within(
      admin.runTransaction(async (t) => {
        const snap = await t.get(c.where('tag', '==', 'x'));
        const sum = snap.docs.reduce((acc, d) => acc + (d.get('v') as number), 0);
        t.set(c.doc('sum'), { sum });
        return sum;
      }),
      'transaction with a query',
    );
    assert.equal(total, 3);
    assert.equal((await within(c.doc('sum').get(), 'get sum')).get('sum'), 3);

    // Read-only: getAll inside.
    const values = await within(
      admin.runTransaction(async (t) => (await t.getAll(c.doc('a'), c.doc('b'), c.doc('none'))).map((s) => (s.exists ? s.get('v') : null)), { readOnly: true }),
      'read-only transaction',
    );
    assert.deepEqual(values, [1, 2, null]);

    // A callback that throws rolls back: its writes never land.
    await assert.rejects(
      within(
        admin.runTransaction(async (t) => {
          await t.get(c.doc('a'));
          t.set(c.doc('rolled-back'), { x: 1 });
          throw new Error('give up');
        }),
        'failing transaction',
      ),
      /give up/,
    );
    assert.equal((await within(c.doc('rolled-back').get(), 'get rolled-back')).exists, false);
  });
});

// ---- RPCs no SDK sends ---------------------------------------------------------------------------

/** A bare gRPC client speaking proto3 JSON through Hearth's own codec, as the admin credential. */
function rawFirestore(hostPort: string, projectId: string) {
  const root = loadFirestoreRoot();
  const service = root.lookupService('google.firestore.v1.Firestore');
  const client = new grpc.Client(hostPort, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('authorization', 'Bearer owner');
  metadata.set('google-cloud-resource-prefix', `projects/${projectId}/databases/(default)`);
  const call = (method: string, request: Record<string, unknown>): Promise<any> => {
    const requestType = service.methods[method].resolvedRequestType!;
    const responseType = service.methods[method].resolvedResponseType!;
    const answer = new Promise((resolve, reject) =>
      client.makeUnaryRequest(
        `/google.firestore.v1.Firestore/${method}`,
        (json: Record<string, unknown>) => Buffer.from(requestType.encode(messageFromJson(requestType, json)).finish()),
        (bytes: Buffer) => messageToJson(responseType, responseType.decode(bytes) as unknown as Record<string, unknown>),
        request,
        metadata,
        (error, response) => (error ? reject(error) : resolve(response)),
      ),
    );
    return within(answer, method);
  };
  return { call, close: () => client.close() };
}

describe('unary document RPCs (GetDocument, CreateDocument, UpdateDocument, DeleteDocument, ListDocuments)', () => {
  test('create, get with a mask, update with a mask and a precondition, list by pages, delete', async () => {
    const raw = rawFirestore(target.hostPort, target.projectId);
    try {
      const root = `projects/${target.projectId}/databases/(default)/documents`;
      const collectionId = `raw-${run}`;
      const name = `${root}/${collectionId}/one`;
      const created = await raw.call('CreateDocument', { parent: root, collectionId, documentId: 'one', document: { fields: { a: { integerValue: '1' }, b: { stringValue: 'x' } } } });
      assert.equal(created.name, name);
      assert.deepEqual(created.fields, { a: { integerValue: '1' }, b: { stringValue: 'x' } });
      assert.equal(created.createTime, created.updateTime);
      await rejectsWith(raw.call('CreateDocument', { parent: root, collectionId, documentId: 'one', document: {} }), grpc.status.ALREADY_EXISTS, 'CreateDocument again');
      const auto = await raw.call('CreateDocument', { parent: root, collectionId, document: { fields: { n: { doubleValue: 'NaN' } } } });
      assert.match(auto.name, new RegExp(`^${root.replace(/[()]/g, '\\$&')}/${collectionId}/[A-Za-z0-9]{20}$`));
      assert.deepEqual(auto.fields, { n: { doubleValue: 'NaN' } });

      const masked = await raw.call('GetDocument', { name, mask: { fieldPaths: ['b'] } });
      assert.deepEqual(masked.fields, { b: { stringValue: 'x' } });
      await rejectsWith(raw.call('GetDocument', { name: `${root}/${collectionId}/missing` }), grpc.status.NOT_FOUND, 'GetDocument of a missing document');

      const updated = await raw.call('UpdateDocument', {
        document: { name, fields: { c: { booleanValue: false } } },
        updateMask: { fieldPaths: ['c', 'b'] },
        currentDocument: { exists: true },
      });
      assert.deepEqual(updated.fields, { a: { integerValue: '1' }, c: { booleanValue: false } });
      await rejectsWith(
        raw.call('UpdateDocument', { document: { name, fields: {} }, currentDocument: { exists: false } }),
        grpc.status.ALREADY_EXISTS,
        'UpdateDocument with exists: false',
      );
      await rejectsWith(
        raw.call('UpdateDocument', { document: { name, fields: {} }, currentDocument: { updateTime: '2000-01-01T00:00:00Z' } }),
        grpc.status.FAILED_PRECONDITION,
        'UpdateDocument with a stale updateTime',
      );

      // Pages in name order (bytewise: the auto id may sort before or after 'one').
      const names = [name, auto.name].sort((x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      const firstPage = await raw.call('ListDocuments', { parent: root, collectionId, pageSize: 1 });
      assert.deepEqual(firstPage.documents.map((d: { name: string }) => d.name), [names[0]]);
      assert.ok(firstPage.nextPageToken);
      const secondPage = await raw.call('ListDocuments', { parent: root, collectionId, pageSize: 1, pageToken: firstPage.nextPageToken });
      assert.deepEqual(secondPage.documents.map((d: { name: string }) => d.name), [names[1]]);
      const onlyNames = await raw.call('ListDocuments', { parent: root, collectionId, mask: { fieldPaths: [] } });
      assert.deepEqual(onlyNames.documents.map((d: { name: string; fields?: unknown }) => [d.name, d.fields]), names.map((n) => [n, undefined]));

      await rejectsWith(raw.call('DeleteDocument', { name: `${root}/${collectionId}/missing`, currentDocument: { exists: true } }), grpc.status.NOT_FOUND, 'DeleteDocument exists: true');
      assert.deepEqual(await raw.call('DeleteDocument', { name }), {});
      await rejectsWith(raw.call('GetDocument', { name }), grpc.status.NOT_FOUND, 'GetDocument after delete');
    } finally {
      raw.close();
    }
  });
});

// ---- the transport ---------------------------------------------------------------------------

describe('the gRPC transport (Hearth)', { skip: useGoogleEmulator && 'about Hearth’s listener' }, () => {
  test('HTTP/1.1 and gRPC share one port', async () => {
    const url = target.hearth!.url;
    const ref = coll('shared').doc('big');
    const big = 'x'.repeat(300_000);
    // A REST commit whose body spans many TCP reads, then gRPC reads it.
    const name = `projects/${target.projectId}/databases/(default)/documents/${ref.path}`;
    const commit = await fetch(`${url}/v1/projects/${target.projectId}/databases/(default)/documents:commit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer owner' },
      body: JSON.stringify({ writes: [{ update: { name, fields: { big: { stringValue: big } } } }] }),
    });
    assert.equal(commit.status, 200, await commit.clone().text());
    assert.equal((await within(ref.get(), 'gRPC get')).get('big'), big);
    // Keep-alive HTTP requests on one connection still work beside gRPC connections.
    for (let i = 0; i < 3; i++) {
      const health = await fetch(`${url}/healthz`);
      assert.deepEqual(await health.json(), { status: 'ok' });
    }
    const rest = await fetch(`${url}/v1/${name}`, { headers: { authorization: 'Bearer owner' } });
    assert.equal(((await rest.json()) as { fields: { big: { stringValue: string } } }).fields.big.stringValue.length, big.length);
  });

  test('a batch over 10 MiB is refused with INVALID_ARGUMENT at once, and nothing of it is written', async () => {
    // grpc-js's own refusal of a large message is RESOURCE_EXHAUSTED, which firebase-admin retries
    // with backoff: the commit then hung for minutes instead of failing.
    const big = 'x'.repeat(900_000);
    const batch = admin.batch();
    const refs = Array.from({ length: 13 }, (_, i) => coll('oversized').doc(`d${i}`));
    for (const ref of refs) batch.set(ref, { big });
    await assert.rejects(within(batch.commit(), 'an 11.7 MB commit'), (error: { code?: unknown; message?: string }) => {
      assert.equal(error.code, grpc.status.INVALID_ARGUMENT, String(error.message));
      assert.match(String(error.message), /Request payload size exceeds the limit: 10485760 bytes/);
      return true;
    });
    const written = await within(coll('oversized').get(), 'read the collection');
    assert.equal(written.size, 0);
    // The connection stays usable for the next call.
    await within(refs[0]!.set({ small: true }), 'a small write after');
  });

  test('a separate gRPC port (grpcPort)', async () => {
    const grpcPort = await freePort();
    const server = await startHearth({ grpcPort, defaultProjectId: target.projectId });
    try {
      const own = newAdmin('separate-port', `127.0.0.1:${grpcPort}`);
      await within(own.doc('separate/doc').set({ a: 1 }), 'set over the gRPC port');
      assert.deepEqual((await within(own.doc('separate/doc').get(), 'get over the gRPC port')).data(), { a: 1 });
      // The same data over the main port's REST.
      const rest = await fetch(`${server.url}/v1/projects/${target.projectId}/databases/(default)/documents/separate/doc`, { headers: { authorization: 'Bearer owner' } });
      assert.equal(rest.status, 200);
      await within(own.terminate(), 'terminate');
    } finally {
      await server.close();
    }
  });
});
