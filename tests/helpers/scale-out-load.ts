/**
 * The load and the checks of the scale-out tests (several Hearth instances on one PostgreSQL
 * database, or one Hearth's workers on PostgreSQL or on one SQLite file): random writes and transactions from many clients
 * (firebase-admin over gRPC, REST commits) through several client groups, a firebase SDK listener
 * in each group. The database's change log (fs_changes) is the committed history; against it:
 * - every acknowledged write is in it, at the commit time its client was told (nothing lost);
 * - commit times strictly increase with the sequence (one order for every process);
 * - the final documents equal a serial replay of the history, and counters incremented by
 *   transactions equal the number of acknowledged increments;
 * - every listener saw each document's versions in commit order, none twice, and ends at the
 *   final state.
 */
import assert from 'node:assert/strict';
import { deleteApp as deleteAdminApp, initializeApp as initializeAdminApp, type App as AdminApp } from 'firebase-admin/app';
import { getFirestore as getAdminFirestore, type Firestore as AdminFirestore } from 'firebase-admin/firestore';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { collection, connectFirestoreEmulator, getFirestore, onSnapshot, terminate, type Firestore } from 'firebase/firestore';
import Database from 'better-sqlite3';
import type pg from 'pg';

/** Clients of one place (an instance's port, or a source address in front of the workers' port). */
export interface ClientGroup {
  name: string;
  port: number;
  admin: AdminFirestore;
  adminApp: AdminApp;
  listener: Listener;
  /** False once its instance was killed: its clients move to a live group, as behind a load balancer. */
  alive: boolean;
}

/** Where the test reads the store's change log and rows itself, beside Hearth. */
export interface StoreReader {
  /** fs_changes of a database, in sequence order. */
  changes(dbKey: string): Promise<Array<{ seq: number; commitTime: number; changes: string | null }>>;
  /** The rows of the `items` collection, to explain a difference. */
  items(dbKey: string): Promise<Array<{ updateTime: number; fields: string }>>;
}

export function pgStoreReader(pool: pg.Pool): StoreReader {
  return {
    async changes(dbKey) {
      const { rows } = await pool.query<{ seq: string; commit_time: string; changes: string | null }>('SELECT seq, commit_time, changes FROM fs_changes WHERE db = $1 ORDER BY seq', [dbKey]);
      return rows.map((row) => ({ seq: Number(row.seq), commitTime: Number(row.commit_time), changes: row.changes }));
    },
    async items(dbKey) {
      const { rows } = await pool.query<{ update_time: string; fields: string }>("SELECT update_time, fields FROM fs_documents WHERE db = $1 AND collection_id = convert_to('items', 'UTF8')", [dbKey]);
      return rows.map((row) => ({ updateTime: Number(row.update_time), fields: row.fields }));
    },
  };
}

/** The data folder's SQLite file, read on a connection of the test's own while the workers write it. */
export function sqliteStoreReader(file: string): StoreReader & { close(): void } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  return {
    async changes(dbKey) {
      return db.prepare<[string], { seq: number; commit_time: number; changes: string | null }>('SELECT seq, commit_time, changes FROM fs_changes WHERE db = ? ORDER BY seq').all(dbKey).map((row) => ({ seq: row.seq, commitTime: row.commit_time, changes: row.changes }));
    },
    async items(dbKey) {
      return db.prepare<[string], { update_time: number; fields: string }>("SELECT update_time, fields FROM fs_documents WHERE db = ? AND collection_id = 'items'").all(dbKey).map((row) => ({ updateTime: row.update_time, fields: row.fields }));
    },
    close: () => db.close(),
  };
}

export interface ScaleOutRun {
  store: StoreReader;
  projectId: string;
  /** `project/(default)`, as fs_changes names it. */
  dbKey: string;
  instances: ClientGroup[];
  writeCounter: number;
}

/** firebase-admin (gRPC) and a firebase SDK listener on `items`, both on `port`. */
export async function connectGroup(projectId: string, name: string, port: number): Promise<ClientGroup> {
  const saved = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = `127.0.0.1:${port}`;
  const adminApp = initializeAdminApp({ projectId }, `scale-admin-${name}-${Date.now()}`);
  const admin = getAdminFirestore(adminApp);
  process.env.FIRESTORE_EMULATOR_HOST = saved;
  const listener = await listen(projectId, name, port);
  return { name, port, admin, adminApp, listener, alive: true };
}

