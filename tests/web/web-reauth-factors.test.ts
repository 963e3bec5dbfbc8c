/**
 * "Confirm it's you" by the account's other factors, in a real Chromium: a phone account confirms
 * with a texted code and deletes itself; an account with a text-message second step confirms by
 * password and then, inline, that second step, and its email change goes ahead; an account with
 * an authenticator app changes its password through the same inline second step; a provider
 * account whose popups are blocked confirms by redirect and comes back to the change it asked for
 * (an email change, then a password change without the old password), not only to a deletion. Codes are read from the
 * --dev SMS outbox; the server counts a sign-in as recent for 3 s. Screenshots go to
 * .tmp/artifacts/web/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { freePort, postJson, repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { waitForMail } from '../helpers/outbox.js';
import { uniquePhoneNumber } from '../helpers/phone-sdk.js';
import { TotpDevice, wrongCode as wrongTotp } from '../helpers/totp-device.js';
import { turnOnAuthenticatorApp } from '../helpers/web-totp.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 120_000 };
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

const url = (path: string) => `${server!.url}${path}`;

/** Signs up with the demo provider by redirect and turns on an authenticator app named `appName`. */
async function providerAccountWithAuthenticator(page: Page, email: string, appName: string): Promise<{ atProvider: () => Promise<void>; device: TotpDevice }> {
  const atProvider = async () => {
    await page.waitForURL((address) => address.origin !== server!.url);
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Continue' }).click();
  };
  await page.goto(url('/signin'));
  await page.getByRole('button', { name: `Sign in with ${demo}`, exact: true }).click();
  await atProvider();
  await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
  await page.goto(url('/account'));
  return { atProvider, device: await turnOnAuthenticatorApp(page, appName) };
}

