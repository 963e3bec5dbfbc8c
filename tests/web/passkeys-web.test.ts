/**
 * Passkeys in the web app, in Chromium with its virtual authenticator: add one in account
 * settings, sign out, sign in with it (no email typed), remove it, and see the next sign-in with it
 * refused.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { signInWithAdminKey } from '../helpers/console-page.js';
import { VirtualAuthenticator } from '../helpers/virtual-authenticator.js';

const waitMs = 15_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let page: Page;
let authenticator: VirtualAuthenticator;
const record = new BrowserRecord();
const email = uniqueEmail('web-passkey');
const password = 'correct horse 1';

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot });
  const created = await adminPost(server, '/accounts', { email, password, emailVerified: true });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  browser = await launchChromium();
  const context = await record.newContext(browser, waitMs);
  page = await record.newPage(context);
  authenticator = await VirtualAuthenticator.attach(context, page);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

// WebAuthn needs a host that can be a relying party id: localhost, not 127.0.0.1.
const url = (path: string) => `${server!.url.replace('127.0.0.1', 'localhost')}${path}`;
const signedIn = () => page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();

async function signOut(): Promise<void> {
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are not signed in.').waitFor();
}

test('a passkey added in account settings signs in without an email', stepTimeout, async () => {
  await page.goto(url('/signin'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await signedIn();
  await page.goto(url('/account'));
  await page.getByText('No passkeys yet.').waitFor();
  await page.getByLabel('Passkey name').fill('Test laptop');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByTestId('passkey').filter({ hasText: 'Test laptop' }).waitFor();
  assert.equal((await authenticator.credentials()).length, 1, 'the authenticator holds the new passkey');

  await signOut();
  await page.goto(url('/signin'));
  const finalize = page.waitForResponse((r) => r.url().includes('passkeySignIn:finalize'));
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  assert.equal((await finalize).status(), 200);
  await signedIn();
  // The session is the SDK's own now: it survives a reload and reaches the account page.
  await page.goto(url('/account'));
  await page.getByTestId('passkey').filter({ hasText: 'Test laptop' }).waitFor();
});

test('a removed passkey no longer signs in', stepTimeout, async () => {
  await page.getByRole('button', { name: 'Remove passkey Test laptop' }).click();
  await page.getByText('No passkeys yet.').waitFor();
  await signOut();
  await page.goto(url('/signin'));
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await page.getByRole('alert').filter({ hasText: 'not registered for any account' }).waitFor();
  await page.getByText('You are not signed in.').or(page.getByRole('button', { name: 'Sign in', exact: true })).first().waitFor();
});

test('the console lists a passkey on the user page, and an operator removes it', stepTimeout, async () => {
  await page.goto(url('/signin'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await signedIn();
  await page.goto(url('/account'));
  await page.getByLabel('Passkey name').fill('Phone key');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByTestId('passkey').filter({ hasText: 'Phone key' }).waitFor();
  const uid = (await page.getByTestId('account-uid').innerText()).trim();

  const operator = await record.newPage(page.context());
  await signInWithAdminKey(operator, server!.url, server!.adminKey);
  await operator.goto(`${server!.url}/console/users/${uid}`);
  await operator.getByTestId('console-passkey').filter({ hasText: 'Phone key' }).waitFor();
  await operator.getByRole('button', { name: 'Remove passkey Phone key' }).click();
  await operator.getByRole('status').filter({ hasText: 'Passkey removed' }).waitFor();
  await operator.getByText('None.').first().waitFor();
  await operator.close();

  await signOut();
  await page.goto(url('/signin'));
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await page.getByRole('alert').filter({ hasText: 'not registered for any account' }).waitFor();
});

test('nothing left the machine and the pages raised no errors', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
