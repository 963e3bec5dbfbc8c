/**
 * The console's Data pages in a real Chromium: a document edited in the console reaches the web
 * app's Notes listener (another window, another user, over WebChannel); every value type is shown
 * by type and saved as edited; the query runner shows results and the plan; the live view (a
 * firebase app with no user, on the console session) follows a write made elsewhere.
 *
 * Needs the built web app (`npm run build`) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { keepScreenshot, signInWithAdminKey } from '../helpers/console-page.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { waitForNotes } from '../helpers/notes-page.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let app: Page;
let operator: Page;
let userId = '';
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  const dataDir = tempDataDir();
  const indexesFile = join(dataDir, 'firestore.indexes.json');
  // On collections the other steps do not query, so their plans stay what they test.
  writeFileSync(indexesFile, JSON.stringify({
    indexes: [
      { collectionGroup: 'orders', queryScope: 'COLLECTION', fields: [{ fieldPath: 'status', order: 'ASCENDING' }, { fieldPath: 'placedAt', order: 'DESCENDING' }] },
      { collectionGroup: 'shelves', queryScope: 'COLLECTION', fields: [{ fieldPath: 'embedding', vectorConfig: { dimension: 4, flat: {} } }] },
    ],
  }));
  server = await startHearth({ webRoot, dataDir, indexesFile });
  browser = await launchChromium();
  app = await record.newPage(await record.newContext(browser, waitMs));
  operator = await record.newPage(await record.newContext(browser, waitMs));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const documentsUrl = () => `${server!.url}/v1/projects/${server!.projectId}/databases/(default)/documents`;
const asAdmin = () => ({ authorization: `Bearer ${server!.adminKey}`, 'content-type': 'application/json' });

/** Clicks Save and waits for "Saved." — or fails with the alert the console showed instead. */
async function save(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Save document' }).click();
  const outcome = page.getByRole('status').filter({ hasText: 'Saved.' }).or(page.locator('.console-alert'));
  await outcome.first().waitFor();
  assert.equal(await page.locator('.console-alert').count(), 0, (await page.locator('.console-alert').allInnerTexts()).join('; '));
}

async function restDocument(path: string): Promise<any> {
  const response = await fetch(`${documentsUrl()}/${path}`, { headers: asAdmin() });
  assert.equal(response.status, 200);
  return response.json();
}

test('a user of the web app writes a note; the operator opens it in the console', stepTimeout, async () => {
  await app.goto(`${server!.url}/signup`);
  await app.getByLabel('Email', { exact: true }).fill(uniqueEmail('notes'));
  await app.getByLabel('Password', { exact: true }).fill('correct horse 1');
  await app.getByRole('button', { name: 'Create account' }).click();
  await app.getByTestId('signed-in-email').waitFor();
  await app.goto(`${server!.url}/account`);
  userId = (await app.getByTestId('account-uid').innerText()).trim();
  await app.goto(`${server!.url}/notes`);
  await app.getByLabel('New note').fill('buy milk');
  await app.getByRole('button', { name: 'Add note' }).click();
  await waitForNotes(app, ['buy milk'], waitMs);

  await signInWithAdminKey(operator, server!.url, server!.adminKey);
  await operator.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Data' }).click();
  await operator.getByTestId('collections').getByRole('link', { name: 'users' }).click();
  // users/{uid} holds only the notes subcollection: listed all the same, as Firebase's console does.
  await operator.getByTestId('documents').getByRole('link', { name: userId }).waitFor();
  await operator.getByText('(no fields; holds subcollections)').first().waitFor();
  assert.equal(await operator.getByText('No documents here yet.').count(), 0);
  assert.equal(await operator.getByLabel('Include documents that only hold subcollections').isChecked(), true);
  await keepScreenshot(operator, 'collection-of-subcollection-holders');
  await operator.getByTestId('documents').getByRole('link', { name: userId }).click();
  await operator.getByTestId('collections').getByRole('link', { name: 'notes' }).click();
  await operator.getByTestId('documents').getByRole('link').first().click();
  await operator.getByRole('form', { name: 'Document' }).waitFor();
});

test('editing the note in the console updates the web app’s listener', stepTimeout, async () => {
  const text = operator.getByLabel('text value');
  assert.equal(await text.inputValue(), 'buy milk');
  await text.fill('buy oat milk');
  await save(operator);
  await waitForNotes(app, ['buy oat milk'], waitMs);
  await keepScreenshot(operator, 'document-edited');
});

