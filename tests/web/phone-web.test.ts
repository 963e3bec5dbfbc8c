/**
 * The web app's phone sign-in end to end: a real Chromium asks for a code (Hearth's reCAPTCHA
 * stand-in solving its challenge in the page, the code read from the --dev SMS outbox), is refused a
 * wrong code and an invalid number in plain sentences, and signs in with the right code. (The
 * authenticator-app second step is tests/web/mfa-web.test.ts.) Nothing the page loads may leave
 * the machine.
 *
 * Needs `npm run build -w packages/web` first (the root `npm test` does it) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 90_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
const record = new BrowserRecord();

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

interface SentCode {
  phoneNumber: string;
  sessionInfo: string;
  code: string;
}

/** The newest code the --dev SMS outbox holds for `phoneNumber`, waiting until one arrives after `seen`. */
async function codeFor(phoneNumber: string, seen: number): Promise<string> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const response = await fetch(`${server!.url}/emulator/v1/projects/${server!.projectId}/verificationCodes`);
    assert.equal(response.status, 200);
    const { verificationCodes = [] } = (await response.json()) as { verificationCodes?: SentCode[] };
    const mine = verificationCodes.filter((entry) => entry.phoneNumber === phoneNumber);
    if (mine.length > seen) return mine[mine.length - 1]!.code;
    assert.ok(Date.now() < deadline, `no text message reached ${phoneNumber}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function codesSentTo(phoneNumber: string): Promise<number> {
  const response = await fetch(`${server!.url}/emulator/v1/projects/${server!.projectId}/verificationCodes`);
  const { verificationCodes = [] } = (await response.json()) as { verificationCodes?: SentCode[] };
  return verificationCodes.filter((entry) => entry.phoneNumber === phoneNumber).length;
}

async function alertText(): Promise<string> {
  const alert = page.getByRole('alert').first();
  await alert.waitFor();
  return (await alert.innerText()).trim();
}

test('phone sign-in: the stand-in check passes in the page, a wrong code is refused, the right one signs in', stepTimeout, async () => {
  const phoneNumber = '+16502530042';
  await page.goto(url('/signin'));
  await page.getByRole('link', { name: 'Sign in with a phone number' }).click();
  await page.getByLabel('Phone number, with country code').fill('+1 650 253 0042');
  const before = await codesSentTo(phoneNumber);
  await page.getByRole('button', { name: 'Send code' }).click();
  const code = await codeFor(phoneNumber, before);
  assert.match(code, /^\d{6}$/);

  const wrong = code === '000000' ? '111111' : '000000';
  await page.getByLabel('Code from the text message').fill(wrong);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  assert.equal(await alertText(), 'That code is not right. Check the message and try again.');

  await page.getByLabel('Code from the text message').fill(code);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByTestId('signed-in-email').filter({ hasText: phoneNumber }).waitFor();
  await page.goto(url('/account'));
  assert.equal((await page.getByTestId('account-phone').innerText()).trim(), phoneNumber);
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are not signed in.').waitFor();
});

test('an invalid phone number gets a plain sentence, and no code is sent', stepTimeout, async () => {
  await page.goto(url('/signin/phone'));
  await page.getByLabel('Phone number, with country code').fill('+1 23');
  await page.getByRole('button', { name: 'Send code' }).click();
  assert.match(await alertText(), /That phone number is not valid/);
});

test('the pages loaded nothing from off the machine and threw no uncaught errors', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
