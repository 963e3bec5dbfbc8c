/**
 * The legacy SDK (firebase@8, namespaced), which speaks the v3 relyingparty paths:
 * sign-up, sign-in, lookup (reload), update and delete.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { Writable } from 'node:stream';
import pino from 'pino';
import { setEmailPrivacy, uniqueEmail } from '../helpers/admin-http.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { claimsOf, createTenant } from '../helpers/tenants.js';

interface V8User {
  uid: string;
  email: string | null;
  displayName: string | null;
  reload(): Promise<void>;
  delete(): Promise<void>;
  updateProfile(profile: { displayName?: string | null }): Promise<void>;
  updatePassword(password: string): Promise<void>;
  getIdToken(force?: boolean): Promise<string>;
}
interface V8Auth {
  tenantId: string | null;
  useEmulator(url: string, options?: { disableWarnings: boolean }): void;
  setPersistence(p: string): Promise<void>;
  createUserWithEmailAndPassword(email: string, password: string): Promise<{ user: V8User }>;
  signInWithEmailAndPassword(email: string, password: string): Promise<{ user: V8User }>;
  signOut(): Promise<void>;
  currentUser: V8User | null;
}
interface V8App {
  auth(): V8Auth;
  delete(): Promise<void>;
}
interface V8Firebase {
  initializeApp(config: Record<string, string>, name: string): V8App;
}

const require = createRequire(import.meta.url);
const firebase = (require('firebase-v8/app') as { default: V8Firebase }).default;
require('firebase-v8/auth');

let server: TestHearth;
const apps: V8App[] = [];
const seenPaths = new Set<string>();

function newAuth(): V8Auth {
  const app = firebase.initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, `v8-${apps.length}-${Date.now()}`);
  apps.push(app);
  const auth = app.auth();
  auth.useEmulator(server.url, { disableWarnings: true });
  return auth;
}

before(async () => {
  // Hearth logs each request's route; the log shows which paths the legacy SDK used.
  const routeLog = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { route?: string };
        if (entry.route) seenPaths.add(entry.route);
      }
      done();
    },
  });
  server = await startHearth({ logLevel: 'info' }, pino({ level: 'info' }, routeLog));
  await setEmailPrivacy(server, false);
});

after(async () => {
  await Promise.all(apps.map((app) => app.delete()));
  await server.close();
});

test('firebase@8 signs up, signs in, reloads, updates and deletes over the v3 paths', async () => {
  const email = uniqueEmail('legacy');
  const auth = newAuth();
  await auth.setPersistence('none');
  const { user } = await auth.createUserWithEmailAndPassword(email, 'secret12');
  assert.equal(user.email, email);
  await user.updateProfile({ displayName: 'Legacy User' });
  await auth.signOut();

  const other = newAuth();
  await other.setPersistence('none');
  const signedIn = await other.signInWithEmailAndPassword(email, 'secret12');
  assert.equal(signedIn.user.uid, user.uid);
  await signedIn.user.reload();
  assert.equal(signedIn.user.displayName, 'Legacy User');
  const token = await signedIn.user.getIdToken(true);
  assert.equal(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sub, user.uid);

  await signedIn.user.delete();
  // firebase@8 predates enumeration protection's INVALID_LOGIN_CREDENTIALS; this server has it off.
  await assert.rejects(newAuth().signInWithEmailAndPassword(email, 'secret12'), (error: { code?: string }) => {
    assert.equal(error.code, 'auth/user-not-found');
    return true;
  });

  for (const path of ['signupNewUser', 'verifyPassword', 'getAccountInfo', 'setAccountInfo', 'deleteAccount']) {
    assert.ok(seenPaths.has(`/www.googleapis.com/identitytoolkit/v3/relyingparty/${path}`), `firebase@8 called relyingparty/${path}`);
  }
  assert.ok(seenPaths.has('/securetoken.googleapis.com/v1/token'));
});

test('firebase@8 gets the same error codes: email-already-in-use, weak-password, invalid-email', async () => {
  const email = uniqueEmail('legacy-dup');
  await newAuth().createUserWithEmailAndPassword(email, 'secret12');
  const codeOf = async (promise: Promise<unknown>) => promise.then(() => 'no error', (error: { code?: string }) => error.code);
  assert.equal(await codeOf(newAuth().createUserWithEmailAndPassword(email, 'secret12')), 'auth/email-already-in-use');
  assert.equal(await codeOf(newAuth().createUserWithEmailAndPassword(uniqueEmail(), '123')), 'auth/weak-password');
  assert.equal(await codeOf(newAuth().createUserWithEmailAndPassword('nope', 'secret12')), 'auth/invalid-email');
});

test('firebase@8 with auth.tenantId signs up and in to the tenant over the v3 paths', async () => {
  const tenant = await createTenant(server, { displayName: 'Legacy' });
  const email = uniqueEmail('legacy-tenant');
  const auth = newAuth();
  await auth.setPersistence('none');
  auth.tenantId = tenant.tenantId;
  const { user } = await auth.createUserWithEmailAndPassword(email, 'secret12');
  const other = newAuth();
  await other.setPersistence('none');
  other.tenantId = tenant.tenantId;
  const signedIn = await other.signInWithEmailAndPassword(email, 'secret12');
  assert.equal(signedIn.user.uid, user.uid);
  await signedIn.user.reload();
  assert.equal(claimsOf(await signedIn.user.getIdToken(true)).firebase.tenant, tenant.tenantId);
  await assert.rejects(newAuth().signInWithEmailAndPassword(email, 'secret12'), (error: { code?: string }) => error.code === 'auth/user-not-found');
});
