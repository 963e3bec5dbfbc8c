/**
 * The console's Files page and storage rules in a real Chromium, on a production server (no --dev):
 * browse a bucket by folder, upload into a folder, download, delete; an object's metadata (content
 * type, caching, custom metadata) changed, and its download URLs made and revoked; then the Rules
 * page's Storage tab: a broken rule shown at its line, rules deployed as `firebase.storage` and in
 * force for the firebase SDK, the storage playground's verdicts with the deciding line.
 * Screenshots in .tmp/artifacts/console/.
 *
 * Needs the built web app (`npm run build`) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import { connectStorageEmulator, getStorage, ref, uploadBytes } from 'firebase/storage';
import type { Browser, Page } from 'playwright-core';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { keepScreenshot, signInWithAdminKey } from '../helpers/console-page.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { solidPng } from '../helpers/png.js';
import { adminObject, testBucket } from '../helpers/storage-clients.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 90_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let page: Page;
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot, dev: false });
  browser = await launchChromium();
  page = await record.newPage(await record.newContext(browser, waitMs));
  page.on('dialog', (dialog) => void dialog.accept());
  await signInWithAdminKey(page, server.url, server.adminKey);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const objectNames = () => page.getByTestId('files-object').locator('td:first-child').allInnerTexts();

test('browse by folder, upload into a folder, download', stepTimeout, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Files' }).click();
  await page.getByText('Nothing in this folder yet.').waitFor();
  assert.equal(await page.getByLabel('Bucket').inputValue(), testBucket);

  await page.getByLabel('Upload files').setInputFiles([
    { name: 'readme.txt', mimeType: 'text/plain', buffer: Buffer.from('top level') },
    { name: 'data.json', mimeType: 'application/json', buffer: Buffer.from('{"a":1}') },
  ]);
  await page.getByRole('status').filter({ hasText: 'Uploaded 2 files.' }).waitFor();
  await page.getByTestId('files-object').nth(1).waitFor();
  assert.deepEqual(await objectNames(), ['data.json', 'readme.txt']);

  // A new folder is opened by name and made by its first upload.
  await page.getByLabel('Folder to open').fill('users/alice');
  await page.getByRole('button', { name: 'Open folder' }).click();
  await page.getByText('Nothing in this folder yet.').waitFor();
  await page.getByLabel('Upload files').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: solidPng(5, 5, [1, 2, 3]) });
  await page.getByRole('status').filter({ hasText: 'Uploaded photo.png.' }).waitFor();
  assert.equal((await adminObject(server!, 'users/alice/photo.png'))?.contentType, 'image/png');

  // Back to the root by the breadcrumbs, then down again through the folder rows.
  await page.getByRole('navigation', { name: 'Folder' }).getByRole('button', { name: testBucket }).click();
  await page.getByTestId('files-folder').filter({ hasText: 'users/' }).getByRole('button').click();
  await page.getByTestId('files-folder').filter({ hasText: 'alice/' }).getByRole('button').click();
  await page.getByTestId('files-object').first().waitFor();
  assert.deepEqual(await objectNames(), ['photo.png']);
  assert.match(page.url(), /prefix=users%2Falice%2F/);
  await keepScreenshot(page, 'files-folder');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download users/alice/photo.png' }).click()]);
  assert.equal(download.suggestedFilename(), 'photo.png');
  assert.deepEqual(readFileSync((await download.path())!), solidPng(5, 5, [1, 2, 3]));
});

test("an object's metadata changed, and its download URLs made and revoked", stepTimeout, async () => {
  await page.getByTestId('files-object').getByRole('button', { name: 'photo.png', exact: true }).click();
  const panel = page.getByRole('region', { name: 'Object users/alice/photo.png' });
  await panel.getByTestId('object-facts').waitFor();
  assert.match(await panel.getByTestId('object-facts').innerText(), /\(\d+ bytes\)/);

  await panel.getByLabel('Cache-Control').fill('private, max-age=60');
  await panel.getByRole('button', { name: 'Add entry' }).click();
  await panel.getByLabel('Key 1').fill('owner');
  await panel.getByLabel('Value 1').fill('alice');
  await panel.getByRole('button', { name: 'Save metadata' }).click();
  await panel.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const saved = await adminObject(server!, 'users/alice/photo.png');
  assert.equal(saved?.cacheControl, 'private, max-age=60');
  assert.deepEqual(saved?.metadata, { owner: 'alice' });

  // The upload gave it one download URL; make a second, then revoke the first.
  const links = panel.getByTestId('download-urls').getByRole('link');
  await links.first().waitFor();
  const firstUrl = (await links.first().getAttribute('href'))!;
  assert.equal((await fetch(firstUrl)).status, 200);
  await panel.getByRole('button', { name: 'Create download URL' }).click();
  await links.nth(1).waitFor();
  const secondUrl = (await links.nth(1).getAttribute('href'))!;
  await panel.getByRole('button', { name: `Revoke link ending ${new URL(firstUrl).searchParams.get('token')!.slice(-8)}` }).click();
  await links.nth(1).waitFor({ state: 'detached' });
  assert.equal((await fetch(firstUrl)).status, 403);
  assert.equal((await fetch(secondUrl)).status, 200);
  await keepScreenshot(page, 'files-object');
});

test('delete an object after confirming', stepTimeout, async () => {
  await page.getByRole('button', { name: 'Delete users/alice/photo.png' }).click();
  await page.getByRole('status').filter({ hasText: 'Deleted users/alice/photo.png.' }).waitFor();
  await page.getByText('Nothing in this folder yet.').waitFor();
  assert.equal(await adminObject(server!, 'users/alice/photo.png'), undefined);
});

const storageRules = `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /users/{uid}/{file} {
      allow read: if request.auth != null && request.auth.uid == uid;
      allow write: if request.auth != null && request.auth.uid == uid && request.resource.contentType.matches('image/.*');
    }
    match /public/{file} {
      allow read, write: if true;
    }
  }
}
`;

test('storage rules: a broken rule at its line, then deployed as firebase.storage and in force', stepTimeout, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Rules' }).click();
  await page.getByRole('navigation', { name: 'Rules of' }).getByRole('link', { name: 'Storage' }).click();
  const editor = page.getByLabel('Rules source');
  await editor.waitFor();
  assert.match(await editor.inputValue(), /service firebase\.storage/);
  await editor.fill(storageRules.replace("request.resource.contentType.matches('image/.*');", 'request.resource.contentType.matches(;'));
  await page.getByTestId('rules-issues').waitFor();
  assert.equal(await page.locator('.console-gutter-error').first().getAttribute('data-line'), '6');
  assert.equal(await page.getByRole('button', { name: 'Deploy' }).isDisabled(), true);

  await editor.fill(storageRules);
  await page.getByTestId('rules-status').filter({ hasText: 'No errors.' }).waitFor();
  await page.getByRole('button', { name: 'Deploy' }).click();
  await page.getByRole('status').filter({ hasText: /^Deployed / }).waitFor();
  const released = await fetch(`${server!.url}/firebaserules.googleapis.com/v1/projects/${server!.projectId}/releases/firebase.storage`, { headers: { authorization: `Bearer ${server!.adminKey}` } });
  assert.equal(released.status, 200);
  assert.equal((await fetch(`${server!.url}/firebaserules.googleapis.com/v1/projects/${server!.projectId}/releases/cloud.firestore`, { headers: { authorization: `Bearer ${server!.adminKey}` } })).status, 404, 'Firestore keeps no rules');
  // In force for the firebase SDK: public/ is open, anything else closed to a signed-out caller.
  const app = initializeApp({ apiKey: server!.apiKey, projectId: server!.projectId, storageBucket: testBucket }, `console-files-${Date.now()}`);
  try {
    const storage = getStorage(app);
    const { hostname, port } = new URL(server!.url);
    connectStorageEmulator(storage, hostname, Number(port));
    await uploadBytes(ref(storage, 'public/hello.txt'), new TextEncoder().encode('hello'));
    await assert.rejects(uploadBytes(ref(storage, 'private/hello.txt'), new TextEncoder().encode('hello')), (error: { code?: string }) => error.code === 'storage/unauthorized');
  } finally {
    await deleteApp(app);
  }
  // The history of this tab lists storage rulesets only.
  await page.getByTestId('rules-history').getByRole('listitem').first().waitFor();
  assert.equal(await page.getByTestId('rules-history').getByRole('listitem').count(), 1);
});

test('the storage playground: an upload judged on its content type, a list on its folder, naming the deciding line', stepTimeout, async () => {
  const playground = page.getByRole('form', { name: 'Storage rules playground' });
  const verdict = playground.getByTestId('playground-verdict');
  await playground.getByLabel('Method').selectOption('create');
  await playground.getByLabel('Object path').fill('users/alice/photo.png');
  await playground.getByLabel('UID').fill('alice');
  await playground.getByLabel('Content type').fill('image/png');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Allowed' }).waitFor();
  assert.match(await verdict.innerText(), /line 6/);
  await keepScreenshot(page, 'rules-storage-playground');

  await playground.getByLabel('Content type').fill('text/html');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Denied' }).waitFor();

  await playground.getByLabel('UID').fill('bob');
  await playground.getByLabel('Method').selectOption('get');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Denied' }).waitFor();

  // list needs rules_version 2 and a matching rule on the folder: none matches users/alice itself.
  await playground.getByLabel('Method').selectOption('list');
  await playground.getByLabel('Object path').fill('users/alice/');
  await playground.getByRole('button', { name: 'Simulate' }).click();
  await verdict.filter({ hasText: 'Denied' }).waitFor();

  // The Firestore tab keeps its own rules and playground.
  await page.getByRole('navigation', { name: 'Rules of' }).getByRole('link', { name: 'Firestore' }).click();
  await page.getByRole('form', { name: 'Rules playground' }).waitFor();
  assert.match(await page.getByLabel('Rules source').inputValue(), /service cloud\.firestore/);
});

test('nothing left the machine and the page threw nothing', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
