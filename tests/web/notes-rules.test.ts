/**
 * The web app outside --dev, guarded by the rules it ships (packages/web/firestore.rules, released
 * to the default project at start): two users on the Notes page in two browsers each see only
 * their own notes, and a third browser client (the full `firebase` SDK over WebChannel, signed in)
 * that listens on another user's notes gets permission-denied from the SDK.
 *
 * Needs the built web app (the root `npm test` builds it) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { defaultShippedRulesFile } from '../../packages/server/src/config.js';
import { uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { bundlePage, servePage } from '../helpers/firestore-realtime-harness.js';
import type { ListenEvent, PageApi } from '../helpers/firestore-realtime-page.js';
import { noteTexts, waitForNotes } from '../helpers/notes-page.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

const waitMs = 20_000;
const stepTimeout = { timeout: 60_000 };

let server: TestHearth | undefined;
let browser: Browser | undefined;
let testPage: Server | undefined;
const record = new BrowserRecord();
const users: Array<{ context: BrowserContext; page: Page; uid: string }> = [];

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot, dev: false, shippedRulesFile: defaultShippedRulesFile });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (testPage ? testPage.close(() => resolve()) : resolve()));
  await server?.close();
});

const url = (path: string) => `${server!.url}${path}`;

async function signUpAndOpenNotes(tag: string): Promise<{ context: BrowserContext; page: Page; uid: string }> {
  const context = await record.newContext(browser!, waitMs);
  const page = await record.newPage(context);
  await page.goto(url('/signup'));
  await page.getByLabel('Email', { exact: true }).fill(uniqueEmail(tag));
  await page.getByLabel('Password', { exact: true }).fill('correct horse 1');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByTestId('signed-in-email').waitFor();
  await page.goto(url('/account'));
  const uid = (await page.getByTestId('account-uid').innerText()).trim();
  await page.getByRole('banner').getByRole('link', { name: 'Notes' }).click();
  await page.getByText('No notes yet.').waitFor();
  return { context, page, uid };
}

test('the start released the web app\'s own rules to the default project', async () => {
  const response = await fetch(url(`/firebaserules.googleapis.com/v1/projects/${server!.projectId}/releases/cloud.firestore`), {
    headers: { authorization: `Bearer ${server!.adminKey}` },
  });
  assert.equal(response.status, 200);
  const release = (await response.json()) as { rulesetName: string };
  assert.match(release.rulesetName, new RegExp(`^projects/${server!.projectId}/rulesets/`));
});

test('two users on the Notes page each see only their own notes', stepTimeout, async () => {
  users.push(await signUpAndOpenNotes('rules-a'), await signUpAndOpenNotes('rules-b'));
  const [a, b] = users as [(typeof users)[0], (typeof users)[0]];
  await a.page.getByLabel('New note').fill('from a');
  await a.page.getByRole('button', { name: 'Add note' }).click();
  await b.page.getByLabel('New note').fill('from b');
  await b.page.getByRole('button', { name: 'Add note' }).click();
  await waitForNotes(a.page, ['from a'], waitMs);
  await waitForNotes(b.page, ['from b'], waitMs);
  // Confirmed by the server (the rules accepted each create), not only shown as pending writes.
  await a.page.locator('[data-testid="note"][data-pending="false"]').waitFor();
  await b.page.locator('[data-testid="note"][data-pending="false"]').waitFor();
  assert.deepEqual(await noteTexts(a.page), ['from a']);
});

test("a listener on another user's notes fails with permission-denied in the SDK", stepTimeout, async () => {
  const served = await servePage(await bundlePage());
  testPage = served.server;
  const context = await record.newContext(browser!, waitMs);
  const page = await record.newPage(context);
  await page.goto(served.url);
  await page.waitForFunction(() => 'hearthTest' in globalThis);
  const target = new URL(server!.url);
  const options = { projectId: server!.projectId, apiKey: server!.apiKey, host: target.hostname, port: Number(target.port), authUrl: server!.url, signIn: true };
  const uid = await page.evaluate(async (clientOptions) => (globalThis as unknown as { hearthTest: PageApi }).hearthTest.init('intruder', clientOptions), options);
  assert.ok(uid);
  const victim = users[0]!.uid;
  await page.evaluate(
    ({ path, own }) => {
      const api = (globalThis as unknown as { hearthTest: PageApi }).hearthTest;
      api.listenQuery('intruder', 'theirs', { collection: path });
      api.listenQuery('intruder', 'own', { collection: own });
    },
    { path: `users/${victim}/notes`, own: `users/${uid}/notes` },
  );
  const eventsOf = (id: string) => page.evaluate((listenerId) => (globalThis as unknown as { hearthTest: PageApi }).hearthTest.events(listenerId), id);
  const deadline = Date.now() + waitMs;
  let theirs: ListenEvent[] = [];
  let own: ListenEvent[] = [];
  while (Date.now() < deadline) {
    theirs = await eventsOf('theirs');
    own = await eventsOf('own');
    if (theirs.some((event) => event.kind === 'error') && own.some((event) => event.kind === 'query' && !event.fromCache)) break;
    await page.waitForTimeout(50);
  }
  const failure = theirs.find((event) => event.kind === 'error');
  assert.equal(failure?.kind === 'error' ? failure.code : JSON.stringify(theirs), 'permission-denied');
  assert.ok(!theirs.some((event) => event.kind === 'query' && event.docs.length > 0), 'no note of the other user ever reached the intruder');
  assert.ok(own.some((event) => event.kind === 'query' && !event.fromCache), `the intruder's own notes listen fine: ${JSON.stringify(own)}`);
});

test('no page error, and every request stayed on the machine', () => {
  assert.deepEqual(record.pageErrors, []);
  assert.deepEqual(requestsOffMachine(record.requested), []);
});
