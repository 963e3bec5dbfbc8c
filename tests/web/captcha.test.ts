/**
 * Hearth's reCAPTCHA stand-in in Chromium with the official SDK: a page on another origin includes
 * `<Hearth>/__/auth/recaptcha.js`, and the SDK's own RecaptchaVerifier (invisible, and the checkbox
 * a person ticks) gets tokens from it that Hearth's HumanCheck accepts, once. The checkbox's
 * expiry and a refused challenge reach the page's callbacks. In --dev, the SDK's
 * appVerificationDisabledForTesting works without the script. Every request that would leave
 * 127.0.0.1 is refused and fails the test: Google's reCAPTCHA is never asked.
 *
 * Needs /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { defaultHumanCheckOptions } from '../../packages/server/src/auth/captcha/human-check.js';
import { ApiError } from '../../packages/server/src/http/api-error.js';
import { bundleForBrowser } from '../helpers/browser-bundle.js';
import { BrowserRecord, chromiumPath, launchChromium, requestsOffMachine } from '../helpers/browser.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 15_000;
const stepTimeout = { timeout: 90_000 };
/** Short enough to see expire within a test, long enough to be used first on a slow machine. */
const shortTokenLifetimeMs = 3_000;

let server: TestHearth;
/** Tokens expire in seconds; two challenges per address. */
let shortServer: TestHearth;
let devServer: TestHearth;
let browser: Browser;
let context: BrowserContext;
let pages: Server;
let pageOrigin = '';
const record = new BrowserRecord();
/** Requests refused because they would have left the machine. */
const refused: string[] = [];

/** The test page's script: the official SDK, bundled. */
const appSource = `
  import { initializeApp } from 'firebase/app';
  import { connectAuthEmulator, initializeAuth, inMemoryPersistence, RecaptchaVerifier, signInWithPhoneNumber } from 'firebase/auth';
  let auth;
  window.events = [];
  window.hearthTest = {
    // Hearth is reached like Google's emulator (connectAuthEmulator), which turns app verification
    // off; a production app turns it back on to use the stand-in.
    setup(config, url, verification) {
      auth = initializeAuth(initializeApp(config, 'app-' + Math.random()), { persistence: inMemoryPersistence });
      connectAuthEmulator(auth, url, { disableWarnings: true });
      auth.settings.appVerificationDisabledForTesting = !verification;
    },
    invisible() {
      return new RecaptchaVerifier(auth, 'send', { size: 'invisible' }).verify();
    },
    async phone(phoneNumber) {
      try {
        await signInWithPhoneNumber(auth, phoneNumber, new RecaptchaVerifier(auth, 'send', { size: 'invisible' }));
        return 'code sent';
      } catch (error) {
        return error.code;
      }
    },
    checkbox() {
      const verifier = new RecaptchaVerifier(auth, 'widget', {
        size: 'normal',
        callback: () => window.events.push('callback'),
        'expired-callback': () => window.events.push('expired'),
        'error-callback': () => window.events.push('error'),
      });
      window.pendingToken = verifier.verify();
      return verifier.render();
    },
  };`;

before(async () => {
  assert.ok(existsSync(chromiumPath), `${chromiumPath} is missing: install it with \`apt-get install -y chromium\``);
  server = await startHearth({ dev: false });
  shortServer = await startHearth({ dev: false, captcha: { ...defaultHumanCheckOptions, tokenLifetimeMs: shortTokenLifetimeMs, challengesPerAddress: { maxFailures: 2, windowMs: 10 * 60_000 } } });
  devServer = await startHearth();
  const app = await bundleForBrowser({ stdin: { contents: appSource, resolveDir: repoRoot } });
  // The app's own origin (another port): `?hearth=` names the Hearth whose script it includes, if any.
  pages = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://page');
    if (url.pathname === '/app.js') return void response.writeHead(200, { 'content-type': 'text/javascript' }).end(app);
    const hearth = url.searchParams.get('hearth');
    const include = hearth ? `<script src="${hearth}/__/auth/recaptcha.js"></script>` : '';
    response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><head>${include}</head><body><div id="widget"></div><button id="send">Send code</button><script type="module" src="/app.js"></script></body></html>`);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(pages.address() as { port: number }).port}`;
  browser = await launchChromium();
  context = await record.newContext(browser, waitMs);
  await context.route('**/*', async (route) => {
    const address = route.request().url();
    if (requestsOffMachine([address]).length === 0) return route.continue();
    refused.push(address);
    return route.abort('blockedbyclient');
  });
});

after(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await server?.close();
  await shortServer?.close();
  await devServer?.close();
});

/** A fresh page of the app, its SDK pointed at `target`; with `verification`, the stand-in is included and used. */
async function openApp(target: TestHearth, verification: boolean): Promise<Page> {
  const page = await record.newPage(context);
  await page.goto(`${pageOrigin}/${verification ? `?hearth=${encodeURIComponent(target.url)}` : ''}`);
  await page.waitForFunction(() => 'hearthTest' in window);
  const config = { apiKey: target.apiKey, projectId: target.projectId, authDomain: new URL(target.url).host };
  await page.evaluate(([c, url, v]) => (window as unknown as TestWindow).hearthTest.setup(c, url, v), [config, target.url, verification] as const);
  return page;
}

interface TestWindow {
  hearthTest: { setup(config: unknown, url: string, verification: boolean): void; invisible(): Promise<string>; phone(phoneNumber: string): Promise<string>; checkbox(): Promise<number> };
  pendingToken: Promise<string>;
  events: string[];
  grecaptcha: { getResponse(id?: number): string; reset(id?: number): void };
}

