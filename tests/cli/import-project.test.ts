/**
 * `hearth import DIR` of a `firebase emulators:export` folder (firebase-export-metadata.json,
 * firestore_export/ as Google's Firestore emulator exports it, auth_export/accounts.json in the Auth
 * emulator's shape with its plain-text "fakeHash" passwords, storage_export/ as the Storage emulator
 * writes it) and the project's firebase.json: the
 * documents are there, the users sign in with their passwords (hashed on the way in, never kept in
 * plain text), the rules are in force, the Storage emulator's objects download with their tokens. `hearth export DIR` writes the same layout back, and a second
 * Hearth imported from it has the same documents, accounts (passwords included) and rules.
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { crc32c } from '@node-rs/crc32';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { deleteApp, initializeApp } from 'firebase/app';
import { connectAuthEmulator, inMemoryPersistence, initializeAuth, signInWithEmailAndPassword } from 'firebase/auth';
import { connectFirestoreEmulator, doc, getDoc, getFirestore, setLogLevel } from 'firebase/firestore/lite';
import { startGoogleEmulator, type GoogleEmulator } from '../helpers/firestore-emulator.js';
import { startHearth, tempDataDir, type TestHearth } from '../helpers/hearth.js';
import { call, hearthCli } from '../helpers/firestore-export-differential.js';
import { errorCodeOf } from '../helpers/client.js';
import { storedRows } from '../helpers/test-backend.js';

setLogLevel('silent');
const projectId = 'demo-project-folder';
const bucket = `${projectId}.appspot.com`;
const photo = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256));

/** The object's bytes through its Firebase download URL (the token the export kept). */
async function download(hearth: TestHearth): Promise<Buffer> {
  const response = await fetch(`${hearth.url}/v0/b/${bucket}/o/${encodeURIComponent('photos/cat one.png')}?alt=media&token=tok-1`);
  assert.equal(response.status, 200, await response.clone().text());
  return Buffer.from(await response.arrayBuffer());
}
const password = 'correct horse:battery staple';
const emulator: GoogleEmulator | undefined = await startGoogleEmulator();

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{id} { allow read: if request.auth != null; }
  }
}
`;

/** A folder as `firebase emulators:export` writes it, with the project's firebase.json beside. */
async function emulatorsExportFolder(): Promise<string> {
  const folder = join(tempDataDir(), 'emulator-data');
  mkdirSync(join(folder, 'auth_export'), { recursive: true });
  const root = `projects/${projectId}/databases/(default)/documents`;
  const written = await call({ label: 'emulator', url: emulator!.url }, 'POST', `${root}:commit`, {
    writes: [{ update: { name: `${root}/notes/n1`, fields: { text: { stringValue: 'hi' } } } }],
  });
  assert.equal(written.status, 200, JSON.stringify(written.body));
  const exported = await fetch(`${emulator!.url}/emulator/v1/projects/${projectId}:export`, {
    method: 'POST',
    body: JSON.stringify({ database: `projects/${projectId}/databases/(default)`, export_directory: folder, export_name: 'firestore_export' }),
  });
  assert.equal(exported.status, 200, await exported.text());
  writeFileSync(join(folder, 'firebase-export-metadata.json'), JSON.stringify({
    version: '14.0.0',
    firestore: { version: '1.19.9', path: 'firestore_export', metadata_file: 'firestore_export/firestore_export.overall_export_metadata' },
    auth: { version: '14.0.0', path: 'auth_export' },
  }));
  writeFileSync(join(folder, 'auth_export', 'accounts.json'), JSON.stringify({
    kind: 'identitytoolkit#DownloadAccountResponse',
    users: [
      {
        localId: 'ada1', email: 'ada@example.com', emailVerified: true, displayName: 'Ada',
        salt: 'fakeSaltAda', passwordHash: `fakeHash:salt=fakeSaltAda:password=${password}`, passwordUpdatedAt: 1_700_000_000_000,
        validSince: '1700000000', createdAt: '1700000000000', lastLoginAt: '1700000001000', lastRefreshAt: '2023-11-14T22:13:21.000Z',
        customAttributes: '{"role":"admin"}',
        providerUserInfo: [{ providerId: 'password', email: 'ada@example.com', federatedId: 'ada@example.com', rawId: 'ada@example.com', displayName: 'Ada' }],
      },
      {
        localId: 'cy3', email: 'cy@example.com', emailVerified: true, createdAt: '1700000000000',
        mfaInfo: [{ mfaEnrollmentId: 'f1', displayName: 'work phone', phoneInfo: '+15555550199', enrolledAt: '2023-11-14T22:13:20.000Z' }],
      },
      { localId: 'bob2', phoneNumber: '+15555550100', createdAt: '1700000000000', providerUserInfo: [{ providerId: 'phone', rawId: '+15555550100', phoneNumber: '+15555550100' }] },
    ],
  }));
  writeFileSync(join(folder, 'auth_export', 'config.json'), JSON.stringify({ signIn: { allowDuplicateEmails: false } }));
  // The Storage emulator's export: blobs/ and metadata/ under the bucket, the file name URI-encoded.
  const storage = join(folder, 'storage_export');
  mkdirSync(join(storage, 'blobs', bucket, 'photos'), { recursive: true });
  mkdirSync(join(storage, 'metadata', bucket, 'photos'), { recursive: true });
  writeFileSync(join(storage, 'buckets.json'), JSON.stringify({ buckets: [{ id: bucket }] }));
  writeFileSync(join(storage, 'blobs', bucket, 'photos', 'cat%20one.png'), photo);
  writeFileSync(join(storage, 'metadata', bucket, 'photos', 'cat%20one.png.json'), JSON.stringify({
    name: 'photos/cat one.png', bucket, generation: 1_700_000_000_123, metageneration: 2, contentType: 'image/png',
    timeCreated: '2023-11-14T22:13:20.123Z', updated: '2023-11-14T22:13:21.000Z', storageClass: 'STANDARD', size: photo.length,
    md5Hash: createHash('md5').update(photo).digest('base64'), crc32c: String(crc32c(photo)), etag: 'x', downloadTokens: ['tok-1'],
    customMetadata: { owner: 'ada1' },
  }));
  writeFileSync(join(folder, 'firestore.rules'), rules);
  writeFileSync(join(folder, 'firebase.json'), JSON.stringify({ firestore: { rules: 'firestore.rules' } }));
  return folder;
}

/** What a client of the project sees: ada's sign-in with a password, notes/n1 signed in and signed out. */
async function clientView(hearth: TestHearth, attempt: string): Promise<{ signIn: string; wrongPassword: string; signedOut: string; signedIn: string }> {
  const app = initializeApp({ apiKey: hearth.apiKey, projectId }, `project-folder-${Date.now()}-${Math.random()}`);
  try {
    const auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, hearth.url, { disableWarnings: true });
    const db = getFirestore(app);
    const { hostname, port } = new URL(hearth.url);
    connectFirestoreEmulator(db, hostname, Number(port));
    const signedOut = await errorCodeOf(getDoc(doc(db, 'notes/n1')));
    const wrongPassword = await errorCodeOf(signInWithEmailAndPassword(auth, 'ada@example.com', `${attempt}x`));
    const signIn = await errorCodeOf(signInWithEmailAndPassword(auth, 'ada@example.com', attempt));
    const signedIn = signIn === 'no error' ? String((await getDoc(doc(db, 'notes/n1'))).get('text')) : 'not signed in';
    return { signIn, wrongPassword, signedOut, signedIn };
  } finally {
    await deleteApp(app);
  }
}

describe('hearth import / export of a firebase emulators:export folder', { skip: !emulator && 'the official Firestore emulator is not installed' }, () => {
  let folder: string;
  let dataDir: string;
  let hearth: TestHearth;
  let importOutput: string;

  before(async () => {
    folder = await emulatorsExportFolder();
    dataDir = tempDataDir();
    const imported = await hearthCli(['import', folder], dataDir);
    assert.equal(imported.code, 0, imported.stderr);
    importOutput = imported.stderr;
    hearth = await startHearth({ dataDir, defaultProjectId: projectId });
  });

  after(async () => {
    await hearth?.close();
    await emulator?.stop();
  });

  test('it says what it brought in', () => {
    assert.match(importOutput, /Imported 1 document\(s\) into demo-project-folder\/\(default\)/);
    assert.match(importOutput, /Imported 3 of 3 account\(s\) into demo-project-folder \(1 with a password, hashed on the way in\)/);
    assert.match(importOutput, /Released .*firestore\.rules as the Firestore rules of demo-project-folder/);
    assert.match(importOutput, /Imported 1 Cloud Storage object\(s\), 70000 bytes, into bucket\(s\) demo-project-folder\.appspot\.com/);
  });

  test('Cloud Storage objects keep their bytes, metadata and download tokens', async () => {
    assert.deepEqual(await download(hearth), photo);
    const meta = await fetch(`${hearth.url}/v0/b/${bucket}/o/${encodeURIComponent('photos/cat one.png')}?token=tok-1`);
    const body = (await meta.json()) as Record<string, unknown>;
    assert.equal(body.contentType, 'image/png');
    assert.deepEqual(body.metadata, { owner: 'ada1' });
    assert.equal(body.md5Hash, createHash('md5').update(photo).digest('base64'));
    assert.equal(body.timeCreated, '2023-11-14T22:13:20.123Z');
  });

  test('users sign in with their passwords, the rules are in force, no plain-text password is kept', async () => {
    assert.deepEqual(await clientView(hearth, password), { signIn: 'no error', wrongPassword: 'auth/invalid-credential', signedOut: 'permission-denied', signedIn: 'hi' });
    const stored = await storedRows(dataDir, 'SELECT record FROM users');
    assert.equal(stored.length, 3);
    for (const row of stored) assert.ok(!String(row.record).includes('correct horse'), 'a stored account holds the plain-text password');
  });

  test('hearth export writes the folder back; a second Hearth imports it the same', async () => {
    const out = join(tempDataDir(), 'out');
    const exported = await hearthCli(['export', out, '--project', projectId], dataDir);
    assert.equal(exported.code, 0, exported.stderr);
    assert.deepEqual(readFileSync(join(out, 'storage_export/blobs', bucket, 'photos/cat%20one.png')), photo);
    const objectMetadata = JSON.parse(readFileSync(join(out, 'storage_export/metadata', bucket, 'photos/cat%20one.png.json'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual([objectMetadata.name, objectMetadata.generation, objectMetadata.downloadTokens, objectMetadata.crc32c], ['photos/cat one.png', 1_700_000_000_123, ['tok-1'], String(crc32c(photo))]);
    for (const file of ['firebase-export-metadata.json', 'firebase.json', 'firestore.rules', 'auth_export/accounts.json', 'firestore_export/firestore_export.overall_export_metadata', 'storage_export/buckets.json']) {
      assert.ok(existsSync(join(out, file)), `${file} is missing`);
    }
    assert.equal(readFileSync(join(out, 'firestore.rules'), 'utf8'), rules);
    const accounts = JSON.parse(readFileSync(join(out, 'auth_export/accounts.json'), 'utf8')) as { kind: string; users: Array<{ localId: string; customAttributes?: string; mfaInfo?: Array<{ phoneInfo: string; displayName: string }> }> };
    assert.equal(accounts.kind, 'identitytoolkit#DownloadAccountResponse');
    assert.deepEqual(accounts.users.map((user) => user.localId).sort(), ['ada1', 'bob2', 'cy3']);
    assert.deepEqual(accounts.users.find((user) => user.localId === 'cy3')!.mfaInfo!.map(({ phoneInfo, displayName }) => ({ phoneInfo, displayName })), [{ phoneInfo: '+15555550199', displayName: 'work phone' }]);
    assert.match(exported.stderr, /firebase auth:import .*accounts\.json --hash-algo STANDARD_SCRYPT --mem-cost \d+ --block-size \d+ --parallelization \d+ --dk-len \d+/);
    assert.equal(accounts.users.find((user) => user.localId === 'ada1')!.customAttributes, '{"role":"admin"}');

    const secondDir = tempDataDir();
    const reimported = await hearthCli(['import', out], secondDir);
    assert.equal(reimported.code, 0, reimported.stderr);
    assert.match(reimported.stderr, /Imported 3 of 3 account\(s\)/);
    const second = await startHearth({ dataDir: secondDir, defaultProjectId: projectId });
    try {
      assert.deepEqual(await clientView(second, password), { signIn: 'no error', wrongPassword: 'auth/invalid-credential', signedOut: 'permission-denied', signedIn: 'hi' });
      assert.deepEqual(await download(second), photo);
    } finally {
      await second.close();
    }
  });
});
