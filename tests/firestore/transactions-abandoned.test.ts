/**
 * Issue 18, item 6: an abandoned read-write transaction must not stall a document. It used to make
 * every write to what it read wait 15 s and then fail ABORTED, because it stayed alive (60 s idle)
 * longer than a write waits. With the default timeouts the write now waits only until the
 * transaction expires as idle, then succeeds; a live older transaction still wins (wound-wait).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { defaultTransactionTimeouts, TransactionManager } from '../../packages/server/src/firestore/core/transactions.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

let hearth: TestHearth;
before(async () => {
  hearth = await startHearth({ dev: true });
});
after(() => hearth.close());

const owner = { authorization: 'Bearer owner' };

test('with the default timeouts, an abandoned transaction expires before a write waiting on it gives up', () => {
  assert.ok(defaultTransactionTimeouts.idleMs < defaultTransactionTimeouts.lockWaitMs);
  assert.ok(defaultTransactionTimeouts.idleMs <= 10_000, 'well before Firestore\'s 60 s');
});

test('a write to a document an abandoned transaction read succeeds (it ended ABORTED after 15 s)', async () => {
  const base = `${hearth.url}/v1/projects/${hearth.projectId}/databases/(default)/documents`;
  const name = `projects/${hearth.projectId}/databases/(default)/documents/stalls/d`;
  assert.equal((await postJson(`${base}:commit`, { writes: [{ update: { name, fields: { n: { integerValue: '1' } } } }] }, owner)).status, 200);
  const begun = await postJson(`${base}:beginTransaction`, {}, owner);
  assert.equal(begun.status, 200);
  const read = await postJson(`${base}:batchGet`, { documents: [name], transaction: begun.body.transaction }, owner);
  assert.equal(read.status, 200);
  // The client goes away here: no commit, no rollback.
  const write = await postJson(`${base}:commit`, { writes: [{ update: { name, fields: { n: { integerValue: '2' } } } }] }, owner);
  assert.equal(write.status, 200, JSON.stringify(write.body));
  const abandoned = await postJson(`${base}:commit`, { transaction: begun.body.transaction, writes: [] }, owner);
  assert.equal(abandoned.status, 400, 'the abandoned transaction has expired');
});

test('wound-wait: an older transaction that writes what a younger one read aborts the younger at once', async () => {
  const manager = new TransactionManager();
  const older = manager.begin('p/(default)', false);
  const younger = manager.begin('p/(default)', false);
  manager.recordRead(older, 'items/a', 0);
  manager.recordRead(younger, 'items/a', 0);
  await manager.acquireForWrite('p/(default)', ['items/a'], older);
  assert.throws(() => manager.use('p/(default)', younger.id), /Too much contention/);
  manager.end(older);
});
