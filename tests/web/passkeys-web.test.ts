/**
 * Passkeys in the web app, in Chromium with its virtual authenticator: add one in account
 * settings; on the sign-in page the email field's autofill request (conditional mediation) made
 * with the right options, aborted by the passkey button, which signs in; the autofill signing in
 * alone when the authenticator answers it; "Confirm it's you" with a passkey, which also counts as
 * the second step for removing a two-step factor, and refuses another account's passkey; a removed
 * passkey refused; the console removing one. The server counts a sign-in as recent for 10 s.
 * Screenshots go to .tmp/artifacts/web/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminPost, uniqueEmail } from '../helpers/admin-http.js';
import { BrowserRecord, assertBrowserReady, launchChromium, requestsOffMachine, webRoot } from '../helpers/browser.js';
import { postJson, repoRoot, startHearth, type TestHearth } from '../helpers/hearth.js';
import { turnOnAuthenticatorApp } from '../helpers/web-totp.js';
import { signInWithAdminKey } from '../helpers/console-page.js';
import { createCredential, VirtualAuthenticator } from '../helpers/virtual-authenticator.js';

const waitMs = 15_000;
const stepTimeout = { timeout: 60_000 };
const recentSeconds = 10;
const artifacts = join(repoRoot, '.tmp/artifacts/web');

let server: TestHearth | undefined;
let browser: Browser | undefined;
let page: Page;
let authenticator: VirtualAuthenticator;
const record = new BrowserRecord();
const email = uniqueEmail('web-passkey');
const password = 'correct horse 1';

/** What the pages asked navigator.credentials.get for, and how each request ended, across page loads. */
interface PasskeyRequestEvent {
  event: 'request' | 'abort' | 'settled';
  id: string;
  mediation?: string;
  userVerification?: string;
  rpId?: string;
  allowCredentials?: number;
  withSignal?: boolean;
  outcome?: string;
}
const requests: PasskeyRequestEvent[] = [];

