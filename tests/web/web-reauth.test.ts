/**
 * Accounts manage themselves by their own way of signing in, in a real Chromium: an email-link
 * account and an identity-provider account each set a password and delete themselves, and a
 * stale password session changes its email after confirming inline. The server counts a sign-in
 * as recent for 3 s (--recent-login), so "stale" is a short wait away. Screenshots go to
 * .tmp/artifacts/web/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { freePort, postJson, repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { waitForMail } from '../helpers/outbox.js';

const waitMs = 15_000;
const stepTimeout = { timeout: 90_000 };
const recentSeconds = 3;
const artifacts = join(repoRoot, '.tmp/artifacts/web');
const demo = 'Hearth Demo';

let server: TestHearth | undefined;
let browser: Browser | undefined;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  mkdirSync(artifacts, { recursive: true });
  server = await startHearth({ webRoot, demoIdpPort: await freePort(), recentLoginSeconds: recentSeconds });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

function url(path: string): string {
  return `${server!.url}${path}`;
}

async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await record.newContext(browser!, waitMs);
  return { context, page: await record.newPage(context) };
}

/** Waits until the sign-in the page holds is no longer recent for the server. */
function letSignInGoStale(): Promise<void> {
  return new Promise((wait) => setTimeout(wait, (recentSeconds + 1.5) * 1000));
}

async function lookup(uid: string): Promise<{ localId: string; email?: string; providerUserInfo?: { providerId: string }[] } | undefined> {
  const { status, body } = await adminPost(server!, '/accounts:lookup', { localId: [uid] });
  assert.equal(status, 200);
  return body.users?.[0];
}

async function uidOnAccountPage(page: Page): Promise<string> {
  await page.goto(url('/account'));
  return (await page.getByTestId('account-uid').innerText()).trim();
}

async function signInWithPassword(email: string, password: string) {
  return postJson(`${server!.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server!.apiKey}`, { email, password, returnSecureToken: true });
}

