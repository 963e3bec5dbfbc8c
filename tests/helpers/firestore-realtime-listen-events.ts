/**
 * Reading back what the browser's listeners saw in the end-to-end tests of Cloud Firestore's realtime path
 * (tests/e2e-firestore-realtime-*.test.ts): waiting for a snapshot, the states and document changes a listener went
 * through, and the checks every test makes of them.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { Page } from 'playwright-core';
import { call } from './firestore-realtime-harness.js';
import type { DocChangeView, DocView, ListenEvent, PendingState, WriteData } from './firestore-realtime-page.js';
import { useGoogleEmulator } from './firestore-target.js';

/** Per wait for a listener to see something. */
const WAIT_MS = 15_000;
/** Waits that span a server restart and the SDK's reconnect backoff. */
export const RECONNECT_MS = 40_000;

export type DocEvent = Extract<ListenEvent, { kind: 'doc' }>;
export type QueryEvent = Extract<ListenEvent, { kind: 'query' }>;
type ErrorEvent = Extract<ListenEvent, { kind: 'error' }>;

/** Polls listener `id` until `done(events)` holds; fails with everything it saw. */
export async function waitFor(page: Page, id: string, what: string, done: (events: ListenEvent[]) => boolean, ms = WAIT_MS): Promise<ListenEvent[]> {
  const deadline = Date.now() + ms;
  let events: ListenEvent[] = [];
  for (;;) {
    events = await call(page, 'events', id);
    if (done(events)) return events;
    if (Date.now() > deadline) break;
    await sleep(25);
  }
  assert.fail(`listener ${id}: ${what} did not happen within ${ms} ms; it saw:\n${events.map((e) => JSON.stringify(e)).join('\n')}`);
}

export function docEvents(events: ListenEvent[], id: string): DocEvent[] {
  const errors = events.filter((e): e is ErrorEvent => e.kind === 'error');
  assert.deepEqual(errors, [], `listener ${id} got an error`);
  return events.filter((e): e is DocEvent => e.kind === 'doc');
}

export function queryEvents(events: ListenEvent[], id: string): QueryEvent[] {
  const errors = events.filter((e): e is ErrorEvent => e.kind === 'error');
  assert.deepEqual(errors, [], `listener ${id} got an error`);
  return events.filter((e): e is QueryEvent => e.kind === 'query');
}

/** The states a document listener went through, metadata-only snapshots folded: data or null for "missing". */
export function docStates(events: DocEvent[]): (WriteData | null)[] {
  const states: (WriteData | null)[] = [];
  for (const event of events) {
    const state = event.exists ? event.data : null;
    if (states.length === 0 || !isDeepStrictEqual(states[states.length - 1], state)) states.push(state);
  }
  return states;
}

export const ids = (docs: DocView[]) => docs.map((d) => d.id);

/** Waits until the doc listener has seen `data` (null: missing) from the server (no pending writes) and returns that event. */
export async function waitForDoc(page: Page, id: string, data: WriteData | null, ms = WAIT_MS): Promise<DocEvent> {
  const matches = (e: ListenEvent): e is DocEvent =>
    e.kind === 'doc' && !e.hasPendingWrites && !e.fromCache && (data === null ? !e.exists : e.exists && isDeepStrictEqual(e.data, data));
  const events = await waitFor(page, id, `a server snapshot ${JSON.stringify(data)}`, (events) => events.some(matches) || events.some((e) => e.kind === 'error'), ms);
  docEvents(events, id);
  return events.find(matches)!;
}

/**
 * Makes one change from the other client, waits until the query listener shows `expectedIds` (from the server),
 * and returns the snapshots that change raised.
 */
export async function queryStep(page: Page, id: string, change: () => Promise<void>, expectedIds: string[]): Promise<QueryEvent[]> {
  const before = (await call(page, 'events', id)).length;
  await change();
  const events = await waitFor(
    page,
    id,
    `the query result ${JSON.stringify(expectedIds)}`,
    (events) =>
      events.some((e) => e.kind === 'error') ||
      events.slice(before).some((e) => e.kind === 'query' && !e.fromCache && !e.hasPendingWrites && JSON.stringify(ids(e.docs)) === JSON.stringify(expectedIds)),
  );
  queryEvents(events, id);
  return queryEvents(events.slice(before), id);
}

/** Polls a write started with startWrite until it settles. */
export async function settled(page: Page, handle: string, ms = WAIT_MS): Promise<PendingState> {
  const deadline = Date.now() + ms;
  for (;;) {
    const state = await call(page, 'pendingState', handle);
    if (state !== 'pending') return state;
    if (Date.now() > deadline) assert.fail(`write ${handle} still pending after ${ms} ms`);
    await sleep(50);
  }
}

/**
 * With the server up, a query listener's snapshots all come from the server (fromCache false), as production's
 * do. Documented emulator difference: Google's emulator answers every change with a RESET of the target and
 * the full result, which leaves a document that left the query "in limbo" on the client until a second lookup
 * resolves it, and the SDK raises a metadata-only fromCache:true snapshot meanwhile. Only those are let
 * through there.
 */
export function assertNoCacheFlicker(events: QueryEvent[]): void {
  const fromCache = events.filter((e) => e.fromCache);
  if (useGoogleEmulator) assert.deepEqual(fromCache.flatMap((e) => e.changes), [], `only metadata-only snapshots from cache: ${JSON.stringify(events)}`);
  else assert.deepEqual(fromCache, [], `with the server up, no snapshot is from cache: ${JSON.stringify(events)}`);
}

/**
 * A listener's snapshots from its first one from the server on. A listener started while another one already
 * holds matching documents in the cache may first raise a fromCache:true snapshot of those.
 */
export function fromFirstServerSnapshot(events: QueryEvent[]): QueryEvent[] {
  const first = events.findIndex((e) => !e.fromCache);
  assert.ok(first >= 0, `no snapshot from the server: ${JSON.stringify(events)}`);
  assert.ok(events.slice(0, first).every((e) => e.fromCache));
  return events.slice(first);
}

/** The document changes of a run of snapshots, in order (metadata-only snapshots contribute none). */
export const changesOf = (events: QueryEvent[]): DocChangeView[] => events.flatMap((e) => e.changes);

export const added = (id: string, newIndex: number): DocChangeView => ({ type: 'added', id, oldIndex: -1, newIndex });
export const modified = (id: string, oldIndex: number, newIndex: number): DocChangeView => ({ type: 'modified', id, oldIndex, newIndex });
export const removed = (id: string, oldIndex: number): DocChangeView => ({ type: 'removed', id, oldIndex, newIndex: -1 });
