/**
 * Recovery codes through the web app in Chromium (issue 35 item 9): turn on an authenticator app,
 * make recovery codes in account settings (ten, shown once, downloadable), sign out, sign in with
 * the password, choose "Use a recovery code" on the second-factor page (a wrong code first), sign
 * in with one; the account page then counts nine left, a used code is refused on the next sign-in,
 * and the operator console's user page shows the count (never the codes). Screenshots under
 * .tmp/artifacts/web/. Nothing the page loads may leave the machine.
 *
 * Needs `npm run build -w packages/web` first and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { keepScreenshot, signInWithAdminKey } from '../helpers/console-page.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { TotpDevice } from '../helpers/totp-device.js';

const waitMs = 15_000;
const stepTimeout = { timeout: 60_000 };
const recentLoginSeconds = 20;
let lastSignIn = 0;

let server: TestHearth | undefined;
let browser: Browser | undefined;
let page: Page;
let codes: string[] = [];
let uid = '';
const record = new BrowserRecord();
const email = uniqueEmail('web-recovery');
const password = 'correct horse 1';

before(async () => {
  assertBrowserReady();
  // A short recent-sign-in window, so the last test can find its sign-in stale.
  server = await startHearth({ webRoot, recentLoginSeconds: recentLoginSeconds });
  const created = await adminPost(server, '/accounts', { email, password, emailVerified: true });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  uid = created.body.localId;
  browser = await launchChromium();
  page = await record.newPage(await record.newContext(browser, waitMs));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const artifacts = join(repoRoot, '.tmp/artifacts/web');
const url = (path: string) => `${server!.url}${path}`;
async function screenshot(name: string): Promise<void> {
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

async function signIn(): Promise<void> {
  await page.goto(url('/signin'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('On this device', { exact: true }).check();
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function signOut(): Promise<void> {
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are not signed in.').waitFor();
}

async function signedIn(): Promise<void> {
  await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
  lastSignIn = Date.now();
}

test('with an authenticator app on, account settings make ten recovery codes, shown once, with a download', stepTimeout, async () => {
  await signIn();
  await signedIn();
  await page.goto(url('/account'));
  // No second factor yet: no recovery codes offered.
  await page.getByText('Off. Add a second step').waitFor();
  assert.equal(await page.getByTestId('recovery-codes').count(), 0);
  await page.getByRole('button', { name: 'Add an authenticator app' }).click();
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  const device = new TotpDevice((await page.getByTestId('totp-secret').innerText()).trim());
  await page.getByLabel('Code from the app').fill(device.next());
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByTestId('second-factor-totp').waitFor();

  const section = page.getByTestId('recovery-codes');
  await section.getByText('None yet.').waitFor();
  await section.getByRole('button', { name: 'Make recovery codes' }).click();
  const list = page.getByTestId('recovery-code-list');
  await list.waitFor();
  codes = (await list.getByRole('listitem').allInnerTexts()).map((code) => code.trim());
  assert.equal(codes.length, 10);
  for (const code of codes) assert.match(code, /^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/);
  await screenshot('recovery-codes-shown');

  const downloading = page.waitForEvent('download');
  await section.getByRole('button', { name: 'Download' }).click();
  const download = await downloading;
  assert.equal(download.suggestedFilename(), 'recovery-codes.txt');
  const saved = readFileSync(await download.path(), 'utf8');
  for (const code of codes) assert.ok(saved.includes(code), 'the file holds every code');

  await section.getByRole('button', { name: 'I saved them' }).click();
  await section.getByText('10 of 10 left.').waitFor();
  assert.equal(await page.getByTestId('recovery-code-list').count(), 0, 'the codes are not shown again');
  // Nor after a reload: the server only counts them.
  await page.reload();
  await page.getByTestId('recovery-codes').getByText('10 of 10 left.').waitFor();
  assert.ok(!(await page.content()).includes(codes[0]!));
});

test('signing in again: "Use a recovery code" on the second-factor page; a wrong code is refused, a right one signs in', stepTimeout, async () => {
  await signOut();
  await signIn();
  await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
  await page.getByRole('button', { name: 'Use a recovery code' }).click();
  const field = page.getByLabel('Recovery code');
  await field.fill('zzzz-zzzz-zzzz');
  const refused = page.waitForResponse((r) => r.url().includes('mfaSignIn:finalize'));
  await page.getByRole('button', { name: 'Verify' }).click();
  assert.equal((await refused).status(), 400);
  await page.getByRole('alert').waitFor();
  assert.equal((await page.getByRole('alert').innerText()).trim(), 'That recovery code is not right, or it was used already. Each code works once.');

  // Typed as read off paper: upper case, spaces.
  await field.fill(codes[0]!.toUpperCase().replace(/-/g, ' '));
  await screenshot('recovery-code-sign-in');
  await page.getByRole('button', { name: 'Verify' }).click();
  await signedIn();
  await page.getByRole('status').filter({ hasText: 'You signed in with a recovery code; it will not work again.' }).waitFor();
  await page.goto(url('/account'));
  await page.getByTestId('recovery-codes').getByText('9 of 10 left.').waitFor();
  await screenshot('recovery-codes-account-after-use');
});

test('a used code is refused on the next sign-in; another one works', stepTimeout, async () => {
  await signOut();
  await signIn();
  await page.getByRole('button', { name: 'Use a recovery code' }).click();
  await page.getByLabel('Recovery code').fill(codes[0]!);
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByRole('alert').waitFor();
  await page.getByLabel('Recovery code').fill(codes[1]!);
  await page.getByRole('button', { name: 'Verify' }).click();
  await signedIn();
});

test('the console\'s user page shows how many codes remain, not the codes', stepTimeout, async () => {
  const consolePage = await record.newPage(await record.newContext(browser!, waitMs));
  await signInWithAdminKey(consolePage, server!.url, server!.adminKey);
  await consolePage.goto(`${server!.url}/console/users/${uid}`);
  const count = consolePage.getByTestId('recovery-codes-remaining');
  await count.waitFor();
  assert.match((await count.innerText()).trim(), /^Recovery codes: 8 of 10 left/);
  const content = await consolePage.content();
  for (const code of codes) assert.ok(!content.includes(code));
  await keepScreenshot(consolePage, 'user-recovery-codes');
  await consolePage.close();
});

test('a stale sign-in confirms it is them first (password, then a recovery code inline); new codes replace the old', { timeout: 90_000 }, async () => {
  await page.goto(url('/account'));
  await page.getByTestId('recovery-codes').getByText('8 of 10 left.').waitFor();
  const wait = lastSignIn + (recentLoginSeconds + 1) * 1000 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  await page.getByRole('button', { name: 'Make new codes' }).click();
  await page.getByText('Confirm it’s you.').waitFor();
  await page.getByLabel('Your password').fill(password);
  await page.getByRole('button', { name: 'Confirm with password' }).click();
  await page.getByRole('button', { name: 'Use a recovery code' }).click();
  await page.getByLabel('Recovery code').fill(codes[2]!);
  await page.getByRole('button', { name: 'Verify' }).click();
  const list = page.getByTestId('recovery-code-list');
  await list.waitFor();
  const fresh = (await list.getByRole('listitem').allInnerTexts()).map((code) => code.trim());
  assert.equal(fresh.length, 10);
  assert.equal(fresh.filter((code) => codes.includes(code)).length, 0);
  await page.getByRole('button', { name: 'I saved them' }).click();
  await page.getByTestId('recovery-codes').getByText('10 of 10 left.').waitFor();
  const lookup = await adminPost(server!, '/accounts:lookup', { localId: [uid] });
  assert.equal(lookup.body.users[0].recoveryCodesRemaining, 10);
});

test('nothing the page requested left the machine, and the page threw nothing', () => {
  assert.ok(record.requested.some((address) => address.includes('recoveryCodes:generate')), 'the codes were made by Hearth');
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
