/**
 * Email-link sign-in handed back to the app that asked for it, in a real Chromium. A small app in
 * the shape of Google's email-link quickstart (the official `firebase` browser SDK, bundled here
 * with esbuild) is served by this test on 127.0.0.1 at another port: an authorized domain, another
 * origin than Hearth. Hearth runs in production mode and mails through a real SMTP server. The
 * mailed link opens Hearth's `/__/auth/action`, which sends the browser straight back to the app
 * (303, no page in between) with apiKey, oobCode, mode and lang; the app finishes with
 * `signInWithEmailLink`, with the address it kept, or on another device with the one it asks for.
 * A continueUrl off the authorized domains is never followed, and the page's "Continue" link for
 * other modes only follows an authorized one.
 *
 * Needs `npm run build -w packages/web` first (the root `npm test` does it) and /usr/bin/chromium.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { bundleForBrowser } from '../helpers/browser-bundle.js';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth, sendEmailVerification } from 'firebase/auth';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { actionLinkIn, MailCatcher, type ReceivedMail } from '../helpers/smtp.js';

/** Bound for any single wait, on the page or for a mail. */
const waitMs = 15_000;
const stepTimeout = { timeout: 90_000 };

/**
 * The app, as Google's email-link quickstart writes it: ask for a link with `handleCodeInApp`,
 * keep the address in localStorage, and when the page is opened by a link, finish the sign-in
 * with the kept address or ask for it. Configured by the page's `#config` element.
 */
const appSource = `
import { initializeApp } from 'firebase/app';
import { connectAuthEmulator, getAuth, isSignInWithEmailLink, sendSignInLinkToEmail, signInWithEmailLink } from 'firebase/auth';

const config = JSON.parse(document.getElementById('config').textContent);
const app = initializeApp({ apiKey: config.apiKey, projectId: config.projectId });
const auth = getAuth(app);
connectAuthEmulator(auth, config.hearthUrl, { disableWarnings: true });
const status = document.getElementById('status');
const form = document.getElementById('form');
const email = document.getElementById('email');
const button = document.getElementById('submit');
const show = (text) => { status.textContent = text; };

async function finish(address) {
  try {
    const credential = await signInWithEmailLink(auth, address, window.location.href);
    window.localStorage.removeItem('emailForSignIn');
    show('Signed in as ' + credential.user.email + (credential.user.emailVerified ? ' (verified)' : ''));
  } catch (error) {
    show('Error: ' + error.code);
  }
}

if (isSignInWithEmailLink(auth, window.location.href)) {
  const kept = window.localStorage.getItem('emailForSignIn');
  if (kept) {
    form.hidden = true;
    void finish(kept);
  } else {
    button.textContent = 'Finish signing in';
    show('Confirm your email');
    form.addEventListener('submit', (event) => { event.preventDefault(); void finish(email.value); });
  }
} else {
  button.textContent = 'Send sign-in link';
  show('Ready');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    try {
      await sendSignInLinkToEmail(auth, email.value, { url: window.location.origin + '/finish?cart=42', handleCodeInApp: true });
      window.localStorage.setItem('emailForSignIn', email.value);
      show('Link sent to ' + email.value);
    } catch (error) {
      show('Error: ' + error.code);
    }
  });
}
`;

const catcher = new MailCatcher();
let server: TestHearth | undefined;
let appServer: Server | undefined;
let appOrigin = '';
let nodeApp: FirebaseApp | undefined;
let browser: Browser | undefined;
const record = new BrowserRecord();
/** Requests refused because they would have left the machine (a followed hostile continueUrl would show here). */
const refusedOffMachine: string[] = [];

before(async () => {
  assertBrowserReady();
  await catcher.start();
  server = await startHearth({ webRoot, dev: false, smtpUrl: catcher.url });
  const script = await bundleApp();
  const html = appPage(server);
  appServer = createServer((request, response) => {
    if ((request.url ?? '').startsWith('/app.js')) response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    else response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => appServer!.listen(0, '127.0.0.1', resolve));
  const address = appServer.address();
  appOrigin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  assert.notEqual(appOrigin, server.url);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (appServer ? appServer.close(() => resolve()) : resolve()));
  if (nodeApp) await deleteApp(nodeApp);
  await server?.close();
  await catcher.stop();
});

