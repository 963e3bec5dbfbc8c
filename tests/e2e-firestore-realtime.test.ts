/**
 * Cloud Firestore's realtime path end to end, the way a web app uses it: headless Chromium runs the FULL
 * `firebase` browser build (firebase/app + firebase/auth + firebase/firestore, not lite), so reads and listeners
 * go over the Listen stream and writes over the Write stream, both on WebChannel, and transactions over REST.
 * The page (tests/helpers/firestore-realtime-page.ts, bundled here with esbuild and served from its own origin,
 * so every Firestore and Auth request is cross-origin) exposes functions the test calls through page.evaluate.
 * The "other client" that changes data under the listeners is raw REST `documents:commit` with `Bearer owner`.
 *
 * Covered, once with the SDK's default settings and once with `experimentalForceLongPolling: true`: document and
 * query listeners (first snapshot from the server with fromCache false, every remote change in order,
 * added/modified/removed as documents enter and leave a query, limit and limitToLast, filters and cursors,
 * collection groups, deletes, a missing document), hasPendingWrites true then false for a local write, another
 * browser client's writes, unicode and large values, pipelined writes, getDoc/getDocs/count, setDoc/updateDoc/
 * deleteDoc/writeBatch/runTransaction, and a client nobody signed in to getting permission-denied in
 * onSnapshot's error callback. Then, for both transports at once: listeners still live after 50 s of silence
 * (past WebChannel's keepalive and long-poll timeouts) and after a quick server restart (no reload). Last,
 * offline persistence (`persistentLocalCache()`) across a server restart on the same port and data: writes made
 * while the server is down survive a page reload and are synced when it is back, and the listeners resync,
 * including changes made while they were disconnected.
 *
 * Target: Hearth in-process (--dev; clients sign in anonymously, since --dev Hearth lets only signed-in users
 * and the admin at the data). HEARTH_FIRESTORE_TARGET=google-emulator runs the same assertions against Google's
 * official emulator (`gcloud emulators firestore start`), which is how they were validated: there clients
 * "sign in" with connectFirestoreEmulator's mockUserToken, and a rules file (`request.auth != null`) reproduces
 * Hearth's --dev policy; the restart keeps the data through the emulator's export / --import-data.
 *
 * Needs /usr/bin/chromium and the built web app (assertBrowserReady; `npm test` builds it). HEARTH_E2E_DEBUG=1
 * prints the page's console.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { build } from 'esbuild';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { assertBrowserReady, launchChromium, requestsOffMachine } from './helpers/browser.js';
import { startGoogleEmulator, type GoogleEmulator } from './helpers/firestore-emulator.js';
import type { ClientOptions, DocChangeView, DocView, Json, ListenEvent, PageApi, PendingState, QuerySpec, WriteData, WriteOp } from './helpers/firestore-realtime-page.js';
import { repoRoot, startHearth, tempDataDir, type TestHearth } from './helpers/hearth.js';

const useGoogleEmulator = process.env.HEARTH_FIRESTORE_TARGET === 'google-emulator';
const debug = process.env.HEARTH_E2E_DEBUG === '1';
/** Per call into the page or to the server. */
const CALL_MS = 15_000;
/** Per wait for a listener to see something. */
const WAIT_MS = 15_000;
/** Waits that span a server restart and the SDK's reconnect backoff. */
const RECONNECT_MS = 40_000;
const stepTimeout = { timeout: 60_000 };