export async function disconnectGroup(group: ClientGroup): Promise<void> {
  group.listener.stop();
  await terminate(group.listener.db).catch(() => undefined);
  await deleteApp(group.listener.app).catch(() => undefined);
  await deleteAdminApp(group.adminApp).catch(() => undefined);
}

/** What one listener saw: per document, the `v` of each version in the order told (null: gone). */
export interface Listener {
  app: FirebaseApp;
  db: Firestore;
  seen: Map<string, Array<string | null>>;
  state: Map<string, string>;
  counters: Map<string, number>;
  stop: () => void;
  error?: Error;
}

export interface Acknowledged {
  path: string;
  v: string | null;
  commitTime: number;
}


export async function listen(projectId: string, name: string, port: number): Promise<Listener> {
  const app = initializeApp({ apiKey: 'scale-test', projectId }, `scale-client-${name}-${Date.now()}`);
  const db = getFirestore(app);
  connectFirestoreEmulator(db, '127.0.0.1', port);
  const listener: Listener = { app, db, seen: new Map(), state: new Map(), counters: new Map(), stop: () => undefined };
  await new Promise<void>((resolve, reject) => {
    let first = true;
    listener.stop = onSnapshot(
      collection(db, 'items'),
      (snapshot) => {
        for (const change of snapshot.docChanges()) {
          const path = `items/${change.doc.id}`;
          const v = change.type === 'removed' ? null : (change.doc.get('v') as string);
          const list = listener.seen.get(path) ?? [];
          list.push(v);
          listener.seen.set(path, list);
          if (v === null) listener.state.delete(path);
          else listener.state.set(path, v);
          const n = change.type === 'removed' ? undefined : (change.doc.get('n') as number | undefined);
          if (n !== undefined) listener.counters.set(path, n);
        }
        if (first) {
          first = false;
          resolve();
        }
      },
      (error) => {
        listener.error = error;
        reject(error);
      },
    );
  });
  return listener;
}