async function bundleApp(): Promise<string> {
  return bundleForBrowser({ stdin: { contents: appSource, resolveDir: repoRoot, loader: 'js', sourcefile: 'email-link-app.js' } });
}

function appPage(hearth: TestHearth): string {
  const config = JSON.stringify({ apiKey: hearth.apiKey, projectId: hearth.projectId, hearthUrl: hearth.url });
  return `<!doctype html><html><head><meta charset="utf-8"><title>Email link app</title></head><body>
<script type="application/json" id="config">${config}</script>
<p id="status" role="status">Loading</p>
<form id="form"><label>Email <input id="email" type="email" required></label><button id="submit" type="submit">…</button></form>
<script type="module" src="/app.js"></script></body></html>`;
}

/** A context whose requests are recorded, and refused when they would leave the machine. */
async function newContext(): Promise<BrowserContext> {
  const context = await record.newContext(browser!, waitMs);
  await context.route(
    (url) => requestsOffMachine([url.href]).length > 0,
    (route) => {
      refusedOffMachine.push(route.request().url());
      return route.abort('blockedbyclient');
    },
  );
  return context;
}

const taken = new Set<ReceivedMail>();

async function nextMail(to: string, subject: RegExp): Promise<ReceivedMail> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const mail = catcher.received.find((m) => !taken.has(m) && m.to.includes(to.toLowerCase()) && subject.test(m.subject));
    if (mail) {
      taken.add(mail);
      return mail;
    }
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject} within ${waitMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function appStatus(page: Page, text: string): Promise<void> {
  await page.locator('#status').filter({ hasText: text }).waitFor();
}

/** Asks the app for a link to `email` and returns the mailed link, checked to open Hearth's action page for the app. */
async function requestLink(page: Page, email: string): Promise<string> {
  await page.goto(`${appOrigin}/`);
  await appStatus(page, 'Ready');
  await page.locator('#email').fill(email);
  await page.getByRole('button', { name: 'Send sign-in link' }).click();
  await appStatus(page, `Link sent to ${email}`);
  const link = actionLinkIn(await nextMail(email, /Sign in to/));
  const parsed = new URL(link);
  assert.equal(`${parsed.origin}${parsed.pathname}`, `${server!.url}/__/auth/action`);
  assert.equal(parsed.searchParams.get('mode'), 'signIn');
  assert.equal(parsed.searchParams.get('continueUrl'), `${appOrigin}/finish?cart=42`);
  return link;
}

/** Opens a mailed link and checks that Hearth answered with a 303 straight to the app, carrying the link's parameters. */
async function openHandedBack(page: Page, link: string): Promise<void> {
  const before = record.requested.length;
  const response = await page.goto(link);
  assert.ok(response);
  const landed = new URL(page.url());
  assert.equal(`${landed.origin}${landed.pathname}`, `${appOrigin}/finish`);
  const mailed = new URL(link).searchParams;
  assert.equal(landed.search, `?cart=42&apiKey=${encodeURIComponent(server!.apiKey)}&oobCode=${mailed.get('oobCode')}&mode=signIn&lang=en`);
  const hop = response.request().redirectedFrom();
  assert.equal(hop?.url(), link);
  assert.equal((await hop.response())?.status(), 303);
  // The app's own SDK calls to Hearth's APIs may already have started; anything else would be Hearth's page.
  const api = [`${server!.url}/identitytoolkit.googleapis.com/`, `${server!.url}/securetoken.googleapis.com/`];
  const hearthPages = record.requested.slice(before).filter((url) => url.startsWith(server!.url) && url !== link && !api.some((prefix) => url.startsWith(prefix)));
  assert.deepEqual(hearthPages, [], 'no Hearth page (or its scripts) in between');
}

test('the link goes back to the app, which signs in with the address it kept', stepTimeout, async () => {
  const context = await newContext();
  try {
    const page = await record.newPage(context);
    const email = uniqueEmail('handback');
    const link = await requestLink(page, email);
    await openHandedBack(page, link);
    await appStatus(page, `Signed in as ${email} (verified)`);
    assert.equal(await page.evaluate(() => window.localStorage.getItem('emailForSignIn')), null);
  } finally {
    await context.close();
  }
});

test('on another device the app asks for the address, and refuses the wrong one', stepTimeout, async () => {
  const asking = await newContext();
  const elsewhere = await newContext();
  try {
    const email = uniqueEmail('other-device');
    const link = await requestLink(await record.newPage(asking), email);
    const page = await record.newPage(elsewhere);
    await openHandedBack(page, link);
    await appStatus(page, 'Confirm your email');
    await page.locator('#email').fill(uniqueEmail('someone-else'));
    await page.getByRole('button', { name: 'Finish signing in' }).click();
    await appStatus(page, 'Error: auth/invalid-email');
    await page.locator('#email').fill(email);
    await page.getByRole('button', { name: 'Finish signing in' }).click();
    await appStatus(page, `Signed in as ${email} (verified)`);
  } finally {
    await asking.close();
    await elsewhere.close();
  }
});

test('a continueUrl off the authorized domains is never followed', stepTimeout, async () => {
  const context = await newContext();
  try {
    const page = await record.newPage(context);
    const link = await requestLink(page, uniqueEmail('tampered'));
    for (const hostile of ['https://evil.example/finish', 'javascript:alert(1)', `https://127.0.0.1@evil.example/`]) {
      const tampered = new URL(link);
      tampered.searchParams.set('continueUrl', hostile);
      await page.goto(tampered.toString());
      const landed = new URL(page.url());
      assert.equal(`${landed.origin}${landed.pathname}`, `${server!.url}/__/auth/action`, hostile);
      assert.equal(landed.searchParams.has('continueUrl'), false, hostile);
      // Hearth's own page takes over: it asks for the address, as for a link without continueUrl.
      await page.getByRole('heading', { name: 'Sign in with a link' }).waitFor();
    }
    assert.deepEqual(refusedOffMachine, []);
  } finally {
    await context.close();
  }
});

test('verifyEmail shows Hearth’s page, whose "Continue" goes to an authorized continueUrl only', stepTimeout, async () => {
  nodeApp = initializeApp({ apiKey: server!.apiKey, projectId: server!.projectId }, 'e2e-email-link-handback');
  const nodeAuth = initializeAuth(nodeApp, { persistence: inMemoryPersistence });
  connectAuthEmulator(nodeAuth, server!.url, { disableWarnings: true });
  const context = await newContext();
  try {
    const page = await record.newPage(context);
    const verify = async (tamper: (link: URL) => void): Promise<void> => {
      const email = uniqueEmail('verify');
      const { user } = await createUserWithEmailAndPassword(nodeAuth, email, 'password-1');
      await sendEmailVerification(user, { url: `${appOrigin}/verified` });
      const link = new URL(actionLinkIn(await nextMail(email, /Verify your email/)));
      assert.equal(link.searchParams.get('continueUrl'), `${appOrigin}/verified`);
      tamper(link);
      await page.goto(link.toString());
      await page.getByRole('status').filter({ hasText: 'Your email has been verified.' }).waitFor();
    };

    await verify(() => {});
    assert.equal(await page.getByRole('link', { name: 'Continue' }).getAttribute('href'), `${appOrigin}/verified`);
    await page.getByRole('link', { name: 'Continue' }).click();
    await page.waitForURL(`${appOrigin}/verified`);

    await verify((link) => link.searchParams.set('continueUrl', 'https://evil.example/'));
    assert.equal(await page.getByRole('link', { name: 'Continue' }).count(), 0);
    // The router also matches other spellings of the page's path, which the server serves unchecked.
    await verify((link) => {
      link.pathname = '/__/AUTH/Action';
      link.searchParams.set('continueUrl', 'https://evil.example/');
    });
    assert.equal(new URL(page.url()).pathname, '/__/AUTH/Action');
    assert.equal(await page.getByRole('link', { name: 'Continue' }).count(), 0);
    assert.deepEqual(refusedOffMachine, []);
  } finally {
    await context.close();
  }
});

test('nothing the pages requested left the machine, and the pages threw nothing', () => {
  assert.ok(record.requested.length > 0, 'no requests were recorded');
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
