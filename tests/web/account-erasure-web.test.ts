/**
 * "Removed for good" is true: a user of the web app (outside --dev, under the rules it ships) with
 * notes and an attached file deletes the account on the account page in a real Chromium; its notes
 * leave the database and its files leave storage (account-erasure.ts). Screenshot in
 * .tmp/artifacts/web/account-erased.png.
 *
 * Needs the built web app (the root `npm test` builds it) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { defaultShippedRulesFile, defaultShippedStorageRulesFile } from '../../packages/server/src/config.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { waitForNotes } from '../helpers/notes-page.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { adminObject } from '../helpers/storage-clients.js';

const waitMs = 20_000;
const artifacts = join(repoRoot, '.tmp/artifacts/web');
let server: TestHearth | undefined;
let browser: Browser | undefined;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  mkdirSync(artifacts, { recursive: true });
  server = await startHearth({ webRoot, dev: false, shippedRulesFile: defaultShippedRulesFile, shippedStorageRulesFile: defaultShippedStorageRulesFile });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function notesOnServer(uid: string): Promise<number> {
  const response = await fetch(`${server!.url}/v1/projects/${server!.projectId}/databases/(default)/documents/users/${uid}/notes?pageSize=100`, { headers: { authorization: `Bearer ${server!.adminKey}` } });
  assert.equal(response.status, 200);
  return ((await response.json()) as { documents?: unknown[] }).documents?.length ?? 0;
}

test('deleting the account on the account page erases its notes and files', { timeout: 120_000 }, async () => {
  const page = await record.newPage(await record.newContext(browser!, waitMs));
  await page.goto(`${server!.url}/signup`);
  await page.getByLabel('Email', { exact: true }).fill(uniqueEmail('erased'));
  await page.getByLabel('Password', { exact: true }).fill('correct horse 1');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByTestId('signed-in-email').waitFor();
  await page.goto(`${server!.url}/account`);
  const uid = (await page.getByTestId('account-uid').innerText()).trim();
  await page.getByRole('banner').getByRole('link', { name: 'Notes' }).click();
  for (const text of ['first thought', 'second thought']) {
    await page.getByLabel('New note').fill(text);
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.locator('[data-testid="note"][data-pending="false"]').filter({ hasText: text }).waitFor();
  }
  await waitForNotes(page, ['second thought', 'first thought'], waitMs);
  await page.getByLabel('Attach a file to first thought').setInputFiles({ name: 'plan.txt', mimeType: 'text/plain', buffer: Buffer.from('the plan') });
  await page.getByTestId('attachment-name').filter({ hasText: 'plan.txt' }).waitFor();
  assert.equal(await notesOnServer(uid), 2);
  const noteId = (await (await fetch(`${server!.url}/v1/projects/${server!.projectId}/databases/(default)/documents/users/${uid}/notes?pageSize=100`, { headers: { authorization: `Bearer ${server!.adminKey}` } })).json()) as { documents: Array<{ name: string }> };
  const attachment = noteId.documents.map((document) => `users/${uid}/notes/${document.name.split('/').pop()}/plan.txt`);
  const stored = await Promise.all(attachment.map((name) => adminObject(server!, name, `${server!.projectId}.appspot.com`)));
  assert.equal(stored.filter(Boolean).length, 1, 'the attachment is stored');

  await page.goto(`${server!.url}/account`);
  const form = page.getByRole('region', { name: 'Delete account' });
  await form.getByLabel('I understand my account will be deleted').check();
  await form.getByRole('button', { name: 'Delete account' }).click();
  await page.getByRole('status').filter({ hasText: 'Your account was deleted.' }).waitFor();
  await page.screenshot({ path: join(artifacts, 'account-erased.png'), fullPage: true });

  const deadline = Date.now() + waitMs;
  while ((await notesOnServer(uid)) > 0 || (await Promise.all(attachment.map((name) => adminObject(server!, name, `${server!.projectId}.appspot.com`)))).some(Boolean)) {
    assert.ok(Date.now() < deadline, 'the deleted account\u2019s notes or files are still stored');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.deepEqual(record.pageErrors, []);
  assert.deepEqual(requestsOffMachine(record.requested), []);
});
