/**
 * The web app's files in a real Chromium, outside --dev under the storage rules it ships
 * (packages/web/storage.rules, released to the default project at start): a profile photo on the
 * account page (added, shown, replaced, removed with its file, its URL the account's photoURL) and
 * attachments on notes (attached, listed after a reload, downloaded, removed, deleted with their
 * note; files of a note that is gone are swept once older than an hour, never sooner).
 * Screenshots in .tmp/artifacts/web/.
 *
 * Needs the built web app (the root `npm test` builds it) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { defaultShippedRulesFile, defaultShippedStorageRulesFile } from '../../packages/server/src/config.js';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { solidPng } from '../helpers/png.js';
import { adminObject, adminUpload } from '../helpers/storage-clients.js';
import { testDatabaseUrl } from '../helpers/test-backend.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 90_000 };
const artifacts = join(repoRoot, '.tmp/artifacts/web');

let server: TestHearth | undefined;
let browser: Browser | undefined;
let page: Page;
let uid = '';
const record = new BrowserRecord();

before(async () => {
  assertBrowserReady();
  mkdirSync(artifacts, { recursive: true });
  server = await startHearth({ webRoot, dev: false, shippedRulesFile: defaultShippedRulesFile, shippedStorageRulesFile: defaultShippedStorageRulesFile });
  browser = await launchChromium();
  page = await record.newPage(await record.newContext(browser, waitMs));
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const url = (path: string) => `${server!.url}${path}`;
const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });

async function photoUrlOfAccount(): Promise<string | undefined> {
  const answer = await adminPost(server!, '/accounts:lookup', { localId: [uid] });
  assert.equal(answer.status, 200);
  return (answer.body as { users: Array<{ photoUrl?: string }> }).users[0]!.photoUrl;
}

/** Waits until the profile photo is decoded and shown; its width in pixels. */
async function shownPhotoWidth(): Promise<number> {
  const img = page.getByTestId('profile-photo');
  await img.waitFor();
  await page.waitForFunction(() => {
    const shown = document.querySelector<HTMLImageElement>('[data-testid="profile-photo"]');
    return shown !== null && shown.complete && shown.naturalWidth > 0;
  });
  return img.evaluate((element) => (element as HTMLImageElement).naturalWidth);
}

/** Polls until the object is gone (a deletion the page makes after its own wait). */
async function waitUntilGone(name: string): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (await adminObject(server!, name)) {
    if (Date.now() > deadline) assert.fail(`${name} is still there`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test("the start released the web app's storage rules to the default project", async () => {
  const response = await fetch(url(`/firebaserules.googleapis.com/v1/projects/${server!.projectId}/releases/firebase.storage`), { headers: { authorization: `Bearer ${server!.adminKey}` } });
  assert.equal(response.status, 200);
});

test('profile photo: added and shown, replaced, removed with its file', stepTimeout, async () => {
  await page.goto(url('/signup'));
  await page.getByLabel('Email', { exact: true }).fill(uniqueEmail('photo'));
  await page.getByLabel('Password', { exact: true }).fill('correct horse 1');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByTestId('signed-in-email').waitFor();
  await page.goto(url('/account'));
  uid = (await page.getByTestId('account-uid').innerText()).trim();
  await page.getByTestId('profile-photo-none').waitFor();

  // Only images: a text file is refused on the page, before any upload.
  await page.getByLabel('Add a photo').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an image') });
  await page.getByText('Choose a PNG, JPEG, GIF or WebP image.').waitFor();
  assert.equal(await adminObject(server!, `users/${uid}/photo`), undefined);

  const red = solidPng(8, 8, [200, 30, 30]);
  await page.getByLabel('Add a photo').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: red });
  await page.getByText('Your photo was saved.').waitFor();
  assert.equal(await shownPhotoWidth(), 8);
  const first = await photoUrlOfAccount();
  assert.ok(first, 'the account has a photoURL');
  assert.equal(await page.getByTestId('profile-photo').getAttribute('src'), first);
  // The download URL opens the file for whoever holds it (an <img> anywhere), without signing in.
  const viaUrl = await fetch(first);
  assert.equal(viaUrl.status, 200);
  assert.deepEqual(Buffer.from(await viaUrl.arrayBuffer()), red);
  assert.equal((await adminObject(server!, `users/${uid}/photo`))?.contentType, 'image/png');
  await shot('account-photo');

  const blue = solidPng(16, 16, [20, 60, 200]);
  await page.getByLabel('Replace photo').setInputFiles({ name: 'me2.png', mimeType: 'image/png', buffer: blue });
  await page.getByText('Your photo was replaced.').waitFor();
  assert.equal(await shownPhotoWidth(), 16);
  const second = await photoUrlOfAccount();
  assert.ok(second && second !== first, 'a replaced photo has a new URL');
  assert.deepEqual(Buffer.from(await (await fetch(second)).arrayBuffer()), blue);
  assert.equal((await fetch(first)).status, 403, "the old URL's token died with the old file");
  await shot('account-photo-replaced');

  await page.getByRole('button', { name: 'Remove photo' }).click();
  await page.getByText('Your photo was removed.').waitFor();
  await page.getByTestId('profile-photo-none').waitFor();
  assert.equal(await adminObject(server!, `users/${uid}/photo`), undefined);
  assert.equal(await photoUrlOfAccount(), undefined);
  await shot('account-photo-removed');
});

