/**
 * Cloud Firestore listeners end to end, in the full `firebase` browser build (tests/helpers/firestore-realtime-harness.ts
 * describes the set-up), once with the SDK's default settings and once with `experimentalForceLongPolling: true`:
 * document and query listeners (first snapshot from the server with fromCache false, every remote change in order,
 * added/modified/removed as documents enter and leave a query, limit and limitToLast, filters and cursors,
 * collection groups, deletes, a missing document). Then, for both transports at once: listeners still live after
 * 50 s of silence (past WebChannel's keepalive and long-poll timeouts).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { type BrowserContext, type Page } from 'playwright-core';
import {
  assertPagesStayedOnTheMachine,
  call,
  clientOptions,
  openPage,
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
  fromFirstServerSnapshot,
  ids,
  modified,
  queryEvents,
  queryStep,
  removed,
  waitFor,
  waitForDoc,
  type QueryEvent,
} from '../helpers/firestore-realtime-listen-events.js';
import type { DocChangeView, QuerySpec } from '../helpers/firestore-realtime-page.js';
import { commit, type RestWrite } from '../helpers/firestore-realtime-rest.js';

let harness: RealtimeHarness;

before(async () => {
  harness = await startRealtimeHarness();
});

after(async () => {
  await Promise.all((idle?.pages ?? []).map(({ context }) => context.close()));
  await harness?.close();
});

// ---------------------------------------------------------------------------------------------------------------
// Long-lived streams: listeners opened now, left without traffic while the per-transport suites run, checked after

/** Past the 30 s WebChannel keepalive / long-poll timeout and the client's 45 s dead-back-channel watchdog. */
const IDLE_MS = 50_000;

interface IdleListeners {
  col: string;
  pages: { context: BrowserContext; page: Page }[];
  since: number;
}
let idle: IdleListeners | undefined;

test('idle listeners: opened on both transports', stepTimeout, async () => {
  const col = `rt-idle-${Date.now()}`;
  await commit({ set: `${col}/d`, data: { n: 0 } });
  const pages = await Promise.all(transports.map((t) => openPage(`idle-${t.key}`)));
  idle = { col, pages, since: 0 };
  await Promise.all(
    transports.map(async (t, i) => {
      const { page } = pages[i]!;
      await call(page, 'init', 'idle', clientOptions({ signIn: true, forceLongPolling: t.forceLongPolling }, `idle-${t.key}`));
      await call(page, 'listenDoc', 'idle', 'idle-doc', `${col}/d`);
      await call(page, 'listenQuery', 'idle', 'idle-query', { collection: col });
      await waitForDoc(page, 'idle-doc', { n: 0 });
      await waitFor(page, 'idle-query', 'a server snapshot', (e) => e.some((x) => x.kind !== 'query' || !x.fromCache));
    }),
  );
  idle.since = Date.now();
});

// ---------------------------------------------------------------------------------------------------------------
// The per-transport suites

