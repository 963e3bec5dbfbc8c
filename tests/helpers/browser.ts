import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot } from './hearth.js';

/** The built web app (`npm test` builds it first). */
export const webRoot = join(repoRoot, 'packages/web/dist');
/** Debian's chromium (`.ci/run` installs it). */
export const chromiumPath = '/usr/bin/chromium';

/** Fails with the fix in the message when the web app is not built or Chromium is missing. */
export function assertBrowserReady(): void {
  assert.ok(existsSync(join(webRoot, 'index.html')), `the web app is not built (${webRoot}/index.html is missing): run \`npm run build -w packages/web\` first`);
  assert.ok(existsSync(chromiumPath), `${chromiumPath} is missing: install it with \`apt-get install -y chromium\``);
}

/** Headless Chromium with the flags that keep it from calling out of this machine (and a test's own, such as tls-proxy.ts's). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extraArgs],
  });
}

const localHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The recorded request URLs that went anywhere but this machine (data:, blob: and about: stay local). */
export function requestsOffMachine(requested: string[]): string[] {
  return requested.filter((address) => {
    const parsed = new URL(address);
    if (parsed.protocol === 'data:' || parsed.protocol === 'blob:' || parsed.protocol === 'about:') return false;
    return !localHosts.has(parsed.hostname);
  });
}

/**
 * What a test's browser did, for its closing checks: every request URL (none may leave the
 * machine) and every uncaught page error.
 */
export class BrowserRecord {
  readonly requested: string[] = [];
  readonly pageErrors: string[] = [];

  /** A fresh context whose waits are bounded by `waitMs` and whose requests are recorded. */
  async newContext(browser: Browser, waitMs: number): Promise<BrowserContext> {
    const context = await browser.newContext();
    context.setDefaultTimeout(waitMs);
    context.setDefaultNavigationTimeout(waitMs);
    context.on('request', (request) => this.requested.push(request.url()));
    return context;
  }

  /** A page of `context` whose uncaught errors are recorded. */
  async newPage(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (error) => this.pageErrors.push(error.message));
    return page;
  }
}

/**
 * Records every text the app's Suspense fallback (`p.loading`, its own; the console's loading
 * states are `.console-loading`) shows, from each page load's first byte: set before navigating.
 * The function returned gives what was seen since it was last called (or since the load).
 */
export async function recordFallbackTexts(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { fallbackTexts: string[] }).fallbackTexts = seen;
    new MutationObserver(() => seen.push(document.querySelector('p.loading')?.textContent ?? '')).observe(document, { subtree: true, childList: true, characterData: true });
  });
  return () => page.evaluate(() => (window as unknown as { fallbackTexts: string[] }).fallbackTexts.splice(0));
}
