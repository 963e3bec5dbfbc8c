import proxyAddr from '@fastify/proxy-addr';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { isWorkerMessage, workerIndexVariable, workerRelayDirVariable, workerUrlVariable, type ServingSummary } from './worker-messages.js';
import { stickyWorker } from './worker-count.js';
import { hostPort } from '../http/host-port.js';

/**
 * The primary process of `--workers N`: it listens on the public port (and the gRPC one) and
 * hands each connection, unread, to one of N worker processes, each a whole Hearth on the shared
 * store. A client address always goes to the same worker while that worker serves, so what a
 * worker keeps in memory for a client (WebChannel sessions, server transactions, in-flight limits
 * per address) is where its next connection arrives. A trusted reverse proxy's connections carry
 * many clients: they are spread over the workers in turn, and a request that belongs to another
 * worker is relayed to it (http/worker-relay.ts). The primary opens no storage and runs no
 * request: a worker that dies takes only its connections with it, and is started again.
 */

export interface PrimaryOptions {
  workers: number;
  host: string;
  port: number;
  grpcPort?: number;
  /** `--trust-proxy`: connections from these addresses are spread over the workers, not kept on one. */
  trustedProxies?: string[];
  /** How a worker is started: this process's script, flags and Node flags. */
  script: string;
  args: readonly string[];
  execArgv: readonly string[];
  logger: Logger;
}

export interface Primary {
  url: string;
  /** From the first worker that served: the banner's lines. */
  summary: ServingSummary;
  /** The workers' process ids, by index (undefined while one is being started again). */
  pids(): Array<number | undefined>;
  stop(): Promise<void>;
}

interface Slot {
  index: number;
  child: ChildProcess | undefined;
  ready: boolean;
  startedAt: number;
  /** Doubles while a worker keeps dying soon after its start; back to the first step after one lived. */
  restartDelayMs: number;
}

/** Connections held while no worker serves (all starting): past this many, new ones are refused. */
const maxHeld = 10_000;
const firstRestartDelayMs = 250;
const maxRestartDelayMs = 30_000;
/** A worker that served this long before it died is started again without delay. */
const livedLongEnoughMs = 30_000;
/** How long a stopping worker may finish its requests before it is killed. */
const stopGraceMs = 15_000;

export async function startPrimary(options: PrimaryOptions): Promise<Primary> {
  const { logger } = options;
  const slots: Slot[] = Array.from({ length: options.workers }, (_, index) => ({ index, child: undefined, ready: false, startedAt: 0, restartDelayMs: firstRestartDelayMs }));
  const held: Socket[] = [];
  let stopping = false;
  let summary: ServingSummary | undefined;
  const isProxy = options.trustedProxies?.length ? proxyAddr.compile(options.trustedProxies) : () => false;
  let nextForProxy = 0;

  const handTo = (slot: Slot, socket: Socket) => {
    slot.child!.send({ type: 'connection' }, socket, (error) => {
      // The worker died between the choice and the send: the client sees a closed connection, as
      // it would had that worker died holding it.
      if (error) socket.destroy();
    });
  };
  const route = (socket: Socket) => {
    if (stopping) {
      socket.destroy();
      return;
    }
    // proxy-addr takes an IPv4 address written as IPv6 (::ffff:a.b.c.d) as the IPv4 address.
    const address = socket.remoteAddress ?? '';
    const preferred = isProxy(address, 0) ? nextForProxy++ % slots.length : stickyWorker(address, slots.length);
    // The client's own worker, or while it is being started again the next one that serves.
    for (let step = 0; step < slots.length; step++) {
      const slot = slots[(preferred + step) % slots.length]!;
      if (slot.ready && slot.child?.connected) {
        handTo(slot, socket);
        return;
      }
    }
    if (held.length >= maxHeld) {
      socket.destroy();
      return;
    }
    // A client that gives up while held must not take the primary down with an unhandled error.
    socket.on('error', () => socket.destroy());
    held.push(socket);
  };
  const flushHeld = () => {
    for (const socket of held.splice(0)) if (!socket.destroyed) route(socket);
  };

  const servers: Server[] = [];
  const listen = (port: number) =>
    new Promise<number>((resolveListen, reject) => {
      // Paused: the bytes stay in the kernel until the worker that gets the socket reads them.
      const server = createServer({ pauseOnConnect: true }, route);
      server.once('error', reject);
      server.listen({ port, host: options.host }, () => {
        server.off('error', reject);
        // Accepting can fail later (out of file descriptors): logged, and the primary goes on.
        server.on('error', (err) => logger.error({ err }, 'accepting a connection failed'));
        servers.push(server);
        const address = server.address();
        resolveListen(typeof address === 'object' && address ? address.port : port);
      });
    });
  const port = await listen(options.port);
  if (options.grpcPort !== undefined) await listen(options.grpcPort);
  const url = `http://${hostPort(options.host, port)}`;
  // Private to this user: a relay connection names its client's address, which the worker believes.
  const relayDir = mkdtempSync(join(tmpdir(), 'hearth-workers-'));

  const start = (slot: Slot): Promise<void> =>
    new Promise((resolveStart, rejectStart) => {
      const child = fork(options.script, [...options.args], {
        execArgv: [...options.execArgv],
        env: { ...process.env, [workerIndexVariable]: String(slot.index), [workerUrlVariable]: url, [workerRelayDirVariable]: relayDir },
        stdio: 'inherit',
      });
      slot.child = child;
      slot.ready = false;
      slot.startedAt = Date.now();
      child.on('message', (message) => {
        if (!isWorkerMessage(message)) return;
        if (message.type === 'change-log') {
          // To every other worker serving: their change feeds read the shared file's log now.
          for (const other of slots) if (other !== slot && other.ready && other.child?.connected) other.child.send(message, undefined, {}, () => undefined);
          return;
        }
        slot.ready = true;
        summary ??= message.summary;
        logger.info({ worker: slot.index + 1, workerPid: child.pid }, 'worker serving');
        resolveStart();
        flushHeld();
      });
      child.once('exit', (code, signal) => {
        const wasReady = slot.ready;
        slot.ready = false;
        slot.child = undefined;
        if (stopping) return;
        if (!wasReady) rejectStart(new Error(`worker ${slot.index + 1} stopped before it served (${signal ?? `exit code ${code}`})`));
        const lived = Date.now() - slot.startedAt;
        slot.restartDelayMs = lived >= livedLongEnoughMs ? firstRestartDelayMs : Math.min(slot.restartDelayMs * 2, maxRestartDelayMs);
        const delay = lived >= livedLongEnoughMs ? 0 : slot.restartDelayMs;
        logger.error({ worker: slot.index + 1, workerPid: child.pid, code, signal, restartInMs: delay }, 'worker stopped; starting it again');
        setTimeout(() => {
          if (!stopping) start(slot).catch(() => undefined); // its own exit handler logs and schedules the next try
        }, delay);
      });
    });

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const server of servers) server.close();
    for (const socket of held.splice(0)) socket.destroy();
    await Promise.all(
      slots.map(async (slot) => {
        const child = slot.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), stopGraceMs);
        await exited;
        clearTimeout(killer);
      }),
    );
    rmSync(relayDir, { recursive: true, force: true });
  };

  try {
    // The first alone: it makes what the data folder and the store lack (keys, schema) once.
    await start(slots[0]!);
    await Promise.all(slots.slice(1).map((slot) => start(slot)));
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, summary: summary!, pids: () => slots.map((slot) => slot.child?.pid), stop };
}
