/**
 * What the browser end-to-end tests of Cloud Firestore's realtime path (tests/e2e-firestore-realtime-*.test.ts)
 * run in: headless Chromium runs the FULL `firebase` browser build (firebase/app + firebase/auth +
 * firebase/firestore, not lite), so reads and listeners go over the Listen stream and writes over the Write stream,
 * both on WebChannel, and transactions over REST. The page (tests/helpers/firestore-realtime-page.ts, bundled here
 * with esbuild and served from its own origin, so every Firestore and Auth request is cross-origin) exposes
 * functions the tests call through page.evaluate. The server is tests/helpers/firestore-realtime-target.ts; the
 * "other client" that changes data under the listeners is tests/helpers/firestore-realtime-rest.ts.
 *
 * Each test file starts its own harness (startRealtimeHarness), and ends with a check that nothing its pages
 * requested left the machine (assertPagesStayedOnTheMachine).
 *
 * Needs /usr/bin/chromium and the built web app (assertBrowserReady; `npm test` builds it). HEARTH_E2E_DEBUG=1
 * prints the page's console.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { bundleForBrowser } from './browser-bundle.js';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { assertBrowserReady, launchChromium, requestsOffMachine } from './browser.js';
import type { ClientOptions, PageApi } from './firestore-realtime-page.js';
import { startRealtimeTarget, type RealtimeTarget } from './firestore-realtime-target.js';
import { CALL_TIMEOUT_MS, within } from './firestore-target.js';
import { repoRoot } from './hearth.js';

export const debug = process.env.HEARTH_E2E_DEBUG === '1';
export const stepTimeout = { timeout: 60_000 };

export interface PageActivity {
  /** Every URL each page requested, with the page's label. */
  requested: { page: string; url: string }[];
  pageErrors: string[];
  /** Pages that were open while the server was stopped, or went offline. */
  pagesThatLostTheServer: Set<string>;
  consoleLines: string[];
}

export interface RealtimeHarness {
  target: RealtimeTarget;
  /** What every page opened with openPage did. */
  activity: PageActivity;
  /** Closes the browser, the page's server and the target. */
  close(): Promise<void>;
}

/**
 * The harness the page and REST helpers work on. Tests call them from everywhere, and node's test runner runs each
 * test file in a process of its own: one harness per process.
 */
let active: { harness: RealtimeHarness; browser: Browser; pageUrl: string } | undefined;

function activeHarness(): NonNullable<typeof active> {
  if (!active) throw new Error('startRealtimeHarness() has not run (or the harness is closed)');
  return active;
}

export function activeTarget(): RealtimeTarget {
  return activeHarness().harness.target;
}

/** The target, the page's server and Chromium. */
export async function startRealtimeHarness(): Promise<RealtimeHarness> {
  assertBrowserReady();
  const [script, target] = await Promise.all([bundlePage(), startRealtimeTarget()]);
  let pageServer: Server | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    active = undefined;
    await browser?.close();
    await new Promise<void>((resolve) => (pageServer ? pageServer.close(() => resolve()) : resolve()));
    await target.close();
  };
  try {
    const served = await servePage(script);
    pageServer = served.server;
    browser = await launchChromium();
    const harness: RealtimeHarness = { target, activity: { requested: [], pageErrors: [], pagesThatLostTheServer: new Set(), consoleLines: [] }, close };
    active = { harness, browser, pageUrl: served.url };
    return harness;
  } catch (error) {
    await close();
    throw error;
  }
}

/** The realtime test page (firestore-realtime-page.ts) bundled for the browser. */
export async function bundlePage(): Promise<string> {
  return bundleForBrowser({ entryPoint: join(repoRoot, 'tests/helpers/firestore-realtime-page.ts') });
}

