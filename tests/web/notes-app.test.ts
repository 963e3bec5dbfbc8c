/**
 * Notes as a small app in a real Chromium, at a phone's width (390 px) and a desktop's (1280 px),
 * under the rules it ships: create with the server's timestamp, edit in place, delete with undo,
 * offline writes shown as pending until the connection is back, a very long word wrapped inside
 * the page, and a rules refusal that ends "Loading" with a sentence. The server runs the web app's
 * own functions code base (packages/web/functions): the page shows the note count its trigger keeps
 * through creates, Undo, deletes and offline writes (and nothing of it without functions).
 * Screenshots go to .tmp/artifacts/web/.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { defaultShippedRulesFile } from '../../packages/server/src/config.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { noteTexts, waitForNotes } from '../helpers/notes-page.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 90_000 };
const artifacts = join(repoRoot, '.tmp/artifacts/web');

let server: TestHearth | undefined;
let browser: Browser | undefined;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  mkdirSync(artifacts, { recursive: true });
  server = await startHearth({ webRoot, dev: false, shippedRulesFile: defaultShippedRulesFile, functionsDir: join(repoRoot, 'packages/web/functions') });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Whether the note's document exists on the server (read with the admin key, past any rules). */
async function onServer(uid: string, text: string): Promise<boolean> {
  const response = await fetch(`${server!.url}/v1/projects/${server!.projectId}/databases/(default)/documents/users/${uid}/notes?pageSize=100`, {
    headers: { authorization: `Bearer ${server!.adminKey}` },
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { documents?: { fields: { text: { stringValue: string } } }[] };
  return (body.documents ?? []).some((document) => document.fields.text.stringValue === text);
}

async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((wait) => setTimeout(wait, 100));
  }
}

async function signUp(page: Page, base: string): Promise<string> {
  await page.goto(`${base}/signup`);
  await page.getByLabel('Email', { exact: true }).fill(uniqueEmail('notes-app'));
  await page.getByLabel('Password', { exact: true }).fill('correct horse 1');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByTestId('signed-in-email').waitFor();
  await page.goto(`${base}/account`);
  const uid = (await page.getByTestId('account-uid').innerText()).trim();
  await page.getByRole('banner').getByRole('link', { name: 'Notes' }).click();
  return uid;
}

/** The count the trigger keeps, as the page shows it (it follows the list shortly after a change). */
async function waitForCount(page: Page, shown: string): Promise<void> {
  await page.getByTestId('note-count').filter({ hasText: shown }).waitFor();
}

async function addNote(page: Page, text: string): Promise<void> {
  await page.getByLabel('New note').fill(text);
  await page.getByRole('button', { name: 'Add note' }).click();
}

