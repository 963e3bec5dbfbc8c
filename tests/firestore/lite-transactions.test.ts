/**
 * Cloud Firestore through the official SDK's lite build (`firebase/firestore/lite`: REST only,
 * `batchGet` / `commit`) in Node, what is all or nothing and what fails: batched writes,
 * transactions (verified reads, retries under contention between two clients), and the error
 * codes the SDK raises for what the server or the SDK itself refuses.
 *
 * It runs against Hearth (in-process, --dev; every client signs in anonymously first, since
 * Hearth's Firestore only answers signed requests there). With HEARTH_FIRESTORE_TARGET=google-emulator
 * the same assertions run against Google's official emulator (`gcloud emulators firestore start`),
 * which is how they were checked; that mode is for validating the suite, not for CI. Set
 * HEARTH_FIRESTORE_EMULATOR=127.0.0.1:PORT as well to reuse an emulator that is already running.
 * The target, its clients and the error helpers are in tests/helpers/firestore-lite-clients.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  addDoc,
  collection,
  doc,
  getCount,
  getDoc,
  getDocs,
  increment,
  limitToLast,
  query,
  runTransaction,
  setDoc,
  updateDoc,
  where,
  writeBatch,
} from 'firebase/firestore/lite';
import { data, db, get, liteTarget, newClient, refusedBySdk, rejectsWith, useLiteTarget, within } from '../helpers/firestore-lite-clients.js';
import { signedInOnlyRules, withRules } from '../helpers/security-rules.js';

useLiteTarget();

// ---- batches and transactions ----

describe('batched writes', () => {
  test('a batch applies set, update and delete together', async () => {
    const a = doc(db, 'batch/a');
    const b = doc(db, 'batch/b');
    const c = doc(db, 'batch/c');
    await within(setDoc(b, { v: 1 }), 'setDoc');
    await within(setDoc(c, { v: 1 }), 'setDoc');
    const batch = writeBatch(db);
    batch.set(a, { v: 'new' });
    batch.update(b, { v: increment(1), 'm.k': true });
    batch.delete(c);
    batch.set(a, { extra: 1 }, { merge: true }); // a second write to the same document, in order
    await within(batch.commit(), 'batch.commit');
    assert.deepEqual(await data(a), { v: 'new', extra: 1 });
    assert.deepEqual(await data(b), { v: 2, m: { k: true } });
    assert.equal((await get(c)).exists(), false);
  });

  test('a batch is atomic: one failing write (update of a missing document) leaves nothing written', async () => {
    const a = doc(db, 'batch-atomic/a');
    const b = doc(db, 'batch-atomic/b');
    const kept = doc(db, 'batch-atomic/kept');
    await within(setDoc(kept, { v: 'before' }), 'setDoc');
    const batch = writeBatch(db);
    batch.set(a, { v: 1 });
    batch.update(kept, { v: 'after' });
    batch.delete(b);
    batch.update(doc(db, 'batch-atomic/missing'), { v: 1 });
    batch.set(b, { v: 2 });
    await rejectsWith(batch.commit(), 'not-found', 'NOT_FOUND');
    assert.equal((await get(a)).exists(), false);
    assert.equal((await get(b)).exists(), false);
    assert.equal((await get(doc(db, 'batch-atomic/missing'))).exists(), false);
    assert.deepEqual(await data(kept), { v: 'before' });
  });

  test('a batch of 600 writes commits (there is no 500-write limit any more)', async () => {
    const batch = writeBatch(db);
    for (let i = 0; i < 600; i++) batch.set(doc(db, 'batch-big', `d${String(i).padStart(3, '0')}`), { i });
    await within(batch.commit(), 'batch.commit');
    assert.equal((await within(getCount(collection(db, 'batch-big')), 'getCount')).data().count, 600);
  });
});

describe('transactions', () => {
  test('read then write; the update function result is returned; delete in a transaction', async () => {
    const ref = doc(db, 'tx/simple');
    const other = doc(db, 'tx/simple-other');
    await within(setDoc(ref, { n: 41 }), 'setDoc');
    await within(setDoc(other, { doomed: true }), 'setDoc');
    const result = await within(
      runTransaction(db, async (tx) => {
        const snapshot = await tx.get(ref);
        const next = (snapshot.data()!.n as number) + 1;
        tx.update(ref, { n: next });
        tx.delete(other);
        return next;
      }),
      'runTransaction',
    );
    assert.equal(result, 42);
    assert.deepEqual(await data(ref), { n: 42 });
    assert.equal((await get(other)).exists(), false);
  });

  test('a document read but not written is verified: a change to it in between makes the transaction retry', async () => {
    const source = doc(db, 'tx/verify-source');
    const dest = doc(db, 'tx/verify-dest');
    await within(setDoc(source, { v: 'first' }), 'setDoc');
    const meddler = await newClient();
    let attempts = 0;
    await within(
      runTransaction(db, async (tx) => {
        attempts++;
        const snapshot = await tx.get(source);
        if (attempts === 1) await within(setDoc(doc(meddler, 'tx/verify-source'), { v: 'second' }), 'meddling setDoc');
        tx.set(dest, { copied: snapshot.data()!.v });
      }),
      'runTransaction',
      30_000,
    );
    assert.equal(attempts, 2);
    assert.deepEqual(await data(dest), { copied: 'second' });
  });

  test('contention: two clients, ten concurrent increments each, lose no update', { timeout: 120_000 }, async () => {
    const ref = doc(db, 'tx/contended');
    await within(setDoc(ref, { n: 0 }), 'setDoc');
    const clients = [db, await newClient()];
    const perClient = 10;
    let attempts = 0;
    const runs = clients.flatMap((client) =>
      Array.from({ length: perClient }, () =>
        runTransaction(
          client,
          async (tx) => {
            attempts++;
            const snapshot = await tx.get(doc(client, 'tx/contended'));
            tx.update(doc(client, 'tx/contended'), { n: (snapshot.data()!.n as number) + 1 });
          },
          { maxAttempts: 25 },
        ),
      ),
    );
    const outcomes = await within(Promise.allSettled(runs), 'contended transactions', 90_000);
    const failures = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
    assert.deepEqual(failures, []);
    assert.equal((await data(ref))!.n, clients.length * perClient);
    assert.ok(attempts > clients.length * perClient, `no transaction had to retry (${attempts} attempts): was there any contention?`);
  });

  test('contention on a missing document: read it, create it if missing, else increment', { timeout: 120_000 }, async () => {
    const clients = [db, await newClient()];
    const perClient = 10;
    const runs = clients.flatMap((client) =>
      Array.from({ length: perClient }, (_, i) =>
        runTransaction(
          client,
          async (tx) => {
            const ref = doc(client, 'tx/created-under-contention');
            const snapshot = await tx.get(ref);
            if (snapshot.exists()) tx.update(ref, { n: (snapshot.data().n as number) + 1 });
            else tx.set(ref, { n: 1, first: i });
          },
          { maxAttempts: 25 },
        ),
      ),
    );
    const outcomes = await within(Promise.allSettled(runs), 'contended transactions', 90_000);
    const failures = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
    assert.deepEqual(failures, []);
    assert.equal((await data(doc(db, 'tx/created-under-contention')))!.n, clients.length * perClient);
  });

  test('a transaction that reads a missing document and creates it; a failing update function writes nothing', async () => {
    const ref = doc(db, 'tx/fresh');
    const created = await within(
      runTransaction(db, async (tx) => {
        const snapshot = await tx.get(ref);
        assert.equal(snapshot.exists(), false);
        tx.set(ref, { made: true });
        return 'made';
      }),
      'runTransaction',
    );
    assert.equal(created, 'made');
    assert.deepEqual(await data(ref), { made: true });

    const untouched = doc(db, 'tx/untouched');
    await assert.rejects(
      within(
        runTransaction(db, async (tx) => {
          await tx.get(untouched);
          tx.set(untouched, { v: 1 });
          throw new Error('changed my mind');
        }),
        'runTransaction',
      ),
      /changed my mind/,
    );
    assert.equal((await get(untouched)).exists(), false);
  });
});

/** A value nested `levels` maps deep: levels = 1 → {m: 1}. */
function nestedMaps(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { m: value };
  return value;
}

