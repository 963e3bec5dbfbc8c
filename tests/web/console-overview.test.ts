/**
 * The console's home is an overview in a real Chromium (production server, no SMTP, no SMS
 * provider): users in total and new today, sign-ins by method, documents, storage, requests now,
 * mail and text queues, recent audit entries and warnings, each from the server's counted answer
 * (GET /hearth/v1/projects/{p}/overview, operators only, a bad project id a 400). Screenshot in
 * .tmp/artifacts/console/overview.png.
 *
 * Needs the built web app (`npm run build`) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, recordFallbackTexts, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { keepScreenshot, signInWithAdminKey } from '../helpers/console-page.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
let server: TestHearth | undefined;
let browser: Browser | undefined;
let page: Page;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot, dev: false, metricsIntervalMs: 200 });
  browser = await launchChromium();
  page = await record.newPage(await record.newContext(browser, waitMs));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const overviewUrl = (projectId: string) => `${server!.url}/hearth/v1/projects/${projectId}/overview`;

test('the overview counts users, documents and sign-ins, lists recent changes and warns of what does not work', { timeout: 90_000 }, async () => {
  const emails = [uniqueEmail('overview'), uniqueEmail('overview'), uniqueEmail('overview')];
  for (const email of emails) assert.equal((await adminPost(server!, '/accounts', { email, password: 'correct horse 1' })).status, 200);
  // Created long ago: counted in the total, not as new today.
  assert.equal((await adminPost(server!, '/accounts:batchCreate', { users: [{ localId: 'old-account', email: 'old@example.com', createdAt: '1500000000000' }] })).status, 200);
  const signedIn = await postJson(`${server!.url}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=${server!.apiKey}`, { email: emails[0], password: 'correct horse 1', returnSecureToken: true });
  assert.equal(signedIn.status, 200);
  const root = `projects/${server!.projectId}/databases/(default)/documents`;
  const committed = await postJson(`${server!.url}/v1/${root}:commit`, { writes: [1, 2].map((n) => ({ update: { name: `${root}/things/t${n}`, fields: { n: { integerValue: String(n) } } } })) }, { authorization: `Bearer ${server!.adminKey}` });
  assert.equal(committed.status, 200);

  await signInWithAdminKey(page, server!.url, server!.adminKey);
  // A change through the console, for the recent audit entries.
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Sign-in' }).click();
  await page.getByRole('switch', { name: 'Anonymous' }).click();
  await page.getByRole('status').filter({ hasText: 'Anonymous sign-in' }).waitFor();
  await page.getByRole('link', { name: 'Hearth console' }).click();

  await page.getByTestId('users-total').filter({ hasText: '4' }).waitFor();
  await page.getByTestId('overview').getByText('3 new today (UTC)').waitFor();
  await page.getByTestId('documents-total').filter({ hasText: '2' }).waitFor();
  await page.getByTestId('sign-ins-by-method').getByText('Email and password:').waitFor();
  await page.getByTestId('recent-audit').getByText('Sign-in settings: anonymous sign-in', { exact: false }).first().waitFor();
  await page.getByTestId('recent-audit').getByText('Signed in to the console', { exact: false }).first().waitFor();
  await page.getByTestId('mail-delivery').filter({ hasText: 'No SMTP server' }).waitFor();
  await page.getByTestId('sms-delivery').filter({ hasText: 'No SMS provider' }).waitFor();
  // Said once, where mail and texts go, not again among the warnings.
  await page.getByTestId('warnings').getByText('No security rules released').waitFor();
  assert.equal(await page.getByTestId('warnings').getByText(/No SMTP server|No SMS provider/).count(), 0);
  await page.getByTestId('requests-now').waitFor();
  await keepScreenshot(page, 'overview');
});

test('a mistyped project is opened only on Enter or Open, and the overview says nothing is there', { timeout: 60_000 }, async () => {
  const box = page.getByRole('textbox', { name: 'Project' });
  await box.fill('demo-tset');
  // Moving away does not apply a half-typed id.
  await page.getByRole('heading', { name: 'Overview' }).click();
  await page.getByTestId('users-total').filter({ hasText: '4' }).waitFor();
  await page.getByRole('button', { name: 'Open', exact: true }).click();
  await page.getByTestId('warnings').getByText('There is no project "demo-tset" on this server yet').waitFor();
  await keepScreenshot(page, 'overview-unknown-project');
  await box.fill(server!.projectId);
  await box.press('Enter');
  await page.getByTestId('users-total').filter({ hasText: '4' }).waitFor();
  assert.equal(await page.getByText('There is no project').count(), 0);
});

test('the overview is for operators only, and a bad project id is a 400', async () => {
  const anonymous = await fetch(overviewUrl(server!.projectId));
  assert.ok(anonymous.status === 401 || anonymous.status === 403, String(anonymous.status));
  const body = (await anonymous.json()) as { error?: { status?: string } };
  assert.ok(body.error?.status, 'a Google-style error');
  const bad = await fetch(overviewUrl('Not_A_Project'), { headers: { authorization: `Bearer ${server!.adminKey}` } });
  assert.equal(bad.status, 400);
  const good = await fetch(overviewUrl(server!.projectId), { headers: { authorization: `Bearer ${server!.adminKey}` } });
  assert.equal(good.status, 200);
  const overview = (await good.json()) as { users: { total: number }; mail: { delivery: string } };
  assert.equal(overview.users.total, 4);
  assert.equal(overview.mail.delivery, 'outbox');
});

test('no page error, and every request stayed on the machine', () => {
  assert.deepEqual(record.pageErrors, []);
  assert.deepEqual(requestsOffMachine(record.requested), []);
});

test('a direct visit to a console page shows the page without a "Loading the console" step first', { timeout: 60_000 }, async () => {
  const page = await record.newPage(await record.newContext(browser!, waitMs));
  await signInWithAdminKey(page, server!.url, server!.adminKey);
  // Every text the page shows on its way, from its first byte: React holds content back for 300 ms
  // after a Suspense fallback was shown, so the console's bundle is fetched before the app renders.
  const fallbackTexts = await recordFallbackTexts(page);
  for (const path of ['/console', '/console/audit', '/console/users']) {
    await page.goto(`${server!.url}${path}`);
    await page.getByTestId('console-operator').waitFor();
    const shown = await fallbackTexts();
    assert.ok(shown.includes('Loading…'), `the page was observed from its start (${JSON.stringify([...new Set(shown)])})`);
    assert.ok(!shown.some((text) => text.includes("Loading the console")), `${path} showed the console's loading fallback first: ${JSON.stringify(shown)}`);
  }
});
