/**
 * The web app says what happened and what to do next, in a real Chromium: an unverified user is
 * nudged on the home page and can send the link from there; a verification link opened twice
 * says the address is already verified; confirming an email change in the same browser says why
 * it signed the user out; after deleting the account the home page says so.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { uniqueEmail } from './helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from './helpers/browser.js';
import { startHearth, type TestHearth } from './helpers/hearth.js';
import { waitForMail } from './helpers/outbox.js';

const waitMs = 15_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
const record = new BrowserRecord();
const email = uniqueEmail('states');
const newEmail = uniqueEmail('states-new');

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

const url = (path: string) => `${server!.url}${path}`;

test('an unverified user is nudged on the home page and sends the link from there', stepTimeout, async () => {
  await page.goto(url('/signup'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill('states pass 1');
  await page.getByRole('button', { name: 'Create account' }).click();
  const nudge = page.getByTestId('verify-nudge');
  await nudge.getByText(`Please verify ${email}`).waitFor();
  await nudge.getByRole('button', { name: 'Send the verification link' }).click();
  await nudge.getByRole('status').filter({ hasText: `We sent a verification link to ${email}.` }).waitFor();
});

test('the verification link verifies; opened again it says the address is already verified', stepTimeout, async () => {
  const mail = await waitForMail(server!, email, 'VERIFY_EMAIL');
  await page.goto(mail.oobLink);
  await page.getByRole('status').filter({ hasText: 'Your email has been verified.' }).waitFor();
  await page.goto(mail.oobLink);
  await page.getByRole('status').filter({ hasText: 'Your email address is already verified.' }).waitFor();
  assert.equal(await page.getByRole('alert').count(), 0, 'not an error for a verified account');
  await page.goto(url('/'));
  await page.getByTestId('signed-in-email').waitFor();
  assert.equal(await page.getByTestId('verify-nudge').count(), 0, 'no nudge once verified');
});

test('confirming an email change in the same browser says why it signed the user out', stepTimeout, async () => {
  await page.goto(url('/account'));
  const card = page.getByRole('region', { name: 'Change email' });
  await card.getByLabel('New email').fill(newEmail);
  await card.getByRole('button', { name: 'Send confirmation link' }).click();
  await card.getByRole('status').filter({ hasText: `Until you open it, you keep signing in with ${email}` }).waitFor();
  const mail = await waitForMail(server!, newEmail, 'VERIFY_AND_CHANGE_EMAIL');
  await page.goto(mail.oobLink);
  await page.getByRole('status').filter({ hasText: `Your sign-in email is now ${newEmail}.` }).waitFor();
  await page.getByText('changing the address signed you out everywhere, in this browser too').waitFor();
  await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();
});

test('nothing the page requested left the machine, and the page threw nothing', () => {
  assert.deepEqual(record.pageErrors, []);
  assert.deepEqual(requestsOffMachine(record.requested), []);
});