test('every value type is shown by its type and saved as edited', stepTimeout, async () => {
  const root = `projects/${server!.projectId}/databases/(default)/documents`;
  const fields = {
    name: { stringValue: 'Ada' },
    count: { integerValue: '42' },
    ratio: { doubleValue: 0.5 },
    active: { booleanValue: true },
    nothing: { nullValue: null },
    born: { timestampValue: '1815-12-10T00:00:00Z' },
    place: { geoPointValue: { latitude: 51.5, longitude: -0.12 } },
    friend: { referenceValue: `${root}/people/charles` },
    blob: { bytesValue: 'aGVsbG8=' },
    address: { mapValue: { fields: { city: { stringValue: 'London' } } } },
    tags: { arrayValue: { values: [{ stringValue: 'math' }, { integerValue: '1' }] } },
  };
  const made = await fetch(`${documentsUrl()}/people?documentId=ada`, { method: 'POST', headers: asAdmin(), body: JSON.stringify({ fields }) });
  assert.equal(made.status, 200);
  await operator.goto(`${server!.url}/console/data?db=(default)&path=people/ada`);
  await operator.getByRole('form', { name: 'Document' }).waitFor();
  const expectedTypes: Record<string, string> = { name: 'string', count: 'integer', ratio: 'double', active: 'boolean', nothing: 'null', born: 'timestamp', place: 'geopoint', friend: 'reference', blob: 'bytes', address: 'map', tags: 'array' };
  for (const [field, type] of Object.entries(expectedTypes)) assert.equal(await operator.getByLabel(`${field} type`, { exact: true }).inputValue(), type, field);
  assert.equal(await operator.getByLabel('address.city value', { exact: true }).inputValue(), 'London');
  assert.equal(await operator.getByLabel('tags[1] type', { exact: true }).inputValue(), 'integer');

  await operator.getByLabel('place latitude', { exact: true }).fill('48.85');
  await operator.getByLabel('count value', { exact: true }).fill('43');
  await operator.getByLabel('active value', { exact: true }).selectOption('false');
  await operator.getByLabel('born value', { exact: true }).fill('1852-11-27T00:00:00Z');
  await operator.getByLabel('nothing type', { exact: true }).selectOption('string');
  await operator.getByLabel('nothing value', { exact: true }).fill('now a string');
  await operator.getByLabel('address.city value', { exact: true }).fill('Paris');
  await operator.getByRole('button', { name: 'Add item' }).click();
  await operator.getByLabel('tags[2] value', { exact: true }).fill('poetry');
  // A bad value is refused before it is sent, with the reason.
  await operator.getByLabel('friend value', { exact: true }).fill('not a path');
  await operator.getByText('A reference must name a document').waitFor();
  assert.equal(await operator.getByRole('button', { name: 'Save document' }).isDisabled(), true);
  await operator.getByLabel('friend value', { exact: true }).fill(`${root}/people/mary`);
  await save(operator);
  await keepScreenshot(operator, 'document-types');

  const saved = (await restDocument('people/ada')).fields;
  assert.deepEqual(saved.place, { geoPointValue: { latitude: 48.85, longitude: -0.12 } });
  assert.deepEqual(saved.count, { integerValue: '43' });
  assert.deepEqual(saved.active, { booleanValue: false });
  assert.equal(new Date(saved.born.timestampValue).toISOString(), '1852-11-27T00:00:00.000Z');
  assert.deepEqual(saved.nothing, { stringValue: 'now a string' });
  assert.deepEqual(saved.address, { mapValue: { fields: { city: { stringValue: 'Paris' } } } });
  assert.deepEqual(saved.tags, { arrayValue: { values: [{ stringValue: 'math' }, { integerValue: '1' }, { stringValue: 'poetry' }] } });
  assert.deepEqual(saved.friend, { referenceValue: `${root}/people/mary` });
  assert.deepEqual(saved.blob, { bytesValue: 'aGVsbG8=' });
  assert.deepEqual(saved.ratio, { doubleValue: 0.5 });
});

test('the query runner shows the matching documents and the plan', stepTimeout, async () => {
  for (const [id, age] of [['grace', 85], ['alan', 41]] as const) {
    const made = await fetch(`${documentsUrl()}/people?documentId=${id}`, { method: 'POST', headers: asAdmin(), body: JSON.stringify({ fields: { age: { integerValue: String(age) } } }) });
    assert.equal(made.status, 200);
  }
  await operator.goto(`${server!.url}/console/data?db=(default)&path=people`);
  await operator.getByRole('tab', { name: 'Query' }).click();
  await operator.getByLabel('Filter 1 field').fill('age');
  await operator.getByLabel('Filter 1 operator').selectOption('GREATER_THAN');
  await operator.getByLabel('Filter 1 value').fill('50');
  await operator.getByLabel('Order by field').fill('age');
  await operator.getByRole('button', { name: 'Run query' }).click();
  const results = operator.getByTestId('query-results');
  await results.getByText('1 result', { exact: true }).waitFor();
  await results.getByRole('link', { name: 'grace' }).waitFor();
  assert.match(await operator.getByTestId('query-plan').innerText(), /indexesUsed/);
  await keepScreenshot(operator, 'query');
});

test('the live view follows a write made by another client', stepTimeout, async () => {
  await operator.getByRole('tab', { name: 'Live view' }).click();
  const live = operator.getByTestId('live-view');
  await live.getByTestId('live-document').filter({ hasText: 'grace' }).waitFor();
  const made = await fetch(`${documentsUrl()}/people?documentId=katherine`, { method: 'POST', headers: asAdmin(), body: JSON.stringify({ fields: { age: { integerValue: '101' } } }) });
  assert.equal(made.status, 200);
  await live.getByTestId('live-document').filter({ hasText: 'katherine' }).waitFor();
  await keepScreenshot(operator, 'live-view');
});

test('the Data page lists the indexes of the --indexes file', stepTimeout, async () => {
  await operator.goto(`${server!.url}/console/data?db=(default)`);
  const table = operator.getByTestId('declared-indexes');
  await table.waitFor();
  const orders = table.getByRole('row').filter({ hasText: 'orders' });
  assert.match(await orders.innerText(), /status ↑, placedAt ↓/);
  assert.match(await table.getByRole('row').filter({ hasText: 'shelves' }).innerText(), /embedding \(vector, 4 dimensions\)/);
  await keepScreenshot(operator, 'data-indexes');
});

test('the audit log records the console’s document writes', stepTimeout, async () => {
  await operator.goto(`${server!.url}/console/audit`);
  const entries = operator.getByTestId('audit-entry');
  await entries.filter({ hasText: `/documents/users/${userId}/notes/` }).filter({ hasText: 'buy oat milk' }).first().waitFor();
  await entries.filter({ hasText: '/documents/people/ada' }).filter({ hasText: 'Paris' }).first().waitFor();
});

test('nothing left the machine and no page threw', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
