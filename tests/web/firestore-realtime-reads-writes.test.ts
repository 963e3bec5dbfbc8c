/**
 * Cloud Firestore reads and writes from the browser end to end, in the full `firebase` browser build
 * (tests/helpers/firestore-realtime-harness.ts describes the set-up), once with the SDK's default settings and once
 * with `experimentalForceLongPolling: true`: hasPendingWrites true then false for a local write, another browser
 * client's writes, unicode and large values, pipelined writes, getDoc/getDocs, setDoc/updateDoc/deleteDoc/
 * writeBatch/runTransaction, and a client nobody signed in to getting permission-denied in onSnapshot's error
 * callback.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BrowserContext, type Page } from 'playwright-core';
import {
  PageCallError,
  assertPagesStayedOnTheMachine,
  call,
  clientOptions,
  openTransportPage,
  startRealtimeHarness,
  stepTimeout,
  transportSuiteNames,
  transports,
  type RealtimeHarness,
} from '../helpers/firestore-realtime-harness.js';
import {
  added,
  assertNoCacheFlicker,
  changesOf,
  docEvents,
  docStates,
  ids,
  modified,
  queryEvents,
  queryStep,
  removed,
  waitFor,
  waitForDoc,
  type DocEvent,
} from '../helpers/firestore-realtime-listen-events.js';
import type { DocChangeView, WriteData, WriteOp } from '../helpers/firestore-realtime-page.js';
import { commit, serverData } from '../helpers/firestore-realtime-rest.js';

let harness: RealtimeHarness;

before(async () => {
  harness = await startRealtimeHarness();
});

after(async () => {
  await harness?.close();
});

// ---------------------------------------------------------------------------------------------------------------
// The per-transport suites

for (const transport of transports) {
  describe(`browser SDK, ${transport.label}`, () => {
    let context: BrowserContext;
    let page: Page;
    const { me, peer, next } = transportSuiteNames(transport);

    before(async () => {
      ({ context, page } = await openTransportPage(transport));
    });

    after(async () => {
      await context?.close();
    });

    test('a local write: the listener sees it at once with hasPendingWrites true, then false once the server has it', stepTimeout, async () => {
      const path = `${next('local')}/mine`;
      await commit({ set: path, data: { n: 1 } });
      const id = `${transport.key}-local`;
      await call(page, 'listenDoc', me, id, path);
      await waitForDoc(page, id, { n: 1 });

      /** After the write: the pending state first, only the written data, and last the acknowledged state. */
      async function expectPendingThenConfirmed(from: number, expected: WriteData, confirmed: (e: DocEvent) => boolean): Promise<DocEvent[]> {
        const events = await waitFor(page, id, 'the write confirmed', (all) => all.slice(from).some((e) => e.kind === 'error' || (e.kind === 'doc' && confirmed(e))));
        const after = docEvents(events, id).slice(from);
        assert.ok(after.length >= 2, `expected a pending then a confirmed snapshot: ${JSON.stringify(after)}`);
        assert.deepEqual(after[0], { kind: 'doc', exists: true, data: expected, fromCache: false, hasPendingWrites: true });
        const done = after.findIndex(confirmed);
        assert.ok(after.slice(0, done).every((e) => e.hasPendingWrites && e.exists), `before the ack: ${JSON.stringify(after)}`);
        assert.equal(after[done]!.fromCache, false);
        return after;
      }

      let from = (await call(page, 'events', id)).length;
      assert.deepEqual(await call(page, 'write', me, { op: 'set', path, data: { n: 2, by: 'browser' } }), { ok: true });
      await expectPendingThenConfirmed(from, { n: 2, by: 'browser' }, (e) => !e.hasPendingWrites && e.data?.n === 2);
      assert.deepEqual(await serverData(path), { n: 2, by: 'browser' });

      // Transforms over the Write stream: increment, and a server timestamp (null while pending, by default).
      from = (await call(page, 'events', id)).length;
      assert.deepEqual(await call(page, 'write', me, { op: 'update', path, data: { n: { $increment: 5 }, at: { $serverTimestamp: true } } }), { ok: true });
      const after = await expectPendingThenConfirmed(from, { n: 7, by: 'browser', at: null }, (e) => !e.hasPendingWrites && e.data?.at !== null);
      const confirmed = after.find((e) => !e.hasPendingWrites)!;
      assert.equal(confirmed.data?.n, 7);
      assert.equal(typeof (confirmed.data?.at as { seconds?: number } | null)?.seconds, 'number', `at: ${JSON.stringify(confirmed.data)}`);
      const stored = await serverData(path);
      assert.equal(stored?.n, 7);
      assert.match(String((stored?.at as { timestampValue?: string })?.timestampValue), /^\d{4}-\d\d-\d\dT/);
      await call(page, 'unlisten', id);
    });

    test("another browser client's writes (its Write stream) reach this client's listeners", stepTimeout, async () => {
      const col = next('shared');
      await commit({ set: `${col}/seed`, data: { by: 'rest', n: 0 } });
      const id = `${transport.key}-shared`;
      await call(page, 'listenQuery', me, id, { collection: col });
      const [first] = queryEvents(await waitFor(page, id, 'a first snapshot', (e) => e.length > 0), id);
      assert.deepEqual(ids(first!.docs), ['seed']);
      assert.equal(first!.fromCache, false);

      const peerWrites: [string, WriteOp, string[], DocChangeView[]][] = [
        ['set', { op: 'set', path: `${col}/p1`, data: { by: 'peer', n: 1 } }, ['p1', 'seed'], [added('p1', 0)]],
        ['update', { op: 'update', path: `${col}/seed`, data: { n: { $increment: 10 } } }, ['p1', 'seed'], [modified('seed', 1, 1)]],
        ['delete', { op: 'delete', path: `${col}/p1` }, ['seed'], [removed('p1', 0)]],
      ];
      for (const [what, op, expectedIds, expectedChanges] of peerWrites) {
        const raised = await queryStep(page, id, async () => assert.deepEqual(await call(page, 'write', peer, op), { ok: true }), expectedIds);
        assert.deepEqual(changesOf(raised), expectedChanges, `${what}: ${JSON.stringify(raised)}`);
        assert.ok(raised.every((e) => !e.hasPendingWrites), 'the peer\'s writes are not this client\'s pending writes');
      }
      const batch = await call(page, 'batch', peer, [
        { op: 'set', path: `${col}/p2`, data: { by: 'peer', n: 2 } },
        { op: 'set', path: `${col}/p3`, data: { by: 'peer', n: 3 } },
        { op: 'update', path: `${col}/seed`, data: { n: 20 } },
      ]);
      assert.deepEqual(batch, { ok: true });
      const events = queryEvents(
        await waitFor(page, id, 'the batch', (e) => e.some((x) => x.kind === 'query' && JSON.stringify(ids(x.docs)) === '["p2","p3","seed"]' && x.docs[2]!.data.n === 20)),
        id,
      );
      // A batch is one commit: its writes show up together, never half of it.
      const partial = events.filter((e) => {
        const names = ids(e.docs);
        const seen = [names.includes('p2'), names.includes('p3'), e.docs.find((d) => d.id === 'seed')?.data.n === 20];
        return seen.some(Boolean) && !seen.every(Boolean);
      });
      assert.deepEqual(partial, [], 'a snapshot showed part of a batch');
      assertNoCacheFlicker(events);
      await call(page, 'unlisten', id);
    });

    test('unicode, nested and large values arrive intact over both streams', stepTimeout, async () => {
      const col = next('values');
      // UTF-16 surrogate pairs, multi-byte UTF-8, JSON escapes, U+2028: WebChannel frames count UTF-16 code units.
      const text = 'héllo wörld ✓ 日本語 😀🎉 "quoted" back\\slash\nnew line\u2028sep\ttab';
      const large = `${'0123456789'.repeat(30_000)}😀é`;
      const data: WriteData = { text, large, nested: { list: [1, 'two', { three: [3.5, null, true] }], empty: {}, none: [] }, n: -42 };
      const id = `${transport.key}-values`;
      await call(page, 'listenDoc', peer, id, `${col}/from-browser`);
      await waitFor(page, id, 'a first snapshot', (e) => e.length > 0);
      assert.deepEqual(await call(page, 'write', me, { op: 'set', path: `${col}/from-browser`, data }), { ok: true });
      const seen = await waitForDoc(page, id, data);
      assert.equal((seen.data!.large as string).length, large.length);
      assert.deepEqual(await serverData(`${col}/from-browser`), data);

      await commit({ set: `${col}/from-rest`, data: { ...data, text: `${text} (rest)` } });
      const read = await call(page, 'getDoc', me, `${col}/from-rest`);
      assert.deepEqual(read.data, { ...data, text: `${text} (rest)` });
      const listed = await call(page, 'getDocs', me, { collection: col });
      assert.deepEqual(listed.ids, ['from-browser', 'from-rest']);
      assert.deepEqual(listed.docs[0]!.data, data);
      await call(page, 'unlisten', id);
    });

    test('many writes at once (pipelined on the Write stream) are applied in the order they were made', stepTimeout, async () => {
      const col = next('pipelined');
      const id = `${transport.key}-pipelined`;
      await call(page, 'listenDoc', peer, id, `${col}/counter`);
      await waitFor(page, id, 'a first snapshot', (e) => e.length > 0);
      const ops: WriteOp[] = [];
      for (let n = 1; n <= 30; n++) {
        ops.push({ op: 'set', path: `${col}/counter`, data: { n } });
        ops.push({ op: 'set', path: `${col}/doc-${String(n).padStart(2, '0')}`, data: { n } });
        if (n % 10 === 0) ops.push({ op: 'update', path: `${col}/counter`, data: { tens: { $increment: 1 } } });
      }
      const outcomes = await call(page, 'writeAll', me, ops);
      assert.deepEqual(outcomes, ops.map(() => ({ ok: true })));
      // The last set wins, and only the update after it (n = 30) survives on top of it.
      assert.deepEqual(await serverData(`${col}/counter`), { n: 30, tens: 1 });
      assert.equal((await call(page, 'getDocs', me, { collection: col })).ids.length, 31);
      // Another client's listener sees the counter move forward only.
      await waitForDoc(page, id, { n: 30, tens: 1 });
      const states = docStates(docEvents(await call(page, 'events', id), id)).slice(1);
      const order = states.map((state) => (state!.n as number) * 10 + ((state!.tens as number | undefined) ?? 0));
      assert.deepEqual(order, [...order].sort((x, y) => x - y), `the peer saw the writes out of order: ${JSON.stringify(states)}`);
      await call(page, 'unlisten', id);
    });

    test('getDoc and getDocs online: answered by the server (fromCache false)', stepTimeout, async () => {
      const col = next('reads');
      await commit(
        { set: `${col}/x`, data: { k: 1, tag: 'yes' } },
        { set: `${col}/y`, data: { k: 2, tag: 'no' } },
        { set: `${col}/z`, data: { k: 3, tag: 'yes' } },
      );
      assert.deepEqual(await call(page, 'getDoc', me, `${col}/x`), { exists: true, data: { k: 1, tag: 'yes' }, fromCache: false, hasPendingWrites: false });
      assert.deepEqual(await call(page, 'getDoc', me, `${col}/nothing`), { exists: false, data: null, fromCache: false, hasPendingWrites: false });
      const tagged = await call(page, 'getDocs', me, { collection: col, where: [['tag', '==', 'yes']] });
      assert.deepEqual(tagged, {
        ids: ['x', 'z'],
        docs: [
          { id: 'x', path: `${col}/x`, data: { k: 1, tag: 'yes' }, hasPendingWrites: false },
          { id: 'z', path: `${col}/z`, data: { k: 3, tag: 'yes' }, hasPendingWrites: false },
        ],
        fromCache: false,
      });
      assert.deepEqual((await call(page, 'getDocs', me, { collection: col, orderBy: [['k', 'desc']], limit: 2 })).ids, ['z', 'y']);
      assert.deepEqual((await call(page, 'getDocs', me, { collection: `${col}/x/none` })).ids, []);
      // Another client's change is seen by the next read.
      await commit({ update: `${col}/x`, data: { k: 100 } });
      assert.deepEqual((await call(page, 'getDoc', me, `${col}/x`)).data, { k: 100, tag: 'yes' });
    });

    test('writes from the browser: setDoc, merge, updateDoc, deleteDoc and writeBatch reach the server', stepTimeout, async () => {
      const col = next('writes');
      const write = (op: WriteOp) => call(page, 'write', me, op);
      assert.deepEqual(await write({ op: 'set', path: `${col}/w`, data: { a: 1, m: { x: 1 } } }), { ok: true });
      assert.deepEqual(await serverData(`${col}/w`), { a: 1, m: { x: 1 } });
      assert.deepEqual(await write({ op: 'set', path: `${col}/w`, data: { m: { y: 2 } }, merge: true }), { ok: true });
      assert.deepEqual(await serverData(`${col}/w`), { a: 1, m: { x: 1, y: 2 } });
      assert.deepEqual(await write({ op: 'update', path: `${col}/w`, data: { 'm.x': 5, a: { $delete: true } } }), { ok: true });
      assert.deepEqual(await serverData(`${col}/w`), { m: { x: 5, y: 2 } });

      // A write the server refuses fails alone; the next one still goes through.
      const refused = await write({ op: 'update', path: `${col}/never`, data: { a: 1 } });
      assert.equal(refused.ok, false);
      assert.equal(!refused.ok && refused.code, 'not-found', JSON.stringify(refused));
      assert.deepEqual(await write({ op: 'set', path: `${col}/after`, data: { fine: true } }), { ok: true });
      assert.deepEqual(await serverData(`${col}/after`), { fine: true });

      assert.deepEqual(await write({ op: 'delete', path: `${col}/w` }), { ok: true });
      assert.equal(await serverData(`${col}/w`), undefined);

      await commit({ set: `${col}/b0`, data: { v: 0 } }, { set: `${col}/b3`, data: { v: 3 } });
      const batch = await call(page, 'batch', me, [
        { op: 'set', path: `${col}/b1`, data: { v: 1 } },
        { op: 'set', path: `${col}/b2`, data: { v: 2 } },
        { op: 'update', path: `${col}/b0`, data: { v: 10 } },
        { op: 'delete', path: `${col}/b3` },
      ]);
      assert.deepEqual(batch, { ok: true });
      assert.deepEqual(
        await Promise.all(['b0', 'b1', 'b2', 'b3'].map((name) => serverData(`${col}/${name}`))),
        [{ v: 10 }, { v: 1 }, { v: 2 }, undefined],
      );
      // A batch is atomic: one failing write leaves every other undone.
      const failed = await call(page, 'batch', me, [
        { op: 'set', path: `${col}/b4`, data: { v: 4 } },
        { op: 'update', path: `${col}/missing`, data: { v: 5 } },
      ]);
      assert.equal(!failed.ok && failed.code, 'not-found', JSON.stringify(failed));
      assert.equal(await serverData(`${col}/b4`), undefined);
      // and the client's view agrees once the rejection is in
      assert.deepEqual(await call(page, 'getDoc', me, `${col}/b4`), { exists: false, data: null, fromCache: false, hasPendingWrites: false });
    });

    test('runTransaction from the browser: concurrent increments all land', stepTimeout, async () => {
      const path = `${next('counters')}/c`;
      const { outcomes, attempts } = await call(page, 'incrementInTransactions', me, path, 'count', 3);
      assert.deepEqual(outcomes, [{ ok: true }, { ok: true }, { ok: true }]);
      assert.ok(attempts >= 3, `attempts: ${attempts}`);
      assert.deepEqual(await serverData(path), { count: 3 });
      // Contention with another client's write in between still ends in a consistent count.
      await commit({ update: path, data: { count: 10 } });
      const second = await call(page, 'incrementInTransactions', me, path, 'count', 2);
      assert.deepEqual(second.outcomes, [{ ok: true }, { ok: true }]);
      assert.deepEqual(await serverData(path), { count: 12 });
      assert.deepEqual((await call(page, 'getDoc', me, path)).data, { count: 12 });
    });

    test('a client nobody signed in to: permission-denied reaches onSnapshot\'s error callback; its writes are refused', stepTimeout, async () => {
      const stranger = `stranger-${transport.key}`;
      assert.equal(await call(page, 'init', stranger, clientOptions({ signIn: false, forceLongPolling: transport.forceLongPolling }, stranger)), null);
      const col = next('private');
      await commit({ set: `${col}/secret`, data: { s: 1 } });

      const docId = `${transport.key}-denied-doc`;
      const queryId = `${transport.key}-denied-query`;
      await call(page, 'listenDoc', stranger, docId, `${col}/secret`);
      await call(page, 'listenQuery', stranger, queryId, { collection: col });
      for (const id of [docId, queryId]) {
        const events = await waitFor(page, id, 'an error', (e) => e.some((x) => x.kind === 'error'));
        assert.equal(events.length, 1, `only the error, no snapshot: ${JSON.stringify(events)}`);
        assert.equal(events[0]!.kind === 'error' && events[0]!.code, 'permission-denied', JSON.stringify(events));
      }
      const refused = await call(page, 'write', stranger, { op: 'set', path: `${col}/mine`, data: { s: 2 } });
      assert.equal(!refused.ok && refused.code, 'permission-denied', JSON.stringify(refused));
      await assert.rejects(call(page, 'getDoc', stranger, `${col}/secret`), (error: PageCallError) => {
        assert.equal(error.code, 'permission-denied', error.message);
        return true;
      });
      assert.equal(await serverData(`${col}/mine`), undefined);
      assert.deepEqual(await serverData(`${col}/secret`), { s: 1 });
      await call(page, 'unlisten', docId);
      await call(page, 'unlisten', queryId);
      await call(page, 'terminate', stranger);

      // The signed-in client on the same page is unaffected.
      assert.deepEqual((await call(page, 'getDoc', me, `${col}/secret`)).data, { s: 1 });
    });
  });
}


test('nothing the pages requested left the machine; no page errors; the SDK asserted nothing', () => {
  assertPagesStayedOnTheMachine(harness.activity);
});
