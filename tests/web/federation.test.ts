/**
 * Federated sign-in end to end: a real Chromium drives the web app (packages/web/dist) and the
 * real Firebase SDK against an in-process Hearth with its built-in OpenID provider ("Hearth
 * Demo", oidc-provider on another port of 127.0.0.1): sign-in by popup and by redirect, linking
 * and unlinking, reauthenticating by redirect to delete the account, and the ways it fails (popup
 * closed, provider switched off, unauthorized domain, an auth event replayed). Nothing any page
 * loads may leave the machine.
 *
 * Needs `npm run build -w packages/web` first (the root `npm test` does it) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { adminPost, patchProjectConfig, uniqueEmail } from '../helpers/admin-http.js';
import { freePort, startHearth, type TestHearth } from '../helpers/hearth.js';
import { CookieBrowser, handlerUrl } from '../helpers/idp-flow.js';

/** Bound for any single wait on a page. */
const waitMs = 15_000;
/** The SDK notices a closed popup within ~2 s, then waits 8 s for a late answer before giving up. */
const popupClosedWaitMs = 20_000;
const stepTimeout = { timeout: 90_000 };
const demo = 'Hearth Demo';

let server: TestHearth | undefined;
let browser: Browser | undefined;
/** http://127.0.0.1:PORT of the demo provider. */
let providerOrigin = '';
/** The demo provider's sign-in page's Content-Security-Policy (checked by the last test). */
let providerPolicy = '';
const requested: string[] = [];
const staleAfterSeconds = 5;
const pageErrors: string[] = [];

before(async () => {
  assertBrowserReady();
  const demoIdpPort = await freePort();
  providerOrigin = `http://127.0.0.1:${demoIdpPort}`;
  // A sign-in counts as recent for 5 s, so a test can reach a stale session by waiting.
  server = await startHearth({ webRoot, demoIdpPort, recentLoginSeconds: staleAfterSeconds });
  providerPolicy = await providerPagePolicy();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** One browser profile (its own cookies and storage): its pages, and its calls to signInWithIdp. */
interface Visitor {
  context: BrowserContext;
  page: Page;
  /** POSTs to accounts:signInWithIdp from any of this visitor's pages so far. */
  idpCalls: () => number;
}

/** The Content-Security-Policy of the demo provider's sign-in page, reached through Hearth's handler. */
async function providerPagePolicy(): Promise<string> {
  const { response, url: at } = await new CookieBrowser().follow(handlerUrl(server!, 'oidc.demo'));
  assert.equal(response.status, 200, `the handler did not lead to the provider's page: ${at}`);
  assert.equal(new URL(at).origin, providerOrigin);
  await response.text();
  return response.headers.get('content-security-policy') ?? '';
}

/** Whether a page with this policy may submit a form whose answer redirects to `origin`. */
function formActionAllows(policy: string, origin: string): boolean {
  const directive = policy
    .split(';')
    .map((part) => part.trim().split(/\s+/))
    .find(([name]) => name === 'form-action');
  return !directive || directive.slice(1).some((source) => source === '*' || source === origin || source === 'http:' || source === `${origin}/`);
}

/**
 * A fresh profile. Every request of every page in it is recorded, and every page's uncaught
 * errors. With `popupsBlocked` the app's window.open answers null, as a popup blocker does.
 */
async function newVisitor(options: { popupsBlocked?: boolean } = {}): Promise<Visitor> {
  const context = await browser!.newContext();
  context.setDefaultTimeout(waitMs);
  context.setDefaultNavigationTimeout(waitMs);
  let idpCalls = 0;
  context.on('request', (request) => {
    requested.push(request.url());
    if (request.method() === 'POST' && request.url().includes('/accounts:signInWithIdp')) idpCalls += 1;
  });
  context.on('page', (page) => page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${error.message}`)));
  if (options.popupsBlocked) await context.addInitScript(() => void (window.open = () => null));
  const page = await context.newPage();
  return { context, page, idpCalls: () => idpCalls };
}

function url(path: string, origin = server!.url): string {
  return `${origin}${path}`;
}

async function expectSignedIn(page: Page, as: string): Promise<void> {
  await page.getByTestId('signed-in-email').filter({ hasText: as }).waitFor();
}

async function expectSignedOut(page: Page): Promise<void> {
  await page.getByText('You are not signed in.').waitFor();
}

async function expectNotSignedIn(page: Page): Promise<void> {
  assert.equal(await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).count(), 1);
}

async function alertText(scope: Locator, timeout = waitMs): Promise<string> {
  const alert = scope.getByRole('alert');
  await alert.waitFor({ timeout });
  return (await alert.innerText()).trim();
}

/** The provider's own page: type the email, press Continue. */
async function completeProviderPage(page: Page, email: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** Clicks a button that opens the provider in a popup, completes the provider page there and waits for the popup to close. */
async function throughPopup(visitor: Visitor, button: Locator, email: string): Promise<void> {
  const popupOpened = visitor.context.waitForEvent('page');
  await button.click();
  const popup = await popupOpened;
  const closed = popup.waitForEvent('close');
  await completeProviderPage(popup, email);
  await closed;
}

function providerButtons(page: Page): Locator {
  return page.getByRole('group', { name: 'Sign in with a provider' });
}

function signInButton(page: Page): Locator {
  return providerButtons(page).getByRole('button', { name: `Sign in with ${demo}`, exact: true });
}

/** The signed-in user's uid, from the account page (reached without reloading the app). */
async function uidOnAccountPage(page: Page): Promise<string> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
  const uid = (await page.getByTestId('account-uid').innerText()).trim();
  assert.match(uid, /\S{6,}/);
  return uid;
}

async function lookupUser(uid: string): Promise<{ localId: string; providerUserInfo?: { providerId: string }[] } | undefined> {
  const { status, body } = await adminPost(server!, '/accounts:lookup', { localId: [uid] });
  assert.equal(status, 200, JSON.stringify(body));
  return (body as { users?: { localId: string; providerUserInfo?: { providerId: string }[] }[] }).users?.[0];
}

async function signOutFromHeader(page: Page): Promise<void> {
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await expectSignedOut(page);
}

async function setProviderEnabled(enabled: boolean): Promise<void> {
  const response = await fetch(`${server!.url}/identitytoolkit.googleapis.com/v2/projects/${server!.projectId}/oauthIdpConfigs/oidc.demo`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server!.adminKey}` },
    body: JSON.stringify({ enabled }),
  });
  assert.equal(response.status, 200, await response.text());
}