for (const transport of transports) {
  describe(`browser SDK, ${transport.label}`, () => {
    let context: BrowserContext;
    let page: Page;
    const { me, next } = transportSuiteNames(transport);

    before(async () => {
      ({ context, page } = await openTransportPage(transport));
    });

    after(async () => {
      await context?.close();
    });

    test('a document listener: first snapshot from the server, then every remote change in order, a delete and a re-create', stepTimeout, async () => {
      const path = `${next('docs')}/d`;
      await commit({ set: path, data: { n: 0, label: 'start' } });
      const id = `${transport.key}-doc`;
      await call(page, 'listenDoc', me, id, path);
      const [first] = docEvents(await waitFor(page, id, 'a first snapshot', (e) => e.length > 0), id);
      assert.deepEqual(first, { kind: 'doc', exists: true, data: { n: 0, label: 'start' }, fromCache: false, hasPendingWrites: false });

      // One change at a time: each is seen.
      for (const n of [1, 2, 3]) {
        await commit({ update: path, data: { n } });
        await waitForDoc(page, id, { n, label: 'start' });
      }
      await commit({ delete: path });
      const deleted = await waitForDoc(page, id, null);
      assert.deepEqual(deleted, { kind: 'doc', exists: false, data: null, fromCache: false, hasPendingWrites: false });
      await commit({ set: path, data: { n: 10 } });
      await waitForDoc(page, id, { n: 10 });

      // A burst: intermediate states may be folded together, but never reordered, and the last one arrives.
      for (const n of [11, 12, 13, 14, 15]) await commit({ set: path, data: { n } });
      await waitForDoc(page, id, { n: 15 });
      const all = docEvents(await call(page, 'events', id), id);
      const states = docStates(all);
      assert.deepEqual(states.slice(0, 6), [{ n: 0, label: 'start' }, { n: 1, label: 'start' }, { n: 2, label: 'start' }, { n: 3, label: 'start' }, null, { n: 10 }]);
      const burst = states.slice(6).map((s) => s?.n as number);
      assert.deepEqual(
        burst,
        [...burst].sort((a, b) => a - b),
        `burst states out of order: ${JSON.stringify(burst)}`,
      );
      assert.equal(new Set(burst).size, burst.length, `a burst state came twice: ${JSON.stringify(burst)}`);
      assert.equal(burst[burst.length - 1], 15);
      assert.ok(
        all.every((e) => !e.fromCache && !e.hasPendingWrites),
        `with the server up, no snapshot is from cache: ${JSON.stringify(all)}`,
      );
      await call(page, 'unlisten', id);
    });

    test('a listener on a missing document: exists() false from the server, then the document appears', stepTimeout, async () => {
      const path = `${next('missing')}/nobody`;
      const id = `${transport.key}-missing`;
      await call(page, 'listenDoc', me, id, path);
      const [first] = docEvents(await waitFor(page, id, 'a first snapshot', (e) => e.length > 0), id);
      assert.deepEqual(first, { kind: 'doc', exists: false, data: null, fromCache: false, hasPendingWrites: false });
      await commit({ set: path, data: { here: true } });
      await waitForDoc(page, id, { here: true });
      assert.deepEqual(docStates(docEvents(await call(page, 'events', id), id)), [null, { here: true }]);
      await call(page, 'unlisten', id);
    });

    test('a query listener: added / modified / removed, in order, as documents enter and leave the query', stepTimeout, async () => {
      const col = next('items');
      await commit(
        { set: `${col}/a`, data: { color: 'red', size: 1 } },
        { set: `${col}/b`, data: { color: 'blue', size: 2 } },
        { set: `${col}/c`, data: { color: 'red', size: 3 } },
      );
      const id = `${transport.key}-query`;
      await call(page, 'listenQuery', me, id, { collection: col, where: [['color', '==', 'red']] });
      const [first] = queryEvents(await waitFor(page, id, 'a first snapshot', (e) => e.length > 0), id);
      assert.deepEqual(first, {
        kind: 'query',
        docs: [
          { id: 'a', path: `${col}/a`, data: { color: 'red', size: 1 }, hasPendingWrites: false },
          { id: 'c', path: `${col}/c`, data: { color: 'red', size: 3 }, hasPendingWrites: false },
        ],
        changes: [added('a', 0), added('c', 1)],
        fromCache: false,
        hasPendingWrites: false,
      });

      const steps: [string, RestWrite, string[], DocChangeView[]][] = [
        ['a new matching document', { set: `${col}/d`, data: { color: 'red', size: 4 } }, ['a', 'c', 'd'], [added('d', 2)]],
        ['a match changes', { update: `${col}/a`, data: { size: 10 } }, ['a', 'c', 'd'], [modified('a', 0, 0)]],
        ['a match stops matching', { update: `${col}/c`, data: { color: 'blue' } }, ['a', 'd'], [removed('c', 1)]],
        ['a non-match starts matching', { update: `${col}/b`, data: { color: 'red' } }, ['a', 'b', 'd'], [added('b', 1)]],
        ['a match is deleted', { delete: `${col}/a` }, ['b', 'd'], [removed('a', 0)]],
        ['a non-match changes (no snapshot)', { update: `${col}/c`, data: { size: 30 } }, ['b', 'd'], []],
        ['a non-matching document is created', { set: `${col}/e`, data: { color: 'green' } }, ['b', 'd'], []],
        ['another match changes', { update: `${col}/d`, data: { size: 40 } }, ['b', 'd'], [modified('d', 1, 1)]],
      ];
      for (const [what, write, expectedIds, expectedChanges] of steps) {
        if (expectedChanges.length === 0) {
          // Nothing to wait for: commit, then let the next step show that nothing came in between.
          await commit(write);
          continue;
        }
        const raised = await queryStep(page, id, () => commit(write), expectedIds);
        assert.deepEqual(changesOf(raised), expectedChanges, `${what}: ${JSON.stringify(raised)}`);
      }
      const final = queryEvents(await call(page, 'events', id), id);
      assert.deepEqual(final[final.length - 1]!.docs, [
        { id: 'b', path: `${col}/b`, data: { color: 'red', size: 2 }, hasPendingWrites: false },
        { id: 'd', path: `${col}/d`, data: { color: 'red', size: 40 }, hasPendingWrites: false },
      ]);

      // A local add: added with hasPendingWrites true, then a metadata-only snapshot once acknowledged.
      const from = final.length;
      assert.deepEqual(await call(page, 'write', me, { op: 'set', path: `${col}/f`, data: { color: 'red', size: 6 } }), { ok: true });
      const events = await waitFor(page, id, 'the local add confirmed', (all) =>
        all.slice(from).some((e) => e.kind === 'error' || (e.kind === 'query' && !e.hasPendingWrites && e.docs.some((d) => d.id === 'f'))),
      );
      const local = queryEvents(events, id).slice(from);
      assert.deepEqual(local[0]!.changes, [added('f', 2)]);
      assert.equal(local[0]!.hasPendingWrites, true);
      assert.deepEqual(local[0]!.docs.map((d) => [d.id, d.hasPendingWrites]), [['b', false], ['d', false], ['f', true]]);
      const ack = local[local.length - 1]!;
      assert.deepEqual(changesOf(local.slice(1)), [], `the acknowledgement is not a change: ${JSON.stringify(local)}`);
      assert.deepEqual(ack.docs.map((d) => [d.id, d.hasPendingWrites]), [['b', false], ['d', false], ['f', false]]);
      assert.equal(ack.fromCache, false);

      assertNoCacheFlicker(queryEvents(await call(page, 'events', id), id));
      await call(page, 'unlisten', id);
    });

    test('limit queries: orderBy + limit(2) and limitToLast(1) follow documents in and out of the window', stepTimeout, async () => {
      const col = next('ranked');
      await commit({ set: `${col}/r1`, data: { rank: 1 } }, { set: `${col}/r2`, data: { rank: 2 } }, { set: `${col}/r3`, data: { rank: 3 } });
      const top = `${transport.key}-top`;
      const last = `${transport.key}-last`;
      const topSpec: QuerySpec = { collection: col, orderBy: [['rank', 'asc']], limit: 2 };
      await call(page, 'listenQuery', me, top, topSpec);
      await call(page, 'listenQuery', me, last, { collection: col, orderBy: [['rank', 'asc']], limitToLast: 1 });
      const [firstTop] = queryEvents(await waitFor(page, top, 'a first snapshot', (e) => e.length > 0), top);
      assert.deepEqual(ids(firstTop!.docs), ['r1', 'r2']);
      assert.deepEqual(firstTop!.changes, [added('r1', 0), added('r2', 1)]);
      assert.equal(firstTop!.fromCache, false);
      // The second listener may first raise a snapshot from what the first one put in the cache (fromCache
      // true: [r2], the last of r1, r2); the server's answer follows.
      const lastStart = queryEvents(await waitFor(page, last, 'a first server snapshot', (e) => e.some((x) => x.kind !== 'query' || !x.fromCache)), last);
      const firstLast = fromFirstServerSnapshot(lastStart)[0]!;
      assert.deepEqual(ids(firstLast.docs), ['r3']);
      const lastFrom = lastStart.indexOf(firstLast);

      // A new first document pushes r2 out of the window.
      let raised = await queryStep(page, top, () => commit({ set: `${col}/r0`, data: { rank: 0 } }), ['r0', 'r1']);
      assert.deepEqual(changesOf(raised), [removed('r2', 1), added('r0', 0)]);
      // Deleting it brings r2 back: the server must send a document the client no longer had in the window.
      raised = await queryStep(page, top, () => commit({ delete: `${col}/r0` }), ['r1', 'r2']);
      assert.deepEqual(changesOf(raised), [removed('r0', 0), added('r2', 1)]);
      // r3 moves into the window from outside it; limitToLast now has r2.
      raised = await queryStep(page, top, () => commit({ update: `${col}/r3`, data: { rank: 1.5 } }), ['r1', 'r3']);
      assert.deepEqual(changesOf(raised), [removed('r2', 1), added('r3', 1)]);
      const lastEvents = queryEvents(
        await waitFor(page, last, 'r2 as the last', (e) => e.slice(lastFrom + 1).some((x) => x.kind === 'query' && !x.fromCache && JSON.stringify(ids(x.docs)) === '["r2"]')),
        last,
      ).slice(lastFrom);
      assertNoCacheFlicker(lastEvents);
      assert.deepEqual(lastEvents.filter((e) => e.changes.length > 0).map((e) => ids(e.docs)), [['r3'], ['r2']]);
      assert.deepEqual(changesOf(lastEvents.slice(1)), [removed('r3', 0), added('r2', 0)]);
      // A document past the end changes only limitToLast.
      await queryStep(page, last, () => commit({ set: `${col}/r9`, data: { rank: 9 } }), ['r9']);
      const topEvents = queryEvents(await call(page, 'events', top), top);
      assertNoCacheFlicker(topEvents);
      assert.deepEqual(ids(topEvents[topEvents.length - 1]!.docs), ['r1', 'r3']);
      assert.deepEqual(
        topEvents.filter((e) => e.changes.length > 0).map((e) => ids(e.docs)),
        [['r1', 'r2'], ['r0', 'r1'], ['r1', 'r2'], ['r1', 'r3']],
        'the limit(2) listener saw nothing when r9 arrived',
      );
      const data = await call(page, 'getDocs', me, topSpec);
      assert.deepEqual(data.ids, ['r1', 'r3']);
      await call(page, 'unlisten', top);
      await call(page, 'unlisten', last);
    });

    test('a collection-group listener sees documents under any parent; a subcollection listener only its own', stepTimeout, async () => {
      const group = `grp${transport.key}${Date.now()}`;
      /** Parents are documents of this collection. */
      const base = next('groups');
      const groupId = `${transport.key}-group`;
      const subId = `${transport.key}-sub`;
      await commit({ set: `${base}/p1/${group}/a`, data: { live: true } }, { set: `${base}/p2/${group}/b`, data: { live: false } });
      await call(page, 'listenQuery', me, groupId, { collection: group, group: true, where: [['live', '==', true]] });
      await call(page, 'listenQuery', me, subId, { collection: `${base}/p2/${group}` });
      const [firstGroup] = queryEvents(await waitFor(page, groupId, 'a first snapshot', (e) => e.length > 0), groupId);
      assert.deepEqual(firstGroup!.docs.map((d) => d.path), [`${base}/p1/${group}/a`]);
      assert.equal(firstGroup!.fromCache, false);
      const subStart = queryEvents(await waitFor(page, subId, 'a server snapshot', (e) => e.some((x) => x.kind !== 'query' || !x.fromCache)), subId);
      assert.deepEqual(fromFirstServerSnapshot(subStart)[0]!.docs.map((d) => d.path), [`${base}/p2/${group}/b`]);

      const paths = (e: QueryEvent) => e.docs.map((d) => d.path);
      // A new parent, deeper down; a document turning live; one going dead.
      let raised = await queryStep(page, groupId, () => commit({ set: `${base}/p3/deeper/x/${group}/c`, data: { live: true } }), ['a', 'c']);
      assert.deepEqual(paths(raised[raised.length - 1]!), [`${base}/p1/${group}/a`, `${base}/p3/deeper/x/${group}/c`]);
      raised = await queryStep(page, groupId, () => commit({ update: `${base}/p2/${group}/b`, data: { live: true } }), ['a', 'b', 'c']);
      assert.deepEqual(changesOf(raised), [added('b', 1)]);
      raised = await queryStep(page, groupId, () => commit({ update: `${base}/p1/${group}/a`, data: { live: false } }), ['b', 'c']);
      assert.deepEqual(changesOf(raised), [removed('a', 0)]);
      // A collection with the group's name but under another parent is not the subcollection listener's.
      const subEvents = queryEvents(await waitFor(page, subId, 'b turning live', (e) => e.some((x) => x.kind === 'query' && x.docs[0]?.data.live === true)), subId);
      assert.ok(
        subEvents.every((e) => e.docs.every((d) => d.path.startsWith(`${base}/p2/`))),
        `the subcollection listener saw another parent's documents: ${JSON.stringify(subEvents)}`,
      );
      assertNoCacheFlicker(queryEvents(await call(page, 'events', groupId), groupId));
      await call(page, 'unlisten', groupId);
      await call(page, 'unlisten', subId);
    });

    test('filters and cursors: array-contains, !=, in, a range and startAfter/endAt follow documents in and out', stepTimeout, async () => {
      const col = next('filtered');
      await commit(
        { set: `${col}/a`, data: { tags: ['hot', 'new'], n: 1, status: 'open' } },
        { set: `${col}/b`, data: { tags: ['hot'], n: 3, status: 'done' } },
        { set: `${col}/c`, data: { tags: ['cold'], n: 4, status: 'open' } },
        { set: `${col}/d`, data: { tags: ['hot'], n: 5 } },
        { set: `${col}/e`, data: { tags: ['hot'], n: 9, status: 'open' } },
      );
      const hot = `${transport.key}-hot`;
      const open = `${transport.key}-open`;
      // tags contains 'hot', n in (1, 5], by n
      await call(page, 'listenQuery', me, hot, { collection: col, where: [['tags', 'array-contains', 'hot']], orderBy: [['n', 'asc']], startAfter: [1], endAt: [5] });
      // status != 'done' (a missing status does not match), and status in a set
      await call(page, 'listenQuery', me, open, { collection: col, where: [['status', '!=', 'done'], ['status', 'in', ['open', 'review']]] });
      const [firstHot] = queryEvents(await waitFor(page, hot, 'a first snapshot', (e) => e.length > 0), hot);
      assert.deepEqual(ids(firstHot!.docs), ['b', 'd']);
      assert.equal(firstHot!.fromCache, false);
      const openStart = fromFirstServerSnapshot(queryEvents(await waitFor(page, open, 'a server snapshot', (e) => e.some((x) => x.kind !== 'query' || !x.fromCache)), open));
      assert.deepEqual(ids(openStart[0]!.docs), ['a', 'c', 'e']);

      // c turns hot and lands inside the cursor window; e moves into it; a moves past its end.
      let raised = await queryStep(page, hot, () => commit({ update: `${col}/c`, data: { tags: ['cold', 'hot'] } }), ['b', 'c', 'd']);
      assert.deepEqual(changesOf(raised), [added('c', 1)]);
      raised = await queryStep(page, hot, () => commit({ update: `${col}/e`, data: { n: 2 } }), ['e', 'b', 'c', 'd']);
      assert.deepEqual(changesOf(raised), [added('e', 0)]);
      raised = await queryStep(page, hot, () => commit({ update: `${col}/b`, data: { n: 6 } }), ['e', 'c', 'd']);
      assert.deepEqual(changesOf(raised), [removed('b', 1)]);
      // the start cursor is exclusive: n == 1 stays out, n == 5 (endAt) stays in
      raised = await queryStep(page, hot, () => commit({ update: `${col}/d`, data: { n: 1 } }), ['e', 'c']);
      assert.deepEqual(changesOf(raised), [removed('d', 2)]);
      raised = await queryStep(page, hot, () => commit({ update: `${col}/d`, data: { n: 5 } }), ['e', 'c', 'd']);
      assert.deepEqual(changesOf(raised), [added('d', 2)]);

      // d gets a status: in the != query; then a status outside the `in` set; then c's status is removed.
      // (ordered by status first, the inequality field: 'open' < 'review')
      raised = await queryStep(page, open, () => commit({ update: `${col}/d`, data: { status: 'review' } }), ['a', 'c', 'e', 'd']);
      assert.deepEqual(changesOf(raised), [added('d', 3)]);
      raised = await queryStep(page, open, () => commit({ update: `${col}/d`, data: { status: 'later' } }), ['a', 'c', 'e']);
      assert.deepEqual(changesOf(raised), [removed('d', 3)]);
      raised = await queryStep(page, open, () => commit({ set: `${col}/c`, data: { tags: ['cold', 'hot'], n: 4 } }), ['a', 'e']);
      assert.deepEqual(changesOf(raised), [removed('c', 1)]);
      assertNoCacheFlicker(queryEvents(await call(page, 'events', hot), hot));
      assertNoCacheFlicker(fromFirstServerSnapshot(queryEvents(await call(page, 'events', open), open)));

      assert.equal(await call(page, 'count', me, { collection: col, where: [['tags', 'array-contains', 'hot']] }), 5);
      assert.equal(await call(page, 'count', me, { collection: col, where: [['status', '!=', 'done']] }), 3);
      await call(page, 'unlisten', hot);
      await call(page, 'unlisten', open);
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The idle listeners, checked

test(`idle listeners: still live on both transports after ${IDLE_MS / 1000} s without traffic`, { timeout: IDLE_MS + 60_000 }, async () => {
  assert.ok(idle && idle.since > 0, 'the idle listeners were not set up');
  const { col, pages } = idle;
  try {
    await sleep(Math.max(0, idle.since + IDLE_MS - Date.now()));
    await commit({ update: `${col}/d`, data: { n: 1 } }, { set: `${col}/e`, data: { n: 2 } });
    await Promise.all(
      pages.map(async ({ page }) => {
        await waitForDoc(page, 'idle-doc', { n: 1 });
        await waitFor(page, 'idle-query', 'both documents', (e) => e.some((x) => x.kind === 'query' && JSON.stringify(ids(x.docs)) === '["d","e"]'));
        const docs = docEvents(await call(page, 'events', 'idle-doc'), 'idle-doc');
        assert.ok(docs.every((e) => !e.fromCache), `the listener went offline while idle: ${JSON.stringify(docs)}`);
        assert.deepEqual(docStates(docs), [{ n: 0 }, { n: 1 }]);
        assertNoCacheFlicker(fromFirstServerSnapshot(queryEvents(await call(page, 'events', 'idle-query'), 'idle-query')));
      }),
    );
  } finally {
    await Promise.all(pages.map(({ context }) => context.close()));
    idle = undefined;
  }
});

test('nothing the pages requested left the machine; no page errors; the SDK asserted nothing', () => {
  assertPagesStayedOnTheMachine(harness.activity);
});
