/**
 * A guest in a real Chromium: "Continue as a guest" on the home page, notes written as the guest,
 * then an upgrade to email and password on the account page (linkWithCredential) that keeps the
 * uid and the notes, which the same email and password then open from a fresh browser. Runs
 * outside --dev, under the rules the app ships.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { defaultShippedRulesFile } from '../../packages/server/src/config.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { waitForNotes } from '../helpers/notes-page.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 90_000 };
const artifacts = join(repoRoot, '.tmp/artifacts/web');

let server: TestHearth | undefined;
let browser: Browser | undefined;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  mkdirSync(artifacts, { recursive: true });
  server = await startHearth({ webRoot, dev: false, shippedRulesFile: defaultShippedRulesFile });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('a guest keeps its uid and notes when it becomes an email-and-password account', stepTimeout, async () => {
  const url = (path: string) => `${server!.url}${path}`;
  const context = await record.newContext(browser!, waitMs);
  const page = await record.newPage(context);
  await page.goto(url('/'));
  await page.getByRole('button', { name: 'Continue as a guest' }).click();
  await page.getByTestId('signed-in-email').filter({ hasText: 'a guest' }).waitFor();
  await page.getByTestId('guest-nudge').waitFor();
  await page.screenshot({ path: join(artifacts, 'guest-home.png'), fullPage: true });

  await page.getByRole('banner').getByRole('link', { name: 'Notes' }).click();
  await page.getByLabel('New note').fill('written as a guest');
  await page.getByRole('button', { name: 'Add note' }).click();
  await page.locator('[data-testid="note"][data-pending="false"]').waitFor();

  await page.getByRole('banner').getByRole('link', { name: 'Account' }).click();
  const guestUid = (await page.getByTestId('account-uid').innerText()).trim();
  const email = uniqueEmail('upgraded');
  const card = page.getByRole('region', { name: 'Password' });
  await card.getByText('You are using a guest account.').waitFor();
  await card.getByLabel('Email', { exact: true }).fill(email);
  await card.getByLabel('New password', { exact: true }).fill('upgraded 123');
  await card.getByRole('button', { name: 'Set password' }).click();
  await page.getByRole('region', { name: 'Password' }).getByRole('status').filter({ hasText: 'Your password was set.' }).waitFor();
  await page.getByTestId('account-email').filter({ hasText: email }).waitFor();
  assert.equal((await page.getByTestId('account-uid').innerText()).trim(), guestUid, 'the same account');
  await page.screenshot({ path: join(artifacts, 'guest-upgraded.png'), fullPage: true });
  await context.close();

  // Another browser: the email and password open the same account and its notes.
  const elsewhere = await record.newContext(browser!, waitMs);
  const other = await record.newPage(elsewhere);
  await other.goto(url('/signin'));
  await other.getByLabel('Email', { exact: true }).fill(email);
  await other.getByLabel('Password', { exact: true }).fill('upgraded 123');
  await other.getByRole('button', { name: 'Sign in', exact: true }).click();
  await other.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
  await other.goto(url('/account'));
  assert.equal((await other.getByTestId('account-uid').innerText()).trim(), guestUid);
  await other.goto(url('/notes'));
  await waitForNotes(other, ['written as a guest'], waitMs);
  await elsewhere.close();
});

test('nothing the pages requested left the machine, and they threw nothing', () => {
  assert.deepEqual(record.pageErrors, []);
  assert.deepEqual(requestsOffMachine(record.requested), []);
});
