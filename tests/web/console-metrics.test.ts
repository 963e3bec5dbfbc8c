/**
 * The console's Metrics page in a real Chromium: uPlot draws every chart from
 * /hearth/v1/console/metrics after load, and the request-rate chart rises while a burst of
 * requests arrives (sampled every 500 ms here instead of 5 s).
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
  server = await startHearth({ webRoot, metricsIntervalMs: 500 });
  browser = await launchChromium();
  page = await record.newPage(await record.newContext(browser, waitMs));
  await signInWithAdminKey(page, server.url, server.adminKey);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const requestsChart = () => page.locator('[data-testid="metrics-chart"][data-title="Requests"]');

test('every chart is drawn after the page loads', stepTimeout, async () => {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Metrics' }).click();
  await requestsChart().waitFor();
  const charts = page.getByTestId('metrics-chart');
  assert.deepEqual(await charts.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-title'))), ['Requests', 'Latency', 'Sign-ins', 'Database', 'Memory']);
  // Each says its unit: in its title and on its axis.
  assert.deepEqual(await charts.evaluateAll((elements) => elements.map((element) => element.querySelector('.u-title')?.textContent)), ['Requests per second', 'Latency (milliseconds)', 'Sign-ins per minute', 'Database: commits per second, open listeners and sessions', 'Memory (megabytes)']);
  // The axis (drawn on the canvas) carries the chart's unit.
  assert.deepEqual(await charts.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-unit'))), ['/s', 'ms', '/min', '', 'MB']);
  for (const chart of await charts.all()) {
    assert.equal(await chart.locator('canvas').count(), 1, 'uPlot drew a canvas');
    assert.ok(Number(await chart.getAttribute('data-points')) >= 1);
  }
});

test('the request-rate chart rises under a burst of requests and keeps adding points', stepTimeout, async () => {
  const pointsBefore = Number(await requestsChart().getAttribute('data-points'));
  const peakBefore = Number(await requestsChart().getAttribute('data-peak'));
  const until = Date.now() + 2_500;
  let sent = 0;
  while (Date.now() < until) {
    await Promise.all(Array.from({ length: 20 }, () => fetch(`${server!.url}/__/firebase/init.json`).then((response) => response.arrayBuffer())));
    sent += 20;
  }
  const deadline = Date.now() + waitMs;
  for (;;) {
    const peak = Number(await requestsChart().getAttribute('data-peak'));
    if (peak > Math.max(20, peakBefore)) break;
    assert.ok(Date.now() < deadline, `the request rate never rose (peak ${peak}/s after ${sent} requests)`);
    await page.waitForTimeout(200);
  }
  assert.ok(Number(await requestsChart().getAttribute('data-points')) > pointsBefore, 'new samples were added live');
  await keepScreenshot(page, 'metrics');
});

test('nothing left the machine and the page threw nothing', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