// ---- errors ----

describe('errors', () => {
  test('a document over 1 MiB is refused by the server (INVALID_ARGUMENT)', async () => {
    const ref = doc(db, 'errors/too-big');
    const half = 'x'.repeat(600_000);
    await rejectsWith(setDoc(ref, { a: half, b: half }), 'failed-precondition', 'INVALID_ARGUMENT');
    assert.equal((await get(ref)).exists(), false);
    await rejectsWith(setDoc(ref, { s: 'x'.repeat(1_048_488) }), 'failed-precondition', 'INVALID_ARGUMENT');
  });

  test('values nested deeper than 20 levels are refused (INVALID_ARGUMENT); 20 is fine', async () => {
    await within(setDoc(doc(db, 'errors/deep-20'), { v: nestedMaps(20) }), 'setDoc depth 20');
    assert.deepEqual((await data(doc(db, 'errors/deep-20')))!.v, nestedMaps(20));
    await rejectsWith(setDoc(doc(db, 'errors/deep-21'), { v: nestedMaps(21) }), 'failed-precondition', 'INVALID_ARGUMENT');
    let mixed: unknown = 1;
    for (let i = 0; i < 21; i++) mixed = i % 2 ? { m: mixed } : [mixed];
    await rejectsWith(setDoc(doc(db, 'errors/deep-mixed'), { v: mixed }), 'failed-precondition', 'INVALID_ARGUMENT');
    assert.equal((await get(doc(db, 'errors/deep-21'))).exists(), false);
  });

  test('a field named __x__ is reserved: the SDK refuses it before sending (invalid-argument)', async () => {
    const ref = doc(db, 'errors/reserved');
    await refusedBySdk(() => setDoc(ref, { __x__: 1 }), 'invalid-argument');
    await refusedBySdk(() => setDoc(ref, { ok: { __nested__: 1 } }), 'invalid-argument');
    await refusedBySdk(() => updateDoc(ref, { __x__: 1 }), 'invalid-argument');
    await refusedBySdk(() => addDoc(collection(db, 'errors'), { __x__: 1 }), 'invalid-argument');
  });

  test('in / array-contains-any with 31 values and not-in with 11 are refused by the server (INVALID_ARGUMENT)', async () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => i);
    const errors = collection(db, 'errors');
    await rejectsWith(getDocs(query(errors, where('a', 'in', values(31)))), 'failed-precondition', 'INVALID_ARGUMENT');
    await rejectsWith(getDocs(query(errors, where('a', 'array-contains-any', values(31)))), 'failed-precondition', 'INVALID_ARGUMENT');
    await rejectsWith(getDocs(query(errors, where('a', 'not-in', values(11)))), 'failed-precondition', 'INVALID_ARGUMENT');
    // the limits themselves are fine
    await within(getDocs(query(errors, where('a', 'in', values(30)))), 'in with 30');
    await within(getDocs(query(errors, where('a', 'not-in', values(10)))), 'not-in with 10');
  });

  test('query shapes the SDK refuses itself', async () => {
    const errors = collection(db, 'errors');
    await refusedBySdk(() => getDocs(query(errors, where('a', 'in', []))), 'invalid-argument');
    await refusedBySdk(() => getDocs(query(errors, where('a', 'not-in', [1]), where('b', '!=', 2))), 'invalid-argument');
    await refusedBySdk(() => getDocs(query(errors, limitToLast(1))), 'unimplemented');
  });

  test('permission-denied when no user is signed in and the rules ask for one', async () => {
    const { host, port, projectId } = liteTarget();
    await withRules(`http://${host}:${port}`, projectId, signedInOnlyRules, () => refusedUnsigned());
  });

  async function refusedUnsigned(): Promise<void> {
    const anonymous = await newClient(false);
    await rejectsWith(getDoc(doc(anonymous, 'writes/set')), 'permission-denied', 'PERMISSION_DENIED');
    await rejectsWith(setDoc(doc(anonymous, 'errors/unsigned'), { a: 1 }), 'permission-denied', 'PERMISSION_DENIED');
    await rejectsWith(getDocs(collection(anonymous, 'fruits')), 'permission-denied', 'PERMISSION_DENIED');
    await rejectsWith(getCount(collection(anonymous, 'fruits')), 'permission-denied', 'PERMISSION_DENIED');
    assert.equal((await get(doc(db, 'errors/unsigned'))).exists(), false);
  }
});
