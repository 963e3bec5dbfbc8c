/**
 * Google's official Firestore emulator (the oracle) and Hearth (in-process, --dev) side by side, for differential
 * tests that send the same requests to both: REST through `rest`, and a firebase-admin client per server (gRPC, as
 * the Node SDKs speak it). Hearth may be started with options of its own (declared indexes, say).
 */
import { deleteApp, initializeApp, type App } from 'firebase-admin/app';
import { getFirestore, setLogFunction, type Firestore } from 'firebase-admin/firestore';
import type { HearthOptions } from '../../packages/server/src/config.js';
import { startGoogleEmulator, type GoogleEmulator } from './firestore-emulator.js';
import { within } from './firestore-target.js';
import { startHearth, type TestHearth } from './hearth.js';

setLogFunction(null);
// firebase-admin would otherwise probe the GCE metadata server for every client it sets up.
process.env.METADATA_SERVER_DETECTION ??= 'none';

export const pairProjectId = 'demo-pair';
export const pairRoot = `projects/${pairProjectId}/databases/(default)/documents`;

export interface PairSide {
  label: 'emulator' | 'Hearth';
  url: string;
  hostPort: string;
  /** firebase-admin over gRPC, created on first use. */
  admin(): Firestore;
}

export interface OraclePair {
  sides: [PairSide, PairSide];
  hearth: TestHearth;
  close(): Promise<void>;
}

export interface RestAnswer {
  status: number;
  // Parsed JSON: the tests read Google's shapes from it.
  body: any;
}

/** Starts the emulator and Hearth; undefined when the emulator is not installed. */
export async function startOraclePair(hearthOptions: Partial<HearthOptions> = {}): Promise<OraclePair | undefined> {
  const emulator: GoogleEmulator | undefined = await startGoogleEmulator();
  if (!emulator) return undefined;
  const hearth = await startHearth({ defaultProjectId: pairProjectId, ...hearthOptions });
  const apps: App[] = [];
  const dbs: Firestore[] = [];
  const side = (label: PairSide['label'], url: string, hostPort: string): PairSide => {
    let db: Firestore | undefined;
    return {
      label,
      url,
      hostPort,
      admin() {
        if (db) return db;
        // FIRESTORE_EMULATOR_HOST is read when the client is set up.
        const saved = process.env.FIRESTORE_EMULATOR_HOST;
        process.env.FIRESTORE_EMULATOR_HOST = hostPort;
        try {
          const app = initializeApp({ projectId: pairProjectId }, `pair-${label}-${Date.now().toString(36)}`);
          apps.push(app);
          db = getFirestore(app);
          dbs.push(db);
          return db;
        } finally {
          if (saved === undefined) delete process.env.FIRESTORE_EMULATOR_HOST;
          else process.env.FIRESTORE_EMULATOR_HOST = saved;
        }
      },
    };
  };
  return {
    sides: [side('emulator', emulator.url, emulator.hostPort), side('Hearth', hearth.url, hearth.hostPort)],
    hearth,
    async close() {
      // Clients first: against a closed port they would retry for minutes.
      for (const db of dbs) await within(db.terminate(), 'terminate a firebase-admin client').catch(() => undefined);
      for (const app of apps) await deleteApp(app);
      await hearth.close();
      await emulator.stop();
    },
  };
}

/** One REST call as the administrator (`Bearer owner`), under /v1/. */
export async function rest(side: PairSide, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<RestAnswer> {
  const response = await within(
    fetch(`${side.url}/v1/${path}`, {
      method,
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    `${side.label}: ${method} ${path}`,
  );
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

/** The same call to both sides. */
export function both(pair: OraclePair, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<[RestAnswer, RestAnswer]> {
  return Promise.all([rest(pair.sides[0], method, path, body), rest(pair.sides[1], method, path, body)]);
}

/** An error answer as `STATUS: message`, or undefined for a 200. */
export function errorOf(answer: RestAnswer): string | undefined {
  if (answer.status === 200) return undefined;
  const error = Array.isArray(answer.body) ? answer.body[0]?.error : answer.body?.error;
  return `${error?.status ?? `HTTP ${answer.status}`}: ${error?.message ?? JSON.stringify(answer.body)}`;
}

/** Names of the documents a runQuery, list or batchGet answer holds, in its order, relative to the root. */
export function documentNames(answer: RestAnswer): string[] | string {
  const error = errorOf(answer);
  if (error) return error;
  const relative = (name: string) => name.slice(pairRoot.length + 1);
  if (Array.isArray(answer.body)) return answer.body.filter((element) => element.document || element.found).map((element) => relative((element.document ?? element.found).name));
  return (answer.body.documents ?? []).map((doc: { name: string }) => relative(doc.name));
}
