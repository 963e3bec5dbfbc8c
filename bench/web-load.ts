/**
 * `npm run bench -- web`: the web app's first load beside a baseline build of an earlier commit
 * (default: the last one before the app was split by route), in the same run. For each build:
 * the bytes a first visit to the home page fetches (raw and gzip of the files, and what crossed
 * the wire), and the time until the home page, and a signed-in user's Notes page, are usable, in
 * headless Chromium on an emulated slow connection (CDP Network.emulateNetworkConditions, cache
 * off). Settings: BENCH_WEB_RUNS (3, the median is shown), BENCH_WEB_MBPS (1.6), BENCH_WEB_RTT_MS
 * (150), BENCH_WEB_BASELINE (a git revision, default below).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { defaultOptions } from '../packages/server/src/config.js';
import { createHearth } from '../packages/server/src/server.js';
import { envCount, envNumber, machineLine, progress } from './env.js';
import { renderTable } from './stats.js';
import { buildBaseline, buildCurrent, defaultBaselineRev } from './web-build.js';

const runs = envCount('BENCH_WEB_RUNS', 3);
const mbps = envNumber('BENCH_WEB_MBPS', 1.6);
const rttMs = envNumber('BENCH_WEB_RTT_MS', 150);
const waitMs = 120_000;

interface Visit {
  /** Files fetched from the app's own build (index.html, scripts, styles), raw and gzipped. */
  rawBytes: number;
  gzipBytes: number;
  /** Bytes that crossed the (emulated) wire for every request of the visit, headers included (compressed when the build has .br/.gz). */
  wireBytes: number;
  scripts: number;
  ms: number;
}

interface Measured {
  name: string;
  home: Visit;
  notes: Visit;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function medianVisit(visits: Visit[]): Visit {
  return {
    rawBytes: median(visits.map((v) => v.rawBytes)),
    gzipBytes: median(visits.map((v) => v.gzipBytes)),
    wireBytes: median(visits.map((v) => v.wireBytes)),
    scripts: median(visits.map((v) => v.scripts)),
    ms: median(visits.map((v) => v.ms)),
  };
}

/** Records what one page load fetches, through CDP. */
class Fetches {
  private readonly urls = new Map<string, string>();
  private wire = 0;

  constructor(cdp: CDPSession) {
    cdp.on('Network.requestWillBeSent', (event: { requestId: string; request: { url: string } }) => this.urls.set(event.requestId, event.request.url));
    cdp.on('Network.loadingFinished', (event: { requestId: string; encodedDataLength: number }) => (this.wire += event.encodedDataLength));
  }

  reset(): void {
    this.urls.clear();
    this.wire = 0;
  }

