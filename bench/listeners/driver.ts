/** The bench's side of the process of clients (clients.ts): forks it and calls its operations. */
import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { Endpoint } from '../firestore/targets.js';
import type { Ops, Reply, Request } from './protocol.js';

export interface ClientProcess {
  call<K extends keyof Ops>(op: K, args: Ops[K]['args']): Promise<Ops[K]['result']>;
  close(): Promise<void>;
}

export async function startClientProcess(server: Endpoint, hostPort: string): Promise<ClientProcess> {
  const child: ChildProcess = fork(resolve(import.meta.dirname, 'clients.ts'), [JSON.stringify({ name: server.name, origin: server.origin, projectId: server.projectId })], {
    execArgv: ['--import', 'tsx', '--max-old-space-size=8192'],
    env: { ...process.env, FIRESTORE_EMULATOR_HOST: hostPort },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 0;
  let exited = false;
  const exit = new Promise<void>((resolveExit) => {
    child.once('exit', (code, signal) => {
      exited = true;
      for (const { reject } of waiting.values()) reject(new Error(`the client process ended (${signal ?? code})`));
      waiting.clear();
      resolveExit();
    });
  });
  await new Promise<void>((resolveReady, rejectReady) => {
    child.once('message', () => resolveReady());
    child.once('exit', (code) => rejectReady(new Error(`the client process ended before it was ready (${code})`)));
  });
  child.on('message', (message: Reply) => {
    const pending = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.ok) pending?.resolve(message.result);
    else pending?.reject(new Error(`client process: ${message.error}`));
  });
  return {
    call<K extends keyof Ops>(op: K, args: Ops[K]['args']): Promise<Ops[K]['result']> {
      if (exited) return Promise.reject(new Error('the client process has ended'));
      const id = nextId++;
      return new Promise((resolveCall, rejectCall) => {
        waiting.set(id, { resolve: resolveCall as (value: unknown) => void, reject: rejectCall });
        child.send({ id, op, args } as Request);
      });
    },
    async close() {
      if (!exited) child.kill('SIGTERM');
      await exit;
    },
  };
}