test('signInWithPopup: a new user, then the same user again', stepTimeout, async () => {
  const visitor = await newVisitor();
  const { page } = visitor;
  const email = uniqueEmail('popup');
  await page.goto(url('/signin'));
  await throughPopup(visitor, signInButton(page), email);
  await expectSignedIn(page, email);
  assert.equal(new URL(page.url()).pathname, '/');
  assert.equal(visitor.idpCalls(), 1);
  const uid = await uidOnAccountPage(page);
  assert.equal(await page.getByTestId('account-email').innerText(), email);

  await signOutFromHeader(page);
  // The demo provider remembers who signed in there (as any provider does); forget it to see its page again.
  await visitor.context.clearCookies();
  await page.goto(url('/signin'));
  await throughPopup(visitor, signInButton(page), email);
  await expectSignedIn(page, email);
  assert.equal(visitor.idpCalls(), 2);
  assert.equal(await uidOnAccountPage(page), uid, 'a returning user keeps their account');
  await visitor.context.close();
});

test('signInWithRedirect: with popups blocked the app signs in through this tab', stepTimeout, async () => {
  const visitor = await newVisitor({ popupsBlocked: true });
  const { page } = visitor;
  const email = uniqueEmail('redirect');
  await page.goto(url('/signin'));
  // Cancelled at the provider: back on the sign-in page, getRedirectResult's error as a sentence.
  await signInButton(page).click();
  await page.waitForURL((address) => address.origin !== server!.url);
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.waitForURL(url('/signin'));
  assert.equal(await alertText(providerButtons(page)), 'Signing in was cancelled at the provider.');

  await signInButton(page).click();
  await page.waitForURL((address) => address.origin !== server!.url);
  await completeProviderPage(page, email);
  await expectSignedIn(page, email);
  assert.equal(new URL(page.url()).pathname, '/');
  assert.equal(visitor.idpCalls(), 1);
  await page.reload();
  await expectSignedIn(page, email);
  assert.equal(visitor.idpCalls(), 1, 'a reload does not sign in again');
  await visitor.context.close();
});

