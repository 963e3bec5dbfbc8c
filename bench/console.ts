/**
 * `npm run bench -- console`: how fast the operator console's pages are ready in headless Chromium
 * with a large store (issue 14: under one second with 100k users and 1M documents). Each page is
 * opened BENCH_CONSOLE_RUNS times from a fresh navigation until its content shows (timed in the page:
 * from the navigation's start until the content's selector first matches); the baseline is
 * the web app's home page on the same server in the same browser, measured in the same rounds.
 * Settings: BENCH_CONSOLE_USERS (100000), BENCH_CONSOLE_DOCUMENTS (1000000), BENCH_CONSOLE_RUNS (5).
 * Seeding is through the admin APIs (accounts:batchCreate, documents:commit), so it takes a while.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chromium, type Page } from 'playwright-core';
import { defaultOptions } from '../packages/server/src/config.js';
import { createHearth } from '../packages/server/src/server.js';
import { envCount, machineLine, progress } from './env.js';

const userCount = envCount('BENCH_CONSOLE_USERS', 100_000);
const documentCount = envCount('BENCH_CONSOLE_DOCUMENTS', 1_000_000);
const runs = envCount('BENCH_CONSOLE_RUNS', 5);
const webRoot = join(import.meta.dirname, '../packages/web/dist');

async function call(url: string, body: unknown, adminKey: string): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  await response.arrayBuffer();
}

/** Runs `count` numbered jobs, `width` at a time. */
async function inParallel(count: number, width: number, job: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => { for (let index = next++; index < count; index = next++) await job(index); }));
}

/**
 * Set once per page (before any navigation): records, in the page, when the selector the bench
 * waits for first matches (`text=...`: the text first shows). Playwright's waitFor polls, at
 * growing intervals: timed from here it read every console page about 500 ms late.
 */
