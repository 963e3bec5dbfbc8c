import { initializeApp, type FirebaseOptions } from 'firebase/app';
import {
  browserLocalPersistence,
  browserSessionPersistence,
  connectAuthEmulator,
  inMemoryPersistence,
  indexedDBLocalPersistence,
  initializeAuth,
  type Auth,
} from 'firebase/auth';

interface InitConfig {
  apiKey: string;
  projectId: string;
  authDomain: string;
}

function isInitConfig(value: unknown): value is InitConfig {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.apiKey === 'string' && typeof record.projectId === 'string' && typeof record.authDomain === 'string';
}

/**
 * Learns the project from the server that served this page (the Firebase Hosting convention
 * `/__/firebase/init.json`) and points the Auth SDK back at that same origin.
 *
 * No popupRedirectResolver is passed: the browser one loads scripts from apis.google.com,
 * and nothing on this page may leave the machine.
 */
export async function startAuth(): Promise<Auth> {
  const response = await fetch('/__/firebase/init.json', { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`init.json answered ${response.status}`);
  const body: unknown = await response.json();
  if (!isInitConfig(body)) throw new Error('init.json is missing apiKey, projectId or authDomain');
  const options: FirebaseOptions = { apiKey: body.apiKey, projectId: body.projectId, authDomain: body.authDomain };
  const app = initializeApp(options);
  // On start the SDK looks for a saved user in each of these, in order; new sign-ins go to
  // the first available one until the sign-in page picks another with setPersistence.
  const auth = initializeAuth(app, {
    persistence: [indexedDBLocalPersistence, browserLocalPersistence, browserSessionPersistence, inMemoryPersistence],
  });
  connectAuthEmulator(auth, window.location.origin, { disableWarnings: true });
  return auth;
}
