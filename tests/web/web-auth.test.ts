/**
 * The web app end to end: a real Chromium drives packages/web/dist, served by an in-process
 * Hearth, through sign-up, sign-out, a wrong password, the three "remember me" choices and the
 * account page. Nothing the page loads may leave the machine.
 *
 * Needs `npm run build -w packages/web` first (the root `npm test` does it) and /usr/bin/chromium
 * (`apt-get install -y chromium`).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

/** Bound for any single wait on the page. */
const waitMs = 15_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
const record = new BrowserRecord();

const email = uniqueEmail('web');
const password = 'correct horse 1';
const newPassword = 'battery staple 2';

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot });
  browser = await launchChromium();
  context = await record.newContext(browser, waitMs);
  page = await record.newPage(context);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

function url(path: string): string {
  return `${server!.url}${path}`;
}

async function expectSignedIn(as: string): Promise<void> {
  await page.getByTestId('signed-in-email').filter({ hasText: as }).waitFor();
}

async function expectSignedOut(): Promise<void> {
  await page.getByText('You are not signed in.').waitFor();
}

async function alertText(scope: Page | Locator = page): Promise<string> {
  const alert = scope.getByRole('alert');
  await alert.waitFor();
  return (await alert.innerText()).trim();
}

type Remember = 'On this device' | 'Until I close the browser' | "Don't remember me";

async function signIn(withPassword: string, remember: Remember): Promise<void> {
  await page.goto(url('/signin'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(withPassword);
  await page.getByLabel(remember, { exact: true }).check();
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function signOutFromHeader(): Promise<void> {
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await expectSignedOut();
}

test('sign up a new user and see it signed in', stepTimeout, async () => {
  await page.goto(url('/signup'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Display name', { exact: true }).fill('Ada');
  await page.getByRole('button', { name: 'Create account' }).click();
  await expectSignedIn(email);
  await page.getByRole('heading', { name: 'Welcome, Ada' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/');
});

test('sign out from the header', stepTimeout, async () => {
  await signOutFromHeader();
  await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();
});

test('a wrong password shows a plain sentence', stepTimeout, async () => {
  const response = page.waitForResponse((r) => r.url().includes('accounts:signInWithPassword'));
  await signIn('not the password', 'On this device');
  const answered = await response;
  assert.equal(answered.status(), 400);
  assert.equal(((await answered.json()) as { error: { message: string } }).error.message, 'INVALID_LOGIN_CREDENTIALS');
  assert.equal(await alertText(), 'Wrong email or password.');
  assert.equal(new URL(page.url()).pathname, '/signin');
});

test('"Don\'t remember me" forgets the user on reload', stepTimeout, async () => {
  await signIn(password, "Don't remember me");
  await expectSignedIn(email);
  await page.reload();
  await expectSignedOut();
});

test('"Until I close the browser" keeps the user in this tab only', stepTimeout, async () => {
  await signIn(password, 'Until I close the browser');
  await expectSignedIn(email);
  await page.reload();
  await expectSignedIn(email);
  const otherTab = await record.newPage(context);
  try {
    await otherTab.goto(url('/'));
    await otherTab.getByText('You are not signed in.').waitFor();
  } finally {
    await otherTab.close();
  }
  await signOutFromHeader();
});

test('"On this device" keeps the user across a reload', stepTimeout, async () => {
  await signIn(password, 'On this device');
  await expectSignedIn(email);
  await page.reload();
  await expectSignedIn(email);
});

test('the account page changes the display name, and it survives a reload', stepTimeout, async () => {
  await page.goto(url('/account'));
  await page.getByTestId('account-email').filter({ hasText: email }).waitFor();
  assert.match(await page.getByTestId('account-uid').innerText(), /\S{6,}/);
  const nameForm = page.getByRole('region', { name: 'Display name' });
  await nameForm.getByLabel('Display name', { exact: true }).fill('Ada Lovelace');
  await nameForm.getByRole('button', { name: 'Save name' }).click();
  await nameForm.getByRole('status').filter({ hasText: 'Your name was saved.' }).waitFor();
  await page.getByTestId('account-name').filter({ hasText: 'Ada Lovelace' }).waitFor();
  await page.reload();
  await page.getByTestId('account-name').filter({ hasText: 'Ada Lovelace' }).waitFor();
  assert.equal(await page.getByRole('region', { name: 'Display name' }).getByLabel('Display name', { exact: true }).inputValue(), 'Ada Lovelace');
});

test('the account page changes the password after re-entering the current one', stepTimeout, async () => {
  const form = page.getByRole('region', { name: 'Password' });
  await form.getByLabel('Current password', { exact: true }).fill('not the password');
  await form.getByLabel('New password', { exact: true }).fill(newPassword);
  await form.getByRole('button', { name: 'Change password' }).click();
  assert.equal(await alertText(form), 'Wrong email or password.');

  await form.getByLabel('Current password', { exact: true }).fill(password);
  await form.getByLabel('New password', { exact: true }).fill(newPassword);
  await form.getByRole('button', { name: 'Change password' }).click();
  await form.getByRole('status').filter({ hasText: 'Your password was changed.' }).waitFor();

  await signOutFromHeader();
  await signIn(password, 'On this device');
  assert.equal(await alertText(), 'Wrong email or password.');
  await signIn(newPassword, 'On this device');
  await expectSignedIn(email);
});

test('the account page deletes the account', stepTimeout, async () => {
  await page.goto(url('/account'));
  const form = page.getByRole('region', { name: 'Delete account' });
  const button = form.getByRole('button', { name: 'Delete account' });
  assert.equal(await button.isDisabled(), true, 'deleting needs the confirmation box ticked');
  await form.getByLabel('I understand my account will be deleted').check();
  // Signed in moments ago: no need to confirm it is them again.
  await button.click();
  await expectSignedOut();
  await page.getByRole('status').filter({ hasText: 'Your account was deleted.' }).waitFor();
  await signIn(newPassword, 'On this device');
  assert.equal(await alertText(), 'Wrong email or password.');
});

test('the account page sends a signed-out visitor to sign in', stepTimeout, async () => {
  await page.goto(url('/account'));
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/signin');
});

test('nothing the page requested left the machine, and the page threw nothing', () => {
  assert.ok(record.requested.length > 0, 'no requests were recorded');
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