before(async () => {
  assertBrowserReady();
  mkdirSync(artifacts, { recursive: true });
  server = await startHearth({ webRoot, recentLoginSeconds: recentSeconds });
  const created = await adminPost(server, '/accounts', { email, password, emailVerified: true });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  browser = await launchChromium();
  const context = await record.newContext(browser, waitMs);
  await context.exposeBinding('hearthPasskeyEvent', (_source, event: PasskeyRequestEvent) => void requests.push(event));
  // Watches (and passes on untouched) the app's calls, so the test sees each request's options and end.
  await context.addInitScript(() => {
    const report = (window as unknown as { hearthPasskeyEvent: (event: unknown) => void }).hearthPasskeyEvent;
    const get = navigator.credentials.get.bind(navigator.credentials);
    navigator.credentials.get = (options?: CredentialRequestOptions) => {
      const id = crypto.randomUUID();
      const publicKey = options?.publicKey;
      report({ event: 'request', id, mediation: options?.mediation ?? 'optional', userVerification: publicKey?.userVerification, rpId: publicKey?.rpId, allowCredentials: publicKey?.allowCredentials?.length ?? 0, withSignal: Boolean(options?.signal) });
      options?.signal?.addEventListener('abort', () => report({ event: 'abort', id }));
      return get(options).then(
        (credential) => (report({ event: 'settled', id, outcome: 'credential' }), credential),
        (error: unknown) => {
          report({ event: 'settled', id, outcome: error instanceof DOMException ? error.name : String(error) });
          throw error;
        },
      );
    };
  });
  page = await record.newPage(context);
  authenticator = await VirtualAuthenticator.attach(context, page);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

// WebAuthn needs a host that can be a relying party id: localhost, not 127.0.0.1.
const url = (path: string) => `${server!.url.replace('127.0.0.1', 'localhost')}${path}`;
const signedIn = (as = email) => page.getByTestId('signed-in-email').filter({ hasText: as }).waitFor();
const confirmPanel = () => page.getByRole('group', { name: 'Confirm it’s you' });
const shot = (name: string) => page.screenshot({ path: join(artifacts, `passkeys-${name}.png`), fullPage: true });

async function signOut(): Promise<void> {
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are not signed in.').waitFor();
}

async function signInWithPassword(): Promise<void> {
  await page.goto(url('/signin'));
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await signedIn();
}

/** Waits until the page has a request of `mediation` with the wanted end (or still waiting: 'pending'). */
async function requestOf(mediation: string, outcome: string): Promise<PasskeyRequestEvent> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const found = requests.find((r) => r.event === 'request' && r.mediation === mediation && (requests.find((s) => s.event === 'settled' && s.id === r.id)?.outcome ?? 'pending') === outcome);
    if (found) return found;
    assert.ok(Date.now() < deadline, `no ${mediation} request ${outcome}: ${JSON.stringify(requests)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a passkey added in account settings; the autofill request is made, and the passkey button aborts it and signs in', stepTimeout, async () => {
  await signInWithPassword();
  await page.goto(url('/account'));
  await page.getByText('No passkeys yet.').waitFor();
  await page.getByLabel('Passkey name').fill('Test laptop');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByTestId('passkey').filter({ hasText: 'Test laptop' }).waitFor();
  assert.equal((await authenticator.credentials()).length, 1, 'the authenticator holds the new passkey');

  await signOut();
  // No touch: the autofill's request waits, as it does until the user picks a passkey in the field.
  await authenticator.setPresence(false);
  requests.length = 0;
  await page.goto(url('/signin'));
  const waiting = await requestOf('conditional', 'pending');
  assert.deepEqual({ ...waiting, id: '' }, { event: 'request', id: '', mediation: 'conditional', userVerification: 'required', rpId: 'localhost', allowCredentials: 0, withSignal: true });
  assert.equal(await page.getByLabel('Email', { exact: true }).getAttribute('autocomplete'), 'username webauthn');
  await shot('autofill-waiting');
  await authenticator.setPresence(true);
  const finalize = page.waitForResponse((r) => r.url().includes('passkeySignIn:finalize'));
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  assert.equal((await finalize).status(), 200);
  await signedIn();
  // The button's request came after the autofill's was aborted and over: the browser holds one at a time.
  const aborted = await requestOf('conditional', 'AbortError');
  const button = await requestOf('optional', 'credential');
  const at = (id: string, event: string) => requests.findIndex((r) => r.id === id && r.event === event);
  assert.ok(at(aborted.id, 'abort') >= 0 && at(aborted.id, 'settled') < at(button.id, 'request'), JSON.stringify(requests));
  // The session is the SDK's own now: it survives a reload and reaches the account page.
  await page.goto(url('/account'));
  await page.getByTestId('passkey').filter({ hasText: 'Test laptop' }).waitFor();
});

test('the autofill signs in when the authenticator answers it, without the button', stepTimeout, async () => {
  await signOut();
  requests.length = 0;
  const finalize = page.waitForResponse((r) => r.url().includes('passkeySignIn:finalize'));
  await page.goto(url('/signin'));
  assert.equal((await finalize).status(), 200);
  await signedIn();
  await requestOf('conditional', 'credential');
  assert.equal(requests.filter((r) => r.event === 'request' && r.mediation !== 'conditional').length, 0, 'no button press made a request');
  await shot('autofill-signed-in');
});

test("\"Confirm it's you\" with a passkey, which also stands for the second step, removes a two-step factor", stepTimeout, async () => {
  // Fresh from the passkey sign-in: an authenticator app as second step.
  await page.goto(url('/account'));
  await turnOnAuthenticatorApp(page, 'Laptop app');

  await new Promise((resolve) => setTimeout(resolve, (recentSeconds + 1.5) * 1000));
  await page.getByRole('button', { name: 'Remove Authenticator app (Laptop app)' }).click();
  await confirmPanel().getByText('to remove Authenticator app (Laptop app) from two-step verification').waitFor();
  await shot('confirm-with-passkey');
  const finalize = page.waitForResponse((r) => r.url().includes('passkeySignIn:finalize'));
  await confirmPanel().getByRole('button', { name: 'Use a passkey' }).click();
  assert.equal((await finalize).status(), 200);
  // The page came back to resume the removal, with the passkey's session (no second factor in it).
  await page.getByRole('status').filter({ hasText: 'Authenticator app (Laptop app) was removed.' }).waitFor();
  await page.getByText('Off. Add a second step').waitFor();
  await page.getByTestId('account-email').filter({ hasText: email }).waitFor();
  await shot('factor-removed-after-passkey');
  const lookup = await adminPost(server!, '/accounts:lookup', { email: [email] });
  assert.equal(lookup.body.users[0].mfaInfo, undefined);
});

test("another account's passkey does not confirm it's you, and does not switch accounts", stepTimeout, async () => {
  // A second account's passkey, made in the same authenticator; this account's taken out of it.
  const other = uniqueEmail('web-passkey-other');
  const signUp = await postJson(url(`/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server!.apiKey}`), { email: other, password: 'other pass 1', returnSecureToken: true });
  assert.equal(signUp.status, 200, JSON.stringify(signUp.body));
  const v2 = (path: string, body: unknown) => postJson(url(`/identitytoolkit.googleapis.com/v2/accounts/${path}?key=${server!.apiKey}`), body);
  const start = await v2('passkeyEnrollment:start', { idToken: signUp.body.idToken });
  assert.equal(start.status, 200, JSON.stringify(start.body));
  const [own] = await authenticator.credentials();
  const credential = await createCredential(page, start.body.credentialCreationOptions);
  const enrolled = await v2('passkeyEnrollment:finalize', { idToken: signUp.body.idToken, name: 'Other', authenticatorRegistrationResponse: credential });
  assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
  const kept = await authenticator.remove(own!.credentialId);
  try {
    await page.goto(url('/account'));
    const finalizes = () => record.requested.filter((address) => address.includes('passkeySignIn:finalize')).length;
    const before = finalizes();
    await page.getByRole('button', { name: 'Forgot your current password?' }).click();
    await confirmPanel().getByRole('button', { name: 'Use a passkey' }).click();
    await confirmPanel().getByRole('alert').filter({ hasText: 'That passkey belongs to another account.' }).waitFor();
    assert.equal(finalizes(), before, 'refused in the page: the server was not asked to sign the other account in');
    await shot('confirm-other-account-refused');
    assert.equal((await page.getByTestId('account-email').innerText()).trim(), email);
    await page.reload();
    await page.getByTestId('account-email').filter({ hasText: email }).waitFor();
  } finally {
    await authenticator.remove(Buffer.from(credential.rawId, 'base64url').toString('base64'));
    await authenticator.restore(kept);
  }
});

test('a removed passkey no longer signs in, by autofill or button', stepTimeout, async () => {
  // A fresh sign-in (by autofill), as removing a passkey needs a recent one.
  await signOut();
  await page.goto(url('/signin'));
  await signedIn();
  await page.goto(url('/account'));
  await page.getByRole('button', { name: 'Remove passkey Test laptop' }).click();
  await page.getByText('No passkeys yet.').waitFor();
  await signOut();
  await page.goto(url('/signin'));
  await page.getByRole('alert').filter({ hasText: 'not registered for any account' }).waitFor();
  const finalize = page.waitForResponse((r) => r.url().includes('passkeySignIn:finalize'));
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  assert.equal((await finalize).status(), 400);
  await page.getByRole('alert').filter({ hasText: 'not registered for any account' }).waitFor();
  await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
});

test('the console lists a passkey on the user page, and an operator removes it', stepTimeout, async () => {
  await signInWithPassword();
  await page.goto(url('/account'));
  await page.getByLabel('Passkey name').fill('Phone key');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByTestId('passkey').filter({ hasText: 'Phone key' }).waitFor();
  const uid = (await page.getByTestId('account-uid').innerText()).trim();

  const operator = await record.newPage(page.context());
  await signInWithAdminKey(operator, server!.url, server!.adminKey);
  await operator.goto(`${server!.url}/console/users/${uid}`);
  await operator.getByTestId('console-passkey').filter({ hasText: 'Phone key' }).waitFor();
  await operator.getByRole('button', { name: 'Remove passkey Phone key' }).click();
  await operator.getByRole('status').filter({ hasText: 'Passkey removed' }).waitFor();
  await operator.getByText('None.').first().waitFor();
  await operator.close();

  await signOut();
  await page.goto(url('/signin'));
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await page.getByRole('alert').filter({ hasText: 'not registered for any account' }).waitFor();
});

test('an address over its passkey start limit: the autofill offers nothing and shows no error; the button says why', stepTimeout, async () => {
  await page.goto(url('/'));
  // The same address as the browser's (127.0.0.1): starts until the server's own limit refuses one.
  let refused: { status: number; body: any } | undefined;
  for (let i = 0; i < 100 && !refused; i++) {
    const answer = await postJson(url(`/identitytoolkit.googleapis.com/v2/accounts/passkeySignIn:start?key=${server!.apiKey}`), {});
    if (answer.status !== 200) refused = answer;
  }
  assert.equal(refused?.body?.error?.message, 'TOO_MANY_ATTEMPTS_TRY_LATER : Too many passkey requests from this address; try again later.');
  const autofillStart = page.waitForResponse((r) => r.url().includes('passkeySignIn:start'));
  await page.goto(url('/signin'));
  assert.equal((await autofillStart).status(), 400);
  await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
  assert.equal(await page.getByRole('alert').count(), 0, 'no error for a request the visitor never made');
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await page.getByRole('alert').filter({ hasText: /too many/i }).waitFor();
  await shot('start-limit');
});

test('nothing left the machine and the pages raised no errors', () => {
  assert.deepEqual(requestsOffMachine(record.requested), []);
  assert.deepEqual(record.pageErrors, []);
});