  /** Sizes of the build's files among the fetched URLs (the server sends them as they are on disk). */
  visit(origin: string, dist: string, ms: number): Visit {
    let rawBytes = 0;
    let gzipBytes = 0;
    let scripts = 0;
    const seen = new Set<string>();
    for (const address of this.urls.values()) {
      const url = new URL(address);
      if (url.origin !== origin || seen.has(url.pathname)) continue;
      const file = url.pathname.startsWith('/assets/') ? join(dist, url.pathname) : url.pathname === '/' || url.pathname === '/notes' ? join(dist, 'index.html') : null;
      if (!file) continue;
      seen.add(url.pathname);
      const body = readFileSync(file);
      rawBytes += body.length;
      gzipBytes += gzipSync(body, { level: 9 }).length;
      if (file.endsWith('.js')) scripts++;
    }
    return { rawBytes, gzipBytes, wireBytes: this.wire, scripts, ms };
  }
}

async function throttle(cdp: CDPSession, on: boolean): Promise<void> {
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await cdp.send('Network.emulateNetworkConditions', on
    ? { offline: false, latency: rttMs, downloadThroughput: (mbps * 1e6) / 8, uploadThroughput: (mbps * 1e6) / 16 }
    : { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
}

async function timed(page: Page, url: string, ready: (page: Page) => Promise<void>): Promise<number> {
  const started = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await ready(page);
  return performance.now() - started;
}

async function measureBuild(browser: Browser, name: string, dist: string): Promise<Measured> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-bench-web-'));
  const hearth = await createHearth(defaultOptions({ port: 0, dataDir, dev: true, logLevel: 'silent', webRoot: dist }));
  const origin = await hearth.listen();
  const homes: Visit[] = [];
  const notes: Visit[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      progress(`${name}: run ${run + 1} of ${runs}`);
      const context: BrowserContext = await browser.newContext();
      context.setDefaultTimeout(waitMs);
      context.setDefaultNavigationTimeout(waitMs);
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      const fetches = new Fetches(cdp);

      await throttle(cdp, true);
      const homeMs = await timed(page, `${origin}/`, (p) => p.getByText('You are not signed in.').waitFor());
      homes.push(fetches.visit(origin, dist, homeMs));

      // Sign up at full speed; then a fresh, throttled, uncached load of Notes as that user.
      await throttle(cdp, false);
      await page.goto(`${origin}/signup`);
      await page.getByLabel('Email', { exact: true }).fill(`bench-web-${run}-${Date.now()}@example.com`);
      await page.getByLabel('Password', { exact: true }).fill('bench password 1');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByTestId('signed-in-email').waitFor();
      await page.goto('about:blank');
      fetches.reset();
      await throttle(cdp, true);
      const notesMs = await timed(page, `${origin}/notes`, (p) => p.getByText('No notes yet').waitFor());
      notes.push(fetches.visit(origin, dist, notesMs));
      await context.close();
    }
  } finally {
    await hearth.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { name, home: medianVisit(homes), notes: medianVisit(notes) };
}

const kB = (bytes: number) => (bytes / 1000).toFixed(1);
const s = (ms: number) => (ms / 1000).toFixed(2);

export async function runWebBench(): Promise<void> {
  const baselineRev = process.env.BENCH_WEB_BASELINE || defaultBaselineRev;
  console.log(
    [
      'Hearth web app first load: this checkout beside a baseline build, measured in this same run',
      `${machineLine()}`,
      `load average at start: ${loadavg().map((n) => n.toFixed(2)).join(' ')} (other work on this machine skews the times; the sizes do not move)`,
      `network: Chromium emulating ${mbps} Mbps down, ${mbps / 2} Mbps up, ${rttMs} ms round trip, cache off; the median of ${runs} runs`,
      `baseline: packages/web at ${baselineRev}, built in a temporary folder`,
    ].join('\n'),
  );
  progress('building this checkout');
  const current = buildCurrent();
  progress(`building the baseline (${baselineRev})`);
  const baseline = buildBaseline(baselineRev);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const before = await measureBuild(browser, `baseline ${baselineRev}`, baseline.dist);
    const after = await measureBuild(browser, 'this checkout', current);
    const head = ['build', 'page', 'scripts', 'raw kB', 'gzip kB', 'wire kB', 'usable after s'];
    const body: string[][] = [];
    for (const m of [before, after]) {
      for (const [page, visit] of [['home (first visit)', m.home], ['notes (signed in)', m.notes]] as const) {
        body.push([m.name, page, String(visit.scripts), kB(visit.rawBytes), kB(visit.gzipBytes), kB(visit.wireBytes), s(visit.ms)]);
      }
    }
    for (const [page, pick] of [['home (first visit)', (m: Measured) => m.home], ['notes (signed in)', (m: Measured) => m.notes]] as const) {
      const a = pick(after);
      const b = pick(before);
      body.push(['ratio (this / baseline)', page, '', (a.rawBytes / b.rawBytes).toFixed(3), (a.gzipBytes / b.gzipBytes).toFixed(3), (a.wireBytes / b.wireBytes).toFixed(3), (a.ms / b.ms).toFixed(3)]);
    }
    console.log(renderTable(head, body, (column) => column < 2));
    console.log('wire kB: what crossed the wire, headers included (this checkout\'s build ships .br/.gz copies the server sends when accepted; the baseline\'s is sent raw); gzip kB: the fetched files gzipped at level 9.');
  } finally {
    await browser.close();
    baseline.remove();
  }
}
