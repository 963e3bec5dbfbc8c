/**
 * Mailed links handed back to the app that asked for them, over raw HTTP: the hosted action page
 * `/__/auth/action` answers a sign-in link whose continueUrl is an app elsewhere (on an authorized
 * domain) with a 303 to it carrying the link's parameters, as Firebase's hosted handler does; every
 * other link gets Hearth's page, which only ever sees an allowed continueUrl. Hostile continueUrls
 * are never followed. In --dev, `/emulator/action` is Google's Auth emulator's link handler.
 *
 * Serves packages/web/dist (`npm run build -w packages/web` first) to tell the page from a redirect.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  createUserWithEmailAndPassword,
  isSignInWithEmailLink,
  reload,
  sendEmailVerification,
  sendPasswordResetEmail,
  sendSignInLinkToEmail,
  signInWithEmailAndPassword,
  signInWithEmailLink,
} from 'firebase/auth';
import { patchProjectConfig, uniqueEmail } from '../helpers/admin-http.js';
import { assertBrowserReady, webRoot } from '../helpers/browser.js';
import { SdkClients, errorCodeOf } from '../helpers/client.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { waitForMail } from '../helpers/outbox.js';

let server: TestHearth;
let devServer: TestHearth;
const clients = new SdkClients('handback');
/** An app on another origin of an authorized domain (127.0.0.1 is one by default). Nothing needs to listen there. */
const appOrigin = 'http://127.0.0.1:5999';

before(async () => {
  assertBrowserReady();
  server = await startHearth({ webRoot, dev: false });
  devServer = await startHearth({ webRoot, dev: true });
});
after(async () => {
  await clients.close();
  await server?.close();
  await devServer?.close();
});

interface Answer {
  status: number;
  location: string | null;
  contentType: string;
  body: string;
}

async function get(target: TestHearth, pathAndQuery: string): Promise<Answer> {
  const response = await fetch(`${target.url}${pathAndQuery}`, { redirect: 'manual', headers: { accept: 'text/html' } });
  return { status: response.status, location: response.headers.get('location'), contentType: response.headers.get('content-type') ?? '', body: await response.text() };
}

function assertPage(answer: Answer): void {
  assert.equal(answer.status, 200, `expected the page, got ${answer.status} ${answer.location ?? ''}`);
  assert.equal(answer.location, null);
  assert.match(answer.contentType, /^text\/html/);
  assert.match(answer.body, /<div id="root">/);
}

/** The path and query of a mailed link on this server. */
function pathOf(link: string): string {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
}

/** Mails a sign-in link for `continueUrl` and returns it with its code. */
async function signInLink(target: TestHearth, email: string, continueUrl: string): Promise<{ link: string; code: string }> {
  await sendSignInLinkToEmail(clients.auth(target), email, { url: continueUrl, handleCodeInApp: true });
  const mail = await waitForMail(target, email, 'EMAIL_SIGNIN');
  return { link: mail.oobLink, code: mail.oobCode };
}

/** continueUrls that must never be followed: other hosts, other schemes, relative forms, userinfo, backslash and encoding tricks. */
const hostile = [
  'https://evil.example/',
  'http://evil.example:5999/finish',
  'javascript:alert(document.domain)',
  'JaVaScRiPt:alert(1)',
  ' javascript:alert(1)',
  'java\tscript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '//evil.example/',
  '///evil.example/',
  '/\\evil.example/',
  '\\\\evil.example/',
  'http:\\\\evil.example\\',
  'http:evil.example',
  'https://127.0.0.1@evil.example/',
  'https://127.0.0.1:5999@evil.example/',
  'https://127.0.0.1%2f@evil.example/',
  'https://evil.example\\@127.0.0.1/',
  'https://evil.example#@127.0.0.1/',
  'https://evil.example?@127.0.0.1/',
  'https://127.0.0.1.evil.example/',
  'https://evil-localhost/',
  'https://localhost.evil.example/',
  'https%3A%2F%2Fevil.example%2F',
  'https%253A%252F%252Fevil.example',
  'https://evil.example%2f127.0.0.1/',
  'http://[::1]:5999/',
  '/account',
  'finish',
];

