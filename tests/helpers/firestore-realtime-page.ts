/**
 * The browser side of tests/e2e-firestore-realtime-*.test.ts: a page script, bundled with esbuild and run in
 * Chromium, that drives the FULL `firebase` browser build (firebase/app, firebase/auth, firebase/firestore;
 * Listen and Write over WebChannel, transactions over REST). It installs `globalThis.hearthTest`, whose methods
 * the test calls through `page.evaluate`; everything crossing that boundary is plain JSON.
 *
 * Several clients (each its own FirebaseApp, so its own user and Firestore instance) live in one page, named by
 * the test. Listeners record every snapshot (with metadata changes) or error in order; the test reads them back.
 */
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, getAuth, signInAnonymously } from 'firebase/auth';
import * as firestoreSdk from 'firebase/firestore';
import {
  connectFirestoreEmulator,
  deleteDoc,
  disableNetwork,
  enableNetwork,
  deleteField,
  doc,
  endAt,
  endBefore,
  getCountFromServer,
  collection,
  collectionGroup,
  getDoc,
  getDocFromCache,
  getDocs,
  getFirestore,
  increment,
  initializeFirestore,
  limit,
  limitToLast,
  onSnapshot,
  orderBy,
  persistentLocalCache,
  query,
  runTransaction,
  serverTimestamp,
  setDoc,
  setLogLevel,
  startAfter,
  startAt,
  terminate,
  updateDoc,
  where,
  writeBatch,
  type DocumentData,
  type DocumentSnapshot,
  type Firestore,
  type FirestoreSettings,
  type OrderByDirection,
  type QueryConstraint,
  type QuerySnapshot,
  type WhereFilterOp,
} from 'firebase/firestore';

export interface ClientOptions {
  projectId: string;
  apiKey: string;
  /** Where Firestore lives (connectFirestoreEmulator). */
  host: string;
  port: number;
  /** The Auth emulator API (connectAuthEmulator); undefined: no Auth at all. */
  authUrl?: string;
  /** Sign in anonymously through authUrl before using Firestore. */
  signIn: boolean;
  /** connectFirestoreEmulator's mockUserToken `sub` (Google's emulator: a "signed-in" client without Auth). */
  mockUser?: string;
  /** initializeFirestore(app, {experimentalForceLongPolling: true}). */
  forceLongPolling?: boolean;
  /** initializeFirestore(app, {localCache: persistentLocalCache()}). */
  persistent?: boolean;
  /** The SDK logs at debug level (every stream message) to the console. */
  debugLog?: boolean;
}

/** A document's data as JSON; special values are tagged so the test can build and compare them. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Values the page turns into sentinels before writing: {"$increment": n} → increment(n),
 * {"$serverTimestamp": true} → serverTimestamp(), {"$delete": true} → deleteField().
 */
export type WriteData = { [key: string]: Json };

export interface QuerySpec {
  /** A collection path, or with `group` a collection ID. */
  collection: string;
  /** collectionGroup(db, collection) instead of collection(db, collection). */
  group?: boolean;
  where?: [string, WhereFilterOp, Json][];
  orderBy?: [string, OrderByDirection][];
  limit?: number;
  limitToLast?: number;
  /** Cursor values, one per orderBy. */
  startAt?: Json[];
  startAfter?: Json[];
  endAt?: Json[];
  endBefore?: Json[];
}

export interface DocView {
  id: string;
  /** The document's path. */
  path: string;
  data: WriteData;
  hasPendingWrites: boolean;
}

export interface DocChangeView {
  type: 'added' | 'modified' | 'removed';
  id: string;
  oldIndex: number;
  newIndex: number;
}

export type ListenEvent =
  | { kind: 'doc'; exists: boolean; data: WriteData | null; fromCache: boolean; hasPendingWrites: boolean }
  | { kind: 'query'; docs: DocView[]; changes: DocChangeView[]; fromCache: boolean; hasPendingWrites: boolean }
  | { kind: 'error'; code: string; message: string };

export type WriteOp =
  | { op: 'set'; path: string; data: WriteData; merge?: boolean }
  | { op: 'update'; path: string; data: WriteData }
  | { op: 'delete'; path: string };

export type Outcome = { ok: true } | { ok: false; code: string; message: string };

