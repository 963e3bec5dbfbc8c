/**
 * The web app says what happened and what to do next, in a real Chromium: an unverified user is
 * nudged on the home page and can send the link from there; a verification link opened twice
 * says the address is already verified; confirming an email change in the same browser says why
 * it signed the user out; after deleting the account the home page says so. A success or an error
 * clears when the next action starts on any card; password rules show before typing on sign-up
 * and change-password, as the server enforces them (its floor, or the enforced project policy).
 * Going to a page whose code is not in yet keeps the current page up (with a loading bar when it
 * takes a while), never a "Loading" fallback.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { patchProjectConfig, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, recordFallbackTexts, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { waitForMail } from '../helpers/outbox.js';

const waitMs = 15_000;
const stepTimeout = { timeout: 60_000 };
const artifacts = join(repoRoot, '.tmp/artifacts/web');

let server: TestHearth | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
const record = new BrowserRecord();
const email = uniqueEmail('states');
const newEmail = uniqueEmail('states-new');

before(async () => {
  assertBrowserReady();
  mkdirSync(artifacts, { recursive: true });
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

test('a message clears when the next action starts anywhere on the page, not only on its own card', stepTimeout, async () => {
  await page.goto(url('/account'));
  const nameCard = page.getByRole('region', { name: 'Display name' });
  const passwordCard = page.getByRole('region', { name: 'Password' });
  await nameCard.getByLabel('Display name').fill('Stated');
  await nameCard.getByRole('button', { name: 'Save name' }).click();
  await nameCard.getByRole('status').filter({ hasText: 'Your name was saved.' }).waitFor();

  await passwordCard.getByLabel('Current password').fill('not the password');
  await passwordCard.getByLabel('New password', { exact: true }).fill('states pass 2');
  await passwordCard.getByRole('button', { name: 'Change password' }).click();
  await passwordCard.getByRole('alert').waitFor();
  assert.equal(await nameCard.getByRole('status').count(), 0, 'the name card’s success went when the password change started');

  await nameCard.getByRole('button', { name: 'Save name' }).click();
  await nameCard.getByRole('status').filter({ hasText: 'Your name was saved.' }).waitFor();
  assert.equal(await passwordCard.getByRole('alert').count(), 0, 'the password card’s error went when the name was saved again');
});

/** The checklist's items and whether each is ticked. */
async function rulesOf(scope: Locator): Promise<string[]> {
  const list = scope.getByRole('list', { name: 'Password rules' });
  await list.waitFor();
  return list.getByRole('listitem').evaluateAll((items) => items.map((item) => `${item.textContent?.replace(/^\W+/, '').trim()}:${item.getAttribute('data-met')}`));
}

