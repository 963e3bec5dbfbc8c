import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, getAuth, signInAnonymously, type User } from 'firebase/auth';
import { connectStorageEmulator, getStorage, type FirebaseStorage } from 'firebase/storage';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TestHearth } from './hearth.js';

/** The default bucket of the test project, as a Firebase config names it. */
export const testBucket = 'demo-test.appspot.com';

let appCount = 0;

export interface StorageClient {
  app: FirebaseApp;
  storage: FirebaseStorage;
  user?: User;
  close(): Promise<void>;
}

/**
 * A firebase/storage client of the test server, through connectStorageEmulator (and
 * connectAuthEmulator when it signs in: anonymously, so it holds a real ID token of Hearth's).
 */
export async function storageClient(server: TestHearth, options: { signIn?: boolean; bucket?: string } = {}): Promise<StorageClient> {
  const app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId, storageBucket: options.bucket ?? testBucket, appId: '1:1:web:1' }, `storage-${appCount++}`);
  const storage = getStorage(app);
  const [host, port] = server.hostPort.split(':');
  connectStorageEmulator(storage, host!, Number(port));
  let user: User | undefined;
  if (options.signIn) {
    const auth = getAuth(app);
    connectAuthEmulator(auth, server.url, { disableWarnings: true });
    user = (await signInAnonymously(auth)).user;
  }
  return { app, storage, ...(user ? { user } : {}), close: () => deleteApp(app) };
}

/** Files under the data folder's byte store (blobs, staging and temporary), to check nothing is left behind. */
export function storedFiles(dataDir: string): { blobs: string[]; staging: string[]; tmp: string[] } {
  const root = join(dataDir, 'files');
  const list = (dir: string): string[] => {
    try {
      return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? list(join(dir, name)) : [name]));
    } catch {
      return [];
    }
  };
  return { blobs: list(join(root, 'blobs')), staging: list(join(root, 'staging')), tmp: list(join(root, 'tmp')) };
}

/** The v0 API's URL of an object (one encoded segment), or of the bucket's objects. */
export function v0Url(server: TestHearth, name?: string, bucket = testBucket): string {
  return `${server.url}/v0/b/${bucket}/o${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}

/** A multipart/related body as firebase/storage builds it. */
export function multipartBody(metadata: unknown, media: Buffer | string, contentType = 'application/octet-stream', boundary = 'b0undary12345'): { body: Buffer; contentType: string } {
  const head = `--${boundary}\r\nContent-Type: application/json; charset=utf-8\r\n\r\n${JSON.stringify(metadata)}\r\n--${boundary}\r\nContent-Type: ${contentType}\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head), Buffer.from(media), Buffer.from(`\r\n--${boundary}--`)]), contentType: `multipart/related; boundary=${boundary}` };
}

/** An object's metadata read by the administrator (admin key), or undefined when there is none. */
export async function adminObject(server: TestHearth, name: string, bucket = testBucket): Promise<Record<string, unknown> | undefined> {
  const response = await fetch(v0Url(server, name, bucket), { headers: { authorization: `Bearer ${server.adminKey}` } });
  if (response.status === 404) return undefined;
  if (response.status !== 200) throw new Error(`reading ${name} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** Stores an object as the administrator (a media upload of the v0 API). */
export async function adminUpload(server: TestHearth, name: string, bytes: Buffer | string, contentType = 'text/plain', bucket = testBucket): Promise<void> {
  const response = await fetch(`${v0Url(server, undefined, bucket)}?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminKey}`, 'content-type': contentType },
    body: typeof bytes === 'string' ? bytes : new Uint8Array(bytes),
  });
  if (response.status !== 200) throw new Error(`uploading ${name} answered ${response.status}: ${await response.text()}`);
}