export type PendingState = 'pending' | Outcome;

export interface DocRead {
  exists: boolean;
  data: WriteData | null;
  fromCache: boolean;
  hasPendingWrites: boolean;
}

export interface QueryRead {
  ids: string[];
  docs: DocView[];
  fromCache: boolean;
}

export interface PageApi {
  /** Creates client `name`; resolves to the signed-in uid (or null). */
  init(name: string, options: ClientOptions): Promise<string | null>;
  listenDoc(client: string, listenerId: string, path: string): void;
  listenQuery(client: string, listenerId: string, spec: QuerySpec): void;
  events(listenerId: string): ListenEvent[];
  unlisten(listenerId: string): void;
  getDoc(client: string, path: string): Promise<DocRead>;
  getDocFromCache(client: string, path: string): Promise<DocRead | { error: string }>;
  getDocs(client: string, spec: QuerySpec): Promise<QueryRead>;
  /** One setDoc / updateDoc / deleteDoc, awaited. */
  write(client: string, op: WriteOp): Promise<Outcome>;
  /** Starts one write without waiting for it; its outcome is read with pendingState(handle). */
  startWrite(client: string, handle: string, op: WriteOp): void;
  pendingState(handle: string): PendingState;
  /** getCountFromServer (REST runAggregationQuery). */
  count(client: string, spec: QuerySpec): Promise<number>;
  /**
   * Starts every op at once without waiting (the SDK pipelines them on the Write stream), then waits for all.
   * Resolves to each op's outcome, in the order given.
   */
  writeAll(client: string, ops: WriteOp[]): Promise<Outcome[]>;
  /** All ops in one writeBatch. */
  batch(client: string, ops: WriteOp[]): Promise<Outcome>;
  /**
   * `count` concurrent runTransaction calls that each read `path` and write field `field` + 1 (creating it at 1).
   * Resolves to each transaction's outcome and the total number of attempts the update functions made.
   */
  incrementInTransactions(client: string, path: string, field: string, count: number): Promise<{ outcomes: Outcome[]; attempts: number }>;
  terminate(client: string): Promise<void>;
  /** disableNetwork (false) / enableNetwork (true) of a client. */
  setNetwork(client: string, on: boolean): Promise<void>;
  /** The existence filter mismatches the SDK reported (its testing hook), for every client of the page, in order. */
  existenceFilterMismatches(): MismatchReport[];
}

export interface MismatchReport {
  localCacheCount: number;
  existenceFilterCount: number;
  /** null: the filter came without a bloom filter; else whether the SDK could apply it (no full re-listen then). */
  bloomApplied: boolean | null;
}

const mismatches: MismatchReport[] = [];
type MismatchInfo = { localCacheCount: number; existenceFilterCount: number; bloomFilter?: { applied: boolean } };
(firestoreSdk as unknown as { _TestingHooks: { onExistenceFilterMismatch(callback: (info: MismatchInfo) => void): () => void } })._TestingHooks.onExistenceFilterMismatch((info) =>
  mismatches.push({ localCacheCount: info.localCacheCount, existenceFilterCount: info.existenceFilterCount, bloomApplied: info.bloomFilter ? info.bloomFilter.applied : null }),
);

interface Client {
  app: FirebaseApp;
  db: Firestore;
}

const clients = new Map<string, Client>();
const listeners = new Map<string, { events: ListenEvent[]; unsubscribe: () => void }>();
const pending = new Map<string, PendingState>();

setLogLevel('error');

function client(name: string): Client {
  const found = clients.get(name);
  if (!found) throw new Error(`no client named ${name}`);
  return found;
}

/** Plain JSON of document data (Timestamps become {seconds, nanoseconds, type}). */
function plain(data: DocumentData | undefined): WriteData | null {
  return data === undefined ? null : (JSON.parse(JSON.stringify(data)) as WriteData);
}

function sentinels(value: Json): unknown {
  if (Array.isArray(value)) return value.map(sentinels);
  if (value !== null && typeof value === 'object') {
    if (typeof value.$increment === 'number') return increment(value.$increment);
    if (value.$serverTimestamp === true) return serverTimestamp();
    if (value.$delete === true) return deleteField();
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, sentinels(inner)]));
  }
  return value;
}

