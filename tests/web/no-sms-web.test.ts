/**
 * Options that cannot work are not offered: a production server without an SMS provider (nothing
 * sends texts) does not offer "Sign in with a phone number" nor "Add a phone number" as a second
 * step, even with phone sign-in switched on for the project; the phone page, opened directly, says
 * why. With texts (--dev's outbox) both are offered. Screenshots in .tmp/artifacts/web/.
 *
 * Needs the built web app (the root `npm test` builds it) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminPost, patchProjectConfig, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 90_000 };
const artifacts = join(repoRoot, '.tmp/artifacts/web');
const servers: TestHearth[] = [];
let browser: Browser | undefined;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  mkdirSync(artifacts, { recursive: true });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  for (const server of servers) await server.close();
});

async function signedInOnAccountPage(server: TestHearth): Promise<Page> {
  const email = uniqueEmail('no-sms');
  const created = await adminPost(server, '/accounts', { email, password: 'correct horse 1', emailVerified: true });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const page = await record.newPage(await record.newContext(browser!, waitMs));
  await page.goto(`${server.url}/signin`);
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill('correct horse 1');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
  await page.goto(`${server.url}/account`);
  await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
  return page;
}

test('without an SMS provider, no phone sign-in and no phone second step are offered, and the phone page says why', stepTimeout, async () => {
  const server = await startHearth({ webRoot, dev: false });
  servers.push(server);
  assert.equal(server.hearth.smsDelivery, 'none');
  // Switched on for the project all the same: the texts still cannot be sent.
  await patchProjectConfig(server, { signIn: { phoneNumber: { enabled: true } } }, 'signIn.phoneNumber.enabled');
  const page = await signedInOnAccountPage(server);
  await page.getByRole('button', { name: 'Add an authenticator app' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Add a phone number' }).count(), 0);
  await page.getByTestId('no-text-messages').filter({ hasText: 'cannot send text messages' }).waitFor();
  await page.screenshot({ path: join(artifacts, 'no-sms-two-step.png'), fullPage: true });

  await page.getByRole('button', { name: 'Sign out' }).first().click();
  await page.goto(`${server.url}/signin`);
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  assert.equal(await page.getByRole('link', { name: 'Sign in with a phone number' }).count(), 0);
  await page.screenshot({ path: join(artifacts, 'no-sms-sign-in.png'), fullPage: true });
  await page.goto(`${server.url}/signin/phone`);
  await page.getByTestId('no-phone-sign-in').filter({ hasText: 'no SMS provider is set up' }).waitFor();
  assert.equal(await page.getByLabel('Phone number', { exact: false }).count(), 0, 'no form that cannot work');
});

test('with texts (--dev keeps them in the outbox), both are offered', stepTimeout, async () => {
  const server = await startHearth({ webRoot, dev: true });
  servers.push(server);
  const page = await signedInOnAccountPage(server);
  await page.getByRole('button', { name: 'Add a phone number' }).waitFor();
  assert.equal(await page.getByTestId('no-text-messages').count(), 0);
  await page.getByRole('button', { name: 'Sign out' }).first().click();
  await page.goto(`${server.url}/signin`);
  await page.getByRole('link', { name: 'Sign in with a phone number' }).waitFor();
});

test('no page error, and every request stayed on the machine', () => {
  assert.deepEqual(record.pageErrors, []);
  assert.deepEqual(requestsOffMachine(record.requested), []);
});
