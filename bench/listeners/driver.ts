/**
 * The bench's side of the clients: forks several processes of clients (clients.ts), one of them
 * also the writer, spreads listeners and connections over them, and runs commits one after another,
 * each waited for until every process reports all its listeners have it. Latencies are computed
 * here from the writer's acknowledgement times and the listeners' receipt times (one clock).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { Endpoint } from '../firestore/targets.js';
import type { ClientEvent, ClientOps, ClientReply, ClientRequest, CommitRun, Ops } from './protocol.js';

export interface ClientProcess {
  call<K extends keyof Ops>(op: K, args: Ops[K]['args']): Promise<Ops[K]['result']>;
  close(): Promise<void>;
}

/** Per commit: until every process reported it, or the run fails. */
const waitMs = 120_000;

interface Child {
  call<K extends keyof ClientOps>(op: K, args: ClientOps[K]['args']): Promise<ClientOps[K]['result']>;
  /** Listeners this process holds on the current room. */
  listeners: number;
  close(): Promise<void>;
}

async function startChild(server: Endpoint, onEvent: (event: ClientEvent) => void): Promise<Child> {
  const child: ChildProcess = fork(resolve(import.meta.dirname, 'clients.ts'), [JSON.stringify({ name: server.name, origin: server.origin, projectId: server.projectId })], {
    execArgv: ['--import', 'tsx', '--max-old-space-size=4096'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 0;
  let exited = false;
  const exit = new Promise<void>((resolveExit) => {
    child.once('exit', (code, signal) => {
      exited = true;
      for (const { reject } of waiting.values()) reject(new Error(`a client process ended (${signal ?? code})`));
      waiting.clear();
      resolveExit();
    });
  });
  await new Promise<void>((resolveReady, rejectReady) => {
    child.once('message', () => resolveReady());
    child.once('exit', (code) => rejectReady(new Error(`a client process ended before it was ready (${code})`)));
  });
  child.on('message', (message: ClientReply | ClientEvent) => {
    if ('event' in message) return onEvent(message);
    const pending = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.ok) pending?.resolve(message.result);
    else pending?.reject(new Error(`client process: ${message.error}`));
  });
  return {
    listeners: 0,
    call(op, args) {
      if (exited) return Promise.reject(new Error('the client process has ended'));
      const id = nextId++;
      return new Promise((resolveCall, rejectCall) => {
        waiting.set(id, { resolve: resolveCall as (value: unknown) => void, reject: rejectCall });
        child.send({ id, op, args } as ClientRequest);
      });
    },
    async close() {
      if (!exited) child.kill('SIGTERM');
      await exit;
    },
  };
}

/** `processes` processes of listeners, plus one writer. */
export async function startClientProcess(server: Endpoint, processes: number): Promise<ClientProcess> {
  const seen = new Map<number, number>();
  let wake: (() => void) | undefined;
  let failure: string | undefined;
  const onEvent = (event: ClientEvent) => {
    if (event.event === 'seen') seen.set(event.seq, (seen.get(event.seq) ?? 0) + 1);
    else failure ??= event.error;
    wake?.();
  };
  const children = await Promise.all(Array.from({ length: processes }, () => startChild(server, onEvent)));
  const writer = await startChild(server, onEvent);
  let rooms = 0;
  let room = `room${rooms}`;
  let nextSeq = 0;
  let clients = 0;

  async function allSeen(seq: number): Promise<void> {
    const expected = children.filter((child) => child.listeners > 0).length;
    const deadline = performance.now() + waitMs;
    while ((seen.get(seq) ?? 0) < expected) {
      if (failure) throw new Error(`a client process: ${failure}`);
      if (performance.now() > deadline) throw new Error(`${room}: after ${waitMs / 1000} s only ${seen.get(seq) ?? 0} of ${expected} processes had every listener see commit ${seq}`);
      await new Promise<void>((resolveWait) => {
        const timer = setTimeout(resolveWait, 1000);
        wake = () => {
          clearTimeout(timer);
          resolveWait();
        };
      });
    }
    seen.delete(seq);
  }

  const ops: { [K in keyof Ops]: (args: Ops[K]['args']) => Promise<Ops[K]['result']> } = {
    async open({ listeners, clients: count }) {
      // Connection k goes to process k mod P; listener j to connection j mod count, as one process would.
      const shares = children.map((_, c) => {
        const own = Math.floor(count / processes) + (c < count % processes ? 1 : 0);
        let mine = 0;
        for (let k = c; k < count; k += processes) mine += Math.floor(listeners / count) + (k < listeners % count ? 1 : 0);
        return { clients: own, listeners: mine };
      });
      const opened = await Promise.all(children.map((child, c) => (shares[c]!.clients > 0 ? child.call('open', { room, ...shares[c]! }) : undefined)));
      children.forEach((child, c) => (child.listeners += shares[c]!.listeners));
      clients += count;
      const rss = opened.reduce((sum, o) => sum + (o?.clientRss ?? 0), 0);
      return {
        clients,
        listeners: children.reduce((sum, child) => sum + child.listeners, 0),
        openMs: Math.max(...opened.map((o) => o?.openMs ?? 0)),
        clientRss: rss,
      };
    },
    async commits({ commits }) {
      const listeners = children.reduce((sum, child) => sum + child.listeners, 0);
      const run: CommitRun = { latencies: [], fromSend: [], first: [], last: [], commit: [], received: 0, expected: listeners * commits, clientCpuMs: 0 };
      await Promise.all([writer, ...children].map((child) => child.call('take', {})));
      const times = new Map<number, { sentAt: number; ackAt: number }>();
      for (let i = 0; i < commits; i++) {
        const seq = nextSeq++;
        const commit = await writer.call('commit', { room, seq });
        times.set(seq, commit);
        run.commit.push(commit.ackAt - commit.sentAt);
        if (listeners > 0) await allSeen(seq);
      }
      const taken = await Promise.all([writer, ...children].map((child) => child.call('take', {})));
      const first = new Map<number, number>();
      const last = new Map<number, number>();
      for (const { arrivals, cpuMs } of taken) {
        run.clientCpuMs += cpuMs;
        for (const [seqText, receipts] of Object.entries(arrivals)) {
          const at = times.get(Number(seqText));
          if (!at) continue;
          run.received += receipts.length;
          for (const receipt of receipts) {
            run.latencies.push(receipt - at.ackAt);
            run.fromSend.push(receipt - at.sentAt);
            first.set(Number(seqText), Math.min(first.get(Number(seqText)) ?? Infinity, receipt - at.ackAt));
            last.set(Number(seqText), Math.max(last.get(Number(seqText)) ?? -Infinity, receipt - at.ackAt));
          }
        }
      }
      run.first.push(...first.values());
      run.last.push(...last.values());
      return run;
    },
    async close() {
      await Promise.all(children.map((child) => child.call('close', {})));
      for (const child of children) child.listeners = 0;
      clients = 0;
      room = `room${++rooms}`;
      return null;
    },
  };

  return {
    call: (op, args) => (ops[op] as (a: typeof args) => Promise<Ops[typeof op]['result']>)(args),
    async close() {
      await Promise.all([writer, ...children].map((child) => child.close()));
    },
  };
}