function writeData(data: WriteData): DocumentData {
  return sentinels(data) as DocumentData;
}

function outcomeOf(error: unknown): Outcome {
  const e = error as { code?: string; message?: string };
  return { ok: false, code: e.code ?? 'no-code', message: e.message ?? String(error) };
}

function buildQuery(db: Firestore, spec: QuerySpec) {
  const constraints: QueryConstraint[] = [];
  for (const [field, op, value] of spec.where ?? []) constraints.push(where(field, op, value));
  for (const [field, direction] of spec.orderBy ?? []) constraints.push(orderBy(field, direction));
  if (spec.limit !== undefined) constraints.push(limit(spec.limit));
  if (spec.limitToLast !== undefined) constraints.push(limitToLast(spec.limitToLast));
  if (spec.startAt) constraints.push(startAt(...spec.startAt));
  if (spec.startAfter) constraints.push(startAfter(...spec.startAfter));
  if (spec.endAt) constraints.push(endAt(...spec.endAt));
  if (spec.endBefore) constraints.push(endBefore(...spec.endBefore));
  return query(spec.group ? collectionGroup(db, spec.collection) : collection(db, spec.collection), ...constraints);
}

function docRead(snapshot: DocumentSnapshot): DocRead {
  return {
    exists: snapshot.exists(),
    data: plain(snapshot.data()),
    fromCache: snapshot.metadata.fromCache,
    hasPendingWrites: snapshot.metadata.hasPendingWrites,
  };
}

function docViews(snapshot: QuerySnapshot): DocView[] {
  return snapshot.docs.map((d) => ({ id: d.id, path: d.ref.path, data: plain(d.data()) ?? {}, hasPendingWrites: d.metadata.hasPendingWrites }));
}

function errorEvent(error: unknown): ListenEvent {
  const e = error as { code?: string; message?: string };
  return { kind: 'error', code: e.code ?? 'no-code', message: e.message ?? String(error) };
}

function addListener(listenerId: string): ListenEvent[] {
  if (listeners.has(listenerId)) throw new Error(`listener ${listenerId} exists`);
  const events: ListenEvent[] = [];
  listeners.set(listenerId, { events, unsubscribe: () => {} });
  return events;
}

async function applyWrite(db: Firestore, op: WriteOp): Promise<void> {
  const ref = doc(db, op.path);
  if (op.op === 'set') await setDoc(ref, writeData(op.data), { merge: op.merge ?? false });
  else if (op.op === 'update') await updateDoc(ref, writeData(op.data));
  else await deleteDoc(ref);
}

