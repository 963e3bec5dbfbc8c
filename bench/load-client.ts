/**
 * The load generator's own process (forked by load.ts): autocannon here, never in the process that
 * serves, so the server under test and the trivial baseline route both get the bench process's CPU
 * to themselves and are driven the very same way. Messages: the parent sends a LoadRun, this process
 * answers with autocannon's result; it exits when the parent disconnects.
 */
import type autocannon from 'autocannon';
import { runAutocannon, type LoadRun } from './load-run.js';

export type ClientMessage = { kind: 'ready' } | { kind: 'result'; result: autocannon.Result; cpuMs: number } | { kind: 'error'; message: string };

function send(message: ClientMessage): void {
  process.send?.(message);
}

process.on('message', (spec: LoadRun) => {
  const cpu = process.cpuUsage();
  runAutocannon(spec).then(
    (result) => {
      const used = process.cpuUsage(cpu);
      send({ kind: 'result', result, cpuMs: (used.user + used.system) / 1000 });
    },
    (error: unknown) => send({ kind: 'error', message: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
send({ kind: 'ready' });
