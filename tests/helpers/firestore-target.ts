/**
 * The server the Firestore SDK suites (tests/firestore-lite-*.test.ts, tests/firestore-grpc-*.test.ts) run
 * against: Hearth in-process (--dev), or with HEARTH_FIRESTORE_TARGET=google-emulator Google's official
 * emulator (`gcloud emulators firestore start`), which is how the assertions were checked; that mode is for
 * validating the suites, not for CI. HEARTH_FIRESTORE_EMULATOR=127.0.0.1:PORT as well reuses an emulator that is
 * already running. Also the per-call timeout and the Firebase app a web-SDK client lives in.
 */
import { initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, inMemoryPersistence, initializeAuth, signInAnonymously } from 'firebase/auth';
import { startGoogleEmulator } from './firestore-emulator.js';
import { startHearth, type TestHearth } from './hearth.js';

export const useGoogleEmulator = process.env.HEARTH_FIRESTORE_TARGET === 'google-emulator';
/**
 * Per SDK call: long enough for a slow machine, short enough to name the call that hung (the Node SDKs retry a
 * closed or failing port for minutes).
 */
export const CALL_TIMEOUT_MS = 15_000;

/** Rejects with a message naming the call if `promise` has not settled in time. */
export function within<T>(promise: Promise<T>, label: string, ms = CALL_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface Target {
  /** 127.0.0.1 */
  host: string;
  port: number;
  /** 127.0.0.1:PORT, for FIRESTORE_EMULATOR_HOST */
  hostPort: string;
  projectId: string;
  apiKey: string;
  /** Where the Auth emulator API lives, or undefined when requests go unsigned (Google's emulator). */
  authUrl: string | undefined;
  /** The server when it is Hearth. */
  hearth: TestHearth | undefined;
  close(): Promise<void>;
}

/** Hearth, or Google's emulator (where the data lives under `emulatorProjectId`). */
export async function startTarget(emulatorProjectId: string): Promise<Target> {
  if (!useGoogleEmulator) {
    const server = await startHearth();
    const url = new URL(server.url);
    return {
      host: url.hostname,
      port: Number(url.port),
      hostPort: server.hostPort,
      projectId: server.projectId,
      apiKey: server.apiKey,
      authUrl: server.url,
      hearth: server,
      close: () => server.close(),
    };
  }
  const emulatorAt = (hostPort: string, close: () => Promise<void>): Target => {
    const [host, port] = hostPort.split(':');
    return { host, port: Number(port), hostPort, projectId: emulatorProjectId, apiKey: 'fake-api-key', authUrl: undefined, hearth: undefined, close };
  };
  const reuse = process.env.HEARTH_FIRESTORE_EMULATOR;
  if (reuse) return emulatorAt(reuse, async () => {});
  const emulator = await startGoogleEmulator();
  if (!emulator) throw new Error('HEARTH_FIRESTORE_TARGET=google-emulator needs gcloud with its Firestore emulator component');
  return emulatorAt(emulator.hostPort, () => emulator.stop());
}

/**
 * A Firebase app of its own for one client, signed in anonymously when the target needs it (`signIn: false`
 * gives a client nobody signed in to): Hearth's Firestore only answers signed requests in --dev.
 */
export async function clientApp(target: Target, name: string, signIn: boolean): Promise<FirebaseApp> {
  const app = initializeApp({ apiKey: target.apiKey, projectId: target.projectId }, name);
  if (target.authUrl !== undefined) {
    const auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, target.authUrl, { disableWarnings: true });
    if (signIn) await within(signInAnonymously(auth), 'signInAnonymously');
  }
  return app;
}