const api: PageApi = {
  async init(name, options) {
    if (clients.has(name)) throw new Error(`client ${name} exists`);
    if (options.debugLog) setLogLevel('debug');
    const app = initializeApp({ apiKey: options.apiKey, projectId: options.projectId }, name);
    let uid: string | null = null;
    if (options.authUrl !== undefined) {
      const auth = getAuth(app);
      connectAuthEmulator(auth, options.authUrl, { disableWarnings: true });
      await auth.authStateReady();
      if (options.signIn) uid = auth.currentUser?.uid ?? (await signInAnonymously(auth)).user.uid;
    }
    const settings: FirestoreSettings = {};
    if (options.forceLongPolling) settings.experimentalForceLongPolling = true;
    if (options.persistent) settings.localCache = persistentLocalCache();
    const db = Object.keys(settings).length > 0 ? initializeFirestore(app, settings) : getFirestore(app);
    connectFirestoreEmulator(db, options.host, options.port, options.mockUser !== undefined ? { mockUserToken: { sub: options.mockUser } } : {});
    clients.set(name, { app, db });
    return uid ?? options.mockUser ?? null;
  },

  listenDoc(clientName, listenerId, path) {
    const events = addListener(listenerId);
    const unsubscribe = onSnapshot(
      doc(client(clientName).db, path),
      { includeMetadataChanges: true },
      (snapshot) => events.push({ kind: 'doc', ...docRead(snapshot) }),
      (error) => events.push(errorEvent(error)),
    );
    listeners.get(listenerId)!.unsubscribe = unsubscribe;
  },

  listenQuery(clientName, listenerId, spec) {
    const events = addListener(listenerId);
    const unsubscribe = onSnapshot(
      buildQuery(client(clientName).db, spec),
      { includeMetadataChanges: true },
      (snapshot) =>
        events.push({
          kind: 'query',
          docs: docViews(snapshot),
          // Without metadata-only changes: a pending write being acknowledged is not a "modified".
          changes: snapshot.docChanges().map((c) => ({ type: c.type, id: c.doc.id, oldIndex: c.oldIndex, newIndex: c.newIndex })),
          fromCache: snapshot.metadata.fromCache,
          hasPendingWrites: snapshot.metadata.hasPendingWrites,
        }),
      (error) => events.push(errorEvent(error)),
    );
    listeners.get(listenerId)!.unsubscribe = unsubscribe;
  },

  events(listenerId) {
    const found = listeners.get(listenerId);
    if (!found) throw new Error(`no listener ${listenerId}`);
    return found.events;
  },

  unlisten(listenerId) {
    listeners.get(listenerId)?.unsubscribe();
    listeners.delete(listenerId);
  },

  async getDoc(clientName, path) {
    return docRead(await getDoc(doc(client(clientName).db, path)));
  },

  async getDocFromCache(clientName, path) {
    try {
      return docRead(await getDocFromCache(doc(client(clientName).db, path)));
    } catch (error) {
      return { error: (error as { code?: string }).code ?? String(error) };
    }
  },

  async getDocs(clientName, spec) {
    const snapshot = await getDocs(buildQuery(client(clientName).db, spec));
    return { ids: snapshot.docs.map((d) => d.id), docs: docViews(snapshot), fromCache: snapshot.metadata.fromCache };
  },

  async write(clientName, op) {
    try {
      await applyWrite(client(clientName).db, op);
      return { ok: true };
    } catch (error) {
      return outcomeOf(error);
    }
  },

  startWrite(clientName, handle, op) {
    pending.set(handle, 'pending');
    applyWrite(client(clientName).db, op).then(
      () => pending.set(handle, { ok: true }),
      (error: unknown) => pending.set(handle, outcomeOf(error)),
    );
  },

  pendingState(handle) {
    const state = pending.get(handle);
    if (state === undefined) throw new Error(`no write ${handle}`);
    return state;
  },

  async count(clientName, spec) {
    return (await getCountFromServer(buildQuery(client(clientName).db, spec))).data().count;
  },

  async writeAll(clientName, ops) {
    const db = client(clientName).db;
    return Promise.all(
      ops.map((op) =>
        applyWrite(db, op).then(
          (): Outcome => ({ ok: true }),
          (error: unknown) => outcomeOf(error),
        ),
      ),
    );
  },

  async batch(clientName, ops) {
    const db = client(clientName).db;
    const batch = writeBatch(db);
    for (const op of ops) {
      const ref = doc(db, op.path);
      if (op.op === 'set') batch.set(ref, writeData(op.data), { merge: op.merge ?? false });
      else if (op.op === 'update') batch.update(ref, writeData(op.data));
      else batch.delete(ref);
    }
    try {
      await batch.commit();
      return { ok: true };
    } catch (error) {
      return outcomeOf(error);
    }
  },

  async incrementInTransactions(clientName, path, field, count) {
    const db = client(clientName).db;
    const ref = doc(db, path);
    let attempts = 0;
    const runs = Array.from({ length: count }, () =>
      runTransaction(db, async (transaction) => {
        attempts++;
        const snapshot = await transaction.get(ref);
        const current = snapshot.exists() ? (snapshot.get(field) as number) : 0;
        if (snapshot.exists()) transaction.update(ref, { [field]: current + 1 });
        else transaction.set(ref, { [field]: 1 });
      }).then(
        (): Outcome => ({ ok: true }),
        (error: unknown) => outcomeOf(error),
      ),
    );
    const outcomes = await Promise.all(runs);
    return { outcomes, attempts };
  },

  async terminate(clientName) {
    const found = clients.get(clientName);
    if (!found) return;
    clients.delete(clientName);
    await terminate(found.db);
    await deleteApp(found.app);
  },

  async setNetwork(clientName, on) {
    await (on ? enableNetwork : disableNetwork)(client(clientName).db);
  },

  existenceFilterMismatches() {
    return [...mismatches];
  },
};

(globalThis as unknown as { hearthTest: PageApi }).hearthTest = api;