async function newPage(options: { popupsBlocked?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await record.newContext(browser!, waitMs);
  // As a popup blocker does: the app then sends the tab to the provider instead.
  if (options.popupsBlocked) await context.addInitScript(() => void (window.open = () => null));
  return { context, page: await record.newPage(context) };
}

function letSignInGoStale(): Promise<void> {
  return new Promise((wait) => setTimeout(wait, (recentSeconds + 1.5) * 1000));
}

interface SentCode {
  phoneNumber: string;
  code: string;
}

async function codesTo(phoneNumber: string): Promise<string[]> {
  const response = await fetch(`${server!.url}/emulator/v1/projects/${server!.projectId}/verificationCodes`);
  assert.equal(response.status, 200);
  const { verificationCodes = [] } = (await response.json()) as { verificationCodes?: SentCode[] };
  return verificationCodes.filter((entry) => entry.phoneNumber === phoneNumber).map((entry) => entry.code);
}

/** The newest code texted to `phoneNumber` once more than `seen` were. */
async function nextCode(phoneNumber: string, seen: number): Promise<string> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const codes = await codesTo(phoneNumber);
    if (codes.length > seen) return codes[codes.length - 1]!;
    assert.ok(Date.now() < deadline, `no text message reached ${phoneNumber}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function lookup(uid: string): Promise<{ email?: string; passwordHash?: string; providerUserInfo?: { providerId: string }[] } | undefined> {
  const { status, body } = await adminPost(server!, '/accounts:lookup', { localId: [uid] });
  assert.equal(status, 200);
  return body.users?.[0];
}

function signInWithPassword(email: string, password: string) {
  return postJson(url(`/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server!.apiKey}`), { email, password, returnSecureToken: true });
}

const confirmPanel = (scope: Locator) => scope.getByRole('group', { name: 'Confirm it’s you' });

async function uidOnAccountPage(page: Page): Promise<string> {
  await page.goto(url('/account'));
  return (await page.getByTestId('account-uid').innerText()).trim();
}

async function signInByPassword(page: Page, email: string, password: string): Promise<void> {
  await page.goto(url('/signin'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

test('a phone account confirms with a texted code, a wrong one refused, and deletes itself', stepTimeout, async () => {
  const { context, page } = await newPage();
  const phoneNumber = uniquePhoneNumber();
  await page.goto(url('/signin/phone'));
  await page.getByLabel('Phone number, with country code').fill(phoneNumber);
  await page.getByRole('button', { name: 'Send code' }).click();
  await page.getByLabel('Code from the text message').fill(await nextCode(phoneNumber, 0));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('signed-in-email').filter({ hasText: phoneNumber }).waitFor();
  const uid = await uidOnAccountPage(page);

  await letSignInGoStale();
  const card = page.getByRole('region', { name: 'Delete account' });
  await card.getByLabel('I understand my account will be deleted').check();
  await card.getByRole('button', { name: 'Delete account' }).click();
  const panel = confirmPanel(card);
  await panel.getByRole('button', { name: `Text a code to ${phoneNumber}` }).click();
  await panel.getByRole('status').filter({ hasText: `We sent a code to ${phoneNumber}.` }).waitFor();
  const code = await nextCode(phoneNumber, 1);
  assert.equal(await panel.getByLabel('Your password').count(), 0, 'a phone account has no password to give');
  await page.screenshot({ path: join(artifacts, 'reauth-phone-panel.png'), fullPage: true });

  await panel.getByLabel('Code from the text message').fill(code === '000000' ? '111111' : '000000');
  await panel.getByRole('button', { name: 'Confirm with code' }).click();
  assert.equal((await panel.getByRole('alert').innerText()).trim(), 'That code is not right. Check the message and try again.');
  assert.ok(await lookup(uid), 'a wrong code deletes nothing');
  await panel.getByLabel('Code from the text message').fill(code);
  await panel.getByRole('button', { name: 'Confirm with code' }).click();
  await page.getByRole('status').filter({ hasText: 'Your account was deleted.' }).waitFor();
  assert.equal(await lookup(uid), undefined);
  await context.close();
});

test('an account with a text-message second step confirms by password, then that step inline, and its email change goes ahead', stepTimeout, async () => {
  const email = uniqueEmail('mfa-sms');
  const newEmail = uniqueEmail('mfa-sms-moved');
  const password = 'second step 1';
  const factorNumber = uniquePhoneNumber();
  const created = await adminPost(server!, '/accounts', { email, password, emailVerified: true, mfaInfo: [{ phoneInfo: factorNumber, displayName: 'Phone' }] });
  assert.equal(created.status, 200, JSON.stringify(created.body));

  const { context, page } = await newPage();
  await signInByPassword(page, email, password);
  await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
  await page.getByRole('button', { name: 'Send code' }).click();
  await page.getByLabel('Code from the text message').fill(await nextCode(factorNumber, 0));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
  await page.goto(url('/account'));
  await letSignInGoStale();

  const card = page.getByRole('region', { name: 'Change email' });
  await card.getByLabel('New email').fill(newEmail);
  await card.getByRole('button', { name: 'Send confirmation link' }).click();
  const panel = confirmPanel(card);
  await panel.getByLabel('Your password').fill(password);
  await panel.getByRole('button', { name: 'Confirm with password' }).click();
  // The password was right; the account's second step comes next, in the same panel (the
  // server names the number masked, as Google's does).
  await panel.getByText(new RegExp(`We will text a code to \\+\\*+${factorNumber.slice(-4)}\\.`)).waitFor();
  assert.equal(await panel.getByRole('alert').count(), 0, 'a second step is not an error');
  await panel.getByRole('button', { name: 'Send code' }).click();
  await panel.getByLabel('Code from the text message').fill(await nextCode(factorNumber, 1));
  await page.screenshot({ path: join(artifacts, 'reauth-second-factor-sms.png'), fullPage: true });
  await panel.getByRole('button', { name: 'Verify' }).click();
  await card.getByRole('status').filter({ hasText: `Check ${newEmail} for a link to confirm the change.` }).waitFor();
  assert.equal(await panel.count(), 0, 'the panel goes once the change went ahead');
  assert.ok((await waitForMail(server!, newEmail, 'VERIFY_AND_CHANGE_EMAIL')).oobCode);
  await context.close();
});

test('an account with an authenticator app changes its password: current password, then the app’s code inline', stepTimeout, async () => {
  const email = uniqueEmail('mfa-totp');
  const password = 'totp first 1';
  const created = await adminPost(server!, '/accounts', { email, password, emailVerified: true });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const { context, page } = await newPage();
  await signInByPassword(page, email, password);
  await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
  await page.goto(url('/account'));
  const device = await turnOnAuthenticatorApp(page, 'Phone app');

  const card = page.getByRole('region', { name: 'Password' });
  await card.getByLabel('Current password').fill(password);
  await card.getByLabel('New password', { exact: true }).fill('totp second 2');
  await card.getByRole('button', { name: 'Change password' }).click();
  const panel = confirmPanel(card);
  await panel.getByLabel('Code from the app').fill(wrongTotp(device));
  await panel.getByRole('button', { name: 'Verify' }).click();
  await panel.getByRole('alert').waitFor();
  assert.equal((await signInWithPassword(email, 'totp second 2')).status, 400, 'a wrong code changes nothing');
  await panel.getByLabel('Code from the app').fill(device.next());
  await panel.getByRole('button', { name: 'Verify' }).click();
  await card.getByRole('status').filter({ hasText: 'Your password was changed.' }).waitFor();
  const after = await signInWithPassword(email, 'totp second 2');
  assert.equal(after.status, 200);
  assert.ok(after.body.mfaPendingCredential, 'the new password is the first step now');
  await context.close();
});

test('with popups blocked, confirming by redirect comes back to an email change, then to a password change', stepTimeout, async () => {
  const { context, page } = await newPage({ popupsBlocked: true });
  const email = uniqueEmail('redirect-resume');
  const newEmail = uniqueEmail('redirect-moved');
  const atProvider = async () => {
    await page.waitForURL((address) => address.origin !== server!.url);
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Continue' }).click();
  };
  await page.goto(url('/signin'));
  await page.getByRole('button', { name: `Sign in with ${demo}`, exact: true }).click();
  await atProvider();
  await page.getByTestId('signed-in-email').filter({ hasText: email }).waitFor();
  const uid = await uidOnAccountPage(page);

  await context.clearCookies(); // the provider asks again rather than answering from its session
  await letSignInGoStale();
  const emailCard = page.getByRole('region', { name: 'Change email' });
  await emailCard.getByLabel('New email').fill(newEmail);
  await emailCard.getByRole('button', { name: 'Send confirmation link' }).click();
  await confirmPanel(emailCard).getByRole('button', { name: `Continue with ${demo}` }).click();
  await atProvider();
  await page.getByRole('region', { name: 'Change email' }).getByRole('status').filter({ hasText: `Check ${newEmail} for a link to confirm the change.` }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/account');
  assert.equal(new URL(page.url()).search, '', 'the resume marker is taken off the address');
  assert.ok((await waitForMail(server!, newEmail, 'VERIFY_AND_CHANGE_EMAIL')).oobCode);

  // Linking a password needs no recent sign-in; changing it without the current one does.
  const setCard = page.getByRole('region', { name: 'Password' });
  await setCard.getByLabel('New password', { exact: true }).fill('redirected 123');
  await setCard.getByRole('button', { name: 'Set password' }).click();
  await setCard.getByRole('status').filter({ hasText: 'Your password was set.' }).waitFor();
  await context.clearCookies();
  await letSignInGoStale();
  const passwordCard = page.getByRole('region', { name: 'Password' });
  await passwordCard.getByRole('button', { name: 'Forgot your current password?' }).click();
  await confirmPanel(passwordCard).getByRole('button', { name: `Continue with ${demo}` }).click();
  await atProvider();
  const back = page.getByRole('region', { name: 'Password' });
  await back.getByRole('status').filter({ hasText: 'You signed in again. Enter your new password to change it.' }).waitFor();
  assert.equal(await back.getByLabel('Current password').count(), 0, 'confirmed by the provider: the old password is not asked for');
  await page.screenshot({ path: join(artifacts, 'reauth-redirect-resumed.png'), fullPage: true });
  await back.getByLabel('New password', { exact: true }).fill('redirected 456');
  await back.getByRole('button', { name: 'Change password' }).click();
  await back.getByRole('status').filter({ hasText: 'Your password was changed.' }).waitFor();
  assert.equal((await signInWithPassword(email, 'redirected 456')).body.localId, uid);
  await context.close();
});

test('a provider account with an authenticator app confirms by redirect, then its second step, and the email change resumes', stepTimeout, async () => {
  const { context, page } = await newPage({ popupsBlocked: true });
  const email = uniqueEmail('redirect-mfa');
  const newEmail = uniqueEmail('redirect-mfa-moved');
  const { atProvider, device } = await providerAccountWithAuthenticator(page, email, 'Desk app');

  await context.clearCookies();
  await letSignInGoStale();
  const card = page.getByRole('region', { name: 'Change email' });
  await card.getByLabel('New email').fill(newEmail);
  await card.getByRole('button', { name: 'Send confirmation link' }).click();
  await confirmPanel(card).getByRole('button', { name: `Continue with ${demo}` }).click();
  await atProvider();
  // The provider step came back needing the second one; once given, the change resumes.
  await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
  await page.getByLabel('Code from the app').fill(device.next());
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByRole('region', { name: 'Change email' }).getByRole('status').filter({ hasText: `Check ${newEmail} for a link to confirm the change.` }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/account');
  await page.getByTestId('second-factor-totp').filter({ hasText: 'Desk app' }).waitFor();
  assert.ok((await waitForMail(server!, newEmail, 'VERIFY_AND_CHANGE_EMAIL')).oobCode);
  await context.close();
});

test('cancelling the second step of a confirmation by redirect goes back to the account and gives the change up', stepTimeout, async () => {
  const { context, page } = await newPage({ popupsBlocked: true });
  const email = uniqueEmail('redirect-mfa-cancel');
  const { atProvider } = await providerAccountWithAuthenticator(page, email, 'Cancel app');

  await context.clearCookies();
  await letSignInGoStale();
  const card = page.getByRole('region', { name: 'Change email' });
  await card.getByLabel('New email').fill(uniqueEmail('never-moved'));
  await card.getByRole('button', { name: 'Send confirmation link' }).click();
  await confirmPanel(card).getByRole('button', { name: `Continue with ${demo}` }).click();
  await atProvider();
  await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
  await page.getByRole('link', { name: 'Cancel' }).click();
  await page.waitForURL((address) => address.pathname === '/account');
  await page.getByTestId('account-email').filter({ hasText: email }).waitFor();
  assert.equal(await page.evaluate(() => window.localStorage.getItem('hearth:resumeAfterSignIn')), null);
  await context.close();
});

test('nothing the pages requested left the machine, and the pages threw nothing', () => {
  assert.ok(record.requested.length > 0);
  assert.deepEqual(requestsOffMachine(record.requested.filter((address) => !address.startsWith('http://127.0.0.1'))), []);
  assert.deepEqual(record.pageErrors, []);
});