test('note attachments: attached, listed after a reload, downloaded, removed, and deleted with their note', stepTimeout, async () => {
  await page.goto(url('/notes'));
  await page.getByText('No notes yet.').waitFor();
  await page.getByLabel('New note').fill('trip plans');
  await page.getByRole('button', { name: 'Add note' }).click();
  await page.locator('[data-testid="note"][data-pending="false"]').waitFor();
  const itinerary = Buffer.from('Day 1: Lisbon\nDay 2: Porto\n');
  const map = solidPng(4, 4, [10, 160, 60]);
  await page.getByLabel('Attach a file to trip plans').setInputFiles({ name: 'itinerary.txt', mimeType: 'text/plain', buffer: itinerary });
  await page.getByTestId('attachment-name').filter({ hasText: 'itinerary.txt' }).waitFor();
  await page.getByLabel('Attach a file to trip plans').setInputFiles({ name: 'map.png', mimeType: 'image/png', buffer: map });
  await page.getByTestId('attachment-name').filter({ hasText: 'map.png' }).waitFor();

  await page.reload();
  await page.getByTestId('attachment-name').nth(1).waitFor();
  assert.deepEqual(await page.getByTestId('attachment-name').allInnerTexts(), ['itinerary.txt', 'map.png']);
  assert.match(await page.getByTestId('attachment').first().innerText(), /itinerary\.txt\s+27 bytes/);
  await shot('notes-attachments');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download itinerary.txt' }).click()]);
  assert.equal(download.suggestedFilename(), 'itinerary.txt');
  assert.deepEqual(readFileSync((await download.path())!), itinerary);

  const noteId = (await adminFolders(`users/${uid}/notes/`))[0]!;
  await page.getByRole('button', { name: 'Remove map.png' }).click();
  await page.getByTestId('attachment-name').filter({ hasText: 'map.png' }).waitFor({ state: 'detached' });
  assert.equal(await adminObject(server!, `users/${uid}/notes/${noteId}/map.png`), undefined);

  // Deleting the note (after its undo window) deletes what is attached to it.
  await page.getByRole('button', { name: 'Delete trip plans' }).click();
  await page.getByText('No notes yet.').waitFor();
  await waitUntilGone(`users/${uid}/notes/${noteId}/itinerary.txt`);
});

test('files of a note that is gone are swept once older than an hour, never sooner', stepTimeout, async () => {
  await adminUpload(server!, `users/${uid}/notes/ghost/new.txt`, 'just attached, its note on its way');
  await adminUpload(server!, `users/${uid}/notes/ghost/old.txt`, 'left behind');
  await backdate(`users/${uid}/notes/ghost/old.txt`, 2 * 3600_000);
  await page.goto(url('/notes'));
  await page.getByText('No notes yet.').waitFor();
  await waitUntilGone(`users/${uid}/notes/ghost/old.txt`);
  // Listed in name order: new.txt was judged before old.txt went, and kept.
  assert.ok(await adminObject(server!, `users/${uid}/notes/ghost/new.txt`));
});

test('nothing left the machine, and no page failed', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});

/** The folders directly under a prefix, listed by the administrator. */
async function adminFolders(prefix: string): Promise<string[]> {
  const response = await fetch(`${url(`/v0/b/${server!.projectId}.appspot.com/o`)}?prefix=${encodeURIComponent(prefix)}&delimiter=/`, { headers: { authorization: `Bearer ${server!.adminKey}` } });
  const listed = (await response.json()) as { prefixes?: string[] };
  return (listed.prefixes ?? []).map((folder) => folder.slice(prefix.length).replace(/\/$/, ''));
}

/** Moves an object's creation time back (as if it had been uploaded that long ago), in the store itself. */
async function backdate(name: string, ms: number): Promise<void> {
  const bucket = `${server!.projectId}.appspot.com`;
  const databaseUrl = await testDatabaseUrl(server!.dataDir);
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ record: string }>('SELECT record FROM files_objects WHERE bucket = $1 AND name = $2', [bucket, name]);
      const object = JSON.parse(rows[0]!.record) as { timeCreated: number };
      object.timeCreated -= ms;
      await client.query('UPDATE files_objects SET record = $3 WHERE bucket = $1 AND name = $2', [bucket, name, JSON.stringify(object)]);
    } finally {
      await client.end();
    }
    return;
  }
  const sqlite = new Database(join(server!.dataDir, 'hearth.sqlite'));
  try {
    const row = sqlite.prepare('SELECT record FROM files_objects WHERE bucket = ? AND name = ?').get(bucket, name) as { record: string };
    const object = JSON.parse(row.record) as { timeCreated: number };
    object.timeCreated -= ms;
    sqlite.prepare('UPDATE files_objects SET record = ? WHERE bucket = ? AND name = ?').run(JSON.stringify(object), bucket, name);
  } finally {
    sqlite.close();
  }
}
