/**
 * What the `firebase/firestore/lite` suites (tests/firestore-lite-*.test.ts) share: the target server and its
 * clients, a spy on `fetch` that records the server's own error status, and small read helpers.
 *
 * Two facts of the lite SDK shape the error assertions: it maps a failed REST call to a code by HTTP status alone
 * (400 → `failed-precondition`, 409 → `aborted`, 404 → `not-found`), so for server-side rejections the suites
 * also check the `status` the server put in its error body, read by the spy; and it refuses some bad input itself
 * before sending anything.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { deleteApp, type FirebaseApp } from 'firebase/app';
import {
  connectFirestoreEmulator,
  getDoc,
  getDocs,
  getFirestore,
  setLogLevel,
  type DocumentData,
  type DocumentReference,
  type Firestore,
  type Query,
} from 'firebase/firestore/lite';
import { clientApp, startTarget, within, type Target } from './firestore-target.js';

export { useGoogleEmulator, within } from './firestore-target.js';

let target: Target;
const apps: FirebaseApp[] = [];
/** One signed-in client; most tests use it. Set by useLiteTarget's `before`. */
export let db: Firestore;

// The SDK logs every failed RPC at error level, which would bury the test output.
setLogLevel('silent');

// ---- the server's own error status, seen through a spy on fetch ----

interface ServerError {
  url: string;
  httpStatus: number;
  status: string | undefined;
  message: string | undefined;
}
const serverErrors: ServerError[] = [];
let firestoreRequests = 0;
const realFetch = globalThis.fetch;
globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const response = await realFetch(input, init);
  if (/\/v1\/projects\/[^/]+\/databases\//.test(url)) {
    firestoreRequests++;
    if (!response.ok) {
      let body: any;
      try {
        body = await response.clone().json();
      } catch {
        body = undefined;
      }
      if (Array.isArray(body)) body = body[0];
      serverErrors.push({ url, httpStatus: response.status, status: body?.error?.status, message: body?.error?.message });
    }
  }
  return response;
};

/**
 * `promise` rejects with the SDK code `sdkCode`; when `serverStatus` is given, the server's last
 * error body carried that status (e.g. INVALID_ARGUMENT, which the lite SDK surfaces as
 * failed-precondition because it only looks at the HTTP status).
 */
export async function rejectsWith(promise: Promise<unknown>, sdkCode: string, serverStatus?: string): Promise<void> {
  const before = serverErrors.length;
  await assert.rejects(within(promise, `call expected to fail with ${sdkCode}`), (error: { code?: string; message?: string }) => {
    assert.equal(error.code, sdkCode, `expected ${sdkCode}, got ${error.code}: ${error.message}`);
    return true;
  });
  if (serverStatus !== undefined) {
    const seen = serverErrors.slice(before);
    assert.ok(seen.length > 0, 'the SDK rejected the call without a server error');
    assert.equal(seen[seen.length - 1].status, serverStatus, `server said ${JSON.stringify(seen[seen.length - 1])}`);
  }
}

/** `promise` rejects with `sdkCode` and no request reached the server: the SDK refused it itself. */
export async function refusedBySdk(call: () => Promise<unknown>, sdkCode: string): Promise<void> {
  const sent = firestoreRequests;
  await assert.rejects(
    within(
      Promise.resolve().then(call),
      'a call the SDK should refuse',
    ),
    (error: { code?: string; message?: string }) => {
      assert.equal(error.code, sdkCode, `expected ${sdkCode}, got ${error.code}: ${error.message}`);
      return true;
    },
  );
  assert.equal(firestoreRequests, sent, 'the SDK sent a request');
}

// ---- the target and its clients ----

/**
 * A separate client: its own Firebase app, signed in anonymously when the target needs it
 * (`signIn: false` gives a client nobody signed in to).
 */
export async function newClient(signIn = true): Promise<Firestore> {
  const app = await clientApp(target, `firestore-lite-${apps.length}`, signIn);
  apps.push(app);
  const firestore = getFirestore(app);
  connectFirestoreEmulator(firestore, target.host, target.port);
  return firestore;
}

/** The server the file's tests run against (set by useLiteTarget's `before`). */
export function liteTarget(): Target {
  return target;
}

/** Starts the target and signs `db` in before the file's tests; closes both after them. */
export function useLiteTarget(): void {
  before(async () => {
    target = await startTarget(`demo-lite-${Date.now()}`);
    db = await newClient();
  });

  after(async () => {
    await Promise.all(apps.splice(0).map((app) => deleteApp(app)));
    await target?.close();
  });
}

// ---- small helpers ----

export const get = (ref: DocumentReference) => within(getDoc(ref), `getDoc(${ref.path})`);
export const data = async (ref: DocumentReference): Promise<DocumentData | undefined> => (await get(ref)).data();
export const ids = async (q: Query): Promise<string[]> => (await within(getDocs(q), 'getDocs')).docs.map((d) => d.id);
export const paths = async (q: Query): Promise<string[]> => (await within(getDocs(q), 'getDocs')).docs.map((d) => d.ref.path);
