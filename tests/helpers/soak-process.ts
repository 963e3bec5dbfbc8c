import { spawn } from 'node:child_process';
import { repoRoot, type SpawnedHearth } from './hearth.js';
import { hearthCommand } from './hearth-command.js';

/**
 * `hearth start` as its own process, like spawnHearth, with a deadline of the caller's choosing:
 * a soak restarts Hearth a hundred times on a machine that may be busy, and a slow start is a
 * figure to report (restart time), not a failure, until it passes `healthyWithinMs`.
 */
export async function spawnForSoak(args: string[], healthyWithinMs = 180_000): Promise<SpawnedHearth> {
  const port = args[args.indexOf('--port') + 1];
  const child = spawn(process.execPath, [...hearthCommand(), 'start', ...args], {
    cwd: repoRoot,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const deadline = Date.now() + healthyWithinMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`hearth exited early (${child.exitCode}):\n${output}`);
    try {
      if ((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5000) })).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`hearth did not become healthy within ${healthyWithinMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    url,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Flags that lift the sign-up limits for runs that create accounts from one address without pause. */
export const unlimitedSignUps = ['--max-signups-per-address', '1000000000', '--max-signups-per-project', '1000000000'];
