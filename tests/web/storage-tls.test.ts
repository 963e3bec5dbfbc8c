/**
 * Cloud Storage over TLS in production, as docs/STORAGE.md ("Production over TLS") sets it up:
 * Hearth (no --dev, the web app's rules, --public-url https://...) behind a TLS-terminating nginx with
 * a certificate this test makes, in a real Chromium.
 *
 * firebase/storage reaches a host of one's own only through connectStorageEmulator, which builds
 * plain-http URLs. An app served over https with `Content-Security-Policy: upgrade-insecure-requests`
 * has the browser send every one of them over https: the official SDK, unmodified, uploads (one-shot
 * and resumable), downloads, lists and deletes, and its download URL loads in an <img>. Without that
 * policy the browser refuses to send them at all (mixed content): nothing goes out in the clear.
 * Hearth's own web app does the same on its https pages (a profile photo, a note's attachment). An
 * app that names no host at all (Google's default, firebasestorage.googleapis.com) works where that
 * name resolves to the proxy and its certificate is trusted (a managed fleet).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { defaultShippedRulesFile, defaultShippedStorageRulesFile } from '../../packages/server/src/config.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { bundleForBrowser } from '../helpers/browser-bundle.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { freePort, repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { solidPng } from '../helpers/png.js';
import { adminObject } from '../helpers/storage-clients.js';
import { startTlsProxy, type TlsProxy } from '../helpers/tls-proxy.js';

const waitMs = 30_000;
const stepTimeout = { timeout: 120_000 };
const filesHost = 'files.hearth.test';
const appHost = 'app.hearth.test';
const googleHost = 'firebasestorage.googleapis.com';

/** A third-party app's page: the official SDKs, bundled; `run` does what its options say and reports. */
const appSource = `
  import { initializeApp } from 'firebase/app';
  import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth } from 'firebase/auth';
  import { connectStorageEmulator, deleteObject, getBytes, getDownloadURL, getStorage, listAll, ref, uploadBytes, uploadBytesResumable } from 'firebase/storage';
  let apps = 0;
  globalThis.run = async ({ hearth, apiKey, projectId, email, emulatorHook, png, big }) => {
    const origin = new URL(hearth);
    const app = initializeApp({ apiKey, projectId, authDomain: origin.host, storageBucket: projectId + '.appspot.com' }, 'app-' + apps++);
    const auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, origin.origin, { disableWarnings: true });
    const { user } = await createUserWithEmailAndPassword(auth, email, 'secret123');
    const storage = getStorage(app);
    if (emulatorHook) connectStorageEmulator(storage, origin.hostname, Number(origin.port) || 443);
    storage.maxUploadRetryTime = 4000;
    storage.maxOperationRetryTime = 4000;
    const photo = ref(storage, 'users/' + user.uid + '/photo');
    try {
      await uploadBytes(photo, new Uint8Array(png), { contentType: 'image/png' });
      const url = await getDownloadURL(photo);
      const img = new Image();
      img.src = url;
      await img.decode();
      // More than 256 KiB: the SDK's resumable protocol (start, then chunks to the X-Goog-Upload-URL).
      const large = Uint8Array.from({ length: big }, (_, i) => (i * 31) & 0xff);
      await uploadBytesResumable(photo, large, { contentType: 'image/png' });
      const back = new Uint8Array(await getBytes(photo));
      const same = back.length === large.length && back.every((byte, i) => byte === large[i]);
      const listed = (await listAll(ref(storage, 'users/' + user.uid))).items.map((item) => item.fullPath);
      await deleteObject(photo);
      return { uid: user.uid, url, imageWidth: img.naturalWidth, same, listed };
    } catch (error) {
      return { uid: user.uid, error: error.code ?? String(error) };
    }
  };
  globalThis.ready = true;
`;

let server: TestHearth | undefined;
let proxy: TlsProxy | undefined;
let browser: Browser | undefined;
const record = new BrowserRecord();
const consoleMessages: string[] = [];
let hearthOrigin = '';
let appOrigin = '';

before(async () => {
  assertBrowserReady();
  // The proxy's port is Hearth's public address, so it is chosen first.
  const port = await freePort();
  hearthOrigin = `https://${filesHost}:${port}`;
  appOrigin = `https://${appHost}:${port}`;
  server = await startHearth({ webRoot, dev: false, publicUrl: hearthOrigin, trustProxy: ['loopback'], shippedRulesFile: defaultShippedRulesFile, shippedStorageRulesFile: defaultShippedStorageRulesFile });
  const script = await bundleForBrowser({ stdin: { contents: appSource, resolveDir: repoRoot } });
  proxy = await startTlsProxy({
    upstream: server.url,
    port,
    proxiedHosts: [filesHost, googleHost],
    extraHosts: [appHost],
    // The app's own site: its pages carry upgrade-insecure-requests, except /plain.html.
    extraServers: (_port, prefix) => {
      const site = join(prefix, 'site');
      mkdirSync(site, { recursive: true });
      writeFileSync(join(site, 'app.js'), script);
      const page = '<!doctype html><title>An app</title><script type="module" src="/app.js"></script>';
      writeFileSync(join(site, 'index.html'), page);
      writeFileSync(join(site, 'plain.html'), page);
      return `  server {
    listen 127.0.0.1:${port} ssl;
    server_name ${appHost};
    root ${site};
    location / { add_header Content-Security-Policy "upgrade-insecure-requests" always; }
    location = /plain.html { }
  }`;
    },
  });
  browser = await launchChromium(proxy.chromiumArgs);
});

