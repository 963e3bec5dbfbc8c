/**
 * --dev: popup and redirect sign-in with a provider Hearth has no settings for shows the Auth
 * emulator's sign-in widget ("Auth Emulator IDP Login Widget"), driven here in Chromium by the
 * element ids the SDK's own webdriver suite uses (firebase-js-sdk test/integration/webdriver/util/
 * idp_page.ts): add an account, fill it in, sign in; pick it again later; sign in by redirect. The
 * app is a page of its own on another port of this machine, running firebase v12. Nothing leaves
 * the machine. Outside --dev the widget is absent: auth/operation-not-allowed, as before.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { bundleForBrowser } from '../helpers/browser-bundle.js';
import { BrowserRecord, chromiumPath, launchChromium, requestsOffMachine } from '../helpers/browser.js';
import { startDevHearth } from '../helpers/dev-hearth.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { existsSync } from 'node:fs';

const waitMs = 30_000;
const stepTimeout = { timeout: 120_000 };

/** The app: firebase v12 connected to the Hearth named in the page's query, sign-in helpers on window. */
const appSource = `
  import { initializeApp } from 'firebase/app';
  import { browserLocalPersistence, browserPopupRedirectResolver, connectAuthEmulator, getRedirectResult, GithubAuthProvider, GoogleAuthProvider, initializeAuth, signInWithPopup, signInWithRedirect } from 'firebase/auth';
  const params = new URLSearchParams(location.search);
  const app = initializeApp({ apiKey: params.get('key'), projectId: params.get('project'), authDomain: new URL(params.get('hearth')).host });
  const auth = initializeAuth(app, { persistence: browserLocalPersistence, popupRedirectResolver: browserPopupRedirectResolver });
  connectAuthEmulator(auth, params.get('hearth'), { disableWarnings: true });
  const describe = (user) => ({ uid: user.uid, email: user.email, emailVerified: user.emailVerified, displayName: user.displayName, photoURL: user.photoURL, providers: user.providerData.map((p) => p.providerId) });
  const outcome = (promise) => promise.then((result) => ({ user: describe(result.user), providerId: result.providerId }), (error) => ({ error: error.code }));
  globalThis.popup = (provider) => outcome(signInWithPopup(auth, provider === 'github' ? new GithubAuthProvider() : new GoogleAuthProvider()));
  globalThis.redirect = () => signInWithRedirect(auth, new GithubAuthProvider());
  globalThis.redirectResult = () => getRedirectResult(auth).then((result) => (result ? { user: describe(result.user), providerId: result.providerId } : null), (error) => ({ error: error.code }));
  globalThis.ready = true;
`;

let dev: TestHearth;
let production: TestHearth;
let browser: Browser;
let appServer: Server;
let appOrigin = '';
const record = new BrowserRecord();

