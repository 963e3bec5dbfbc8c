/**
 * Email actions end to end: a real Chromium drives packages/web/dist, served by an in-process
 * Hearth in production mode (registered API key, no outbox) that mails through a real SMTP
 * server (MailCatcher). Every link is taken from a mail received over SMTP and completed on the
 * hosted action page `/__/auth/action`: password reset, email verification, email-link sign-in,
 * email change with its recovery mail, and used, made-up and broken links. Nothing the page
 * loads may leave the machine.
 *
 * Needs `npm run build -w packages/web` first (the root `npm test` does it) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth } from 'firebase/auth';
import { type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { actionLinkIn, MailCatcher, type ReceivedMail } from '../helpers/smtp.js';

/** Bound for any single wait, on the page or for a mail. */
const waitMs = 15_000;
const stepTimeout = { timeout: 90_000 };

const catcher = new MailCatcher();
let server: TestHearth | undefined;
let nodeApp: FirebaseApp | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
const record = new BrowserRecord();

const password = 'correct horse 1';
const newPassword = 'battery staple 2';
/** The password-reset link, kept to show that a used link is refused. */
let resetLink = '';

before(async () => {
  assertBrowserReady();
  await catcher.start();
  server = await startHearth({ webRoot, dev: false, smtpUrl: catcher.url });
  browser = await launchChromium();
  context = await newContext();
  page = await newPage(context);
});

after(async () => {
  await browser?.close();
  if (nodeApp) await deleteApp(nodeApp);
  await server?.close();
  await catcher.stop();
});

const newContext = () => record.newContext(browser!, waitMs);
const newPage = (owner: BrowserContext) => record.newPage(owner);

function url(path: string): string {
  return `${server!.url}${path}`;
}

const taken = new Set<ReceivedMail>();