// ---------------------------------------------------------------------------------------------------------------
// Small utilities

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Rejects with a message naming the call if `promise` has not settled in time. */
function within<T>(promise: Promise<T>, label: string, ms = CALL_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------------------------
// Targets: Hearth, or Google's emulator for validating the suite

interface Target {
  label: string;
  /** http://127.0.0.1:PORT */
  url: string;
  host: string;
  port: number;
  projectId: string;
  apiKey: string;
  /** connectAuthEmulator's URL; undefined for Google's emulator (no Auth there). */
  authUrl: string | undefined;
  /** Stops the server, keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Hearth's --dev policy, as rules for Google's emulator: signed-in users only (Bearer owner bypasses rules). */
const signedInOnlyRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /{document=**} {
      allow read, write: if request.auth != null;
    }
  }
}
`;

async function googleEmulatorTarget(): Promise<Target> {
  const scratch = mkdtempSync(join(tmpdir(), 'firestore-realtime-emulator-'));
  const rulesFile = join(scratch, 'firestore.rules');
  writeFileSync(rulesFile, signedInOnlyRules);
  const projectId = 'demo-realtime';
  let emulator: GoogleEmulator | undefined = await startGoogleEmulator({ args: [`--rules=${rulesFile}`] });
  if (!emulator) throw new Error('HEARTH_FIRESTORE_TARGET=google-emulator needs gcloud with its Firestore emulator component');
  const hostPort = emulator.hostPort;
  const url = emulator.url;
  let exported: string | undefined;
  let exports = 0;
  return {
    label: 'Google emulator',
    url,
    host: '127.0.0.1',
    port: Number(hostPort.split(':')[1]),
    projectId,
    apiKey: 'fake-api-key',
    authUrl: undefined,
    async stop() {
      // The emulator keeps data in memory: export it, and import it on restart.
      const name = `restart-${++exports}`;
      const response = await fetch(`${url}/emulator/v1/projects/${projectId}:export`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ database: `projects/${projectId}/databases/(default)`, export_directory: scratch, export_name: name }),
      });
      assert.equal(response.status, 200, `emulator export: ${await response.text()}`);
      exported = join(scratch, name, `${name}.overall_export_metadata`);
      await emulator?.stop();
      emulator = undefined;
    },
    async restart() {
      assert.ok(exported, 'restart() before stop()');
      emulator = await startGoogleEmulator({ hostPort, args: [`--rules=${rulesFile}`, `--import-data=${exported}`] });
    },
    async close() {
      await emulator?.stop();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

async function hearthTarget(): Promise<Target> {
  const dataDir = tempDataDir();
  let server: TestHearth | undefined = await startHearth({ dataDir });
  const first = server;
  const port = Number(new URL(first.url).port);
  return {
    label: 'Hearth',
    url: first.url,
    host: '127.0.0.1',
    port,
    projectId: first.projectId,
    apiKey: first.apiKey,
    authUrl: first.url,
    async stop() {
      await within(server!.close(), "Hearth's close() with browser streams open");
      server = undefined;
    },
    async restart() {
      server = await startHearth({ port, dataDir });
    },
    async close() {
      if (server) await within(server.close(), "Hearth's close()");
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The other client: raw REST with Bearer owner (the admin; rules do not apply)

let target: Target;

function documentName(path: string): string {
  return `projects/${target.projectId}/databases/(default)/documents/${path}`;
}

function encode(value: Json): Record<string, unknown> {
  if (value === null) return { nullValue: null };
  if (typeof value === 'boolean') return { booleanValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { integerValue: String(value) } : { doubleValue: value };
  if (typeof value === 'string') return { stringValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(encode) } };
  return { mapValue: { fields: encodeFields(value) } };
}

function encodeFields(data: WriteData): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, encode(value)]));
}

function decode(value: Record<string, any>): Json {
  if ('nullValue' in value) return null;
  if ('booleanValue' in value) return value.booleanValue;
  if ('integerValue' in value) return Number(value.integerValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('stringValue' in value) return value.stringValue;
  if ('timestampValue' in value) return { timestampValue: value.timestampValue };
  if ('arrayValue' in value) return ((value.arrayValue.values ?? []) as Record<string, any>[]).map(decode);
  if ('mapValue' in value) return decodeFields(value.mapValue.fields ?? {});
  throw new Error(`cannot decode ${JSON.stringify(value)}`);
}

function decodeFields(fields: Record<string, Record<string, any>>): WriteData {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, decode(value)]));
}

type RestWrite =
  /** Replaces (or creates) the document. */
  | { set: string; data: WriteData }
  /** Changes the listed top-level fields of an existing document. */
  | { update: string; data: WriteData }
  | { delete: string };

async function restCall(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const send = () =>
    fetch(`${target.url}/v1/${path}`, {
      method,
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  // After a server restart, fetch may first pick a kept-alive connection to the old server, which is closed.
  const response = await within(
    send().catch((error: { cause?: { code?: string } }) => {
      if (error.cause?.code === 'UND_ERR_SOCKET') return send();
      throw error;
    }),
    `${method} /v1/${path}`,
  );
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/** One atomic commit from the other client. */
async function commit(...writes: RestWrite[]): Promise<void> {
  const wire = writes.map((write) => {
    if ('set' in write) return { update: { name: documentName(write.set), fields: encodeFields(write.data) } };
    if ('update' in write) {
      return {
        update: { name: documentName(write.update), fields: encodeFields(write.data) },
        updateMask: { fieldPaths: Object.keys(write.data) },
        currentDocument: { exists: true },
      };
    }
    return { delete: documentName(write.delete) };
  });
  const answer = await restCall('POST', `projects/${target.projectId}/databases/(default)/documents:commit`, { writes: wire });
  assert.equal(answer.status, 200, `REST commit failed: ${JSON.stringify(answer.body)}`);
}

/** The document as the server has it, or undefined when it does not exist. */
async function serverData(path: string): Promise<WriteData | undefined> {
  const answer = await restCall('GET', `${documentName(path)}`);
  if (answer.status === 404) return undefined;
  assert.equal(answer.status, 200, `REST get ${path}: ${JSON.stringify(answer.body)}`);
  return decodeFields(answer.body.fields ?? {});
}

// ---------------------------------------------------------------------------------------------------------------
// The page

let pageServer: Server;
let pageUrl: string;
let browser: Browser | undefined;
/** Every URL each page requested, with the page's label. */
const requested: { page: string; url: string }[] = [];
const pageErrors: string[] = [];
/** Pages that were open while the server was stopped, or went offline. */
const pagesThatLostTheServer = new Set<string>();
const consoleLines: string[] = [];

async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [join(repoRoot, 'tests/helpers/firestore-realtime-page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

async function servePage(script: string): Promise<void> {
  const html = '<!doctype html><html><head><meta charset="utf-8"><title>Firestore realtime</title></head><body><script type="module" src="/page.js"></script></body></html>';
  pageServer = createServer((request, response) => {
    if (request.url === '/' || request.url === '/index.html') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    else if (request.url === '/page.js') response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  const address = pageServer.address();
  pageUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
}

/** A fresh browser context (its own IndexedDB) with the page loaded. */
async function openPage(label: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser!.newContext();
  context.setDefaultTimeout(CALL_MS);
  context.on('request', (request) => requested.push({ page: label, url: request.url() }));
  // Nothing may leave the machine; what tries is recorded above and refused here.
  await context.route((url) => requestsOffMachine([url.href]).length > 0, (route) => route.abort('blockedbyclient'));
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(`${label}: ${error.message}`));
  page.on('console', (message) => {
    const line = `[${label} ${message.type()}] ${message.text()}`;
    consoleLines.push(line);
    if (debug) console.log(line);
  });
  await loadPage(page);
  return { context, page };
}

async function loadPage(page: Page): Promise<void> {
  await within(page.goto(pageUrl), 'loading the test page');
  await within(page.waitForFunction(() => 'hearthTest' in globalThis), 'the page script');
}

class PageCallError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** Calls hearthTest[method](...args) in the page, with its own timeout. Errors thrown there keep their `code`. */
async function call<K extends keyof PageApi>(page: Page, method: K, ...args: Parameters<PageApi[K]>): Promise<Awaited<ReturnType<PageApi[K]>>> {
  const label = `${method}(${JSON.stringify(args).slice(1, -1).slice(0, 160)})`;
  const result = await within(
    page.evaluate(
      async ({ method, args }) => {
        const api = (globalThis as any).hearthTest;
        try {
          return { value: await api[method](...args) };
        } catch (error) {
          const e = error as { code?: string; message?: string };
          return { error: { code: e?.code ?? '', message: String(e?.message ?? error) } };
        }
      },
      { method, args: args as unknown[] },
    ),
    label,
  );
  if ('error' in result && result.error) throw new PageCallError(`${label} threw in the page: ${result.error.code} ${result.error.message}`, result.error.code);
  return (result as { value: Awaited<ReturnType<PageApi[K]>> }).value;
}

// ---------------------------------------------------------------------------------------------------------------
// Listener helpers

type DocEvent = Extract<ListenEvent, { kind: 'doc' }>;
type QueryEvent = Extract<ListenEvent, { kind: 'query' }>;
type ErrorEvent = Extract<ListenEvent, { kind: 'error' }>;

/** Polls listener `id` until `done(events)` holds; fails with everything it saw. */
async function waitFor(page: Page, id: string, what: string, done: (events: ListenEvent[]) => boolean, ms = WAIT_MS): Promise<ListenEvent[]> {
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

function docEvents(events: ListenEvent[], id: string): DocEvent[] {
  const errors = events.filter((e): e is ErrorEvent => e.kind === 'error');
  assert.deepEqual(errors, [], `listener ${id} got an error`);
  return events.filter((e): e is DocEvent => e.kind === 'doc');
}

function queryEvents(events: ListenEvent[], id: string): QueryEvent[] {
  const errors = events.filter((e): e is ErrorEvent => e.kind === 'error');
  assert.deepEqual(errors, [], `listener ${id} got an error`);
  return events.filter((e): e is QueryEvent => e.kind === 'query');
}

/** The states a document listener went through, metadata-only snapshots folded: data or null for "missing". */
function docStates(events: DocEvent[]): (WriteData | null)[] {
  const states: (WriteData | null)[] = [];
  for (const event of events) {
    const state = event.exists ? event.data : null;
    if (states.length === 0 || !isDeepStrictEqual(states[states.length - 1], state)) states.push(state);
  }
  return states;
}

const ids = (docs: DocView[]) => docs.map((d) => d.id);

/** Waits until the doc listener has seen `data` (null: missing) from the server (no pending writes) and returns that event. */
async function waitForDoc(page: Page, id: string, data: WriteData | null, ms = WAIT_MS): Promise<DocEvent> {
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
async function queryStep(page: Page, id: string, change: () => Promise<void>, expectedIds: string[]): Promise<QueryEvent[]> {
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
async function settled(page: Page, handle: string, ms = WAIT_MS): Promise<PendingState> {
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
function assertNoCacheFlicker(events: QueryEvent[]): void {
  const fromCache = events.filter((e) => e.fromCache);
  if (useGoogleEmulator) assert.deepEqual(fromCache.flatMap((e) => e.changes), [], `only metadata-only snapshots from cache: ${JSON.stringify(events)}`);
  else assert.deepEqual(fromCache, [], `with the server up, no snapshot is from cache: ${JSON.stringify(events)}`);
}

/**
 * A listener's snapshots from its first one from the server on. A listener started while another one already
 * holds matching documents in the cache may first raise a fromCache:true snapshot of those.
 */
function fromFirstServerSnapshot(events: QueryEvent[]): QueryEvent[] {
  const first = events.findIndex((e) => !e.fromCache);
  assert.ok(first >= 0, `no snapshot from the server: ${JSON.stringify(events)}`);
  assert.ok(events.slice(0, first).every((e) => e.fromCache));
  return events.slice(first);
}

/** The document changes of a run of snapshots, in order (metadata-only snapshots contribute none). */
const changesOf = (events: QueryEvent[]): DocChangeView[] => events.flatMap((e) => e.changes);

const added = (id: string, newIndex: number): DocChangeView => ({ type: 'added', id, oldIndex: -1, newIndex });
const modified = (id: string, oldIndex: number, newIndex: number): DocChangeView => ({ type: 'modified', id, oldIndex, newIndex });
const removed = (id: string, oldIndex: number): DocChangeView => ({ type: 'removed', id, oldIndex, newIndex: -1 });

// ---------------------------------------------------------------------------------------------------------------
// Suite setup

before(async () => {
  assertBrowserReady();
  const [script, startedTarget] = await Promise.all([bundlePage(), useGoogleEmulator ? googleEmulatorTarget() : hearthTarget()]);
  target = startedTarget;
  await servePage(script);
  browser = await launchChromium();
});

after(async () => {
  await Promise.all((idle?.pages ?? []).map(({ context }) => context.close()));
  await browser?.close();
  await new Promise<void>((resolve) => (pageServer ? pageServer.close(() => resolve()) : resolve()));
  await target?.close();
});

let collectionCount = 0;

/** A client's options for this target: signed in (anonymously on Hearth, by mockUserToken on the emulator) or not. */
function clientOptions(settings: { signIn: boolean; forceLongPolling?: boolean; persistent?: boolean }, user: string): ClientOptions {
  return {
    projectId: target.projectId,
    apiKey: target.apiKey,
    host: target.host,
    port: target.port,
    ...(target.authUrl !== undefined ? { authUrl: target.authUrl } : {}),
    signIn: settings.signIn,
    ...(target.authUrl === undefined && settings.signIn ? { mockUser: user } : {}),
    ...(settings.forceLongPolling ? { forceLongPolling: true } : {}),
    ...(settings.persistent ? { persistent: true } : {}),
    ...(debug ? { debugLog: true } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The two WebChannel transports

const transports = [
  { key: 'default', label: 'default settings (WebChannel streaming)', forceLongPolling: false },
  { key: 'longpoll', label: 'experimentalForceLongPolling: true', forceLongPolling: true },
];

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
    const me = `client-${transport.key}`;
    /** A second browser client (its own app, user and streams) on the same page. */
    const peer = `peer-${transport.key}`;
    /** Every path this suite touches lives under its own root collection. */
    const root = `rt-${transport.key}-${Date.now()}`;
    let uid: string | null;

    before(async () => {
      ({ context, page } = await openPage(transport.key));
      uid = await call(page, 'init', me, clientOptions({ signIn: true, forceLongPolling: transport.forceLongPolling }, `user-${transport.key}`));
      assert.ok(uid, 'the client is signed in');
      const peerUid = await call(page, 'init', peer, clientOptions({ signIn: true, forceLongPolling: transport.forceLongPolling }, `peer-${transport.key}`));
      assert.ok(peerUid && peerUid !== uid, 'the peer is another signed-in user');
    });

    after(async () => {
      await context?.close();
    });

    /** A fresh collection for one test. */
    const next = (name: string) => `${root}/${name}-${++collectionCount}/docs`;

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

    test('a network drop: listeners resume and catch up on what changed meanwhile, deletions included', stepTimeout, async () => {
      const col = next('blip');
      await commit(
        { set: `${col}/a`, data: { v: 1 } },
        { set: `${col}/b`, data: { v: 2 } },
        { set: `${col}/c`, data: { v: 3 } },
        { set: `${col}/e`, data: { v: 5 } },
      );
      const queryId = `${transport.key}-blip-query`;
      const docId = `${transport.key}-blip-doc`;
      const goneId = `${transport.key}-blip-gone`;
      await call(page, 'listenQuery', me, queryId, { collection: col, where: [['v', '>=', 0]], orderBy: [['v', 'asc']] });
      await call(page, 'listenDoc', me, docId, `${col}/a`);
      await call(page, 'listenDoc', me, goneId, `${col}/b`);
      await waitFor(page, queryId, 'a server snapshot', (e) => e.some((x) => x.kind === 'query' && !x.fromCache && x.docs.length === 4));
      await waitForDoc(page, docId, { v: 1 });
      await waitForDoc(page, goneId, { v: 2 });

      pagesThatLostTheServer.add(transport.key);
      await context.setOffline(true);
      try {
        // The SDK restarts its streams on the browser's offline event and finds it cannot connect.
        await waitFor(page, docId, 'a from-cache snapshot', (e) => e.some((x) => x.kind === 'doc' && x.fromCache));
        const before = (await call(page, 'events', queryId)).length;
        // Meanwhile, another client: a changes, b is deleted, c leaves the query, d arrives, e is untouched.
        await commit({ update: `${col}/a`, data: { v: 10 } }, { delete: `${col}/b` }, { update: `${col}/c`, data: { v: -1 } }, { set: `${col}/d`, data: { v: 4 } });
        await context.setOffline(false);
        const events = await waitFor(
          page,
          queryId,
          'the catch-up',
          (e) => e.some((x) => x.kind === 'query' && !x.fromCache && JSON.stringify(ids(x.docs)) === '["d","e","a"]'),
          RECONNECT_MS,
        );
        const catchUp = queryEvents(events, queryId).slice(before);
        const sorted = (changes: DocChangeView[]) => changes.map((c) => `${c.type} ${c.id}`).sort();
        assert.deepEqual(sorted(changesOf(catchUp)), ['added d', 'modified a', 'removed b', 'removed c'], JSON.stringify(catchUp));
        await waitForDoc(page, docId, { v: 10 });
        await waitForDoc(page, goneId, null);
        // and it is live again
        const raised = await queryStep(page, queryId, () => commit({ set: `${col}/f`, data: { v: 0 } }), ['f', 'd', 'e', 'a']);
        assert.deepEqual(changesOf(raised), [added('f', 0)]);
      } finally {
        await context.setOffline(false);
      }
      for (const id of [queryId, docId, goneId]) await call(page, 'unlisten', id);
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

// ---------------------------------------------------------------------------------------------------------------
// A quick server restart under live listeners

test('a quick restart under live listeners: both transports reconnect and resync, without a reload', { timeout: 120_000 }, async () => {
  const col = `rt-restart-${Date.now()}`;
  await commit({ set: `${col}/d`, data: { n: 0 } });
  const pages = await Promise.all(transports.map((t) => openPage(`restart-${t.key}`)));
  for (const t of transports) pagesThatLostTheServer.add(`restart-${t.key}`);
  try {
    await Promise.all(
      transports.map(async (t, i) => {
        const { page } = pages[i]!;
        await call(page, 'init', 'live', clientOptions({ signIn: true, forceLongPolling: t.forceLongPolling }, `live-${t.key}`));
        await call(page, 'listenDoc', 'live', 'live-doc', `${col}/d`);
        await call(page, 'listenQuery', 'live', 'live-query', { collection: col });
        await waitForDoc(page, 'live-doc', { n: 0 });
        await waitFor(page, 'live-query', 'a server snapshot', (e) => e.some((x) => x.kind !== 'query' || !x.fromCache));
      }),
    );
    const started = Date.now();
    await target.stop();
    await target.restart();
    // Changed while the clients were cut off, and after.
    await commit({ update: `${col}/d`, data: { n: 1 } }, { set: `${col}/e`, data: { n: 2 } });
    await Promise.all(
      pages.map(async ({ page }) => {
        await waitForDoc(page, 'live-doc', { n: 1 }, RECONNECT_MS);
        await waitFor(page, 'live-query', 'both documents', (e) => e.some((x) => x.kind === 'query' && !x.fromCache && JSON.stringify(ids(x.docs)) === '["d","e"]'), RECONNECT_MS);
      }),
    );
    if (debug) console.log(`reconnected ${Date.now() - started} ms after the restart began`);
    await commit({ update: `${col}/d`, data: { n: 3 } });
    await Promise.all(pages.map(({ page }) => waitForDoc(page, 'live-doc', { n: 3 })));
    for (const { page } of pages) {
      assert.deepEqual(docStates(docEvents(await call(page, 'events', 'live-doc'), 'live-doc')), [{ n: 0 }, { n: 1 }, { n: 3 }]);
      // the write path works again too
      assert.deepEqual(await call(page, 'write', 'live', { op: 'set', path: `${col}/from-${Math.random().toString(36).slice(2)}`, data: { ok: true } }), { ok: true });
    }
  } finally {
    await Promise.all(pages.map(({ context }) => context.close()));
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Offline persistence across a server restart

test('offline persistence: writes made while the server is down survive a reload and sync when it is back; listeners resync', { timeout: 150_000 }, async () => {
  const { context, page } = await openPage('persistent');
  pagesThatLostTheServer.add('persistent');
  try {
    const name = 'client-persistent';
    const options = clientOptions({ signIn: true, persistent: true }, 'user-persistent');
    const col = `rt-persist-${Date.now()}`;
    const docPath = `${col}/doc`;
    await commit({ set: docPath, data: { n: 1 } }, { set: `${col}/q1`, data: { v: 1 } });

    const uid = await call(page, 'init', name, options);
    assert.ok(uid);
    const querySpec: QuerySpec = { collection: col, where: [['v', '>=', 1]], orderBy: [['v', 'asc']] };
    await call(page, 'listenDoc', name, 'p-doc', docPath);
    await call(page, 'listenQuery', name, 'p-query', querySpec);
    await waitForDoc(page, 'p-doc', { n: 1 });
    await waitFor(page, 'p-query', 'the first server snapshot', (e) => e.some((x) => x.kind === 'query' && !x.fromCache && JSON.stringify(ids(x.docs)) === '["q1"]'));

    // The server goes away. (The client may take a while to notice: WebChannel retries a dead back channel
    // for tens of seconds before it reports an error, so nothing here waits for that.)
    await target.stop();

    // Writes while it is down: applied locally at once, pending.
    await call(page, 'startWrite', name, 'w1', { op: 'set', path: docPath, data: { n: 2, offline: true } });
    await call(page, 'startWrite', name, 'w2', { op: 'set', path: `${col}/q2`, data: { v: 2 } });
    await waitFor(page, 'p-doc', 'the offline write', (e) => e.some((x) => x.kind === 'doc' && x.hasPendingWrites && x.data?.n === 2));
    await waitFor(page, 'p-query', 'the offline add', (e) => e.some((x) => x.kind === 'query' && JSON.stringify(ids(x.docs)) === '["q1","q2"]' && x.hasPendingWrites));
    await sleep(500);
    assert.equal(await call(page, 'pendingState', 'w1'), 'pending');

    // A reload with the server still down: the writes are still there, from IndexedDB.
    await call(page, 'terminate', name);
    await within(page.reload(), 'reloading the page');
    await within(page.waitForFunction(() => 'hearthTest' in globalThis), 'the page script after the reload');
    assert.equal(await call(page, 'init', name, options), uid, 'the same user after the reload');
    assert.deepEqual(await call(page, 'getDocFromCache', name, docPath), { exists: true, data: { n: 2, offline: true }, fromCache: true, hasPendingWrites: true });
    await call(page, 'listenDoc', name, 'p-doc-2', docPath);
    await call(page, 'listenQuery', name, 'p-query-2', querySpec);
    const reloaded = docEvents(await waitFor(page, 'p-doc-2', 'a snapshot from the cache', (e) => e.length > 0), 'p-doc-2');
    assert.deepEqual(reloaded[0], { kind: 'doc', exists: true, data: { n: 2, offline: true }, fromCache: true, hasPendingWrites: true });
    const reloadedQuery = queryEvents(await waitFor(page, 'p-query-2', 'a snapshot from the cache', (e) => e.length > 0), 'p-query-2');
    assert.deepEqual(
      reloadedQuery[0]!.docs.map((d) => [d.id, d.hasPendingWrites]),
      [['q1', false], ['q2', true]],
    );
    assert.equal(reloadedQuery[0]!.fromCache, true);
    // One more write after the reload, still offline: its promise settles only once the server has it.
    await call(page, 'startWrite', name, 'w3', { op: 'update', path: docPath, data: { afterReload: true } });

    // The server comes back on the same port with the same data; another client changes things at once,
    // before the browser has reconnected: the listeners must catch up on those too.
    await target.restart();
    await commit({ update: `${col}/q1`, data: { touched: true } }, { set: `${col}/q3`, data: { v: 3 } });

    const synced = await waitForDoc(page, 'p-doc-2', { n: 2, offline: true, afterReload: true }, RECONNECT_MS);
    assert.equal(synced.fromCache, false);
    await waitFor(
      page,
      'p-query-2',
      'the resynced query',
      (e) =>
        e.some((x) => x.kind === 'error') ||
        e.some((x) => x.kind === 'query' && !x.fromCache && !x.hasPendingWrites && isDeepStrictEqual(x.docs.map((d) => [d.id, d.data]), [['q1', { v: 1, touched: true }], ['q2', { v: 2 }], ['q3', { v: 3 }]])),
      RECONNECT_MS,
    );
    assert.deepEqual(await settled(page, 'w3'), { ok: true });
    assert.deepEqual(await serverData(docPath), { n: 2, offline: true, afterReload: true });
    assert.deepEqual(await serverData(`${col}/q2`), { v: 2 });

    // Live again: a new remote change arrives.
    await commit({ update: docPath, data: { n: 3 } });
    await waitForDoc(page, 'p-doc-2', { n: 3, offline: true, afterReload: true });
    const states = docStates(docEvents(await call(page, 'events', 'p-doc-2'), 'p-doc-2'));
    assert.deepEqual(states, [{ n: 2, offline: true }, { n: 2, offline: true, afterReload: true }, { n: 3, offline: true, afterReload: true }]);
    await call(page, 'terminate', name);
  } finally {
    await context.close();
  }
});

/**
 * When a WebChannel request fails at the network level (the server is down), the SDK's WebChannel tests the
 * network by loading https://www.google.com/images/cleardot.gif: that, only on pages that lost the server (it
 * was stopped, or the page went offline), is the one attempt to leave the machine allowed (and the route in openPage refuses it).
 */
test('nothing the pages requested left the machine; no page errors; the SDK asserted nothing', () => {
  assert.ok(requested.length > 0, 'no requests were recorded');
  const offMachine = requested.filter((r) => requestsOffMachine([r.url]).length > 0);
  const networkTest = (r: { page: string; url: string }) => pagesThatLostTheServer.has(r.page) && r.url.startsWith('https://www.google.com/images/cleardot.gif?');
  assert.deepEqual(offMachine.filter((r) => !networkTest(r)), []);
  assert.deepEqual(pageErrors, []);
  const internal = consoleLines.filter((line) => /INTERNAL ASSERTION FAILED|Uncaught Error in snapshot listener/i.test(line));
  assert.deepEqual(internal, []);
});
