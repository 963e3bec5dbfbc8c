/**
 * A tenant's mailed links on the hosted action page, in a real Chromium: the link names its
 * tenant (`tenantId`), and the page (packages/web/src/action) sets it on the SDK for the call, so a
 * tenant's password reset and email verification complete there; the project's own accounts are
 * untouched. Needs `npm run build -w packages/web` first and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createUserWithEmailAndPassword, reload, sendEmailVerification, sendPasswordResetEmail, signInWithEmailAndPassword, type Auth } from 'firebase/auth';
import type { Browser, Page } from 'playwright-core';
import { uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { SdkClients, errorCodeOf } from '../helpers/client.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { createTenant, waitForTenantMail, type TenantResource } from '../helpers/tenants.js';

const waitMs = 15_000;
const stepTimeout = { timeout: 90_000 };

let server: TestHearth;
let tenant: TenantResource;
let browser: Browser | undefined;
let page: Page;
const record = new BrowserRecord();
const clients = new SdkClients('e2e-tenant');

function clientIn(tenantId: string | null): Auth {
  const auth = clients.auth(server);
  auth.tenantId = tenantId;
  return auth;
}

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot });
  tenant = await createTenant(server, { displayName: 'Pages' });
  browser = await launchChromium();
  page = await record.newPage(await record.newContext(browser, waitMs));
});

after(async () => {
  await browser?.close();
  await clients.close();
  await server.close();
});

test("a tenant's password reset link completes on the hosted action page", stepTimeout, async () => {
  const email = uniqueEmail('tenant-page');
  await createUserWithEmailAndPassword(clientIn(tenant.tenantId), email, 'old-password-1');
  await sendPasswordResetEmail(clientIn(tenant.tenantId), email);
  const mail = await waitForTenantMail(server, tenant.tenantId, email, 'PASSWORD_RESET');
  assert.equal(new URL(mail.oobLink).searchParams.get('tenantId'), tenant.tenantId);

  await page.goto(mail.oobLink);
  await page.getByTestId('action-email').filter({ hasText: email }).waitFor();
  await page.getByLabel('New password', { exact: true }).fill('new-password-2');
  await page.getByRole('button', { name: 'Save password' }).click();
  await page.getByRole('status').filter({ hasText: 'Your password has been changed.' }).waitFor();

  assert.equal(await errorCodeOf(signInWithEmailAndPassword(clientIn(tenant.tenantId), email, 'old-password-1')), 'auth/invalid-credential');
  const { user } = await signInWithEmailAndPassword(clientIn(tenant.tenantId), email, 'new-password-2');
  assert.equal(user.tenantId, tenant.tenantId);
});

test("a tenant's verification link verifies the tenant's account", stepTimeout, async () => {
  const email = uniqueEmail('tenant-verify-page');
  const { user } = await createUserWithEmailAndPassword(clientIn(tenant.tenantId), email, 'password-3');
  await sendEmailVerification(user);
  const mail = await waitForTenantMail(server, tenant.tenantId, email, 'VERIFY_EMAIL');
  await page.goto(mail.oobLink);
  await page.getByRole('status').filter({ hasText: 'Your email has been verified.' }).waitFor();
  await reload(user);
  assert.equal(user.emailVerified, true);
});

test('nothing the page loaded left the machine, and it threw nothing', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
