/**
 * Processes a bench starts beside itself: Google's Firestore emulator (`gcloud emulators firestore
 * start`) in a process group of its own that is always stopped, and what they use.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { startGoogleEmulator, type GoogleEmulator } from '../tests/helpers/firestore-emulator.js';
import { statFields, ticksPerSecond } from '../tests/helpers/proc-usage.js';

/** Resident memory and CPU time so far of every process in a process group (Linux /proc), or undefined elsewhere. */
export function groupUsage(pgid: number): { rssBytes: number; cpuMs: number } | undefined {
  try {
    let rssBytes = 0;
    let ticks = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const fields = statFields(entry);
        if (Number(fields[2]) !== pgid) continue;
        ticks += Number(fields[11]) + Number(fields[12]);
        const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, 'utf8'));
        if (match) rssBytes += Number(match[1]) * 1024;
      } catch {
        // The process ended while being read.
      }
    }
    return { rssBytes, cpuMs: (ticks / ticksPerSecond()) * 1000 };
  } catch {
    return undefined;
  }
}

export interface RunningEmulator {
  /** http://127.0.0.1:PORT: REST and gRPC alike. */
  origin: string;
  /** 127.0.0.1:PORT, for FIRESTORE_EMULATOR_HOST. */
  hostPort: string;
  /** The version it printed, when it did. */
  version: string | undefined;
  /** Resident memory and CPU time so far of the gcloud launcher and the JVM together. */
  usage(): { rssBytes: number; cpuMs: number } | undefined;
  close(): Promise<void>;
}

/**
 * Google's emulator, started as the tests start it (tests/helpers/firestore-emulator.ts), or a
 * reason it could not start. Ctrl-C stops it too, so no JVM outlives the bench. JVM_FLAGS reaches its JVM.
 */
export async function startFirestoreEmulator(): Promise<RunningEmulator | string> {
  let emulator: GoogleEmulator | undefined;
  try {
    emulator = await startGoogleEmulator({ startupTimeoutMs: 90_000, jit: 'full' });
  } catch (error) {
    const tail = (error as Error).message.trim().split('\n').slice(-6).join('\n    ');
    return `the emulator did not start; its last output:\n    ${tail}`;
  }
  if (!emulator) return 'gcloud or its Firestore emulator component (google-cloud-cli-firestore-emulator) is not installed';
  const running = emulator;
  const onSignal = (signal: NodeJS.Signals) => {
    void running.stop();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    origin: running.url,
    hostPort: running.hostPort,
    version: running.version,
    usage: () => groupUsage(running.pid),
    async close() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await running.stop();
    },
  };
}