test('password rules show before typing on sign-up and change-password, as the server enforces them', stepTimeout, async () => {
  const signUp = await context.newPage();
  await signUp.goto(url('/signup'));
  assert.deepEqual(await rulesOf(signUp.locator('main')), ['At least 6 characters:false'], 'no policy enforced: the server’s floor only');
  await page.goto(url('/account'));
  const passwordCard = page.getByRole('region', { name: 'Password' });
  assert.deepEqual(await rulesOf(passwordCard), ['At least 6 characters:false']);

  const policy = (state: 'ENFORCE' | 'OFF') =>
    patchProjectConfig(
      server!,
      { passwordPolicyConfig: { passwordPolicyEnforcementState: state, passwordPolicyVersions: [{ customStrengthOptions: { minPasswordLength: 8, containsUppercaseCharacter: true } }] } },
      'passwordPolicyConfig.passwordPolicyEnforcementState,passwordPolicyConfig.passwordPolicyVersions',
    );
  await policy('ENFORCE');
  try {
    await signUp.reload();
    assert.deepEqual(await rulesOf(signUp.locator('main')), ['At least 8 characters:false', 'An uppercase letter:false']);
    await signUp.getByLabel('Password', { exact: true }).fill('abcdefgh');
    await signUp.getByRole('list', { name: 'Password rules' }).locator('li[data-met="true"]').waitFor();
    assert.deepEqual(await rulesOf(signUp.locator('main')), ['At least 8 characters:true', 'An uppercase letter:false']);
    await page.reload();
    assert.deepEqual(await rulesOf(page.getByRole('region', { name: 'Password' })), ['At least 8 characters:false', 'An uppercase letter:false']);
    await page.screenshot({ path: join(artifacts, 'password-rules-change-password.png'), fullPage: true });
  } finally {
    await policy('OFF');
    await signUp.close();
  }
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

test('going to a page not loaded yet keeps the current page up until it comes, never a "Loading" step', stepTimeout, async () => {
  // Its own page, signed out: home is in the shell; sign-in and create-account are fetched on the way.
  const fresh = await record.newPage(await record.newContext(browser!, waitMs));
  const shownTexts = await recordFallbackTexts(fresh);
  const fetched: string[] = [];
  fresh.on('request', (request) => fetched.push(new URL(request.url()).pathname));
  await fresh.goto(url('/'));
  const nav = fresh.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Sign in' }).waitFor();
  assert.ok((await shownTexts()).includes('Loading…'), 'the page is observed from its start');
  for (const [link, heading] of [['Sign in', 'Sign in'], ['Create account', 'Create an account']] as const) {
    const before = fetched.length;
    await nav.getByRole('link', { name: link }).click();
    await fresh.getByRole('heading', { name: heading, level: 1 }).waitFor();
    assert.ok(fetched.slice(before).some((path) => path.endsWith('.js')), `${link}: its page's module was fetched on the way (${fetched.slice(before).join(', ')})`);
    const shown = await shownTexts();
    assert.ok(!shown.includes('Loading…'), `${link} showed the loading fallback on the way: ${JSON.stringify(shown)}`);
  }
  // Back to a page already in: at once, as before.
  await nav.getByRole('link', { name: 'Sign in' }).click();
  await fresh.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  assert.deepEqual((await shownTexts()).filter((text) => text === 'Loading…'), []);
});

test('on a slow connection the current page stays up with a loading bar until the next one comes', stepTimeout, async () => {
  const slow = await record.newPage(await record.newContext(browser!, waitMs));
  await slow.goto(url('/'));
  const nav = slow.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Sign in' }).waitFor();
  // From here every script arrives 1.5 s late: the sign-in page's module among them.
  await slow.route('**/*.js', async (route) => {
    await new Promise((wait) => setTimeout(wait, 1_500));
    await route.continue();
  });
  await nav.getByRole('link', { name: 'Sign in' }).click();
  const bar = slow.getByRole('progressbar', { name: 'Loading the page' });
  await bar.waitFor();
  assert.equal(await slow.getByRole('heading', { name: 'Welcome to Hearth', level: 1 }).isVisible(), true, 'the home page is still up');
  // It fades in only once the wait is long (no flash on a fast connection).
  await slow.waitForFunction(() => getComputedStyle(document.querySelector('[role="progressbar"]')!).opacity === '1');
  assert.equal(await slow.getByRole('heading', { name: 'Welcome to Hearth', level: 1 }).isVisible(), true, 'the home page is still up under the bar');
  await slow.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  assert.equal(await bar.count(), 0);
  await slow.context().close();
});

test('a page that redirects while its target’s code comes ends on the target, navigating once', stepTimeout, async () => {
  // Notes sends a signed-out visitor to sign-in with <Navigate state={...}>, which navigates again
  // at every render: a page kept up while its target loads must not be rendered again meanwhile
  // (it was, and the tab froze in a navigation loop).
  const redirected = await record.newPage(await record.newContext(browser!, waitMs));
  await redirected.addInitScript(() => {
    const counted = window as unknown as { replaces: number };
    counted.replaces = 0;
    const replace = history.replaceState.bind(history);
    history.replaceState = (...args: Parameters<History['replaceState']>) => {
      counted.replaces += 1;
      replace(...args);
    };
  });
  await redirected.route('**/assets/SignIn-*.js', async (route) => {
    await new Promise((wait) => setTimeout(wait, 1_500));
    await route.continue();
  });
  await redirected.goto(url('/notes'));
  await redirected.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  assert.equal(new URL(redirected.url()).pathname, '/signin');
  const replaces = await redirected.evaluate(() => (window as unknown as { replaces: number }).replaces);
  assert.ok(replaces <= 3, `the redirect replaced the history entry ${replaces} times`);
  await redirected.context().close();
});

test('nothing the page requested left the machine, and the page threw nothing', () => {
  assert.deepEqual(record.pageErrors, []);
  assert.deepEqual(requestsOffMachine(record.requested), []);
});