after(async () => {
  await browser?.close();
  await proxy?.stop();
  await server?.close();
});

interface RunResult {
  uid: string;
  url?: string;
  imageWidth?: number;
  same?: boolean;
  listed?: string[];
  error?: string;
}

async function openApp(path: string): Promise<Page> {
  const page = await record.newPage(await record.newContext(browser!, waitMs));
  page.on('console', (message) => consoleMessages.push(message.text()));
  await page.goto(`${appOrigin}${path}`);
  await page.waitForFunction(() => 'ready' in globalThis);
  return page;
}

function runApp(page: Page, emulatorHook: boolean, hearth = hearthOrigin): Promise<RunResult> {
  const options = { hearth, apiKey: server!.apiKey, projectId: server!.projectId, email: uniqueEmail('tls'), emulatorHook, png: [...solidPng(6, 6, [240, 120, 0])], big: 300 * 1024 };
  return page.evaluate((given) => (globalThis as unknown as { run: (o: typeof given) => Promise<RunResult> }).run(given), options);
}

test('an app on its own https origin: connectStorageEmulator with upgrade-insecure-requests goes over TLS end to end', stepTimeout, async () => {
  const page = await openApp('/');
  const sent = record.requested.length;
  const result = await runApp(page, true);
  assert.equal(result.error, undefined);
  assert.equal(result.imageWidth, 6, 'the download URL loaded in an <img>');
  assert.equal(result.same, true, 'the resumable upload came back whole');
  assert.deepEqual(result.listed, [`users/${result.uid}/photo`]);
  // The SDK built http:// URLs; the browser sent every one of them as https.
  assert.match(result.url!, new RegExp(`^http://${filesHost.replace(/\./g, '\\.')}:${proxy!.port}/v0/b/`));
  const storageRequests = record.requested.slice(sent).filter((address) => address.includes('/v0/b/'));
  assert.ok(storageRequests.length >= 6, storageRequests.join('\n'));
  assert.deepEqual(storageRequests.filter((address) => !address.startsWith(`${hearthOrigin}/v0/b/`)), []);
});

test('without upgrade-insecure-requests the browser sends nothing in the clear: the upload is refused as mixed content', stepTimeout, async () => {
  const page = await openApp('/plain.html');
  const result = await runApp(page, true);
  assert.equal(result.error, 'storage/retry-limit-exceeded');
  assert.ok(consoleMessages.some((text) => text.includes('Mixed Content') && text.includes(`http://${filesHost}:${proxy!.port}/v0/b/`)));
  assert.equal(await adminObject(server!, `users/${result.uid}/photo`), undefined);
  await page.close();
});

test("an app that names no host (Google's default) works where firebasestorage.googleapis.com resolves to the proxy", stepTimeout, async () => {
  const page = await openApp('/plain.html');
  const sent = record.requested.length;
  const result = await runApp(page, false);
  assert.equal(result.error, undefined);
  assert.equal(result.same, true);
  assert.match(result.url!, /^https:\/\/firebasestorage\.googleapis\.com\/v0\/b\//);
  assert.ok(record.requested.slice(sent).some((address) => address.startsWith(`https://${googleHost}/v0/b/`)));
});

test("Hearth's own web app over https: a profile photo and a note's attachment", stepTimeout, async () => {
  const page = await record.newPage(await record.newContext(browser!, waitMs));
  const sent = record.requested.length;
  await page.goto(`${hearthOrigin}/signup`);
  await page.getByLabel('Email', { exact: true }).fill(uniqueEmail('tls-web'));
  await page.getByLabel('Password', { exact: true }).fill('correct horse 1');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByTestId('signed-in-email').waitFor();
  await page.goto(`${hearthOrigin}/account`);
  const uid = (await page.getByTestId('account-uid').innerText()).trim();
  await page.getByLabel('Add a photo').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: solidPng(12, 12, [0, 120, 90]) });
  await page.getByText('Your photo was saved.').waitFor();
  await page.waitForFunction(() => (document.querySelector<HTMLImageElement>('[data-testid="profile-photo"]')?.naturalWidth ?? 0) === 12);
  // The photoURL the account keeps is an https URL (usable outside this page too).
  assert.match((await page.getByTestId('profile-photo').getAttribute('src'))!, new RegExp(`^${hearthOrigin.replace(/\./g, '\\.')}/v0/b/`));
  await page.screenshot({ path: join(repoRoot, '.tmp/artifacts/web/account-photo-over-tls.png'), fullPage: true });

  await page.getByRole('banner').getByRole('link', { name: 'Notes' }).click();
  await page.getByLabel('New note').fill('over tls');
  await page.getByRole('button', { name: 'Add note' }).click();
  await page.locator('[data-testid="note"][data-pending="false"]').waitFor();
  await page.getByLabel('Attach a file to over tls').setInputFiles({ name: 'secret.txt', mimeType: 'text/plain', buffer: Buffer.from('sent over TLS only') });
  await page.getByTestId('attachment-name').filter({ hasText: 'secret.txt' }).waitFor();
  assert.ok(await adminObject(server!, `users/${uid}/photo`));
  const requests = record.requested.slice(sent);
  assert.deepEqual(requests.filter((address) => !address.startsWith('https://') && !address.startsWith('data:') && !address.startsWith('blob:')), []);
});

test('nothing left the machine (the test names map to the proxy on 127.0.0.1), and no page failed', () => {
  const mapped = new Set([filesHost, appHost, googleHost]);
  assert.deepEqual(requestsOffMachine(record.requested).filter((address) => !mapped.has(new URL(address).hostname)), []);
  assert.deepEqual(record.pageErrors, []);
});