function query(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

describe('/__/auth/action', () => {
  test('a sign-in link for an app elsewhere is a 303 to its continueUrl with apiKey, oobCode, mode and lang; the app signs in with it', async () => {
    const email = uniqueEmail('handback');
    const { link, code } = await signInLink(server, email, `${appOrigin}/finish?cart=1234&mode=keep#done`);
    const answer = await get(server, pathOf(link));
    assert.equal(answer.status, 303);
    // The app's own `mode` is replaced (as Google's emulator does: searchParams.set), its other
    // parameters and its fragment kept.
    assert.equal(answer.location, `${appOrigin}/finish?cart=1234&mode=signIn&apiKey=${encodeURIComponent(server.apiKey)}&oobCode=${code}&lang=en#done`);
    assert.equal(answer.body, '', 'no page in between');

    const app = clients.auth(server);
    assert.equal(isSignInWithEmailLink(app, answer.location!), true);
    const credential = await signInWithEmailLink(app, email, answer.location!);
    assert.equal(credential.user.email, email);
    assert.equal(credential.user.emailVerified, true);
  });

  test('a sign-in link for Hearth’s own web app, or without continueUrl, is the page', async () => {
    const own = await signInLink(server, uniqueEmail('own'), `${server.url}/account`);
    assertPage(await get(server, pathOf(own.link)));
    const bare = new URL(own.link);
    bare.searchParams.delete('continueUrl');
    assertPage(await get(server, pathOf(bare.toString())));
  });

  test('verifyEmail and resetPassword links with an allowed continueUrl are the page (its "Continue" follows it)', async () => {
    const email = uniqueEmail('continue');
    const auth = clients.auth(server);
    const { user } = await createUserWithEmailAndPassword(auth, email, 'password-1');
    await sendEmailVerification(user, { url: `${appOrigin}/verified` });
    const verify = await waitForMail(server, email, 'VERIFY_EMAIL');
    assert.equal(new URL(verify.oobLink).searchParams.get('continueUrl'), `${appOrigin}/verified`);
    assertPage(await get(server, pathOf(verify.oobLink)));

    await sendPasswordResetEmail(auth, email, { url: `${appOrigin}/reset-done`, handleCodeInApp: true });
    const reset = await waitForMail(server, email, 'PASSWORD_RESET');
    assertPage(await get(server, pathOf(reset.oobLink)));
  });

  test('hostile continueUrls are never followed: the link comes back to the page without them', async () => {
    const base = { mode: 'signIn', oobCode: 'some-code', apiKey: server.apiKey, lang: 'en' };
    for (const mode of ['signIn', 'verifyEmail', 'resetPassword']) {
      for (const continueUrl of hostile) {
        const answer = await get(server, `/__/auth/action?${query({ ...base, mode, continueUrl })}`);
        assert.equal(answer.status, 303, `${mode} ${continueUrl}`);
        assert.equal(answer.location, `/__/auth/action?${query({ ...base, mode })}`, `${mode} ${continueUrl}`);
      }
    }
    assertPage(await get(server, `/__/auth/action?${query(base)}`));
  });

  test('the query is read as the page reads it: a second "?", repeated names, deep-link wrapping', async () => {
    const key = encodeURIComponent(server.apiKey);
    // Everything after the first "?" is the query, so the continueUrl below is one the page would see.
    const sneaky = await get(server, `/__/auth/action?mode=verifyEmail&oobCode=c&apiKey=${key}?&continueUrl=https://evil.example/`);
    assert.equal(sneaky.status, 303);
    assert.equal(sneaky.location, `/__/auth/action?mode=verifyEmail&oobCode=c&apiKey=${key}%3F`);

    // The first of repeated names counts (URLSearchParams.get, as in the SDK); a refused one drops them all.
    const firstAllowed = await get(server, `/__/auth/action?mode=signIn&oobCode=c&apiKey=${key}&continueUrl=${encodeURIComponent(`${appOrigin}/a`)}&continueUrl=https://evil.example/`);
    assert.equal(firstAllowed.location, `${appOrigin}/a?apiKey=${key}&oobCode=c&mode=signIn`);
    const firstRefused = await get(server, `/__/auth/action?mode=signIn&oobCode=c&apiKey=${key}&continueUrl=https://evil.example/&continueUrl=${encodeURIComponent(`${appOrigin}/a`)}`);
    assert.equal(firstRefused.location, `/__/auth/action?mode=signIn&oobCode=c&apiKey=${key}`);

    // A link wrapped in a deep link is never handed back (its inner link was never checked).
    const inner = `${server.url}/__/auth/action?${query({ mode: 'signIn', oobCode: 'c', apiKey: server.apiKey, continueUrl: 'https://evil.example/' })}`;
    assertPage(await get(server, `/__/auth/action?${query({ link: inner, mode: 'signIn', oobCode: 'c', apiKey: server.apiKey, continueUrl: `${appOrigin}/a` })}`));
  });

  test('an unknown API key, or a domain no longer authorized, is not followed', async () => {
    const unknown = await get(server, `/__/auth/action?${query({ mode: 'signIn', oobCode: 'c', apiKey: 'not-a-key', continueUrl: `${appOrigin}/a` })}`);
    assert.equal(unknown.status, 303);
    assert.equal(unknown.location, `/__/auth/action?${query({ mode: 'signIn', oobCode: 'c', apiKey: 'not-a-key' })}`);

    const domainServer = await startHearth({ webRoot, dev: false });
    try {
      await patchProjectConfig(domainServer, { authorizedDomains: ['localhost', '127.0.0.1', 'app.example'] }, 'authorizedDomains');
      const { link } = await signInLink(domainServer, uniqueEmail('removed'), 'https://shop.app.example/finish');
      assert.match((await get(domainServer, pathOf(link))).location ?? '', /^https:\/\/shop\.app\.example\/finish\?apiKey=/);
      await patchProjectConfig(domainServer, { authorizedDomains: ['localhost', '127.0.0.1'] }, 'authorizedDomains');
      const after = await get(domainServer, pathOf(link));
      assert.equal(after.status, 303);
      assert.match(after.location ?? '', /^\/__\/auth\/action\?mode=signIn&oobCode=[^&]+&apiKey=[^&]+&lang=en$/);
    } finally {
      await domainServer.close();
    }
  });

  test('/emulator/action is not served outside --dev', async () => {
    const answer = await get(server, `/emulator/action?${query({ mode: 'signIn', oobCode: 'c', apiKey: server.apiKey, continueUrl: `${appOrigin}/a` })}`);
    assert.equal(answer.status, 404);
    assert.equal(JSON.parse(answer.body).error.code, 404);
  });
});

describe('/emulator/action (--dev): Google Auth emulator’s link handler', () => {
  const emulatorLink = (params: Record<string, string>) => `/emulator/action?${query(params)}`;

  test('signIn: 303 to the continueUrl with the link’s parameters; the app signs in with it', async () => {
    const email = uniqueEmail('emulator-signin');
    const { code } = await signInLink(devServer, email, `${appOrigin}/finish?x=1`);
    const answer = await get(devServer, emulatorLink({ mode: 'signIn', lang: 'en', oobCode: code, apiKey: 'fake-api-key', continueUrl: `${appOrigin}/finish?x=1` }));
    assert.equal(answer.status, 303);
    assert.equal(answer.location, `${appOrigin}/finish?x=1&apiKey=fake-api-key&oobCode=${code}&mode=signIn&lang=en`);
    const credential = await signInWithEmailLink(clients.auth(devServer), email, answer.location!);
    assert.equal(credential.user.email, email);
  });

  test('missing parameters, bad modes and hostile continueUrls answer in the emulator’s shape, never a redirect', async () => {
    const missingKey = await get(devServer, emulatorLink({ mode: 'signIn', oobCode: 'c', continueUrl: `${appOrigin}/a` }));
    assert.equal(missingKey.status, 400);
    assert.equal(JSON.parse(missingKey.body).authEmulator.error, 'missing apiKey query parameter');
    const missingCode = await get(devServer, emulatorLink({ mode: 'signIn', apiKey: 'k', continueUrl: `${appOrigin}/a` }));
    assert.equal(JSON.parse(missingCode.body).authEmulator.error, 'missing oobCode query parameter');
    const noContinue = await get(devServer, emulatorLink({ mode: 'signIn', oobCode: 'c', apiKey: 'k' }));
    assert.equal(noContinue.status, 400);
    assert.equal(JSON.parse(noContinue.body).authEmulator.error, 'Missing continueUrl query parameter');
    const badMode = await get(devServer, emulatorLink({ mode: 'nope', oobCode: 'c', apiKey: 'k' }));
    assert.deepEqual(JSON.parse(badMode.body), { authEmulator: { error: 'Invalid mode' } });
    for (const continueUrl of hostile) {
      for (const mode of ['signIn', 'verifyEmail']) {
        const answer = await get(devServer, emulatorLink({ mode, oobCode: 'c', apiKey: 'k', continueUrl }));
        assert.equal(answer.status, 400, `${mode} ${continueUrl}`);
        assert.equal(answer.location, null);
        assert.equal(JSON.parse(answer.body).authEmulator.error, 'continueUrl is not on an authorized domain');
      }
    }
  });

  test('verifyEmail acts on GET and goes to the continueUrl; the used link then says so', async () => {
    const email = uniqueEmail('emulator-verify');
    const auth = clients.auth(devServer);
    const { user } = await createUserWithEmailAndPassword(auth, email, 'password-1');
    await sendEmailVerification(user);
    const { oobCode } = await waitForMail(devServer, email, 'VERIFY_EMAIL');
    const params = { mode: 'verifyEmail', lang: 'en', oobCode, apiKey: devServer.apiKey, continueUrl: `${appOrigin}/verified` };
    const answer = await get(devServer, emulatorLink(params));
    assert.equal(answer.status, 303);
    assert.equal(answer.location, `${appOrigin}/verified`);
    await reload(user);
    assert.equal(user.emailVerified, true);

    const again = await get(devServer, emulatorLink(params));
    assert.equal(again.status, 400);
    assert.deepEqual(JSON.parse(again.body), {
      authEmulator: { error: 'Your request to verify your email has expired or the link has already been used.', instructions: 'Try verifying your email again.' },
    });
  });

  test('resetPassword asks for newPassword in the URL, then sets it; a code of another kind is refused', async () => {
    const email = uniqueEmail('emulator-reset');
    const auth = clients.auth(devServer);
    await createUserWithEmailAndPassword(auth, email, 'password-1');
    await sendPasswordResetEmail(auth, email);
    const { oobCode } = await waitForMail(devServer, email, 'PASSWORD_RESET');
    const params = { mode: 'resetPassword', lang: 'en', oobCode, apiKey: devServer.apiKey };

    const wrongMode = await get(devServer, emulatorLink({ ...params, mode: 'verifyEmail' }));
    assert.equal(wrongMode.status, 400);
    assert.equal(JSON.parse(wrongMode.body).authEmulator.error, 'Your request to verify your email has expired or the link has already been used.');

    const ask = await get(devServer, emulatorLink(params));
    assert.equal(ask.status, 400);
    const asked = JSON.parse(ask.body).authEmulator;
    assert.equal(asked.error, 'missing newPassword query parameter');
    assert.equal(asked.urlTemplate, `${devServer.url}${emulatorLink(params)}&newPassword=NEW_PASSWORD_HERE`);
    const placeholder = await get(devServer, emulatorLink({ ...params, newPassword: 'NEW_PASSWORD_HERE' }));
    assert.equal(JSON.parse(placeholder.body).authEmulator.error, "newPassword must be something other than 'NEW_PASSWORD_HERE'");

    const done = await get(devServer, emulatorLink({ ...params, newPassword: 'password-2' }));
    assert.equal(done.status, 200);
    assert.deepEqual(JSON.parse(done.body), { authEmulator: { success: 'The password has been successfully updated.', email } });
    assert.equal(await errorCodeOf(signInWithEmailAndPassword(clients.auth(devServer), email, 'password-1')), 'auth/invalid-credential');
    const signedIn = await signInWithEmailAndPassword(clients.auth(devServer), email, 'password-2');
    assert.equal(signedIn.user.email, email);
  });
});
