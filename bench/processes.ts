/**
 * Processes a bench starts beside itself: Google's Firestore emulator (`gcloud emulators firestore
 * start`) in a process group of its own that is always stopped, and what they use.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { freePort } from '../tests/helpers/hearth.js';

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux unless told otherwise). */
let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** Resident memory and CPU time so far of every process in a process group (Linux /proc), or undefined elsewhere. */
export function groupUsage(pgid: number): { rssBytes: number; cpuMs: number } | undefined {
  try {
    let rssBytes = 0;
    let ticks = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        // Fields after the parenthesised command: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
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

/** Sends `signal` to every process of a group (0 only asks whether any is left); false when none is. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Stops the whole process group (gcloud's Python, the launcher script and the JVM). */
async function stopGroup(pgid: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  const deadline = performance.now() + 10_000;
  while (signalGroup(pgid, 0) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  signalGroup(pgid, 'SIGKILL');
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
 * `gcloud emulators firestore start` in its own process group, or a reason it could not start.
 * The group is killed on exit or Ctrl-C so no JVM outlives the bench. JVM_FLAGS reaches its JVM.
 */
export async function startFirestoreEmulator(): Promise<RunningEmulator | string> {
  const port = await freePort();
  let child: ChildProcess;
  let output = '';
  const spawnError = await new Promise<Error | undefined>((resolveSpawn) => {
    child = spawn('gcloud', ['emulators', 'firestore', 'start', `--host-port=127.0.0.1:${port}`, '--quiet'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CLOUDSDK_CORE_DISABLE_PROMPTS: '1' },
    });
    child.once('error', (error) => resolveSpawn(error));
    child.once('spawn', () => resolveSpawn(undefined));
  });
  if (spawnError) return `gcloud could not be started (${spawnError.message})`;
  const emulator = child!;
  const pgid = emulator.pid!;
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  emulator.stdout?.on('data', keep);
  emulator.stderr?.on('data', keep);
  let exited = false;
  emulator.once('exit', () => {
    exited = true;
  });
  const killNow = () => signalGroup(pgid, 'SIGKILL');
  const onSignal = (signal: NodeJS.Signals) => {
    killNow();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('exit', killNow);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const origin = `http://127.0.0.1:${port}`;
  const close = async () => {
    process.off('exit', killNow);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopGroup(pgid);
  };
  const deadline = performance.now() + 90_000;
  for (;;) {
    try {
      const response = await fetch(`${origin}/`);
      if (response.ok && (await response.text()).trim() === 'Ok') break;
    } catch {
      // Not listening yet.
    }
    if (exited || performance.now() > deadline) {
      await close();
      const tail = output.trim().split('\n').slice(-6).join('\n    ');
      return `the emulator ${exited ? 'exited' : 'did not answer within 90 s'}; its last output:\n    ${tail}`;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const version = /version[^\d]*(\d+\.\d+\.\d+)/i.exec(output)?.[1];
  return { origin, hostPort: `127.0.0.1:${port}`, version, usage: () => groupUsage(pgid), close };
}
