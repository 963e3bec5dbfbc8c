import { initializeApp, type FirebaseOptions } from 'firebase/app';
import {
  browserLocalPersistence,
  browserPopupRedirectResolver,
  browserSessionPersistence,
  connectAuthEmulator,
  inMemoryPersistence,
  indexedDBLocalPersistence,
  initializeAuth,
  type Auth,
} from 'firebase/auth';
import { setSiteFeatures } from './site-features';

/** A sign-in provider the server offers (Hearth's `providers` in init.json). */
export interface ProviderInfo {
  providerId: string;
  displayName: string;
}

export interface Site {
  auth: Auth;
  /** Enabled federated providers, in the server's order. */
  providers: readonly ProviderInfo[];
}

interface InitConfig {
  apiKey: string;
  projectId: string;
  authDomain: string;
  /** The default Cloud Storage bucket (an older server names none). */
  storageBucket?: unknown;
  /** Hearth's addition: the enabled providers (an older server sends none). */
  providers?: unknown;
  /** Hearth's additions: whether texts can be sent, and phone sign-in with them (site-features.ts). */
  textMessages?: unknown;
  phoneSignIn?: unknown;
  recentLoginSeconds?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isInitConfig(value: unknown): value is InitConfig {
  return isRecord(value) && typeof value.apiKey === 'string' && typeof value.projectId === 'string' && typeof value.authDomain === 'string';
}

/** The providers listed in init.json; anything malformed is left out. */
function providersOf(listed: unknown): ProviderInfo[] {
  if (!Array.isArray(listed)) return [];
  const providers: ProviderInfo[] = [];
  for (const entry of listed as unknown[]) {
    if (!isRecord(entry) || typeof entry.providerId !== 'string' || !entry.providerId) continue;
    const displayName = typeof entry.displayName === 'string' && entry.displayName ? entry.displayName : entry.providerId;
    providers.push({ providerId: entry.providerId, displayName });
  }
  return providers;
}

/**
 * Learns the project from the server that served this page (the Firebase Hosting convention
 * `/__/firebase/init.json`) and points the Auth SDK back at that same origin.
 *
 * Popup and redirect sign-in use the SDK's browser resolver. It needs gapi.iframes, which it
 * would otherwise fetch from apis.google.com; index.html loads Hearth's stand-in,
 * `/__/auth/gapi.js`, before this module runs, so nothing on this page leaves the machine.
 */
export async function startAuth(): Promise<Site> {
  const response = await fetch('/__/firebase/init.json', { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`init.json answered ${response.status}`);
  const body: unknown = await response.json();
  if (!isInitConfig(body)) throw new Error('init.json is missing apiKey, projectId or authDomain');
  const options: FirebaseOptions = { apiKey: body.apiKey, projectId: body.projectId, authDomain: body.authDomain, ...(typeof body.storageBucket === 'string' ? { storageBucket: body.storageBucket } : {}) };
  setSiteFeatures(body);
  const app = initializeApp(options);
  // On start the SDK looks for a saved user in each of these, in order; new sign-ins go to
  // the first available one until the sign-in page picks another with setPersistence.
  const auth = initializeAuth(app, {
    persistence: [indexedDBLocalPersistence, browserLocalPersistence, browserSessionPersistence, inMemoryPersistence],
    popupRedirectResolver: browserPopupRedirectResolver,
  });
  connectAuthEmulator(auth, window.location.origin, { disableWarnings: true });
  // connectAuthEmulator also switches the human check off (the SDK then sends a made-up token, which
  // only --dev accepts); Hearth's stand-in (/__/auth/recaptcha.js) runs the real one in this page.
  auth.settings.appVerificationDisabledForTesting = false;
  return { auth, providers: providersOf(body.providers) };
}