/** Signs in (creating the account) by a link mailed from the /email-link page, landing on the account page. */
async function signInByEmailLink(page: Page, email: string): Promise<string> {
  await page.goto(url('/email-link'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByRole('button', { name: 'Send sign-in link' }).click();
  await page.getByRole('status').filter({ hasText: `Check ${email}` }).waitFor();
  const mail = await waitForMail(server!, email, 'EMAIL_SIGNIN');
  await page.goto(mail.oobLink);
  await page.getByTestId('account-email').filter({ hasText: email }).waitFor();
  return (await page.getByTestId('account-uid').innerText()).trim();
}

/** Confirms by a mailed link: asks for it in the panel, opens it in the same browser, and returns to the account page. */
async function confirmByEmailLink(page: Page, panel: Locator, email: string, mailsBefore: number): Promise<void> {
  await panel.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await panel.getByRole('status').filter({ hasText: `We sent a sign-in link to ${email}` }).waitFor();
  const mail = await waitForMail(server!, email, 'EMAIL_SIGNIN', mailsBefore);
  await page.goto(mail.oobLink);
  await page.waitForURL((address) => address.pathname === '/account' || address.pathname === '/');
}

async function throughPopup(context: BrowserContext, button: Locator, email: string): Promise<void> {
  const opened = context.waitForEvent('page');
  await button.click();
  const popup = await opened;
  const closed = popup.waitForEvent('close');
  await popup.getByLabel('Email').fill(email);
  await popup.getByRole('button', { name: 'Continue' }).click();
  await closed;
}

function confirmPanel(scope: Locator): Locator {
  return scope.getByRole('group', { name: 'Confirm it’s you' });
}

test('an email-link account sets a password after confirming by a new link, then deletes itself with it', stepTimeout, async () => {
  const { context, page } = await newPage();
  const email = uniqueEmail('link-only');
  const uid = await signInByEmailLink(page, email);

  const passwordCard = page.getByRole('region', { name: 'Password' });
  await passwordCard.getByRole('button', { name: 'Set password' }).waitFor();
  assert.equal(await passwordCard.getByLabel('Current password').count(), 0, 'it never had a password to give');
  await passwordCard.getByRole('list', { name: 'Password rules' }).getByText('At least 6 characters').waitFor();

  await letSignInGoStale();
  await passwordCard.getByLabel('New password', { exact: true }).fill('link-made 123');
  await passwordCard.getByRole('button', { name: 'Set password' }).click();
  const panel = confirmPanel(passwordCard);
  await panel.getByRole('button', { name: 'Email me a sign-in link' }).waitFor();
  assert.equal(await panel.getByLabel('Your password').count(), 0);
  await page.screenshot({ path: join(artifacts, 'reauth-email-link-panel.png'), fullPage: true });
  await confirmByEmailLink(page, panel, email, 1);

  const back = page.getByRole('region', { name: 'Password' });
  await back.getByRole('status').filter({ hasText: 'You signed in again' }).waitFor();
  assert.equal(new URL(page.url()).search, '', 'the resume marker is taken off the address');
  await back.getByLabel('New password', { exact: true }).fill('link-made 123');
  await back.getByRole('button', { name: 'Set password' }).click();
  await back.getByRole('status').filter({ hasText: 'Your password was set.' }).waitFor();
  const signedIn = await signInWithPassword(email, 'link-made 123');
  assert.equal(signedIn.status, 200);
  assert.equal(signedIn.body.localId, uid, 'the same account, now with a password');

  // Now it has a password, a stale session confirms with it.
  await page.reload();
  await page.getByRole('region', { name: 'Password' }).getByLabel('Current password').waitFor();
  await letSignInGoStale();
  const deleteCard = page.getByRole('region', { name: 'Delete account' });
  await deleteCard.getByLabel('I understand my account will be deleted').check();
  await deleteCard.getByRole('button', { name: 'Delete account' }).click();
  const deletePanel = confirmPanel(deleteCard);
  // The real times, not "a while ago": how long since the sign-in, and the window this server asks for.
  assert.match((await deletePanel.getByTestId('signed-in-ago').innerText()).trim(), /^Confirm it’s you\. You signed in \d+ seconds? ago; this site asks for a sign-in within the last 3 seconds; to delete your account, sign in again here\.$/);
  await deletePanel.getByLabel('Your password').fill('not it');
  await deletePanel.getByRole('button', { name: 'Confirm with password' }).click();
  assert.equal((await deletePanel.getByRole('alert').innerText()).trim(), 'Wrong email or password.');
  await deletePanel.getByLabel('Your password').fill('link-made 123');
  await deletePanel.getByRole('button', { name: 'Confirm with password' }).click();
  await page.getByRole('status').filter({ hasText: 'Your account was deleted.' }).waitFor();
  assert.equal(await lookup(uid), undefined);
  await context.close();
});

test('an email-link account deletes itself: the confirming link brings it back and the deletion finishes', stepTimeout, async () => {
  const { context, page } = await newPage();
  const email = uniqueEmail('link-delete');
  const uid = await signInByEmailLink(page, email);
  await letSignInGoStale();
  const deleteCard = page.getByRole('region', { name: 'Delete account' });
  await deleteCard.getByLabel('I understand my account will be deleted').check();
  await deleteCard.getByRole('button', { name: 'Delete account' }).click();
  await confirmByEmailLink(page, confirmPanel(deleteCard), email, 1);
  await page.getByRole('status').filter({ hasText: 'Your account was deleted.' }).waitFor();
  await page.screenshot({ path: join(artifacts, 'reauth-deleted.png'), fullPage: true });
  assert.equal(await lookup(uid), undefined);
  await context.close();
});

test('a provider account sets a password, and deletes itself after confirming with the provider', stepTimeout, async () => {
  const { context, page } = await newPage();
  const email = uniqueEmail('provider-only');
  await page.goto(url('/signin'));
  await throughPopup(context, page.getByRole('button', { name: `Sign in with ${demo}`, exact: true }), email);
  await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
  const uid = await uidOnAccountPage(page);

  const passwordCard = page.getByRole('region', { name: 'Password' });
  await passwordCard.getByLabel('New password', { exact: true }).fill('provider 123');
  await passwordCard.getByRole('button', { name: 'Set password' }).click();
  await passwordCard.getByRole('status').filter({ hasText: 'Your password was set.' }).waitFor();
  assert.deepEqual((await lookup(uid))?.providerUserInfo?.map((p) => p.providerId).sort(), ['oidc.demo', 'password']);
  assert.equal((await signInWithPassword(email, 'provider 123')).body.localId, uid);

  await context.clearCookies(); // the provider asks again rather than answering from its session
  await letSignInGoStale();
  const deleteCard = page.getByRole('region', { name: 'Delete account' });
  await deleteCard.getByLabel('I understand my account will be deleted').check();
  await deleteCard.getByRole('button', { name: 'Delete account' }).click();
  const panel = confirmPanel(deleteCard);
  await throughPopup(context, panel.getByRole('button', { name: `Continue with ${demo}` }), email);
  await page.getByRole('status').filter({ hasText: 'Your account was deleted.' }).waitFor();
  assert.equal(await lookup(uid), undefined);
  await context.close();
});

test('a stale password session changes its email after confirming inline', stepTimeout, async () => {
  const { context, page } = await newPage();
  const email = uniqueEmail('stale');
  const newEmail = uniqueEmail('moved');
  await page.goto(url('/signup'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill('stale pass 1');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
  await page.goto(url('/account'));
  await letSignInGoStale();

  const card = page.getByRole('region', { name: 'Change email' });
  await card.getByLabel('New email').fill(newEmail);
  await card.getByRole('button', { name: 'Send confirmation link' }).click();
  const panel = confirmPanel(card);
  await panel.getByLabel('Your password').fill('stale pass 1');
  await page.screenshot({ path: join(artifacts, 'reauth-change-email.png'), fullPage: true });
  await panel.getByRole('button', { name: 'Confirm with password' }).click();
  await card.getByRole('status').filter({ hasText: `Check ${newEmail} for a link to confirm the change.` }).waitFor();
  assert.equal(await panel.count(), 0, 'the panel goes once the change went ahead');
  const mail = await waitForMail(server!, newEmail, 'VERIFY_AND_CHANGE_EMAIL');
  assert.ok(mail.oobCode);
  await context.close();
});

test('nothing the pages requested left the machine, and the pages threw nothing', () => {
  assert.ok(record.requested.length > 0);
  assert.deepEqual(requestsOffMachine(record.requested.filter((address) => !address.startsWith('http://127.0.0.1'))), []);
  assert.deepEqual(record.pageErrors, []);
});
