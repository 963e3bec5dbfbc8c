import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, inMemoryPersistence, initializeAuth, type Auth } from 'firebase/auth';
import type { TestHearth } from './hearth.js';

/**
 * Fresh, independent SDK clients (one Firebase app each, nothing persisted) pointed at a Hearth,
 * as separate devices would be; `close` deletes them all.
 */
export class SdkClients {
  private readonly apps: FirebaseApp[] = [];

  constructor(private readonly prefix: string) {}

  auth(server: TestHearth): Auth {
    const app = initializeApp(
      { apiKey: server.apiKey, projectId: server.projectId, authDomain: new URL(server.url).host },
      `${this.prefix}-${this.apps.length}`,
    );
    this.apps.push(app);
    const auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, server.url, { disableWarnings: true });
    return auth;
  }

  async close(): Promise<void> {
    await Promise.all(this.apps.splice(0).map((app) => deleteApp(app)));
  }
}

/** The `auth/*` code a promise rejects with, or 'no error'. */
export async function errorCodeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'no error',
    (error: { code?: string }) => error.code ?? String(error),
  );
}