before(async () => {
  assert.ok(existsSync(chromiumPath), `${chromiumPath} is missing`);
  dev = await startDevHearth();
  production = await startHearth({ dev: false });
  const script = await bundleForBrowser({ stdin: { contents: appSource, resolveDir: repoRoot } });
  appServer = createServer((request, response) => {
    if (request.url === '/app.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else {
      // Hearth's stand-in for Google's gapi loader comes first, as in Hearth's own web app.
      const hearth = new URL(request.url ?? '/', 'http://app').searchParams.get('hearth') ?? '';
      const gapi = /^http:\/\/127\.0\.0\.1:\d+$/.test(hearth) ? `<script src="${hearth}/__/auth/gapi.js"></script>` : '';
      response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>app</title>${gapi}<script type="module" src="/app.js"></script>`);
    }
  });
  await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://127.0.0.1:${(appServer.address() as { port: number }).port}`;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  appServer?.close();
  await dev?.close();
  await production?.close();
});

async function openApp(server: TestHearth): Promise<Page> {
  const page = await record.newPage(await record.newContext(browser, waitMs));
  await page.goto(`${appOrigin}/?hearth=${encodeURIComponent(server.url)}&key=${server.apiKey}&project=${server.projectId}`);
  await page.waitForFunction(() => 'ready' in globalThis);
  return page;
}

type Outcome = { user?: { uid: string; email: string | null; emailVerified: boolean; displayName: string | null; photoURL: string | null; providers: string[] }; providerId?: string; error?: string };

/** Starts a popup sign-in in the app and answers with the widget page it opened. */
async function popupFrom(page: Page, provider: 'google' | 'github'): Promise<{ widget: Page; outcome: Promise<Outcome> }> {
  const opened = page.waitForEvent('popup');
  const outcome = page.evaluate((p) => (globalThis as unknown as { popup: (p: string) => Promise<Outcome> }).popup(p), provider);
  const widget = await opened;
  return { widget, outcome };
}

/** What the SDK's IdPPage.pageLoad waits for: the title, and the page's toggleForm. */
async function widgetLoaded(widget: Page): Promise<void> {
  await widget.waitForFunction(() => document.title.includes('Auth Emulator') && typeof (globalThis as { toggleForm?: unknown }).toggleForm !== 'undefined');
  assert.equal(await widget.title(), 'Auth Emulator IDP Login Widget');
}

async function addAccount(widget: Page, fields: { email: string; displayName?: string; screenName?: string; photo?: string }): Promise<void> {
  await widget.click('.js-new-account');
  await widget.fill('#email-input', fields.email);
  if (fields.displayName) await widget.fill('#display-name-input', fields.displayName);
  if (fields.screenName) await widget.fill('#screen-name-input', fields.screenName);
  if (fields.photo) await widget.fill('#profile-photo-input', fields.photo);
  await submitWidget(widget);
}

/** The popup closes itself as the click lands: only a failure that left it open is one. */
async function submitWidget(widget: Page, selector = '#sign-in'): Promise<void> {
  await widget.click(selector, { noWaitAfter: true }).catch((error: unknown) => {
    if (!widget.isClosed()) throw error;
  });
}

describe('--dev: the Auth emulator widget', () => {
  test('popup: add a new account; later pick it from the list and sign in as it again', stepTimeout, async () => {
    const page = await openApp(dev);
    const email = `bob-${Date.now()}@bob.test`;
    const first = await popupFrom(page, 'google');
    await widgetLoaded(first.widget);
    assert.equal(await first.widget.isVisible('#add-user'), false, 'the list first');
    await first.widget.click('.js-new-account');
    assert.equal(await first.widget.isVisible('#add-user'), true);
    assert.equal(await first.widget.isDisabled('#sign-in'), true, 'no email yet');
    await first.widget.fill('#email-input', 'no-at-sign');
    assert.equal(await first.widget.textContent('#email-error'), 'Missing "@"');
    assert.equal(await first.widget.isDisabled('#sign-in'), true);
    await first.widget.click('#back-button');
    assert.equal(await first.widget.isVisible('#accounts-list'), true);
    await addAccount(first.widget, { email, displayName: 'Bob Test', screenName: 'bob.test', photo: 'http://bob.test/bob.png' });
    const signedIn = await first.outcome;
    assert.equal(signedIn.error, undefined, JSON.stringify(signedIn));
    assert.equal(signedIn.providerId, 'google.com');
    assert.equal(signedIn.user!.email, email);
    assert.equal(signedIn.user!.emailVerified, true);
    assert.equal(signedIn.user!.displayName, 'Bob Test');
    assert.equal(signedIn.user!.photoURL, 'http://bob.test/bob.png');
    assert.deepEqual(signedIn.user!.providers, ['google.com']);

    const again = await popupFrom(page, 'google');
    await widgetLoaded(again.widget);
    const listed = again.widget.locator('#accounts-list li', { hasText: email });
    assert.equal(await listed.count(), 1);
    await listed.click({ noWaitAfter: true }).catch((error: unknown) => {
      if (!again.widget.isClosed()) throw error;
    });
    const second = await again.outcome;
    assert.equal(second.user?.uid, signedIn.user!.uid);
  });

  test('redirect: the widget sends the browser back to the app, whose getRedirectResult signs in', stepTimeout, async () => {
    const page = await openApp(dev);
    const email = `redirected-${Date.now()}@bob.test`;
    await Promise.all([page.waitForURL((url) => url.pathname === '/emulator/auth/handler'), page.evaluate(() => void (globalThis as unknown as { redirect: () => Promise<void> }).redirect())]);
    await widgetLoaded(page);
    await addAccount(page, { email });
    await page.waitForURL((url) => url.origin === appOrigin);
    await page.waitForFunction(() => 'ready' in globalThis);
    const result = (await page.evaluate(() => (globalThis as unknown as { redirectResult: () => Promise<Outcome | null> }).redirectResult())) as Outcome | null;
    assert.ok(result && !result.error, JSON.stringify(result));
    assert.equal(result.providerId, 'github.com');
    assert.equal(result.user!.email, email);
  });

  test('nothing the pages loaded left the machine, and no page failed', () => {
    assert.deepEqual(requestsOffMachine(record.requested), []);
    assert.deepEqual(record.pageErrors, []);
  });
});

test('outside --dev the widget is absent: a provider without settings is auth/operation-not-allowed', stepTimeout, async () => {
  const page = await openApp(production);
  const { widget, outcome } = await popupFrom(page, 'google');
  const answered = await outcome;
  assert.equal(answered.error, 'auth/operation-not-allowed');
  assert.ok(widget.isClosed() || !(await widget.title()).includes('Auth Emulator'));
  const handler = await fetch(`${production.url}/emulator/auth/handler?apiKey=${production.apiKey}&appName=%5BDEFAULT%5D&authType=signInViaPopup&redirectUrl=${encodeURIComponent(`${production.url}/`)}&v=12&providerId=google.com&eventId=1`);
  assert.doesNotMatch(await handler.text(), /Auth Emulator IDP Login Widget/);
});
