/**
 * The web app's live view end to end: the Notes page of a signed-in user, open in two windows of
 * a real Chromium, stays in sync over the Listen and Write streams (WebChannel) — a note added in
 * one window, or by another client over REST, appears in the other; a deletion disappears.
 *
 * Needs the built web app (the root `npm test` builds it) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { waitForNotes } from '../helpers/notes-page.js';
import { postJson, startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
let first: Page;
let second: Page;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot });
  browser = await launchChromium();
  context = await record.newContext(browser, waitMs);
  first = await record.newPage(context);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const url = (path: string) => `${server!.url}${path}`;
const notesOf = (page: Page) => page.getByTestId('note');

test('sign up, then open the notes page in two windows', stepTimeout, async () => {
  await first.goto(url('/signup'));
  await first.getByLabel('Email', { exact: true }).fill(uniqueEmail('notes'));
  await first.getByLabel('Password', { exact: true }).fill('correct horse 1');
  await first.getByRole('button', { name: 'Create account' }).click();
  await first.getByTestId('signed-in-email').waitFor();
  await first.getByRole('banner').getByRole('link', { name: 'Notes' }).click();
  await first.getByText('No notes yet.').waitFor();
  second = await record.newPage(context);
  await second.goto(url('/notes'));
  await second.getByText('No notes yet.').waitFor();
});

test('a note added in one window appears in the other, confirmed by the server', stepTimeout, async () => {
  await first.getByLabel('New note').fill('buy milk');
  await first.getByRole('button', { name: 'Add note' }).click();
  await waitForNotes(second, ['buy milk'], waitMs);
  await first.locator('[data-testid="note"][data-pending="false"]').waitFor();
  assert.equal(await notesOf(second).first().getAttribute('data-pending'), 'false');
  assert.equal(await second.getByTestId('notes').getAttribute('data-from-cache'), 'false');
});

test('a note written by another client over REST appears in both windows, newest first', stepTimeout, async () => {
  const userId = await userIdOf(first);
  const answer = await postJson(
    `${server!.url}/v1/projects/${server!.projectId}/databases/(default)/documents:commit`,
    {
      writes: [
        {
          update: { name: `projects/${server!.projectId}/databases/(default)/documents/users/${userId}/notes/from-rest`, fields: { text: { stringValue: 'call mom' } } },
          updateTransforms: [{ fieldPath: 'createdAt', setToServerValue: 'REQUEST_TIME' }],
        },
      ],
    },
    { authorization: 'Bearer owner' },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  await waitForNotes(first, ['call mom', 'buy milk'], waitMs);
  await waitForNotes(second, ['call mom', 'buy milk'], waitMs);
});

test('deleting in one window removes the note from the other', stepTimeout, async () => {
  await second.getByRole('button', { name: 'Delete buy milk' }).click();
  await waitForNotes(first, ['call mom'], waitMs);
  await waitForNotes(second, ['call mom'], waitMs);
});

test('no page error, and every request stayed on the machine', () => {
  assert.deepEqual(record.pageErrors, []);
  assert.deepEqual(requestsOffMachine(record.requested), []);
});

async function userIdOf(page: Page): Promise<string> {
  // The account page shows the uid; read it from there without leaving the notes window for long.
  const probe = await page.context().newPage();
  await probe.goto(url('/account'));
  const uid = (await probe.getByTestId('account-uid').innerText()).trim();
  await probe.close();
  return uid;
}
