/**
 * The SDK's browser integration suite (karma.conf.js --integration --local: every flow), bundled
 * with the SDK's browser build and run by mocha in headless Chromium with the SDK's browser mocha
 * settings (config/mocha.browser.opts: 20 s per test, 3 retries). The page gets the karma client
 * config the SDK's settings.ts reads (`__karma__.config`), and is served from 127.0.0.1 on a port
 * of its own, as karma serves it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { bundleForBrowser } from './bundle.js';
import { collectorSource, type SuiteRun } from './results.js';

export interface BrowserSuiteOptions {
  files: string[];
  nodePaths: string[];
  /** The tools' node_modules, for mocha's browser build. */
  toolsModules: string;
  hostPort: string;
  projectId: string;
  timeoutMs: number;
  chromiumPath: string;
  onLine?: (line: string) => void;
  /**
   * The process.env the suite's settings read (bundled in, and a global `process` for the reads the
   * bundle leaves), and the karma client config; default: the Auth suite's.
   */
  env?: Record<string, string>;
  karmaConfig?: Record<string, unknown>;
}

const mochaSettings = { ui: 'bdd', timeout: 20000, retries: 3 };

export async function runBrowserSuite(options: BrowserSuiteOptions): Promise<SuiteRun> {
  const env = options.env ?? { FIREBASE_AUTH_EMULATOR_HOST: options.hostPort, GCLOUD_PROJECT: options.projectId };
  const script = await bundleForBrowser({
    entryPoints: options.files,
    nodePaths: options.nodePaths,
    env,
  });
  const karmaConfig = options.karmaConfig ?? {
    authAppConfig: { apiKey: 'local-api-key', projectId: options.projectId, authDomain: 'local-auth-domain' },
    authEmulatorHost: options.hostPort,
  };
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>SDK suite</title></head><body>
<div id="mocha"></div>
<script src="/mocha.js"></script>
<script>
window.__karma__ = { config: ${JSON.stringify(karmaConfig)} };
${options.env ? `window.process = { env: ${JSON.stringify(env)} }; window.global = window;` : ''}
mocha.setup(${JSON.stringify(mochaSettings)});
${collectorSource}
</script>
<script src="/tests.js"></script>
<script>
const runner = mocha.run();
runner.on('test end', (test) => console.log('[' + (test.state || 'pending') + '] ' + test.fullTitle()));
collectResults(runner, mocha.suite, (results) => { window.__results = results; });
</script>
</body></html>`;
  const mochaJs = readFileSync(join(options.toolsModules, 'mocha/mocha.js'));
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const body = path === '/' ? page : path === '/mocha.js' ? mochaJs : path === '/tests.js' ? script : undefined;
    if (body === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': path === '/' ? 'text/html' : 'text/javascript' }).end(body);
  });
  const origin = await listen(server);
  const browser = await chromium.launch({
    executablePath: options.chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const tab = await browser.newPage();
    let pageErrors = '';
    tab.on('console', (message) => {
      const text = message.text();
      if (text.startsWith('[')) options.onLine?.(text);
    });
    tab.on('pageerror', (error) => (pageErrors = (pageErrors + error.message + '\n').slice(-4000)));
    await tab.goto(`${origin}/`);
    try {
      await tab.waitForFunction(() => (window as unknown as { __results?: unknown }).__results !== undefined, undefined, { timeout: options.timeoutMs, polling: 500 });
    } catch {
      return { total: 0, tests: [], hookFailures: [], aborted: `no results within ${options.timeoutMs / 1000} s\n${pageErrors}` };
    }
    const run = (await tab.evaluate(() => (window as unknown as { __results: unknown }).__results)) as SuiteRun;
    // No test registered: the bundle threw while loading; say why.
    return run.total === 0 && pageErrors ? { ...run, aborted: `no tests registered:\n${pageErrors}` } : run;
  } finally {
    await browser.close();
    server.close();
  }
}

function listen(server: Server): Promise<string> {
  return new Promise((resolveOrigin) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolveOrigin(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
    });
  });
}
