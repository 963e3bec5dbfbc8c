import { getApps, initializeApp, type FirebaseApp } from 'firebase/app';
import { browserPopupRedirectResolver, connectAuthEmulator, inMemoryPersistence, initializeAuth, type Auth } from 'firebase/auth';

export interface ConsoleFirebase {
  app: FirebaseApp;
  auth: Auth;
  projectId: string;
}

const appName = 'hearth-console';
let started: Promise<ConsoleFirebase> | undefined;

/**
 * A firebase app of the console's own, apart from the web app's: an operator's sign-in lives only
 * in memory (it is traded for the session cookie at once), and the live view's Firestore has no
 * signed-in user, so the server counts the console session on its WebChannel.
 */
export function consoleFirebase(): Promise<ConsoleFirebase> {
  started ??= (async () => {
    const response = await fetch('/__/firebase/init.json', { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`init.json answered ${response.status}`);
    const config = (await response.json()) as { apiKey: string; projectId: string; authDomain: string };
    const app = getApps().find((existing) => existing.name === appName) ?? initializeApp({ apiKey: config.apiKey, projectId: config.projectId, authDomain: config.authDomain }, appName);
    const auth = initializeAuth(app, { persistence: inMemoryPersistence, popupRedirectResolver: browserPopupRedirectResolver });
    connectAuthEmulator(auth, window.location.origin, { disableWarnings: true });
    return { app, auth, projectId: config.projectId };
  })();
  started.catch(() => (started = undefined));
  return started;
}