function recordReady(): void {
  const selector = sessionStorage.getItem('bench-ready');
  if (!selector) return;
  const matches = () => (selector.startsWith('text=') ? document.body?.innerText.includes(selector.slice(5)) : document.querySelector(selector) !== null);
  const check = () => {
    const page = window as unknown as { benchReadyAt?: number };
    if (page.benchReadyAt === undefined && matches()) page.benchReadyAt = performance.now();
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
}

/** From the navigation's start until `ready` first shows, in the page's own clock. */
async function timed(page: Page, url: string, ready: string): Promise<number> {
  await page.evaluate((selector) => sessionStorage.setItem('bench-ready', selector), ready);
  await page.goto(url);
  await page.locator(ready).first().waitFor();
  return page.evaluate(() => (window as unknown as { benchReadyAt?: number }).benchReadyAt ?? performance.now());
}

/**
 * The overview's answer alone (GET /hearth/v1/projects/{p}/overview: every count, queue and warning
 * in one call) beside a bare COUNT(*) of the same users and documents on a read-only connection in
 * this process: what the overview cannot be faster than. Printed at once, before the page loads.
 */
async function overviewAnswer(url: string, project: string, adminKey: string, file: string): Promise<void> {
  const db = new Database(file, { readonly: true });
  try {
    const users = db.prepare('SELECT COUNT(*) AS n FROM users WHERE project_id = ?');
    const documents = db.prepare('SELECT COUNT(*) AS n FROM fs_documents');
    const overview: number[] = [];
    const bare: number[] = [];
    for (let round = 0; round < runs + 1; round += 1) {
      let started = performance.now();
      const response = await fetch(`${url}/hearth/v1/projects/${project}/overview`, { headers: { authorization: `Bearer ${adminKey}` } });
      const answer = (await response.json()) as { users?: { total: number }; documents?: number };
      if (!response.ok || answer.users?.total !== userCount) throw new Error(`the overview answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
      if (round > 0) overview.push(performance.now() - started);
      started = performance.now();
      users.get(project);
      documents.get();
      if (round > 0) bare.push(performance.now() - started);
    }
    const [o, b] = [median(overview), median(bare)];
    console.log(`\nConsole overview answer, ${userCount} users and ${documentCount} documents: median of ${runs}`);
    console.log(`overview (GET .../overview)        ${o.toFixed(1).padStart(7)} ms  worst ${Math.max(...overview).toFixed(1)} ms  ${o < 1000 ? 'under 1 s' : 'OVER 1 s'}`);
    console.log(`bare COUNT(*) of users + documents ${b.toFixed(1).padStart(7)} ms  (read-only connection, same process)`);
    console.log(`ratio                              x${(o / b).toFixed(2)}`);
  } finally {
    db.close();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function runConsoleBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-console-'));
  const hearth = await createHearth(defaultOptions({ port: 0, dataDir, dev: true, logLevel: 'silent', webRoot, defaultProjectId: 'bench-console' }));
  const url = await hearth.listen();
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  try {
    const project = 'bench-console';
    const seedStart = performance.now();
    progress(`seeding ${userCount} users (accounts:batchCreate, 1000 a call)`);
    await inParallel(Math.ceil(userCount / 1000), 2, (batch) =>
      call(`${url}/identitytoolkit.googleapis.com/v1/projects/${project}/accounts:batchCreate`, {
        users: Array.from({ length: Math.min(1000, userCount - batch * 1000) }, (_, i) => {
          const n = batch * 1000 + i;
          return { localId: `user-${n}`, email: `user-${n}@example.com`, createdAt: String(1_700_000_000_000 + n) };
        }),
      }, hearth.adminKey),
    );
    progress(`seeding ${documentCount} documents in items/ (documents:commit, 500 a call)`);
    const root = `projects/${project}/databases/(default)/documents`;
    await inParallel(Math.ceil(documentCount / 500), 2, (batch) =>
      call(`${url}/v1/${root}:commit`, {
        writes: Array.from({ length: Math.min(500, documentCount - batch * 500) }, (_, i) => {
          const n = batch * 500 + i;
          return { update: { name: `${root}/items/item-${String(n).padStart(7, '0')}`, fields: { n: { integerValue: String(n) }, title: { stringValue: `Item ${n}` }, tags: { arrayValue: { values: [{ stringValue: 'bench' }] } } } } };
        }),
      }, hearth.adminKey),
    );
    const seedSeconds = (performance.now() - seedStart) / 1000;
    await overviewAnswer(url, project, hearth.adminKey, join(dataDir, 'hearth.sqlite'));

    const page = await (await browser.newContext()).newPage();
    await page.addInitScript(recordReady);
    page.setDefaultTimeout(120_000);
    page.setDefaultNavigationTimeout(120_000);
    const signInStart = performance.now();
    await page.goto(`${url}/console`);
    await page.getByRole('textbox', { name: 'Admin key' }).fill(hearth.adminKey);
    progress(`console sign-in screen after ${((performance.now() - signInStart) / 1000).toFixed(1)} s`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('console-operator').waitFor();

    const pages: { name: string; path: string; ready: string }[] = [
      { name: 'web app home (baseline)', path: '/', ready: 'main' },
      { name: 'console: overview', path: '/console', ready: '[data-testid="users-total"]' },
      { name: 'console: users, first page', path: '/console/users', ready: '[data-testid="users-table"]' },
      { name: 'console: user search by email', path: `/console/users?by=email&q=user-${userCount - 1}%40example.com`, ready: '[data-testid="users-table"]' },
      { name: 'console: user page', path: `/console/users/user-${Math.floor(userCount / 2)}`, ready: 'text=Sign-in providers' },
      { name: 'console: collections', path: '/console/data', ready: '[data-testid="collections"]' },
      { name: 'console: documents, first page', path: '/console/data?db=(default)&path=items', ready: '[data-testid="documents"]' },
      { name: 'console: one document', path: `/console/data?db=(default)&path=items/item-${String(Math.floor(documentCount / 2)).padStart(7, '0')}`, ready: 'form[aria-label="Document"] .console-fields' },
      { name: 'console: audit log', path: '/console/audit', ready: 'h1' },
    ];
    const times = new Map<string, number[]>(pages.map((one) => [one.name, []]));
    // Rounds go through every page in turn, so background load falls on all of them alike.
    for (let round = 0; round < runs + 1; round += 1) {
      for (const one of pages) {
        const ms = await timed(page, `${url}${one.path}`, one.ready);
        if (round > 0) times.get(one.name)!.push(ms); // round 0 warms the caches
      }
    }
    const baseline = median(times.get(pages[0]!.name)!);
    console.log(`\nConsole page loads: ${userCount} users, ${documentCount} documents (seeded in ${seedSeconds.toFixed(0)} s); ${machineLine()}`);
    console.log('median / worst of', runs, 'loads, from navigation until the content shows; ratio against the web app home page');
    for (const one of pages) {
      const values = times.get(one.name)!;
      const med = median(values);
      console.log(`${one.name.padEnd(34)} ${med.toFixed(0).padStart(6)} ms  worst ${Math.max(...values).toFixed(0).padStart(6)} ms  x${(med / baseline).toFixed(2)}  ${med < 1000 ? 'under 1 s' : 'OVER 1 s'}`);
    }
  } finally {
    await browser.close();
    await hearth.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
