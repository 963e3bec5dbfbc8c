/**
 * The operator console in a real Chromium: an operator signs in (the admin key once; an operator
 * account through the firebase SDK), finds a user by email, disables the account, and that user's
 * next sign-in through the firebase SDK fails with auth/user-disabled; enabling it lets them back.
 *
 * Needs the built web app (`npm run build`) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createUserWithEmailAndPassword, signInWithEmailAndPassword } from 'firebase/auth';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { SdkClients, errorCodeOf } from '../helpers/client.js';
import { keepScreenshot, pageStorage, signInWithAdminKey } from '../helpers/console-page.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
const record = new BrowserRecord();
const clients = new SdkClients('console-users');
const email = uniqueEmail('disable-me');
const password = 'correct horse 1';

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot, dev: false });
  browser = await launchChromium();
  context = await record.newContext(browser, waitMs);
  page = await record.newPage(context);
  // A user who signs up through the firebase SDK, as an app's user would.
  await createUserWithEmailAndPassword(clients.auth(server), email, password);
});

after(async () => {
  await clients.close();
  await browser?.close();
  await server?.close();
});

test('an operator signs in with the admin key, which the page keeps nowhere', stepTimeout, async () => {
  await page.goto(`${server!.url}/console`);
  await page.getByRole('heading', { name: 'Sign in to the Hearth console' }).waitFor();
  await keepScreenshot(page, 'sign-in');
  await page.getByRole('textbox', { name: 'Admin key' }).fill('not-the-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'admin key was not accepted' }).waitFor();
  await signInWithAdminKey(page, server!.url, server!.adminKey);
  assert.ok(!(await pageStorage(page)).includes(server!.adminKey), 'the admin key is not kept in cookies, storage or IndexedDB');
  assert.equal(await page.getByRole('textbox', { name: 'Admin key' }).count(), 0);
  // A reload keeps the session (the HttpOnly cookie), not the key.
  await page.reload();
  await page.getByTestId('console-operator').waitFor();
});

test('an operator account (custom claim hearthOperator) signs in with email and password', stepTimeout, async () => {
  const operatorEmail = uniqueEmail('operator');
  const created = await adminPost(server!, '/accounts', { email: operatorEmail, password });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const claims = await adminPost(server!, '/accounts:update', { localId: created.body.localId, customAttributes: JSON.stringify({ hearthOperator: true }) });
  assert.equal(claims.status, 200, JSON.stringify(claims.body));
  const other = await record.newPage(await record.newContext(browser!, waitMs));
  await other.goto(`${server!.url}/console`);
  await other.getByLabel('An operator account').check();
  await other.getByLabel('Email').fill(operatorEmail);
  await other.getByLabel('Password').fill(password);
  await other.getByRole('button', { name: 'Sign in' }).click();
  await other.getByTestId('console-operator').waitFor();
  assert.equal((await other.getByTestId('console-operator').innerText()).trim(), operatorEmail);
  await other.getByRole('button', { name: 'Sign out' }).click();
  await other.getByRole('heading', { name: 'Sign in to the Hearth console' }).waitFor();
  await other.context().close();
});

test('find the user by email, disable the account, and the next SDK sign-in fails with auth/user-disabled', stepTimeout, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).click();
  await page.getByTestId('users-table').waitFor();
  await page.getByLabel('Search by').selectOption('email');
  await page.getByLabel('Search users').fill(email);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: email }).click();
  await page.getByRole('heading', { name: email }).waitFor();
  await page.getByText('Email and password', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Disable account' }).click();
  await page.getByTestId('user-disabled').waitFor();
  await keepScreenshot(page, 'user-disabled');
  assert.equal(await errorCodeOf(signInWithEmailAndPassword(clients.auth(server!), email, password)), 'auth/user-disabled');

  await page.getByRole('button', { name: 'Enable account' }).click();
  await page.getByRole('button', { name: 'Disable account' }).waitFor();
  assert.equal(await errorCodeOf(signInWithEmailAndPassword(clients.auth(server!), email, password)), 'no error');
});

test('custom claims are validated before saving and reach the account', stepTimeout, async () => {
  const claims = page.getByLabel('Claims (JSON)');
  await claims.fill('{"admin": tru');
  await page.getByText('Not valid JSON').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Save claims' }).isDisabled(), true);
  await claims.fill('{"sub": "x"}');
  await page.getByText('reserved: sub').waitFor();
  await claims.fill('{"role": "editor"}');
  await page.getByRole('button', { name: 'Save claims' }).click();
  await page.getByText('Saved. They reach').waitFor();
  const uid = (await page.locator('.console-facts dd code').first().innerText()).trim();
  const looked = await adminPost(server!, '/accounts:lookup', { localId: [uid] });
  assert.deepEqual(JSON.parse(looked.body.users[0].customAttributes), { role: 'editor' });
});

test('a text-message second factor is listed and removed', stepTimeout, async () => {
  const uid = (await page.locator('.console-facts dd code').first().innerText()).trim();
  const enrolled = await adminPost(server!, '/accounts:update', { localId: uid, mfa: { enrollments: [{ phoneInfo: '+15555550101', displayName: 'work phone' }, { phoneInfo: '+15555550102', displayName: 'home phone' }] } });
  assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
  await page.reload();
  await page.getByText('Text message to +15555550101 “work phone”').waitFor();
  await page.getByRole('button', { name: 'Remove second factor work phone' }).click();
  await page.getByRole('status').filter({ hasText: 'Second factor removed.' }).waitFor();
  const looked = await adminPost(server!, '/accounts:lookup', { localId: [uid] });
  assert.deepEqual(looked.body.users[0].mfaInfo.map((factor: { phoneInfo: string }) => factor.phoneInfo), ['+15555550102']);
});

test('the console works at 390 px wide', stepTimeout, async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('link', { name: '← All users' }).click();
  await page.getByTestId('users-table').waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  await keepScreenshot(page, 'users-390px');
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at 390px`);
  for (const [section, heading] of [['Data', 'Data'], ['Rules', 'Rules'], ['Sign-in', 'Sign-in settings'], ['Outbox', 'Outbox'], ['Metrics', 'Metrics'], ['Audit log', 'Audit log']] as const) {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: section }).click();
    await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    await page.locator('.console-loading').first().waitFor({ state: 'detached' });
    const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(sideways <= 0, `${section} scrolls sideways by ${sideways}px at 390px`);
  }
  await keepScreenshot(page, 'audit-390px');
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).click();
  await page.getByTestId('users-table').waitFor();
  await page.setViewportSize({ width: 1440, height: 900 });
  await keepScreenshot(page, 'users-1440px');
});

test('search by provider lists every account linked to it, by uid, and no other', stepTimeout, async () => {
  const linked = ['prov-c', 'prov-a', 'prov-b'].map((localId) => ({ localId, email: `${localId}@partner.example`, providerUserInfo: [{ providerId: 'oidc.partner', rawId: `raw-${localId}`, email: `${localId}@partner.example` }] }));
  const others = [{ localId: 'prov-0', email: 'prov-0@example.com', providerUserInfo: [{ providerId: 'oidc.other', rawId: 'raw-0' }] }, { localId: 'prov-d', email: 'prov-d@example.com' }];
  const created = await adminPost(server!, '/accounts:batchCreate', { users: [...linked, ...others] });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal(created.body.error, undefined, JSON.stringify(created.body));
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).click();
  await page.getByTestId('users-table').waitFor();
  await page.getByLabel('Search by').selectOption('provider');
  await page.getByLabel('Search users').fill('oidc.partner');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: 'prov-a@partner.example' }).waitFor();
  const shown = await page.getByTestId('users-table').locator('tbody tr td:first-child').allInnerTexts();
  assert.deepEqual(shown.map((text) => text.trim()), ['prov-a@partner.example', 'prov-b@partner.example', 'prov-c@partner.example']);
});

test('the audit log page lists the disable, the enable and the claims change, and exports them', stepTimeout, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit log' }).click();
  await page.getByTestId('audit-table').waitFor();
  const entries = page.getByTestId('audit-entry');
  await entries.filter({ hasText: '"disableUser":true' }).first().waitFor();
  await entries.filter({ hasText: '"disableUser":false' }).first().waitFor();
  await entries.filter({ hasText: 'customAttributes' }).first().waitFor();
  assert.match(await entries.filter({ hasText: '"disableUser":true' }).first().innerText(), /admin/);
  // In words, not HTTP lines: what happened to which account.
  await page.getByTestId('audit-words').filter({ hasText: /^Account .+: disabled$/ }).first().waitFor();
  await page.getByTestId('audit-words').filter({ hasText: /^Account .+: enabled$/ }).first().waitFor();
  await page.getByTestId('audit-words').filter({ hasText: /custom claims changed/ }).first().waitFor();
  await keepScreenshot(page, 'audit-log');
  // Filters: by action (only account changes) and by operator.
  await page.getByLabel('Action').selectOption('Accounts');
  assert.deepEqual([...new Set(await entries.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-action'))))], ['Accounts']);
  await page.getByLabel('Operator').selectOption('admin');
  assert.ok((await entries.count()) >= 3);
  await page.getByLabel('Since').fill('2999-01-01T00:00');
  await page.getByText('No entry matches these filters.').waitFor();
  await keepScreenshot(page, 'audit-log-filtered');
  await page.getByLabel('Since').fill('');
  await page.getByLabel('Action').selectOption('');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export (NDJSON)' }).click()]);
  const { readFile } = await import('node:fs/promises');
  const lines = (await readFile((await download.path())!, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { summary: string; operator: string });
  assert.ok(lines.some((entry) => entry.summary.includes('"disableUser":true') && entry.operator === 'admin'), 'the export holds the disable');
});

test('export downloads every user as Firebase CLI JSON; import creates the accounts of such a file', stepTimeout, async () => {
  await page.goto(`${server!.url}/console/users`);
  await page.getByText('Import and export').click();
  const [exported] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export all users (JSON)' }).click()]);
  const { readFile } = await import('node:fs/promises');
  const file = JSON.parse(await readFile((await exported.path())!, 'utf8')) as { users: { email?: string }[] };
  assert.ok(file.users.some((user) => user.email === email), 'the export holds the disabled-then-enabled user');

  const imported = [
    { localId: `imported-${process.pid}-1`, email: uniqueEmail('imported'), emailVerified: true, disabled: false },
    { localId: `imported-${process.pid}-2`, phoneNumber: '+15555550142', customAttributes: '{"plan":"pro"}' },
  ];
  await page.getByLabel('Import a Firebase CLI export (JSON)').setInputFiles({ name: 'users.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ users: imported })) });
  await page.getByRole('status').filter({ hasText: 'Imported 2 account(s).' }).waitFor();
  const looked = await adminPost(server!, '/accounts:lookup', { localId: imported.map((user) => user.localId) });
  assert.deepEqual(looked.body.users.map((user: { localId: string }) => user.localId).sort(), imported.map((user) => user.localId).sort());

  await page.getByLabel('Import a Firebase CLI export (JSON)').setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{"accounts": []}') });
  await page.locator('.console-alert').filter({ hasText: 'no "users" list' }).waitFor();
});

test('a session ended elsewhere brings back the sign-in screen with the reason', stepTimeout, async () => {
  const elsewhere = await record.newPage(context);
  await elsewhere.goto(`${server!.url}/console`);
  await elsewhere.getByRole('button', { name: 'Sign out' }).click();
  await elsewhere.getByRole('heading', { name: 'Sign in to the Hearth console' }).waitFor();
  await elsewhere.close();
  // The Data page's first call is an admin API's (listCollectionIds), which refuses without saying why.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Data' }).click();
  await page.getByRole('status').filter({ hasText: 'Your session has ended.' }).waitFor();
  await page.getByRole('textbox', { name: 'Admin key' }).waitFor();
});

test('nothing left the machine and the page threw nothing', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
