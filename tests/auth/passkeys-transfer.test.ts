/**
 * Passkeys moved with their accounts: `hearth users export` writes them (JSON; the CSV says it
 * cannot), `hearth users import` into a fresh Hearth brings them, and the passkey made in Chromium
 * signs in there with its counter carried over (an earlier assertion stays refused). Also what
 * firebase-admin shows (listUsers has no passkey field; importUsers cannot send one), and hostile
 * passkeys in accounts:batchCreate over raw HTTP: malformed keys, and a credential another account holds.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { deleteApp, initializeApp } from 'firebase-admin/app';
import { getAuth } from 'firebase-admin/auth';
import type { Browser, Page } from 'playwright-core';
import { uniqueEmail } from '../helpers/admin-http.js';
import { launchChromium } from '../helpers/browser.js';
import { postJson, startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { hearthUsers } from '../helpers/hearth-users-cli.js';
import { createCredential, getAssertion, VirtualAuthenticator } from '../helpers/virtual-authenticator.js';

const project = 'demo-test';
const work = tempDataDir();
let source: TestHearth;
let browser: Browser;
let page: Page;

before(async () => {
  source = await startHearth({ defaultProjectId: project });
  browser = await launchChromium();
  const context = await browser.newContext();
  page = await context.newPage();
  await page.goto(`${source.url.replace('127.0.0.1', 'localhost')}/identitytoolkit.googleapis.com/`);
  await VirtualAuthenticator.attach(context, page);
});
after(async () => {
  await browser?.close();
  await source?.close();
  rmSync(work, { recursive: true, force: true });
});

const call = (server: TestHearth, path: string, body: unknown) => postJson(`${server.url}/identitytoolkit.googleapis.com/${path}?key=${server.apiKey}`, body);
const admin = (server: TestHearth, path: string, body: unknown) =>
  postJson(`${server.url}/identitytoolkit.googleapis.com/v1/projects/${server.projectId}/${path}`, body, { authorization: `Bearer ${server.adminKey}` });


async function assertionFor(server: TestHearth): Promise<any> {
  const start = await call(server, 'v2/accounts/passkeySignIn:start', {});
  assert.equal(start.status, 200, JSON.stringify(start.body));
  return getAssertion(page, start.body.credentialRequestOptions);
}

test('export, import into a fresh Hearth, sign in there with the passkey; firebase-admin and hostile imports', async () => {
  const email = uniqueEmail('passkey-move');
  const signedUp = await call(source, 'v1/accounts:signUp', { email, password: 'secret-pass-1', returnSecureToken: true });
  assert.equal(signedUp.status, 200, JSON.stringify(signedUp.body));
  const start = await call(source, 'v2/accounts/passkeyEnrollment:start', { idToken: signedUp.body.idToken });
  const credential = await createCredential(page, start.body.credentialCreationOptions);
  const enrolled = await call(source, 'v2/accounts/passkeyEnrollment:finalize', { idToken: signedUp.body.idToken, name: 'Laptop', authenticatorRegistrationResponse: credential });
  assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
  // Used once on the source, so its counter is past an assertion made now and kept for later.
  const early = await assertionFor(source);
  const used = await call(source, 'v2/accounts/passkeySignIn:finalize', { authenticatorAuthenticationResponse: await assertionFor(source) });
  assert.equal(used.status, 200, JSON.stringify(used.body));

  const csv = await hearthUsers('export', join(work, 'users.csv'), '--project', project, '--data', source.dataDir);
  assert.equal(csv.code, 0, csv.stderr);
  assert.match(csv.stderr, /1 account\(s\) have passkeys, which a CSV has no column for/);
  const file = join(work, 'users.json');
  const exported = await hearthUsers('export', file, '--project', project, '--data', source.dataDir);
  assert.equal(exported.code, 0, exported.stderr);
  assert.match(exported.stderr, /1 account\(s\) have passkeys: Hearth imports them/);
  const account = (JSON.parse(readFileSync(file, 'utf8')).users as any[]).find((u) => u.localId === signedUp.body.localId);
  assert.deepEqual(Object.keys(account.passkeys[0]).sort(), ['counter', 'createdAt', 'credentialId', 'lastUsedAt', 'name', 'publicKey', 'transports'].sort());
  assert.equal(account.passkeys[0].credentialId, credential.id);
  assert.ok(account.passkeys[0].counter > 0);

  const dataDir = join(work, 'target');
  const imported = await hearthUsers('import', file, '--project', project, '--data', dataDir, '--hash-algo', 'HEARTH_SCRYPT');
  assert.equal(imported.code, 0, imported.stderr);
  const target = await startHearth({ dataDir, defaultProjectId: project });
  try {
    const looked = await admin(target, 'accounts:lookup', { localId: [signedUp.body.localId] });
    assert.deepEqual(looked.body.users[0].passkeyInfo.map((p: any) => [p.credentialId, p.name]), [[credential.id, 'Laptop']]);
    const signedIn = await call(target, 'v2/accounts/passkeySignIn:finalize', { authenticatorAuthenticationResponse: await assertionFor(target) });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.localId, signedUp.body.localId);
    // The counter came along: an assertion older than the source's last use is a clone's.
    const replayed = await call(target, 'v2/accounts/passkeySignIn:finalize', { authenticatorAuthenticationResponse: early });
    assert.equal(replayed.status, 400);
    assert.match(replayed.body.error.message, /INVALID_CHALLENGE|INVALID_AUTHENTICATOR_RESPONSE/);

    // firebase-admin knows no passkeys: listUsers shows the account without them, importUsers cannot send them.
    process.env.FIREBASE_AUTH_EMULATOR_HOST = target.hostPort;
    const app = initializeApp({ projectId: target.projectId }, `passkey-transfer-${Date.now()}`);
    try {
      const listed = (await getAuth(app).listUsers()).users.find((u) => u.uid === signedUp.body.localId)!;
      assert.equal(listed.email, email);
      assert.ok(!('passkeyInfo' in listed.toJSON()), 'firebase-admin drops fields it does not know');
    } finally {
      await deleteApp(app);
      delete process.env.FIREBASE_AUTH_EMULATOR_HOST;
    }

    // Hostile imports: each refuses its own account only, with the reason.
    const good = account.passkeys[0];
    const batch = await admin(target, 'accounts:batchCreate', {
      users: [
        { localId: 'thief', passkeys: [good] },
        { localId: 'bad-key', passkeys: [{ ...good, credentialId: 'b3RoZXI', publicKey: Buffer.from('not a cose key').toString('base64url') }] },
        { localId: 'bad-id', passkeys: [{ ...good, credentialId: 'not base64url!' }] },
        { localId: 'bad-counter', passkeys: [{ ...good, credentialId: 'Y291bnRlcg', counter: -1 }] },
        { localId: 'bad-transport', passkeys: [{ ...good, credentialId: 'dHJhbnNwb3J0', transports: ['<script>'] }] },
        { localId: 'twice', passkeys: [{ ...good, credentialId: 'dHdpY2U' }, { ...good, credentialId: 'dHdpY2U' }] },
        { localId: 'not-object', passkeys: ['x'] },
        { localId: 'fine', passkeys: [{ ...good, credentialId: 'ZmluZQ', name: undefined, lastUsedAt: undefined, transports: undefined }] },
      ],
    });
    assert.equal(batch.status, 200, JSON.stringify(batch.body));
    assert.ok(batch.body.error, JSON.stringify(batch.body));
    assert.deepEqual(
      batch.body.error.map((e: any) => [e.index, e.message]),
      [
        [0, 'a passkey exists in other account in database'],
        [1, 'passkeys.publicKey must be a COSE public key in base64url'],
        [2, 'passkeys.credentialId must be base64url'],
        [3, 'passkeys.counter must be a whole number from 0 to 2^32-1'],
        [4, 'passkeys.transports must name WebAuthn transports (ble, cable, hybrid, internal, nfc, smart-card, usb)'],
        [5, 'a passkey is given twice in this account'],
        [6, 'each passkeys entry must be an object'],
      ],
    );
    const tooMany = await admin(target, 'accounts:batchCreate', { users: [{ localId: 'many', passkeys: Array.from({ length: 11 }, (_, i) => ({ ...good, credentialId: `bWFueQ${i}` })) }] });
    assert.equal(tooMany.status, 400, JSON.stringify(tooMany.body));
    const fine = await admin(target, 'accounts:lookup', { localId: ['fine'] });
    assert.deepEqual(fine.body.users[0].passkeyInfo.map((p: any) => p.credentialId), ['ZmluZQ']);
    assert.ok(!JSON.stringify(fine.body).includes(good.publicKey), 'lookup never shows a public key');
  } finally {
    await target.close();
  }
});
