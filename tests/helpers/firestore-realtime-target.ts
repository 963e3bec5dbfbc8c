/**
 * The server the browser end-to-end tests of Cloud Firestore's realtime path (tests/e2e-firestore-realtime-*.test.ts)
 * run against, which they stop and start again on the same port with the same data: Hearth (--dev; clients sign in
 * anonymously, and rules that let only signed-in users and the admin at the data are released to it), or with
 * HEARTH_FIRESTORE_TARGET=google-emulator Google's official emulator (`gcloud emulators firestore start`), which is
 * how the assertions were validated: there clients "sign in" with connectFirestoreEmulator's mockUserToken, and a
 * rules file (`request.auth != null`) reproduces Hearth's --dev policy; the restart keeps the data through the
 * emulator's export / --import-data.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGoogleEmulator, type GoogleEmulator } from './firestore-emulator.js';
import { useGoogleEmulator, within } from './firestore-target.js';
import { startHearth, tempDataDir, type TestHearth } from './hearth.js';
import { releaseRules, signedInOnlyRules } from './security-rules.js';

export interface RealtimeTarget {
  label: string;
  /** http://127.0.0.1:PORT */
  url: string;
  host: string;
  port: number;
  projectId: string;
  apiKey: string;
  /** connectAuthEmulator's URL; undefined for Google's emulator (no Auth there). */
  authUrl: string | undefined;
  /** Stops the server, keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  restart(): Promise<void>;
  close(): Promise<void>;
}


async function googleEmulatorTarget(): Promise<RealtimeTarget> {
  const scratch = mkdtempSync(join(tmpdir(), 'firestore-realtime-emulator-'));
  const rulesFile = join(scratch, 'firestore.rules');
  writeFileSync(rulesFile, signedInOnlyRules);
  const projectId = 'demo-realtime';
  let emulator: GoogleEmulator | undefined = await startGoogleEmulator({ args: [`--rules=${rulesFile}`] });
  if (!emulator) throw new Error('HEARTH_FIRESTORE_TARGET=google-emulator needs gcloud with its Firestore emulator component');
  const hostPort = emulator.hostPort;
  const url = emulator.url;
  let exported: string | undefined;
  let exports = 0;
  return {
    label: 'Google emulator',
    url,
    host: '127.0.0.1',
    port: Number(hostPort.split(':')[1]),
    projectId,
    apiKey: 'fake-api-key',
    authUrl: undefined,
    async stop() {
      // The emulator keeps data in memory: export it, and import it on restart.
      const name = `restart-${++exports}`;
      const response = await fetch(`${url}/emulator/v1/projects/${projectId}:export`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ database: `projects/${projectId}/databases/(default)`, export_directory: scratch, export_name: name }),
      });
      assert.equal(response.status, 200, `emulator export: ${await response.text()}`);
      exported = join(scratch, name, `${name}.overall_export_metadata`);
      await emulator?.stop();
      emulator = undefined;
    },
    async restart() {
      assert.ok(exported, 'restart() before stop()');
      emulator = await startGoogleEmulator({ hostPort, args: [`--rules=${rulesFile}`, `--import-data=${exported}`] });
    },
    async close() {
      await emulator?.stop();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

async function hearthTarget(): Promise<RealtimeTarget> {
  const dataDir = tempDataDir();
  let server: TestHearth | undefined = await startHearth({ dataDir });
  const first = server;
  // The same policy as the emulator's target: signed-in users only (kept in the data folder across restarts).
  await releaseRules(first.url, first.projectId, signedInOnlyRules);
  const port = Number(new URL(first.url).port);
  return {
    label: 'Hearth',
    url: first.url,
    host: '127.0.0.1',
    port,
    projectId: first.projectId,
    apiKey: first.apiKey,
    authUrl: first.url,
    async stop() {
      await within(server!.close(), "Hearth's close() with browser streams open");
      server = undefined;
    },
    async restart() {
      server = await startHearth({ port, dataDir });
    },
    async close() {
      if (server) await within(server.close(), "Hearth's close()");
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function startRealtimeTarget(): Promise<RealtimeTarget> {
  return useGoogleEmulator ? googleEmulatorTarget() : hearthTarget();
}