/** The next mail (not yet taken by this test) that the SMTP server received for `to` with a matching subject. */
async function nextMail(to: string, subject: RegExp): Promise<ReceivedMail> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const mail = catcher.received.find((m) => !taken.has(m) && m.to.includes(to.toLowerCase()) && subject.test(m.subject));
    if (mail) {
      taken.add(mail);
      return mail;
    }
    if (Date.now() > deadline) {
      const seen = catcher.received.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ');
      throw new Error(`no mail to ${to} matching ${subject} within ${waitMs} ms (received: ${seen || 'nothing'})`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The action link in a mail, checked to point at this server's hosted action page. */
function linkIn(mail: ReceivedMail, mode: string): string {
  const link = actionLinkIn(mail);
  const parsed = new URL(link);
  assert.equal(parsed.origin, server!.url);
  assert.equal(parsed.pathname, '/__/auth/action');
  assert.equal(parsed.searchParams.get('mode'), mode);
  assert.equal(parsed.searchParams.get('apiKey'), server!.apiKey);
  return link;
}

async function alertText(scope: Page | Locator = page): Promise<string> {
  const alert = scope.getByRole('alert');
  await alert.waitFor();
  return (await alert.innerText()).trim();
}

async function status(text: string, scope: Page | Locator = page): Promise<void> {
  await scope.getByRole('status').filter({ hasText: text }).waitFor();
}

async function signIn(email: string, withPassword: string): Promise<void> {
  await page.goto(url('/signin'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(withPassword);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

async function expectSignedIn(as: string): Promise<void> {
  await page.getByTestId('signed-in-email').filter({ hasText: as }).waitFor();
}

test('password reset: forgot-password page, mail over SMTP, new password on the action page, then sign in', stepTimeout, async () => {
  const email = uniqueEmail('reset');
  nodeApp = initializeApp({ apiKey: server!.apiKey, projectId: server!.projectId }, 'e2e-email-actions');
  const nodeAuth = initializeAuth(nodeApp, { persistence: inMemoryPersistence });
  connectAuthEmulator(nodeAuth, server!.url, { disableWarnings: true });
  await createUserWithEmailAndPassword(nodeAuth, email, password);

  await page.goto(url('/signin'));
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  // The sign-in page, with its own Email box, stays up until the next page's code is in.
  await page.getByRole('heading', { name: 'Forgot your password?', level: 1 }).waitFor();
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByRole('button', { name: 'Send reset link' }).click();
  await status('If an account exists for that address, we sent a link.');
  assert.equal(new URL(page.url()).pathname, '/forgot-password');

  resetLink = linkIn(await nextMail(email, /Reset your password/), 'resetPassword');
  await page.goto(resetLink);
  await page.getByTestId('action-email').filter({ hasText: email }).waitFor();
  await page.getByLabel('New password', { exact: true }).fill('123');
  await page.getByRole('button', { name: 'Save password' }).click();
  assert.equal(await alertText(), 'That password is too weak. Use at least 6 characters.');
  await page.getByLabel('New password', { exact: true }).fill(newPassword);
  await page.getByRole('button', { name: 'Save password' }).click();
  await status('Your password has been changed.');

  await signIn(email, password);
  assert.equal(await alertText(), 'Wrong email or password.');
  await signIn(email, newPassword);
  await expectSignedIn(email);
});

test('used, made-up, broken and unsupported links each show a plain sentence', stepTimeout, async () => {
  assert.ok(resetLink, 'the password-reset step ran first');
  await page.goto(resetLink);
  assert.equal(await alertText(), 'This link is invalid or has already been used.');
  assert.equal(await page.getByLabel('New password').count(), 0, 'no password form for a used link');

  const key = encodeURIComponent(server!.apiKey);
  await page.goto(url(`/__/auth/action?mode=resetPassword&oobCode=made-up-code&apiKey=${key}&lang=en`));
  assert.equal(await alertText(), 'This link is invalid or has already been used.');
  await page.goto(url(`/__/auth/action?mode=verifyEmail&oobCode=made-up-code&apiKey=${key}&lang=en`));
  // Signed in, and the reset proved the address: an unusable verification link is no news to this user.
  await status('Your email address is already verified.');
  assert.equal(await page.getByRole('alert').count(), 0);
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are not signed in.').waitFor();
  await page.goto(url(`/__/auth/action?mode=verifyEmail&oobCode=made-up-code&apiKey=${key}&lang=en`));
  assert.equal(await alertText(), 'This link is invalid or has already been used.');
  await page.getByRole('link', { name: 'Send a new one from your account page' }).waitFor();

  await page.goto(url(`/__/auth/action?mode=resetPassword&apiKey=${key}&lang=en`));
  assert.equal(await alertText(), 'This link is incomplete or broken.');
  await page.goto(url(`/__/auth/action?mode=noSuchMode&oobCode=abc&apiKey=${key}`));
  assert.equal(await alertText(), 'This link is incomplete or broken.');
  await page.goto(url(`/__/auth/action?mode=revertSecondFactorAddition&oobCode=abc&apiKey=${key}&lang=en`));
  assert.equal(await alertText(), 'Second factors are not supported yet.');
});

const verifiedEmail = uniqueEmail('verify');

test('email verification: the account page mails a link; after it, the account shows verified', stepTimeout, async () => {
  await page.goto(url('/signup'));
  await page.getByLabel('Email', { exact: true }).fill(verifiedEmail);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expectSignedIn(verifiedEmail);

  await page.goto(url('/account'));
  await page.getByTestId('account-email').filter({ hasText: verifiedEmail }).waitFor();
  assert.equal(await page.getByTestId('account-email-verified').innerText(), 'No');
  const section = page.getByRole('region', { name: 'Email verification' });
  await section.getByRole('button', { name: 'Send verification email' }).click();
  await status(`We sent a verification link to ${verifiedEmail}.`, section);

  const link = linkIn(await nextMail(verifiedEmail, /Verify your email/), 'verifyEmail');
  await page.goto(link);
  await status('Your email has been verified.');

  await page.goto(url('/account'));
  await page.getByTestId('account-email-verified').filter({ hasText: 'Yes' }).waitFor();
  await page.getByRole('region', { name: 'Email verification' }).getByText('Your email address is verified.').waitFor();
});

test('change email: confirmed through the new address; the old address gets a recovery mail that undoes it', stepTimeout, async () => {
  const oldEmail = verifiedEmail;
  const newEmail = uniqueEmail('changed');
  await page.goto(url('/account'));
  const section = page.getByRole('region', { name: 'Change email' });
  await section.getByLabel('New email', { exact: true }).fill(newEmail);
  await section.getByRole('button', { name: 'Send confirmation link' }).click();
  await status(`Check ${newEmail} for a link to confirm the change.`, section);

  const change = linkIn(await nextMail(newEmail, /Verify your new email/), 'verifyAndChangeEmail');
  await page.goto(change);
  await status(`Your sign-in email is now ${newEmail}.`);

  const recovery = await nextMail(oldEmail, /changed/i);
  assert.match(recovery.subject, /sign-in email .* was changed/);
  assert.ok(recovery.text.includes(newEmail), 'the recovery mail names the new address');
  const recoverLink = linkIn(recovery, 'recoverEmail');

  await signIn(newEmail, password);
  await expectSignedIn(newEmail);

  await page.goto(recoverLink);
  await status(`Your sign-in email has been changed back to ${oldEmail}.`);
  await page.getByRole('button', { name: 'Reset your password' }).click();
  await status(`Check ${oldEmail} for a link to reset your password.`);
  linkIn(await nextMail(oldEmail, /Reset your password/), 'resetPassword');

  await signIn(newEmail, password);
  assert.equal(await alertText(), 'Wrong email or password.');
  await signIn(oldEmail, password);
  await expectSignedIn(oldEmail);
});

test('email-link sign-in: the link opened in the same browser signs in and lands on the account page', stepTimeout, async () => {
  const email = uniqueEmail('link');
  await page.goto(url('/signin'));
  await page.getByRole('link', { name: 'Get a sign-in link by email' }).click();
  // The sign-in page, with its own Email box, stays up until the next page's code is in.
  await page.getByRole('heading', { name: 'Sign in with a link', level: 1 }).waitFor();
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByRole('button', { name: 'Send sign-in link' }).click();
  await status(`Check ${email} for a sign-in link`);
  assert.equal(await page.evaluate(() => window.localStorage.getItem('hearthEmailForSignIn')), email);

  const link = linkIn(await nextMail(email, /Sign in to/), 'signIn');
  assert.equal(new URL(link).searchParams.get('continueUrl'), url('/account'));
  await page.goto(link);
  await page.waitForURL(url('/account'));
  await page.getByTestId('account-email').filter({ hasText: email }).waitFor();
  assert.equal(await page.getByTestId('account-email-verified').innerText(), 'Yes');
  assert.equal(await page.evaluate(() => window.localStorage.getItem('hearthEmailForSignIn')), null, 'the kept address is forgotten after use');
});

test('email-link sign-in on another device asks for the address, and refuses the wrong one', stepTimeout, async () => {
  const email = uniqueEmail('elsewhere');
  await page.goto(url('/email-link'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByRole('button', { name: 'Send sign-in link' }).click();
  await status(`Check ${email} for a sign-in link`);
  const link = linkIn(await nextMail(email, /Sign in to/), 'signIn');

  const otherContext = await newContext();
  try {
    const other = await newPage(otherContext);
    await other.goto(link);
    await other.getByLabel('Email', { exact: true }).fill(uniqueEmail('someone-else'));
    await other.getByRole('button', { name: 'Sign in', exact: true }).click();
    assert.equal(await alertText(other.getByRole('main')), 'That is not the email address this link was sent to.');
    await other.getByLabel('Email', { exact: true }).fill(email);
    await other.getByRole('button', { name: 'Sign in', exact: true }).click();
    await other.waitForURL(url('/account'));
    await other.getByTestId('account-email').filter({ hasText: email }).waitFor();
  } finally {
    await otherContext.close();
  }
});

test('nothing the page requested left the machine, and the page threw nothing', () => {
  assert.ok(record.requested.length > 0, 'no requests were recorded');
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