async function assertRefused(call: Promise<void>, message: string): Promise<void> {
  await assert.rejects(call, (error: unknown) => error instanceof ApiError && error.wireMessage === message);
}

test('invisible: the SDK\'s verify() gets a token from the stand-in, which HumanCheck accepts once', stepTimeout, async () => {
  const page = await openApp(server, true);
  const token = await page.evaluate(() => (window as unknown as TestWindow).hearthTest.invisible());
  assert.match(token, /^hc1_/);
  await server.hearth.humanCheck.verify(server.projectId, token);
  await assertRefused(server.hearth.humanCheck.verify(server.projectId, token), 'CAPTCHA_CHECK_FAILED : Recaptcha verification failed - DUPLICATE');
  // The stand-in answered from Hearth's own origin; nothing was drawn for an invisible widget.
  assert.ok(record.requested.some((address) => address.startsWith(`${server.url}/__/auth/recaptcha/redeem`)));
  assert.equal(await page.locator('#send').innerText(), 'Send code');
  await page.close();
});

test('signInWithPhoneNumber sends the stand-in\'s token as recaptchaToken (reCAPTCHA Enterprise off: the v2 verifier)', stepTimeout, async () => {
  const page = await openApp(server, true);
  const sent = page.waitForRequest((request) => request.url().includes('/accounts:sendVerificationCode'));
  // Whatever the server makes of it (phone sign-in is another part), the SDK must have asked with the token.
  await page.evaluate(() => (window as unknown as TestWindow).hearthTest.phone('+16505550101'));
  const body = (await sent).postDataJSON() as { phoneNumber: string; recaptchaToken: string; captchaResponse: string };
  assert.equal(body.phoneNumber, '+16505550101');
  assert.match(body.recaptchaToken, /^hc1_[A-Za-z0-9_-]{43}$/);
  assert.equal(body.captchaResponse, 'NO_RECAPTCHA');
  await page.close();
});

test('checkbox: "I\'m not a robot" renders, a click solves it, and its token passes HumanCheck', stepTimeout, async () => {
  const page = await openApp(server, true);
  await page.evaluate(() => (window as unknown as TestWindow).hearthTest.checkbox());
  const checkbox = page.getByRole('checkbox', { name: "I'm not a robot" });
  await checkbox.waitFor();
  assert.equal(await checkbox.isChecked(), false);
  assert.equal(await page.evaluate(() => (window as unknown as TestWindow).grecaptcha.getResponse()), '');
  await checkbox.click();
  await page.getByRole('status').filter({ hasText: 'Verified' }).waitFor();
  assert.equal(await checkbox.isChecked(), true);
  assert.equal(await checkbox.isDisabled(), true);
  const token = await page.evaluate(() => (window as unknown as TestWindow).pendingToken);
  assert.deepEqual(await page.evaluate(() => (window as unknown as TestWindow).events), ['callback']);
  assert.equal(await page.evaluate(() => (window as unknown as TestWindow).grecaptcha.getResponse()), token);
  await server.hearth.humanCheck.verify(server.projectId, token);
  await page.close();
});

test('checkbox: an expiring token calls expired-callback and offers the box again; a refused challenge calls error-callback', stepTimeout, async () => {
  const page = await openApp(shortServer, true);
  const widgetId = await page.evaluate(() => (window as unknown as TestWindow).hearthTest.checkbox());
  const checkbox = page.getByRole('checkbox', { name: "I'm not a robot" });
  const status = page.getByRole('status');
  await checkbox.click();
  await status.filter({ hasText: 'Verified' }).waitFor();
  const first = await page.evaluate(() => (window as unknown as TestWindow).pendingToken);

  await status.filter({ hasText: 'Verification expired. Check the box again.' }).waitFor();
  assert.deepEqual(await page.evaluate(() => (window as unknown as TestWindow).events), ['callback', 'expired']);
  assert.equal(await page.evaluate(() => (window as unknown as TestWindow).grecaptcha.getResponse()), '');
  assert.equal(await checkbox.isChecked(), false);
  assert.equal(await checkbox.isDisabled(), false);

  await checkbox.click();
  await status.filter({ hasText: 'Verified' }).waitFor();
  const second = await page.evaluate((id) => (window as unknown as TestWindow).grecaptcha.getResponse(id), widgetId);
  assert.notEqual(second, first);
  await shortServer.hearth.humanCheck.verify(shortServer.projectId, second);

  // This Hearth hands one address two challenges: a third is refused, and the page is told.
  await page.evaluate((id) => (window as unknown as TestWindow).grecaptcha.reset(id), widgetId);
  await checkbox.click();
  await status.filter({ hasText: 'Too many attempts. Try again later.' }).waitFor();
  assert.equal(await checkbox.isChecked(), false);
  assert.deepEqual((await page.evaluate(() => (window as unknown as TestWindow).events)).slice(-2), ['callback', 'error']);
  await page.close();
});

test('--dev: the SDK\'s appVerificationDisabledForTesting needs neither the script nor a challenge', stepTimeout, async () => {
  const page = await openApp(devServer, false);
  const before = record.requested.length;
  const token = await page.evaluate(() => (window as unknown as TestWindow).hearthTest.invisible());
  assert.ok(token.length > 0);
  await devServer.hearth.humanCheck.verify(devServer.projectId, token);
  assert.deepEqual(record.requested.slice(before).filter((address) => address.includes('/__/auth/recaptcha')), []);
  await page.close();
});

test('no request left the machine, and no page failed', () => {
  assert.deepEqual(refused, []);
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