/** One random operation through one instance; resolves to what was acknowledged (nothing if refused). */
async function randomOperation(run: ScaleOutRun, instance: ClientGroup, client: number, acknowledged: Acknowledged[], counterIncrements: Map<string, number>): Promise<void> {
  const choice = Math.random();
  const id = `d${Math.floor(Math.random() * 12)}`;
  const path = `items/${id}`;
  const { projectId } = run;
  const v = `w${++run.writeCounter}-${instance.name}${client}`;
  if (choice < 0.35) {
    const result = await instance.admin.doc(path).set({ v });
    acknowledged.push({ path, v, commitTime: micros(result.writeTime.toDate(), result.writeTime.nanoseconds) });
  } else if (choice < 0.55) {
    // REST, the way a plain HTTP client commits.
    const response = await fetch(`http://127.0.0.1:${instance.port}/v1/projects/${projectId}/databases/(default)/documents:commit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer owner' },
      body: JSON.stringify({ writes: [{ update: { name: `projects/${projectId}/databases/(default)/documents/${path}`, fields: { v: { stringValue: v } } } }] }),
    });
    if (!response.ok) throw new Error(`REST commit answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { commitTime: string };
    acknowledged.push({ path, v, commitTime: parseMicros(body.commitTime) });
  } else if (choice < 0.65) {
    const result = await instance.admin.doc(path).delete();
    acknowledged.push({ path, v: null, commitTime: micros(result.writeTime.toDate(), result.writeTime.nanoseconds) });
  } else {
    // A read-modify-write transaction on a shared counter: instances race on the same documents.
    const counter = `items/counter${Math.floor(Math.random() * 2)}`;
    const ref = instance.admin.doc(counter);
    let written = '';
    await instance.admin.runTransaction(async (transaction) => {
      const snapshot = await transaction.get(ref);
      written = `${v}-t`;
      transaction.set(ref, { v: written, n: ((snapshot.get('n') as number | undefined) ?? 0) + 1 });
    });
    const read = await instance.admin.doc(counter).get();
    // The transaction's own commit time is not returned by the SDK; the log check below finds it by `v`.
    acknowledged.push({ path: counter, v: written, commitTime: -1 });
    counterIncrements.set(counter, (counterIncrements.get(counter) ?? 0) + 1);
    assert.ok(read.exists);
  }
}

function micros(date: Date, nanoseconds: number): number {
  return Math.floor(date.getTime() / 1000) * 1_000_000 + Math.floor(nanoseconds / 1000);
}

function parseMicros(text: string): number {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(text)!;
  return (Date.parse(`${match[1]}Z`) / 1000) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0').slice(0, 6));
}

interface LoggedCommit {
  seq: number;
  commitTime: number;
  changes: Array<{ path: string; v: string | null; n?: number }>;
}

async function committedHistory(run: ScaleOutRun): Promise<LoggedCommit[]> {
  const rows = await run.store.changes(run.dbKey);
  return rows.map((row) => ({
    seq: row.seq,
    commitTime: row.commitTime,
    changes: (JSON.parse(row.changes ?? '[]') as Array<{ p: string; a: { f: string } | null }>).map((change) => {
      const fields = change.a ? (JSON.parse(change.a.f) as { v?: { stringValue: string }; n?: { integerValue: string } }) : undefined;
      return { path: change.p, v: fields?.v?.stringValue ?? null, ...(fields?.n ? { n: Number(fields.n.integerValue) } : {}) };
    }),
  }));
}

/** Waits until every live listener holds exactly `expected` (path → v). */
async function converged(listeners: Listener[], expected: Map<string, string>, label: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const behind = listeners.filter((listener) => !sameMap(listener.state, expected));
    if (behind.length === 0) return;
    for (const listener of listeners) if (listener.error) throw listener.error;
    if (Date.now() > deadline) {
      assert.deepEqual(Object.fromEntries(behind[0]!.state), Object.fromEntries(expected), `${label}: a listener did not converge`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function sameMap(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([key, value]) => b.get(key) === value);
}

/** The checks against the committed history, for one phase. */
export async function checkHistory(run: ScaleOutRun, label: string, acknowledged: Acknowledged[], counterIncrements: Map<string, number>, listeners: Listener[], unacknowledgedMayExist: boolean): Promise<void> {
  const history = await committedHistory(run);
  for (let i = 1; i < history.length; i++) {
    assert.equal(history[i]!.seq, history[i - 1]!.seq + 1, `${label}: sequences have no gaps`);
    assert.ok(history[i]!.commitTime > history[i - 1]!.commitTime, `${label}: commit times increase with the sequence`);
  }
  // Where each version was committed: by v (unique per write) and path.
  const committedAt = new Map<string, number>();
  for (const commit of history) for (const change of commit.changes) committedAt.set(`${change.path}\u0000${change.v}`, commit.commitTime);
  for (const write of acknowledged) {
    if (write.v === null) continue;
    const at = committedAt.get(`${write.path}\u0000${write.v}`);
    assert.ok(at !== undefined, `${label}: acknowledged write ${write.v} to ${write.path} is in the history`);
    if (write.commitTime >= 0) assert.equal(at, write.commitTime, `${label}: ${write.v} committed at the time its client was told`);
  }
  for (const write of acknowledged.filter((candidate) => candidate.v === null)) {
    // A delete either removed the document at its commit time or found it already gone (a commit that changes nothing is not logged).
    const commit = history.find((candidate) => candidate.commitTime === write.commitTime);
    if (commit) {
      assert.ok(commit.changes.some((change) => change.path === write.path && change.v === null), `${label}: acknowledged delete of ${write.path} is in the history`);
      continue;
    }
    let present = false;
    for (const earlier of history) {
      if (earlier.commitTime > write.commitTime) break;
      for (const change of earlier.changes) if (change.path === write.path) present = change.v !== null;
    }
    assert.equal(present, false, `${label}: acknowledged delete of ${write.path} at ${write.commitTime} found nothing to delete, or is lost`);
  }
  // A serial replay of the history is the final state the database holds.
  const replay = new Map<string, string>();
  const replayCounters = new Map<string, number>();
  const versions = new Map<string, Array<string | null>>();
  for (const commit of history) {
    for (const change of commit.changes) {
      if (change.v === null) replay.delete(change.path);
      else replay.set(change.path, change.v);
      if (change.n !== undefined) replayCounters.set(change.path, change.n);
      versions.set(change.path, [...(versions.get(change.path) ?? []), change.v]);
    }
  }
  const stored = await run.instances.find((instance) => instance.alive)!.admin.collection('items').get();
  const storedState = Object.fromEntries(stored.docs.map((doc) => [doc.ref.path, doc.get('v') as string]));
  // What a difference needs to be understood: every stored row of the path (a duplicate would show), its update time, and its history.
  const differing = [...new Set([...Object.keys(storedState), ...replay.keys()])].filter((path) => storedState[path] !== replay.get(path));
  const explained = differing.map((path) => {
    const rows = stored.docs.filter((doc) => doc.ref.path === path).map((doc) => `${doc.get('v') as string} updated ${doc.updateTime.toDate().toISOString()}`);
    const log = history.filter((commit) => commit.changes.some((change) => change.path === path)).map((commit) => `seq ${commit.seq} at ${commit.commitTime}: ${commit.changes.find((change) => change.path === path)!.v}`);
    return `${path}: stored [${rows.join(', ')}]; history ${log.slice(-6).join('; ')}`;
  });
  if (differing.length) {
    // The rows as the database holds them (a stale read and a lost write look alike through the SDK).
    try {
      const rows = await run.store.items(run.dbKey);
      explained.push(`in the database: ${rows.map((row) => `${(JSON.parse(row.fields) as { v?: { stringValue: string } }).v?.stringValue} at ${row.updateTime}`).join(', ')}`);
    } catch (error) {
      explained.push(`the database could not be read: ${String(error)}`);
    }
  }
  assert.deepEqual(storedState, Object.fromEntries(replay), `${label}: final state equals the replay\n${explained.join('\n')}`);
  for (const [counter, increments] of counterIncrements) {
    const n = replayCounters.get(counter) ?? 0;
    if (unacknowledgedMayExist) assert.ok(n >= increments, `${label}: ${counter} holds every acknowledged increment (${n} >= ${increments})`);
    else assert.equal(n, increments, `${label}: ${counter} counts exactly the acknowledged increments`);
  }
  await converged(listeners, replay, label);
  for (const listener of listeners) {
    for (const [path, seen] of listener.seen) {
      // What a listener saw is the document's history in order, possibly skipping versions a
      // snapshot folded together, never repeating or going back.
      const all = versions.get(path) ?? [];
      let at = -1;
      for (const v of seen) {
        const next = all.findIndex((candidate, index) => index > at && candidate === v);
        assert.ok(next > at, `${label}: a listener saw ${path} = ${v} out of commit order or twice (saw ${JSON.stringify(seen)}, history ${JSON.stringify(all)})`);
        at = next;
      }
    }
  }
}

export async function load(run: ScaleOutRun, clientsPerInstance: number, operationsPerClient: number, acknowledged: Acknowledged[], counterIncrements: Map<string, number>, onProgress?: (done: number) => void): Promise<number> {
  let done = 0;
  let refused = 0;
  await Promise.all(
    run.instances.flatMap((instance) =>
      Array.from({ length: clientsPerInstance }, async (_, client) => {
        for (let i = 0; i < operationsPerClient; i++) {
          // After the kill every client moves to a survivor, as behind a load balancer.
          const target = instance.alive ? instance : run.instances.find((other) => other.alive)!;
          try {
            // A call in flight to a killed instance is given up (the SDK would retry it for long): not acknowledged.
            await Promise.race([randomOperation(run, target, client, acknowledged, counterIncrements), new Promise((_, reject) => setTimeout(() => reject(new Error('gave up')), 5_000).unref())]);
          } catch {
            refused++;
          }
          onProgress?.(++done);
        }
      }),
    ),
  );
  return refused;
}