/** Serves the bundled page on its own origin (127.0.0.1, a free port). */
export async function servePage(script: string): Promise<{ server: Server; url: string }> {
  const html = '<!doctype html><html><head><meta charset="utf-8"><title>Firestore realtime</title></head><body><script type="module" src="/page.js"></script></body></html>';
  const server = createServer((request, response) => {
    if (request.url === '/' || request.url === '/index.html') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    else if (request.url === '/page.js') response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/` };
}

/** A fresh browser context (its own IndexedDB) with the page loaded. */
export async function openPage(label: string): Promise<{ context: BrowserContext; page: Page }> {
  const { browser, harness } = activeHarness();
  const { requested, pageErrors, consoleLines } = harness.activity;
  const context = await browser.newContext();
  context.setDefaultTimeout(CALL_TIMEOUT_MS);
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
  await within(page.goto(activeHarness().pageUrl), 'loading the test page');
  await within(page.waitForFunction(() => 'hearthTest' in globalThis), 'the page script');
}

export class PageCallError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** Calls hearthTest[method](...args) in the page, with its own timeout. Errors thrown there keep their `code`. */
export async function call<K extends keyof PageApi>(page: Page, method: K, ...args: Parameters<PageApi[K]>): Promise<Awaited<ReturnType<PageApi[K]>>> {
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

/** A client's options for this target: signed in (anonymously on Hearth, by mockUserToken on the emulator) or not. */
export function clientOptions(settings: { signIn: boolean; forceLongPolling?: boolean; persistent?: boolean }, user: string): ClientOptions {
  const target = activeTarget();
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
// The two WebChannel transports, and the page a per-transport suite shares

export const transports = [
  { key: 'default', label: 'default settings (WebChannel streaming)', forceLongPolling: false },
  { key: 'longpoll', label: 'experimentalForceLongPolling: true', forceLongPolling: true },
];
export type Transport = (typeof transports)[number];

let collectionCount = 0;

/**
 * The names a per-transport suite uses: its client, a second browser client (its own app, user and streams) on
 * the same page, and a fresh collection per test. Every path the suite touches lives under its own root collection.
 */
export function transportSuiteNames(transport: Transport): { me: string; peer: string; next: (name: string) => string } {
  const root = `rt-${transport.key}-${Date.now()}`;
  return { ...transportClientNames(transport), next: (name) => `${root}/${name}-${++collectionCount}/docs` };
}

function transportClientNames(transport: Transport): { me: string; peer: string } {
  return { me: `client-${transport.key}`, peer: `peer-${transport.key}` };
}

/** The suite's page, labelled with the transport's key, with its client and peer signed in as two different users. */
export async function openTransportPage(transport: Transport): Promise<{ context: BrowserContext; page: Page }> {
  const { me, peer } = transportClientNames(transport);
  const opened = await openPage(transport.key);
  const uid = await call(opened.page, 'init', me, clientOptions({ signIn: true, forceLongPolling: transport.forceLongPolling }, `user-${transport.key}`));
  assert.ok(uid, 'the client is signed in');
  const peerUid = await call(opened.page, 'init', peer, clientOptions({ signIn: true, forceLongPolling: transport.forceLongPolling }, `peer-${transport.key}`));
  assert.ok(peerUid && peerUid !== uid, 'the peer is another signed-in user');
  return opened;
}

// ---------------------------------------------------------------------------------------------------------------
// The check that ends each test file

/**
 * When a WebChannel request fails at the network level (the server is down), the SDK's WebChannel tests the
 * network by loading https://www.google.com/images/cleardot.gif: that, only on pages that lost the server (it
 * was stopped, or the page went offline), is the one attempt to leave the machine allowed (and the route in openPage refuses it).
 */
export function assertPagesStayedOnTheMachine({ requested, pageErrors, pagesThatLostTheServer, consoleLines }: PageActivity): void {
  assert.ok(requested.length > 0, 'no requests were recorded');
  const offMachine = requested.filter((r) => requestsOffMachine([r.url]).length > 0);
  const networkTest = (r: { page: string; url: string }) => pagesThatLostTheServer.has(r.page) && r.url.startsWith('https://www.google.com/images/cleardot.gif?');
  assert.deepEqual(offMachine.filter((r) => !networkTest(r)), []);
  assert.deepEqual(pageErrors, []);
  const internal = consoleLines.filter((line) => /INTERNAL ASSERTION FAILED|Uncaught Error in snapshot listener/i.test(line));
  assert.deepEqual(internal, []);
}