test('linkWithPopup from the account page, then unlink', stepTimeout, async () => {
  const visitor = await newVisitor();
  const { page } = visitor;
  const email = uniqueEmail('linker');
  await page.goto(url('/signup'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill('correct horse 1');
  await page.getByRole('button', { name: 'Create account' }).click();
  await expectSignedIn(page, email);
  const uid = await uidOnAccountPage(page);

  const methods = page.getByRole('region', { name: 'Sign-in methods' });
  await methods.getByTestId('sign-in-method-password').waitFor();
  assert.equal(await methods.getByRole('button', { name: /^Unlink/ }).count(), 0, 'the only method cannot be unlinked');
  await throughPopup(visitor, methods.getByRole('button', { name: `Link ${demo}`, exact: true }), uniqueEmail('identity'));
  await methods.getByTestId('sign-in-method-oidc.demo').waitFor();
  await methods.getByRole('status').filter({ hasText: `${demo} was linked to your account.` }).waitFor();
  assert.equal(await methods.getByRole('button', { name: `Link ${demo}`, exact: true }).count(), 0);
  assert.equal(visitor.idpCalls(), 1);
  assert.deepEqual((await lookupUser(uid))?.providerUserInfo?.map((p) => p.providerId).sort(), ['oidc.demo', 'password']);

  await methods.getByRole('button', { name: `Unlink ${demo}` }).click();
  await methods.getByRole('status').filter({ hasText: `${demo} was unlinked from your account.` }).waitFor();
  await methods.getByTestId('sign-in-method-oidc.demo').waitFor({ state: 'detached' });
  await methods.getByRole('button', { name: `Link ${demo}`, exact: true }).waitFor();
  assert.deepEqual((await lookupUser(uid))?.providerUserInfo?.map((p) => p.providerId), ['password']);
  await visitor.context.close();
});

test('reauthenticateWithRedirect: a provider-only user deletes the account', stepTimeout, async () => {
  const visitor = await newVisitor({ popupsBlocked: true });
  const { page } = visitor;
  const email = uniqueEmail('deleter');
  const signInByRedirect = async () => {
    await page.goto(url('/signin'));
    await signInButton(page).click();
    await page.waitForURL((address) => address.origin !== server!.url);
    await completeProviderPage(page, email);
    await expectSignedIn(page, email);
  };
  await signInByRedirect();
  const uid = await uidOnAccountPage(page);

  const form = page.getByRole('region', { name: 'Delete account' });
  await form.getByLabel('I understand my account will be deleted').check();
  await visitor.context.clearCookies(); // so the provider asks again rather than answering from its own session
  await new Promise((wait) => setTimeout(wait, (staleAfterSeconds + 1) * 1000)); // the sign-in is no longer recent
  await form.getByRole('button', { name: 'Delete account' }).click();
  const confirm = form.getByRole('group', { name: 'Confirm it’s you' });
  const withProvider = confirm.getByRole('button', { name: `Continue with ${demo}` });
  await withProvider.waitFor();
  assert.equal(await confirm.getByLabel('Your password').count(), 0, 'an account without a password is not asked for one');
  await withProvider.click();
  await page.waitForURL((address) => address.origin !== server!.url);
  await completeProviderPage(page, email);
  await expectSignedOut(page);
  await page.getByRole('status').filter({ hasText: 'Your account was deleted.' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/');
  assert.equal(await lookupUser(uid), undefined, 'the account is gone');

  await visitor.context.clearCookies();
  await signInByRedirect();
  assert.notEqual(await uidOnAccountPage(page), uid, 'signing in again makes a new account');
  await visitor.context.close();
});

test('closing the popup before finishing says so', { timeout: 60_000 }, async () => {
  const visitor = await newVisitor();
  const { page } = visitor;
  await page.goto(url('/signin'));
  const popupOpened = visitor.context.waitForEvent('page');
  await signInButton(page).click();
  const popup = await popupOpened;
  await popup.getByLabel('Email').waitFor();
  await popup.close();
  assert.equal(await alertText(providerButtons(page), popupClosedWaitMs), 'The sign-in window was closed before finishing.');
  assert.equal(visitor.idpCalls(), 0);
  await expectNotSignedIn(page);
  await visitor.context.close();
});

test('a provider switched off is refused with a plain sentence', stepTimeout, async () => {
  const visitor = await newVisitor();
  const { page } = visitor;
  await page.goto(url('/signin'));
  await signInButton(page).waitFor();
  await setProviderEnabled(false);
  try {
    const popupOpened = visitor.context.waitForEvent('page');
    await signInButton(page).click();
    const popup = await popupOpened;
    assert.equal(await alertText(providerButtons(page)), 'Signing in this way is turned off for this site.');
    if (!popup.isClosed()) await popup.waitForEvent('close');
    assert.equal(visitor.idpCalls(), 0);
  } finally {
    await setProviderEnabled(true);
  }
  await expectNotSignedIn(page);
  await visitor.context.close();
});

test('an app on an unauthorized domain is refused', stepTimeout, async () => {
  const visitor = await newVisitor();
  const { page } = visitor;
  const localhost = server!.url.replace('127.0.0.1', 'localhost');
  await patchProjectConfig(server!, { authorizedDomains: ['127.0.0.1'] }, 'authorizedDomains');
  try {
    await page.goto(url('/signin', localhost));
    const popupOpened = visitor.context.waitForEvent('page');
    await signInButton(page).click();
    const popup = await popupOpened;
    assert.equal(
      await alertText(providerButtons(page)),
      'This site’s address is not allowed to sign in with a provider. Open the site at its usual address, or ask its administrator to authorize this one.',
    );
    if (!popup.isClosed()) await popup.waitForEvent('close');
    assert.equal(visitor.idpCalls(), 0);
  } finally {
    await patchProjectConfig(server!, { authorizedDomains: ['localhost', '127.0.0.1'] }, 'authorizedDomains');
  }
  await visitor.context.close();
});

type Recorded = { __authEvents: { urlResponse?: string | null }[]; __eventReplies: { status?: string }[] };

test('the same auth event delivered twice is used once', stepTimeout, async () => {
  const visitor = await newVisitor();
  const { page } = visitor;
  // In every frame before its own scripts: the app window keeps the auth events the Hearth iframe
  // hands the SDK; the iframe keeps the SDK's answers (ACK: used, ERROR: not used).
  await page.addInitScript(() => {
    const record = window as unknown as { __authEvents: unknown[]; __eventReplies: unknown[] };
    record.__authEvents = [];
    record.__eventReplies = [];
    window.addEventListener('message', (event: MessageEvent) => {
      const data = event.data as { __hearthGapi?: number; kind?: string; payload?: { authEvent?: unknown }; result?: unknown } | null;
      if (data?.__hearthGapi !== 1) return;
      if (data.kind === 'event' && data.payload?.authEvent) record.__authEvents.push(data.payload.authEvent);
      if (data.kind === 'eventReply') record.__eventReplies.push(data.result);
    });
  });
  const email = uniqueEmail('replay');
  await page.goto(url('/signin'));
  await throughPopup(visitor, signInButton(page), email);
  await expectSignedIn(page, email);
  const uid = await uidOnAccountPage(page);
  assert.equal(visitor.idpCalls(), 1);

  // Hand the same event to the SDK again, exactly as the handler page does: a window of Hearth's
  // origin (here the app itself) posts {__hearthAuthEvent} to the Hearth iframe, which passes it on.
  const replies = await page.evaluate(async () => {
    const { __authEvents: events } = window as unknown as Recorded;
    const event = events.find((e) => e.urlResponse);
    if (!event) throw new Error(`no auth event with an answer was seen: ${JSON.stringify(events)}`);
    const frame = document.querySelector<HTMLIFrameElement>('iframe[src*="/auth/iframe"]');
    if (!frame?.contentWindow) throw new Error('no Hearth iframe on the page');
    const { __eventReplies: seen } = frame.contentWindow as unknown as Recorded;
    const before = seen.map((reply) => reply.status);
    frame.contentWindow.postMessage({ __hearthAuthEvent: event }, window.location.origin);
    for (const deadline = Date.now() + 5_000; seen.length === before.length && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    return { before, replay: seen.slice(before.length).map((reply) => reply.status) };
  });
  assert.equal(replies.before.at(-1), 'ACK', 'the SDK used the event the first time');
  assert.deepEqual(replies.replay, ['ERROR'], 'the SDK refuses the same event the second time');
  await page.waitForTimeout(1_000);
  assert.equal(visitor.idpCalls(), 1, 'no second signInWithIdp');
  assert.equal((await page.getByTestId('account-uid').innerText()).trim(), uid);
  assert.equal(await page.getByTestId('account-email').innerText(), email);
  await visitor.context.close();
});

test('nothing any page requested left the machine, and no page threw', () => {
  assert.ok(requested.length > 0, 'no requests were recorded');
  assert.deepEqual(requestsOffMachine(requested), []);
  assert.ok(requested.some((address) => new URL(address).port !== new URL(server!.url).port), 'the demo provider was visited');
  assert.deepEqual(pageErrors, []);
});

// Chromium applies form-action to the redirects after a form post: the provider's page must allow
// the way back to Hearth's handler, or sign-in never finishes (the Node tests cannot see this).
test("the demo provider's sign-in page lets its form return to Hearth", () => {
  assert.ok(formActionAllows(providerPolicy, server!.url), `the provider's page says "${providerPolicy}": its form cannot redirect back to ${server!.url}`);
});
