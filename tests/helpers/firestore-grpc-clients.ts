/**
 * What the gRPC suites (tests/firestore-grpc-*.test.ts) share: the target server (Hearth, or Google's emulator:
 * tests/helpers/firestore-target.ts), a firebase-admin instance on it (FIRESTORE_EMULATOR_HOST, `Bearer owner`)
 * and more on demand, full-SDK `firebase/firestore` clients in Node, and a recorder of listener snapshots.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App as AdminApp } from 'firebase-admin/app';
import {
  getFirestore as getAdminFirestore,
  setLogFunction,
  type CollectionReference,
  type Firestore as AdminFirestore,
  type Query as AdminQuery,
} from 'firebase-admin/firestore';
import { deleteApp, type FirebaseApp } from 'firebase/app';
import { connectFirestoreEmulator, getFirestore, setLogLevel, terminate, type Firestore } from 'firebase/firestore';
import { CALL_TIMEOUT_MS, clientApp, startTarget, within, type Target } from './firestore-target.js';

export { useGoogleEmulator, within } from './firestore-target.js';

/** Collections are named per run, so a reused emulator starts clean. */
export const run = Date.now().toString(36);

/** Set by useGrpcTarget's `before`. */
export let target: Target;
let adminApp: AdminApp;
/** firebase-admin on the target; set by useGrpcTarget's `before`. */
export let admin: AdminFirestore;
const adminApps: AdminApp[] = [];
const clientApps: Array<{ app: FirebaseApp; db: Firestore }> = [];

setLogLevel('silent');
setLogFunction(null);

/** `promise` rejects with this code: a gRPC status number (admin) or an SDK code string (firebase). */
export async function rejectsWith(promise: Promise<unknown>, code: number | string, label: string): Promise<void> {
  await assert.rejects(within(promise, label), (error: { code?: unknown; message?: string }) => {
    assert.equal(error.code, code, `${label}: expected ${code}, got ${String(error.code)}: ${error.message}`);
    return true;
  });
}

/** Another firebase-admin instance (FIRESTORE_EMULATOR_HOST is read when it is created). */
export function newAdmin(name: string, hostPort = target.hostPort, settings: { useBigInt?: boolean } = {}): AdminFirestore {
  const saved = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = hostPort;
  try {
    const app = initializeAdminApp({ projectId: target.projectId }, `grpc-${name}-${run}`);
    adminApps.push(app);
    const db = getAdminFirestore(app);
    if (settings.useBigInt) db.settings({ useBigInt: true });
    return db;
  } finally {
    process.env.FIRESTORE_EMULATOR_HOST = saved;
  }
}

/** A full-SDK client in Node (gRPC), signed in anonymously unless `signIn` is false. */
export async function newClient(signIn = true): Promise<Firestore> {
  const app = await clientApp(target, `grpc-client-${clientApps.length}`, signIn);
  const db = getFirestore(app);
  connectFirestoreEmulator(db, target.host, target.port);
  clientApps.push({ app, db });
  return db;
}

/** Starts the target and `admin` before the file's tests; ends every client and the target after them. */
export function useGrpcTarget(): void {
  before(async () => {
    target = await startTarget(`demo-grpc-${run}`);
    process.env.FIRESTORE_EMULATOR_HOST = target.hostPort;
    adminApp = initializeAdminApp({ projectId: target.projectId }, `grpc-admin-${run}`);
    admin = getAdminFirestore(adminApp);
  });

  after(async () => {
    // Clients first: against a closed port they would retry for minutes.
    await Promise.all(clientApps.splice(0).map(async ({ app, db }) => {
      await within(terminate(db), 'terminate client').catch(() => undefined);
      await deleteApp(app);
    }));
    for (const app of [adminApp, ...adminApps.splice(0)]) {
      if (!app) continue;
      await within(getAdminFirestore(app).terminate(), 'terminate admin').catch(() => undefined);
      await deleteAdminApp(app);
    }
    await target?.close();
  });
}

export const coll = (name: string): CollectionReference => admin.collection(`${name}-${run}`);
export const adminIds = async (q: AdminQuery, label = 'query'): Promise<string[]> => (await within(q.get(), label)).docs.map((d) => d.id);

/**
 * Snapshots from a listener, in order; `until` waits for the first one (already seen or still to
 * come) that passes a check, so the assertions do not depend on how many intermediate snapshots a
 * server sends.
 */
export class Snapshots<T> {
  readonly seen: T[] = [];
  private wake: (() => void) | undefined;
  error: Error | undefined;
  stop: () => void = () => undefined;

  push = (snapshot: T): void => {
    this.seen.push(snapshot);
    this.wake?.();
  };

  fail = (error: Error): void => {
    this.error = error;
    this.wake?.();
  };

  async until(check: (snapshot: T) => boolean, label: string, from = 0): Promise<{ snapshot: T; index: number }> {
    const deadline = Date.now() + CALL_TIMEOUT_MS;
    for (;;) {
      const index = this.seen.findIndex((snapshot, i) => i >= from && check(snapshot));
      if (index >= 0) return { snapshot: this.seen[index], index };
      if (this.error) throw this.error;
      if (Date.now() > deadline) throw new Error(`no snapshot where ${label} within ${CALL_TIMEOUT_MS} ms (saw ${this.seen.length})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}