for (const viewport of [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 800 },
]) {
  describe(`at ${viewport.width} px`, () => {
    let context: BrowserContext;
    let page: Page;
    let uid: string;
    const shot = (step: string) => page.screenshot({ path: join(artifacts, `notes-${viewport.name}-${step}.png`), fullPage: true });

    before(async () => {
      context = await record.newContext(browser!, waitMs);
      page = await record.newPage(context);
      await page.setViewportSize({ width: viewport.width, height: viewport.height });
      uid = await signUp(page, server!.url);
    });
    after(async () => context?.close());

    test('an empty list says what to do, and a new note shows with its time once the server has it', stepTimeout, async () => {
      await page.getByTestId('notes-empty').filter({ hasText: 'No notes yet. Write your first one above.' }).waitFor();
      assert.equal(await page.getByRole('listitem').count(), 0, 'the empty state is not a list item');
      await shot('empty');
      await addNote(page, 'buy milk');
      await waitForNotes(page, ['buy milk'], waitMs);
      const saved = page.locator('[data-testid="note"][data-pending="false"]');
      await saved.waitFor();
      const time = await saved.locator('time').getAttribute('datetime');
      assert.ok(time && Math.abs(Date.parse(time) - Date.now()) < 5 * 60_000, `a creation time near now: ${time}`);
      await waitForCount(page, '1 note saved on the server.');
      await addNote(page, 'call mom');
      await waitForNotes(page, ['call mom', 'buy milk'], waitMs);
      await waitForCount(page, '2 notes saved on the server.');
    });

    test('a note is edited in place, and the edit is the server\'s', stepTimeout, async () => {
      await page.getByRole('button', { name: 'Edit buy milk' }).click();
      const editor = page.getByLabel('Note text');
      assert.equal(await editor.inputValue(), 'buy milk');
      await editor.fill('buy oat milk');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await waitForNotes(page, ['call mom', 'buy oat milk'], waitMs);
      await page.getByTestId('note').filter({ hasText: 'buy oat milk' }).filter({ hasText: 'edited' }).waitFor();
      await waitUntil(() => onServer(uid, 'buy oat milk'), 'the edit reached the server');
      // Escape drops an edit.
      await page.getByRole('button', { name: 'Edit call mom' }).click();
      await page.getByLabel('Note text').fill('never saved');
      await page.getByLabel('Note text').press('Escape');
      await waitForNotes(page, ['call mom', 'buy oat milk'], waitMs);
    });

    test('a deleted note can be brought back; one not brought back is gone from the server', stepTimeout, async () => {
      const createdAt = () => page.getByTestId('note').filter({ hasText: 'call mom' }).locator('time').first().getAttribute('datetime');
      const before = await createdAt();
      await page.getByRole('button', { name: 'Delete call mom' }).click();
      await waitForNotes(page, ['buy oat milk'], waitMs);
      const undo = page.getByRole('status').filter({ hasText: 'Note deleted.' }).getByRole('button', { name: 'Undo' });
      await shot('undo');
      await undo.click();
      await waitForNotes(page, ['call mom', 'buy oat milk'], waitMs);
      await waitUntil(() => onServer(uid, 'call mom'), 'the restored note reached the server');
      await page.locator('[data-testid="note"][data-pending="false"]').filter({ hasText: 'call mom' }).waitFor();
      assert.equal(await createdAt(), before, 'the restored note keeps its creation time');

      await page.getByRole('button', { name: 'Delete call mom' }).click();
      await waitForNotes(page, ['buy oat milk'], waitMs);
      await waitUntil(async () => !(await onServer(uid, 'call mom')), 'the deletion reached the server');
      await page.getByRole('status').filter({ hasText: 'Note deleted.' }).waitFor({ state: 'detached' });
      assert.deepEqual(await noteTexts(page), ['buy oat milk']);
      await waitForCount(page, '1 note saved on the server.');
    });

    test('a deleted note stays deleted when the page reloads within the undo window', stepTimeout, async () => {
      await addNote(page, 'delete then reload');
      await page.locator('[data-testid="note"][data-pending="false"]').filter({ hasText: 'delete then reload' }).waitFor();
      await page.getByRole('button', { name: 'Delete delete then reload' }).click();
      // The page says "deleted" once the server has it: then a reload cannot bring the note back.
      await page.getByRole('status').filter({ hasText: 'Note deleted.' }).waitFor();
      assert.equal(await onServer(uid, 'delete then reload'), false, 'deleted on the server while Undo is still offered');
      await page.reload();
      await page.locator('[data-testid="notes"][data-from-cache="false"]').waitFor();
      assert.deepEqual(await noteTexts(page), ['buy oat milk']);
      await shot('deleted-after-reload');
    });

    test('offline, the page says so and a new note waits as pending; back online it is saved', stepTimeout, async () => {
      await context.setOffline(true);
      await page.getByTestId('offline').filter({ hasText: 'You are offline.' }).waitFor();
      await addNote(page, 'written offline');
      await waitForNotes(page, ['written offline', 'buy oat milk'], waitMs);
      const pending = page.getByTestId('note').filter({ hasText: 'written offline' });
      assert.equal(await pending.getAttribute('data-pending'), 'true');
      await pending.getByText('saving…').waitFor();
      await page.getByTestId('offline').filter({ hasText: '1 change is saved on this device' }).waitFor();
      await shot('offline');
      assert.equal(await onServer(uid, 'written offline'), false);
      await context.setOffline(false);
      await page.locator('[data-testid="note"][data-pending="false"]').filter({ hasText: 'written offline' }).waitFor();
      await page.getByTestId('offline').waitFor({ state: 'detached' });
      assert.equal(await onServer(uid, 'written offline'), true);
    });

    test('a pasted note longer than the rules take is kept whole, and the page says why it cannot be added', stepTimeout, async () => {
      const long = 'lorem ipsum '.repeat(100).trim();
      const input = page.getByLabel('New note');
      await input.focus();
      await page.evaluate((text) => document.execCommand('insertText', false, text), long);
      assert.equal((await input.inputValue()).length, long.length, 'nothing is cut');
      await page.getByTestId('note-too-long').filter({ hasText: `This note is ${long.length.toLocaleString('en-US')} characters long; a note holds at most 1,000.` }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Add note' }).isDisabled(), true);
      await shot('too-long');
      await input.fill('');
      await page.getByTestId('note-too-long').waitFor({ state: 'detached' });
    });

    test('a very long word wraps inside the page', stepTimeout, async () => {
      const word = `supercalifragilistic${'x'.repeat(400)}`;
      await addNote(page, word);
      await page.locator('[data-testid="note"][data-pending="false"]').filter({ hasText: 'supercalifragilistic' }).waitFor();
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert.ok(widths.scroll <= widths.client, `the page is ${widths.scroll} px wide in a ${widths.client} px window`);
      // Every create and delete of this user's sequence counted once: buy oat milk, written offline, this one.
      await waitForCount(page, '3 notes saved on the server.');
      await shot('long-text');
    });
  });
}

describe('when the rules refuse the notes', () => {
  let closed: TestHearth | undefined;
  const rulesDir = mkdtempSync(join(tmpdir(), 'hearth-closed-rules-'));
  after(async () => {
    await closed?.close();
    rmSync(rulesDir, { recursive: true, force: true });
  });

  test('"Loading" ends with a sentence saying why and what to do', stepTimeout, async () => {
    const rulesFile = join(rulesDir, 'firestore.rules');
    writeFileSync(rulesFile, "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /{document=**} {\n      allow read, write: if false;\n    }\n  }\n}\n");
    closed = await startHearth({ webRoot, dev: false, rulesFile });
    const context = await record.newContext(browser!, waitMs);
    const page = await record.newPage(context);
    await signUp(page, closed.url);
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'security rules refuse it' }).waitFor();
    assert.equal(await page.getByText('Loading your notes…').count(), 0);
    assert.equal(await page.getByTestId('note-count').count(), 0, 'no count without functions (and its read refused)');
    await page.screenshot({ path: join(artifacts, 'notes-refused.png'), fullPage: true });
    await context.close();
  });
});

test('no page error, and every request stayed on the machine', () => {
  assert.deepEqual(record.pageErrors, []);
  // The SDK's WebChannel tests the network with google.com's cleardot.gif when a request fails at
  // the network level; these pages went offline on purpose (see firestore-realtime-harness.ts).
  const networkTest = (address: string) => address.startsWith('https://www.google.com/images/cleardot.gif?');
  assert.deepEqual(requestsOffMachine(record.requested).filter((address) => !networkTest(address)), []);
});
