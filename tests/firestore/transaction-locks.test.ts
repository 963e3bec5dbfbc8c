/**
 * Server transactions' locks on their own (the admin SDKs' path is tested end to end in
 * firestore-http and firestore-grpc-admin): a transaction its client abandoned must not hold what
 * it read for longer than its idle timeout, even when no other transaction begins meanwhile; a
 * transaction wounded while its commit waits for the store does not commit, and every later call
 * of a wounded transaction is ABORTED (retried by the SDKs), never "invalid".
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TransactionManager, checkReadsUnchanged } from '../../packages/server/src/firestore/core/transactions.js';

test('a write waiting on an abandoned transaction proceeds once that transaction is idle past its timeout', async () => {
  const manager = new TransactionManager({ lockWaitMs: 5_000, idleMs: 300, maxLifetimeMs: 60_000 });
  const abandoned = manager.begin('p/(default)', false);
  manager.recordRead(abandoned, 'items/a', 0);
  const started = Date.now();
  await manager.acquireForWrite('p/(default)', ['items/a']);
  const waited = Date.now() - started;
  assert.ok(waited >= 250, `the lock was held while the transaction was alive (waited ${waited} ms)`);
  assert.throws(() => manager.use('p/(default)', abandoned.id), /invalid or expired/);
});

test('a write to a document a live transaction read still times out with ABORTED', async () => {
  const manager = new TransactionManager({ lockWaitMs: 400, idleMs: 60_000, maxLifetimeMs: 60_000 });
  const holder = manager.begin('p/(default)', false);
  manager.recordRead(holder, 'items/a', 0);
  await assert.rejects(manager.acquireForWrite('p/(default)', ['items/a']), /lock timeout/);
  manager.end(holder);
  await manager.acquireForWrite('p/(default)', ['items/a']);
});

test('an optimistic transaction (a caller judged by rules) records its reads but locks none of them', async () => {
  const manager = new TransactionManager({ lockWaitMs: 400, idleMs: 60_000, maxLifetimeMs: 60_000 });
  const reader = manager.begin('p/(default)', false, undefined, undefined, 'optimistic');
  manager.recordRead(reader, 'items/a', 7);
  assert.deepEqual([...reader.reads], [['items/a', 7]], 'kept for the commit\'s check');
  await manager.acquireForWrite('p/(default)', ['items/a']);
});

test('an optimistic writer waits for a pessimistic holder and never wounds it, however old', async () => {
  const manager = new TransactionManager({ lockWaitMs: 400, idleMs: 60_000, maxLifetimeMs: 60_000 });
  const older = manager.begin('p/(default)', false, undefined, undefined, 'optimistic');
  const holder = manager.begin('p/(default)', false);
  manager.recordRead(holder, 'items/a', 0);
  await assert.rejects(manager.acquireForWrite('p/(default)', ['items/a'], older), /lock timeout/);
  assert.equal(manager.use('p/(default)', holder.id), holder, 'the holder was not wounded');
  manager.end(holder);
});

test('a transaction wounded after its lock wait, while its commit waits for the store, fails its commit check', async () => {
  const manager = new TransactionManager({ lockWaitMs: 5_000, idleMs: 60_000, maxLifetimeMs: 60_000 });
  const older = manager.begin('p/(default)', false);
  const younger = manager.begin('p/(default)', false);
  manager.recordRead(younger, 'items/a', 5);
  // The younger one's lock wait is over: its commit is on its way to the store.
  await manager.acquireForWrite('p/(default)', ['items/a'], younger);
  // The older one read the same version and commits: it wounds the younger holder.
  manager.recordRead(older, 'items/a', 5);
  await manager.acquireForWrite('p/(default)', ['items/a'], older);
  const current = new Map([['items/a', { updateTime: 5 }]]);
  checkReadsUnchanged(older, current);
  // Both read version 5: only one of them may write from it (else one increment of two is lost).
  assert.throws(() => checkReadsUnchanged(younger, current), /contention/);
});

test('every call of a wounded transaction answers ABORTED until it is swept as idle, never "invalid or expired"', async () => {
  const manager = new TransactionManager({ lockWaitMs: 5_000, idleMs: 300, maxLifetimeMs: 60_000 });
  const older = manager.begin('p/(default)', false);
  const younger = manager.begin('p/(default)', false);
  manager.recordRead(younger, 'items/a', 5);
  // The older one writes what the younger read: the younger is wounded.
  await manager.acquireForWrite('p/(default)', ['items/a'], older);
  // A client with two reads in flight in that transaction: both are told to retry.
  assert.throws(() => manager.use('p/(default)', younger.id), /contention/);
  assert.throws(() => manager.use('p/(default)', younger.id), /contention/);
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.throws(() => manager.use('p/(default)', younger.id), /invalid or expired/, 'forgotten once idle');
});
