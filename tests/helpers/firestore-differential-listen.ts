/**
 * The knobs and the two servers of the differential test of Firestore listeners
 * (tests/firestore/differential-listen.test.ts, which describes the knobs): Google's official emulator (the oracle)
 * and Hearth (in-process, --dev) or a second emulator, each listened to through a firebase-admin client and written
 * to through its REST API.
 */
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getFirestore, setLogFunction, type Firestore } from 'firebase-admin/firestore';
import type { Answer } from './firestore-differential-compare.js';
import { startGoogleEmulator, type GoogleEmulator } from './firestore-emulator.js';
import { within } from './firestore-target.js';
import { startHearth, type TestHearth } from './hearth.js';

export const seeds = (process.env.FIRESTORE_DIFF_LISTEN_SEEDS ?? '1,2').split(',').map(Number);
export const writesPerSeed = Number(process.env.FIRESTORE_DIFF_LISTEN_WRITES ?? 100);
export const queryListenersPerSeed = 10;
export const catchUpMs = Number(process.env.FIRESTORE_DIFF_LISTEN_TIMEOUT_MS ?? 5_000);
/** Replays while shrinking wait less: a stuck listener there only has to show again. */
export const replayCatchUpMs = Math.min(catchUpMs, 2_000);
/** After every listener caught up: a late snapshot for the same write would show within this. */
export const settleMs = 30;
const compareWithSecondEmulator = process.env.FIRESTORE_DIFF_SUBJECT === 'emulator';
/** Mismatches shown in full (and shrunk), and the time spent shrinking them. */
export const mismatchesShown = 6;
export const shrinkBudgetMs = 60_000;
const projectId = 'demo-test';
export const databaseRoot = `projects/${projectId}/databases/(default)/documents`;
export const run = Date.now().toString(36);

setLogFunction(null);
// google-gax asks google-auth-library for the universe domain when it creates a stub, which probes the GCE metadata
// server (seconds, and a MetadataLookupWarning where a proxy answers 403): these clients only talk to local servers.
process.env.METADATA_SERVER_DETECTION ??= 'none';

// ---------------------------------------------------------------------------------------------------------------
// Servers

export interface Side {
  label: string;
  /** http://127.0.0.1:PORT, for REST commits and runQuery */
  url: string;
  app: App;
  db: Firestore;
}

/** A firebase-admin client for that host (FIRESTORE_EMULATOR_HOST is read when the client is set up). */
function adminClient(label: string, hostPort: string): { app: App; db: Firestore } {
  const saved = process.env.FIRESTORE_EMULATOR_HOST;
  process.env.FIRESTORE_EMULATOR_HOST = hostPort;
  try {
    const app = initializeApp({ projectId }, `listen-diff-${label}-${run}`);
    const db = getFirestore(app);
    db.settings({ useBigInt: true });
    return { app, db };
  } finally {
    if (saved === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
    else process.env.FIRESTORE_EMULATOR_HOST = saved;
  }
}

export async function rest(side: Side, path: string, body: unknown): Promise<Answer> {
  const response = await within(
    fetch(`${side.url}/v1/${path}`, {
      method: 'POST',
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    `${side.label}: POST ${path}`,
  );
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

export function outcome(answer: Answer): string {
  return answer.status === 200 ? 'committed' : `HTTP ${answer.status} ${answer.body?.error?.status ?? JSON.stringify(answer.body).slice(0, 200)}`;
}

export function relativePath(name: string): string {
  return name.startsWith(`${databaseRoot}/`) ? name.slice(databaseRoot.length + 1) : name;
}

export interface ListeningSides {
  /** The emulator's first, then the subject's. */
  sides: [Side, Side];
  /** Stops the subject's server and both clients; the oracle is the caller's. */
  close(): Promise<void>;
}

/** Clients for the oracle and for the subject: Hearth, or with FIRESTORE_DIFF_SUBJECT=emulator a second emulator. */
export async function startListeningSides(oracle: GoogleEmulator): Promise<ListeningSides> {
  let hearth: TestHearth | undefined;
  let secondEmulator: GoogleEmulator | undefined;
  let subjectUrl: string;
  let subjectHostPort: string;
  let subjectLabel: string;
  if (compareWithSecondEmulator) {
    secondEmulator = await startGoogleEmulator();
    [subjectUrl, subjectHostPort, subjectLabel] = [secondEmulator!.url, secondEmulator!.hostPort, 'second emulator'];
  } else {
    hearth = await startHearth({ defaultProjectId: projectId });
    [subjectUrl, subjectHostPort, subjectLabel] = [hearth.url, hearth.hostPort, 'Hearth'];
  }
  const sides: [Side, Side] = [
    { label: 'emulator', url: oracle.url, ...adminClient('emulator', oracle.hostPort) },
    { label: subjectLabel, url: subjectUrl, ...adminClient('subject', subjectHostPort) },
  ];
  return {
    sides,
    async close() {
      // Clients first: against a closed port they would retry for minutes.
      for (const side of sides) {
        await within(side.db.terminate(), `terminate the ${side.label} client`).catch(() => undefined);
        await deleteApp(side.app);
      }
      await hearth?.close();
      await secondEmulator?.stop();
    },
  };
}
