/**
 * The console's Rules page in a real Chromium: a broken rule shows its error at its line (the
 * gutter and the issue list, from rules:check) and cannot be deployed; fixed rules deploy
 * (ruleset + release) and take effect for the firebase SDK; the playground gives a verdict with
 * the deciding match and line; an older ruleset is released again from the history (rollback);
 * the audit log holds the deploys.
 *
 * Needs the built web app (`npm run build`) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { keepScreenshot, signInWithAdminKey } from '../helpers/console-page.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let page: Page;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot, dev: false });
  browser = await launchChromium();
  page = await record.newPage(await record.newContext(browser, waitMs));
  await signInWithAdminKey(page, server.url, server.adminKey);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const ownerRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} {
      allow read: if request.auth != null && request.auth.uid == resource.data.owner;
    }
  }
}
`;
// Line 5 compares with nothing.
const brokenRules = ownerRules.replace('== resource.data.owner;', '== ;');
const openRules = ownerRules.replace('allow read: if request.auth != null && request.auth.uid == resource.data.owner;', 'allow read: if true;');

async function release(): Promise<string> {
  const response = await fetch(`${server!.url}/firebaserules.googleapis.com/v1/projects/${server!.projectId}/releases/cloud.firestore`, { headers: { authorization: `Bearer ${server!.adminKey}` } });
  assert.equal(response.status, 200);
  return ((await response.json()) as { rulesetName: string }).rulesetName;
}

async function readNoteAnonymously(): Promise<number> {
  const response = await fetch(`${server!.url}/v1/projects/${server!.projectId}/databases/(default)/documents/notes/n1`);
  return response.status;
}

test('a broken rule shows its error at its line and cannot be deployed', stepTimeout, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Rules' }).click();
  const editor = page.getByLabel('Rules source');
  await editor.waitFor();
  await editor.fill(brokenRules);
  const issues = page.getByTestId('rules-issues');
  await issues.waitFor();
  assert.match(await issues.innerText(), /^Line 5, column \d+:/);
  assert.equal(await page.locator('.console-gutter-error').getAttribute('data-line'), '5');
  assert.equal(await page.getByRole('button', { name: 'Deploy' }).isDisabled(), true);
  await keepScreenshot(page, 'rules-error-at-line');
});

test('fixed rules deploy and take effect', stepTimeout, async () => {
  const note = await fetch(`${server!.url}/v1/projects/${server!.projectId}/databases/(default)/documents/notes?documentId=n1`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server!.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ fields: { owner: { stringValue: 'alice' } } }),
  });
  assert.equal(note.status, 200);
  await page.getByLabel('Rules source').fill(openRules);
  await page.getByTestId('rules-status').filter({ hasText: 'No errors.' }).waitFor();
  await page.getByRole('button', { name: 'Deploy' }).click();
  await page.getByRole('status').filter({ hasText: /^Deployed / }).waitFor();
  const first = await release();
  assert.equal(await readNoteAnonymously(), 200);

  await page.getByLabel('Rules source').fill(ownerRules);
  await page.getByTestId('rules-status').filter({ hasText: 'No errors.' }).waitFor();
  await page.getByRole('button', { name: 'Deploy' }).click();
  await page.getByRole('status').filter({ hasText: /^Deployed / }).waitFor();
  assert.notEqual(await release(), first);
  assert.equal(await readNoteAnonymously(), 403);
});

test('the playground denies an anonymous read and allows the owner, naming the deciding line', stepTimeout, async () => {
  const playground = page.getByRole('form', { name: 'Rules playground' });
  await playground.getByLabel('Method').selectOption('get');
  await playground.getByLabel('Path').fill('notes/n1');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  const verdict = playground.getByTestId('playground-verdict');
  await verdict.filter({ hasText: 'Denied' }).waitFor();
  // Told in a sentence with the statement quoted, not as "false @ L5".
  await verdict.getByTestId('denial-explanation').filter({ hasText: /The condition of the allow on line \d+ was false for this get\. allow / }).waitFor();
  assert.doesNotMatch(await verdict.innerText(), /@ L\d/);
  await keepScreenshot(page, 'rules-playground-denied');

  await playground.getByLabel('Signed-in user').check();
  await playground.getByLabel('UID').fill('alice');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Allowed' }).waitFor();
  const text = await verdict.innerText();
  assert.match(text, /line 5/);
  assert.match(text, /notes\/\{id\}/);
  await keepScreenshot(page, 'rules-playground');

  // A list is judged by its constraints: only a query limited to the caller's own notes may pass.
  await playground.getByLabel('Method').selectOption('list');
  await playground.getByLabel('Path').fill('notes');
  await playground.getByLabel('Query constraints').fill('{"where": [["owner", "==", "alice"]], "limit": 10}');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Allowed' }).waitFor();
  await playground.getByLabel('Query constraints').fill('{"limit": 10}');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Denied' }).waitFor();
  await playground.getByLabel('Query constraints').fill('{"where": [["owner"]]}');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await playground.locator('.console-alert').filter({ hasText: 'Each where entry is [field, operator, value]' }).waitFor();

  // With incoming data and a stored document given by hand, for a write the rules never allow.
  await playground.getByLabel('Method').selectOption('create');
  await playground.getByLabel('Path').fill('notes/n2');
  await playground.getByLabel('Incoming data').fill('{"owner": "alice"}');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Denied' }).waitFor();

  // Timestamps can be expressed (Firestore's own JSON for them), and rules that want one see one.
  const timestampRules = ownerRules.replace('match /notes/{id} {', 'match /notes/{id} {\n      allow create: if request.resource.data.due is timestamp && request.resource.data.due > timestamp.date(2020, 1, 1);');
  await page.getByLabel('Rules source').fill(timestampRules);
  await page.getByTestId('rules-status').filter({ hasText: 'No errors.' }).waitFor();
  await playground.getByLabel('Incoming data').fill('{"owner": "alice", "due": {"timestampValue": "2025-06-01T12:00:00Z"}}');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Allowed' }).waitFor();
  await keepScreenshot(page, 'rules-playground-timestamp');
  await playground.getByLabel('Incoming data').fill('{"owner": "alice", "due": "2025-06-01T12:00:00Z"}');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Denied' }).waitFor();
  await page.getByLabel('Rules source').fill(ownerRules);
  await page.getByTestId('rules-status').filter({ hasText: 'No errors.' }).waitFor();
});

test('an older ruleset is released again from the history (rollback)', stepTimeout, async () => {
  const history = page.getByTestId('rules-history');
  await history.getByRole('listitem').nth(1).waitFor();
  const older = history.getByRole('listitem').filter({ has: page.getByRole('button', { name: 'Release this one' }) }).first();
  const olderId = (await older.locator('code').innerText()).trim();
  await older.getByRole('button', { name: 'Release this one' }).click();
  await page.getByRole('status').filter({ hasText: `Rolled back to ${olderId}.` }).waitFor();
  assert.equal((await release()).split('/').pop(), olderId);
  assert.equal(await readNoteAnonymously(), 200, 'the open rules are in force again');
});

test('the audit log holds the deploys and the rollback', stepTimeout, async () => {
  await page.goto(`${server!.url}/console/audit`);
  const entries = page.getByTestId('audit-entry');
  await entries.filter({ hasText: '/rulesets' }).first().waitFor();
  assert.ok((await entries.filter({ hasText: 'releases/cloud.firestore' }).count()) >= 2);
});

test('nothing left the machine and the page threw nothing', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
