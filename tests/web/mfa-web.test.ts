/**
 * A TOTP second factor through the web app in Chromium, against Hearth's multi-factor endpoints:
 * turn on an authenticator app in account settings (the key the page shows, a code made from it
 * as the app would), sign out, sign in again through the two-step page (a wrong code first), and
 * remove the factor. Nothing the page loads may leave the machine.
 *
 * Needs `npm run build -w packages/web` first and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { TotpDevice, wrongCode } from '../helpers/totp-device.js';

const waitMs = 15_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let page: Page;
let device: TotpDevice;
const record = new BrowserRecord();
const email = uniqueEmail('web-mfa');
const password = 'correct horse 1';

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot });
  const created = await adminPost(server, '/accounts', { email, password, emailVerified: true });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  browser = await launchChromium();
  page = await record.newPage(await record.newContext(browser, waitMs));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const artifacts = join(repoRoot, '.tmp/artifacts/web');
const url = (path: string) => `${server!.url}${path}`;

async function signIn(): Promise<void> {
  await page.goto(url('/signin'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('On this device', { exact: true }).check();
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

const signedIn = () => page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();

test('account settings turn on an authenticator app with the key the page shows', stepTimeout, async () => {
  await signIn();
  await signedIn();
  await page.goto(url('/account'));
  await page.getByRole('button', { name: 'Add an authenticator app' }).click();
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  const secret = (await page.getByTestId('totp-secret').innerText()).trim();
  assert.match(secret, /^[A-Z2-7]{32}$/);
  await page.getByRole('img', { name: /QR code/ }).waitFor();
  device = new TotpDevice(secret);
  await page.getByLabel('Code from the app').fill(device.next());
  await page.getByLabel('Name for it').fill('Laptop app');
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByTestId('second-factor-totp').filter({ hasText: 'Laptop app' }).waitFor();
});

test('signing in again asks for a code: a wrong one is refused, the right one signs in', stepTimeout, async () => {
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are not signed in.').waitFor();
  const first = page.waitForResponse((r) => r.url().includes('accounts:signInWithPassword'));
  await signIn();
  const answer = (await (await first).json()) as { mfaPendingCredential?: string; idToken?: string };
  assert.ok(answer.mfaPendingCredential, 'the password step answers a pending credential');
  assert.equal(answer.idToken, undefined);
  await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();

  const refused = page.waitForResponse((r) => r.url().includes('mfaSignIn:finalize'));
  await page.getByLabel('Code from the app').fill(wrongCode(device));
  await page.getByRole('button', { name: 'Verify' }).click();
  assert.equal((await refused).status(), 400);
  await page.getByRole('alert').waitFor();
  // No message was sent: the sentence speaks of the app's code.
  assert.equal((await page.getByRole('alert').innerText()).trim(), 'That code is not right. Enter the 6-digit code your authenticator app shows now; it changes every 30 seconds.');

  await page.getByLabel('Code from the app').fill(device.next());
  await page.getByRole('button', { name: 'Verify' }).click();
  await signedIn();
});

test('removing the factor turns two-step verification off', stepTimeout, async () => {
  await page.goto(url('/account'));
  await page.getByRole('button', { name: 'Remove Authenticator app (Laptop app)' }).click();
  await page.getByText('Off. Add a second step').waitFor();
  const lookup = await adminPost(server!, '/accounts:lookup', { email: [email] });
  assert.equal(lookup.body.users[0].mfaInfo, undefined);
});

test('an authenticator added under its default name is named once, and the code field looks like the others', stepTimeout, async () => {
  await page.getByRole('button', { name: 'Add an authenticator app' }).click();
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  const again = new TotpDevice((await page.getByTestId('totp-secret').innerText()).trim());
  const codeField = page.getByLabel('Code from the app');
  const nameField = page.getByLabel('Name for it');
  const style = (field: typeof codeField) => field.evaluate((element) => { const css = getComputedStyle(element); return `${css.borderRadius} ${css.paddingLeft} ${css.borderTopStyle}`; });
  assert.equal(await style(codeField), await style(nameField), 'the code input is styled as the text inputs are');
  await codeField.fill(again.next());
  await page.getByRole('button', { name: 'Turn on' }).click();
  const factor = page.getByTestId('second-factor-totp');
  await factor.waitFor();
  assert.match((await factor.innerText()).trim(), /^Authenticator app · added /);
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, 'two-step-default-name.png'), fullPage: true });
  await page.getByRole('button', { name: 'Remove Authenticator app', exact: true }).click();
  await page.getByText('Off. Add a second step').waitFor();
});

test('nothing the page requested left the machine, and the page threw nothing', () => {
  assert.ok(record.requested.some((address) => address.includes('mfaEnrollment:finalize')), 'the enrolment went through Hearth');
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
