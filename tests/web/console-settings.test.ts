/**
 * The console's sign-in settings and outbox in a real Chromium: switching a sign-in method and
 * adding an authorized domain change the project's config; the identity provider list offers a
 * test sign-in that runs the real popup flow against Hearth's demo OpenID provider; a password
 * reset sent from a user's page shows in the outbox.
 *
 * Needs the built web app (`npm run build`) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { keepScreenshot, signInWithAdminKey } from '../helpers/console-page.js';
import { freePort, startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot, demoIdpPort: await freePort() });
  browser = await launchChromium();
  context = await record.newContext(browser, waitMs);
  page = await record.newPage(context);
  await signInWithAdminKey(page, server.url, server.adminKey);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function projectConfig(): Promise<any> {
  const response = await fetch(`${server!.url}/identitytoolkit.googleapis.com/v2/projects/${server!.projectId}/config`, { headers: { authorization: `Bearer ${server!.adminKey}` } });
  assert.equal(response.status, 200);
  return response.json();
}

test('the console’s home says where mail and texts go', stepTimeout, async () => {
  await page.getByRole('link', { name: 'Hearth console' }).click();
  await page.getByTestId('mail-delivery').filter({ hasText: 'No SMTP server: mails (verifications, password resets, sign-in links) are not sent.' }).waitFor();
  await page.getByTestId('sms-delivery').filter({ hasText: 'Text messages are not sent: their codes are kept in the Outbox.' }).waitFor();
  await keepScreenshot(page, 'where-mail-goes');
  await page.getByTestId('mail-delivery').getByRole('link', { name: 'Outbox' }).click();
  await page.getByRole('heading', { name: 'Outbox' }).waitFor();
});

test('email and password and email link are shown as they are, and each box changes only its own switch', stepTimeout, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Sign-in' }).click();
  const password = page.getByRole('switch', { name: 'Email and password' });
  const link = page.getByRole('switch', { name: 'Email link (passwordless)' });
  const email = async () => (await projectConfig()).signIn.email as { enabled: boolean; passwordRequired: boolean };
  // A fresh project: both on (Identity Platform: the email provider enabled, passwordRequired false).
  assert.deepEqual(await email(), { enabled: true, passwordRequired: false });
  assert.equal(await password.isChecked(), true);
  assert.equal(await link.isChecked(), true);

  await link.click();
  await page.getByRole('status').filter({ hasText: 'Email link disabled.' }).waitFor();
  assert.deepEqual(await email(), { enabled: true, passwordRequired: true });
  assert.equal(await password.isChecked(), true, 'turning email links off leaves password sign-in on');
  assert.equal(await link.isChecked(), false);
  await link.click();
  await page.getByRole('status').filter({ hasText: 'Email link enabled.' }).waitFor();
  assert.deepEqual(await email(), { enabled: true, passwordRequired: false });
  assert.equal(await password.isChecked(), true, 'turning email links on leaves password sign-in on');

  // Off, the email provider takes email links with it, and the page says so rather than hiding it.
  await password.click();
  await page.getByRole('status').filter({ hasText: 'Email and password disabled.' }).waitFor();
  assert.equal((await email()).enabled, false);
  assert.equal(await link.isDisabled(), true);
  await page.getByText('turn on “Email and password” first').waitFor();
  await keepScreenshot(page, 'sign-in-methods-email-off');
  await password.click();
  await page.getByRole('status').filter({ hasText: 'Email and password enabled.' }).waitFor();
  assert.deepEqual(await email(), { enabled: true, passwordRequired: false });
  assert.equal(await link.isChecked(), true, 'email links come back as they were');
  await keepScreenshot(page, 'sign-in-methods');
});

test('switching anonymous sign-in and adding an authorized domain change the project’s config', stepTimeout, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Sign-in' }).click();
  const anonymous = page.getByRole('switch', { name: 'Anonymous' });
  const wasOn = await anonymous.isChecked();
  assert.equal((await projectConfig()).signIn.anonymous.enabled, wasOn);
  await anonymous.click();
  await page.getByRole('status').filter({ hasText: `Anonymous sign-in ${wasOn ? 'disabled' : 'enabled'}.` }).waitFor();
  assert.equal((await projectConfig()).signIn.anonymous.enabled, !wasOn);

  await page.getByLabel('New authorized domain').fill('app.example.test');
  await page.getByRole('button', { name: 'Add', exact: true }).first().click();
  await page.getByRole('button', { name: 'Remove app.example.test' }).waitFor();
  assert.ok((await projectConfig()).authorizedDomains.includes('app.example.test'));
  await keepScreenshot(page, 'sign-in-settings');
});

test('a provider’s test sign-in runs the popup flow and names who signed in', stepTimeout, async () => {
  const providers = page.getByTestId('identity-providers');
  const demo = providers.getByRole('listitem').filter({ hasText: 'oidc.demo' });
  await demo.waitFor();
  const popupOpened = context.waitForEvent('page');
  await demo.getByRole('button', { name: 'Test sign-in' }).click();
  const popup = await popupOpened;
  const email = uniqueEmail('idp-test');
  await popup.getByLabel('Email').fill(email);
  await popup.getByRole('button', { name: 'Continue' }).click();
  await demo.getByTestId('test-sign-in-outcome').filter({ hasText: `Test sign-in worked: ${email}.` }).waitFor();
  await keepScreenshot(page, 'provider-test-sign-in');
});

test('a password reset sent from a user’s page shows in the outbox', stepTimeout, async () => {
  const email = uniqueEmail('reset');
  const created = await adminPost(server!, '/accounts', { email, password: 'correct horse 1' });
  assert.equal(created.status, 200);
  await page.goto(`${server!.url}/console/users/${created.body.localId}`);
  await page.getByRole('button', { name: 'Send password reset' }).click();
  await page.getByRole('status').filter({ hasText: `Password reset mail sent to ${email}.` }).waitFor();
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Outbox' }).click();
  const mail = page.getByTestId('outbox-mail').getByRole('listitem').filter({ hasText: email });
  await mail.waitFor();
  assert.match(await mail.innerText(), /PASSWORD_RESET/);
  await mail.getByRole('button').click();
  await mail.locator('iframe').waitFor();
  await keepScreenshot(page, 'outbox');
});

test('the mail templates preview shows each action mail with the project’s sender, in the chosen language', stepTimeout, async () => {
  await page.goto(`${server!.url}/console/settings`);
  const templates = page.getByTestId('mail-templates');
  const sender = (await projectConfig()).mail.from;
  await templates.getByTestId('mail-sender').filter({ hasText: sender }).waitFor();
  const reset = templates.getByRole('listitem').filter({ hasText: 'Password reset' });
  await reset.getByRole('button').click();
  const frame = reset.frameLocator('iframe');
  await frame.getByText('Reset password').first().waitFor();
  assert.equal(await reset.locator('iframe').getAttribute('sandbox'), '');
  await page.getByLabel('Mail language').selectOption('fr');
  await templates.getByRole('listitem').filter({ hasText: 'Réinitialisez' }).waitFor();
  await keepScreenshot(page, 'mail-templates');
});

test('nothing left the machine and no page threw', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
