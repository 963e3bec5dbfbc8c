/**
 * --dev as Google's Firestore emulator for the web SDK in Chromium (WebChannel): the emulator's
 * database ids (`db1`, `db2`, as the SDK's own multi-database tests use them), and an app whose
 * projectId is not Hearth's --project, both of which the SDK's write stream used to retry forever.
 * Nothing leaves the machine.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { bundleForBrowser } from '../helpers/browser-bundle.js';
import { BrowserRecord, chromiumPath, launchChromium, requestsOffMachine } from '../helpers/browser.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 30_000;
const stepTimeout = { timeout: 90_000 };

const appSource = `
  import { initializeApp } from 'firebase/app';
  import { connectAuthEmulator, initializeAuth, inMemoryPersistence, signInAnonymously } from 'firebase/auth';
  import { connectFirestoreEmulator, doc, getDocFromServer, initializeFirestore, setDoc, setLogLevel } from 'firebase/firestore';
  setLogLevel('silent');
  const params = new URLSearchParams(location.search);
  const hearth = new URL(params.get('hearth'));
  let apps = 0;
  /** Writes in one database, reads it back there and the same path in another. */
  globalThis.separate = async (projectId, first, second, path) => {
    const app = initializeApp({ apiKey: 'any-key', projectId, authDomain: hearth.host }, 'app-' + apps++);
    const auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, hearth.origin, { disableWarnings: true });
    await signInAnonymously(auth);
    const open = (databaseId) => {
      const db = initializeFirestore(app, { experimentalForceLongPolling: false }, databaseId);
      connectFirestoreEmulator(db, hearth.hostname, Number(hearth.port));
      return db;
    };
    const [one, two] = [open(first), open(second)];
    await setDoc(doc(one, path), { name: 'Rafi' });
    const mine = await getDocFromServer(doc(one, path));
    const theirs = await getDocFromServer(doc(two, path));
    return { mine: mine.data() ?? null, theirs: theirs.exists() };
  };
  globalThis.ready = true;
`;

let dev: TestHearth;
let browser: Browser;
let appServer: Server;
let appOrigin = '';
const record = new BrowserRecord();

before(async () => {
  assert.ok(existsSync(chromiumPath), `${chromiumPath} is missing`);
  dev = await startHearth({ dev: true });
  const script = await bundleForBrowser({ stdin: { contents: appSource, resolveDir: repoRoot } });
  appServer = createServer((request, response) => {
    if (request.url === '/app.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><script type="module" src="/app.js"></script>');
  });
  await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://127.0.0.1:${(appServer.address() as { port: number }).port}`;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  appServer?.close();
  await dev?.close();
});

async function openApp(): Promise<Page> {
  const page = await record.newPage(await record.newContext(browser, waitMs));
  await page.goto(`${appOrigin}/?hearth=${encodeURIComponent(dev.url)}`);
  await page.waitForFunction(() => 'ready' in globalThis);
  return page;
}

type Separate = (projectId: string, first: string, second: string, path: string) => Promise<{ mine: unknown; theirs: boolean }>;

test('db1 and db2 keep their documents apart over WebChannel', stepTimeout, async () => {
  const page = await openApp();
  const result = await page.evaluate(([p, path]) => (globalThis as unknown as { separate: Separate }).separate(p, 'db1', 'db2', path), [dev.projectId, `users/${Date.now()}`] as const);
  assert.deepEqual(result, { mine: { name: 'Rafi' }, theirs: false });
});

test("an app whose projectId is not --project writes and reads, as on Google's emulators", stepTimeout, async () => {
  const page = await openApp();
  const result = await page.evaluate((path) => (globalThis as unknown as { separate: Separate }).separate('another-project', '(default)', 'db2', path), `notes/${Date.now()}`);
  assert.deepEqual(result, { mine: { name: 'Rafi' }, theirs: false });
});

test('nothing left the machine, and no page failed', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
