/**
 * The servers the Listen-and-rules suites (tests/firestore/listen-rules-*.test.ts) run against: Hearth in
 * production mode (no --dev) and, when gcloud has its Firestore emulator, Google's emulator as the oracle, both
 * with the same rules: owner-only notes in any collection group, posts readable when public or by their owner, and
 * secrets readable by users with an admins document.
 * Data is written by the administrator over REST; callers are anonymous or signed-in users.
 */
import { randomUUID } from 'node:crypto';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth } from 'firebase/auth';
import type * as FirestoreSdk from 'firebase/firestore';
import { uniqueEmail } from './admin-http.js';
import { startGoogleEmulator } from './firestore-emulator.js';
import { startHearth, type TestHearth } from './hearth.js';

export type Sdk = typeof FirestoreSdk;

export const listenRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{post} {
      allow read: if resource.data.visibility == 'public' || (request.auth != null && resource.data.owner == request.auth.uid);
    }
    match /{path=**}/notes/{note} {
      allow read: if request.auth != null && resource.data.owner == request.auth.uid;
    }
    match /secrets/{id} {
      allow read: if request.auth != null && exists(/databases/$(database)/documents/admins/$(request.auth.uid));
    }
  }
}
`;

export interface RulesServer {
  label: 'hearth' | 'google-emulator';
  projectId: string;
  host: string;
  port: number;
  /** 127.0.0.1:PORT */
  hostPort: string;
  /** `projects/{p}/databases/(default)` */
  database: string;
  /** Releases other rules (`listenRules` again to restore them). */
  setRules(source: string): Promise<void>;
  /** A commit as the administrator (proto3 JSON writes); its commit time. */
  commit(writes: unknown[]): Promise<string>;
  /** An ID token of a new signed-in user, for raw requests: Hearth's real ones, the emulator's unsigned ones. */
  newUserToken(): Promise<{ uid: string; token: string }>;
  /** A client of the given SDK build: nobody signed in, or a new user. */
  newClient(sdk: Sdk, who: 'anonymous' | 'user', settings?: Record<string, unknown>): Promise<{ db: FirestoreSdk.Firestore; uid?: string }>;
  close(): Promise<void>;
}

const apps: FirebaseApp[] = [];

async function putRules(url: string, projectId: string, authorization: string | undefined, content = listenRules): Promise<void> {
  const response = await fetch(`${url}/emulator/v1/projects/${projectId}:securityRules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content }] } }),
  });
  if (!response.ok) throw new Error(`rules not loaded: ${response.status} ${await response.text()}`);
}

async function adminCommit(url: string, database: string, authorization: string, writes: unknown[]): Promise<string> {
  const response = await fetch(`${url}/v1/${database}/documents:commit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ writes }),
  });
  const body = (await response.json()) as { commitTime?: string };
  if (!response.ok || !body.commitTime) throw new Error(`commit failed: ${response.status} ${JSON.stringify(body)}`);
  return body.commitTime;
}

function firestoreOf(sdk: Sdk, app: FirebaseApp, settings: Record<string, unknown>): FirestoreSdk.Firestore {
  // A cache that keeps documents no target holds any more: what reached the client stays visible to getDocFromCache.
  return sdk.initializeFirestore(app, { localCache: sdk.memoryLocalCache({ garbageCollector: sdk.memoryLruGarbageCollector() }), ...settings });
}

export async function startHearthWithRules(): Promise<RulesServer> {
  const server: TestHearth = await startHearth({ dev: false });
  const url = new URL(server.url);
  const database = `projects/${server.projectId}/databases/(default)`;
  const admin = `Bearer ${server.adminKey}`;
  await putRules(server.url, server.projectId, admin);
  return {
    label: 'hearth',
    projectId: server.projectId,
    host: url.hostname,
    port: Number(url.port),
    hostPort: server.hostPort,
    database,
    setRules: (source) => putRules(server.url, server.projectId, admin, source),
    commit: (writes) => adminCommit(server.url, database, admin, writes),
    async newUserToken() {
      const response = await fetch(`${server.url}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=${server.apiKey}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: uniqueEmail('listener'), password: 'secret123', returnSecureToken: true }),
      });
      const body = (await response.json()) as { localId: string; idToken: string };
      return { uid: body.localId, token: body.idToken };
    },
    async newClient(sdk, who, settings = {}) {
      const app = initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, `listen-rules-${apps.length}`);
      apps.push(app);
      let uid: string | undefined;
      if (who === 'user') {
        const auth = initializeAuth(app, { persistence: inMemoryPersistence });
        connectAuthEmulator(auth, server.url, { disableWarnings: true });
        uid = (await createUserWithEmailAndPassword(auth, uniqueEmail('listener'), 'secret123')).user.uid;
      }
      const db = firestoreOf(sdk, app, settings);
      sdk.connectFirestoreEmulator(db, url.hostname, Number(url.port));
      return { db, ...(uid ? { uid } : {}) };
    },
    close: () => server.close(),
  };
}

/** Google's emulator with the same rules; undefined when gcloud or its Firestore emulator is not installed. */
export async function startEmulatorWithRules(): Promise<RulesServer | undefined> {
  const emulator = await startGoogleEmulator({ startupTimeoutMs: 120_000 });
  if (!emulator) return undefined;
  const projectId = 'demo-listen-rules';
  const database = `projects/${projectId}/databases/(default)`;
  const [host, port] = emulator.hostPort.split(':') as [string, string];
  await putRules(emulator.url, projectId, undefined);
  const unsigned = (uid: string) => `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: uid, user_id: uid, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 3600, aud: projectId, iss: `https://securetoken.google.com/${projectId}`, auth_time: Math.floor(Date.now() / 1000), firebase: { sign_in_provider: 'password', identities: {} } })).toString('base64url')}.`;
  return {
    label: 'google-emulator',
    projectId,
    host,
    port: Number(port),
    hostPort: emulator.hostPort,
    database,
    setRules: (source) => putRules(emulator.url, projectId, undefined, source),
    commit: (writes) => adminCommit(emulator.url, database, 'Bearer owner', writes),
    async newUserToken() {
      const uid = `u-${randomUUID()}`;
      return { uid, token: unsigned(uid) };
    },
    async newClient(sdk, who, settings = {}) {
      const app = initializeApp({ apiKey: 'fake-api-key', projectId }, `listen-rules-${apps.length}`);
      apps.push(app);
      const db = firestoreOf(sdk, app, settings);
      const uid = who === 'user' ? `u-${randomUUID()}` : undefined;
      sdk.connectFirestoreEmulator(db, host, Number(port), uid ? { mockUserToken: { sub: uid, user_id: uid } } : {});
      return { db, ...(uid ? { uid } : {}) };
    },
    close: () => emulator.stop(),
  };
}

/** Ends every client app made here (their Firestore instances first, with the given SDK). */
export async function closeClients(sdk: Sdk): Promise<void> {
  for (const app of apps.splice(0)) {
    await sdk.terminate(sdk.getFirestore(app)).catch(() => undefined);
    await deleteApp(app).catch(() => undefined);
  }
}

/** A proto3 JSON `update` write of string fields. */
export function setPost(database: string, path: string, fields: Record<string, string>): unknown {
  return { update: { name: `${database}/documents/${path}`, fields: Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, { stringValue: value }])) } };
}
