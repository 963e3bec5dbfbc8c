import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Between the workers of `--workers`: a request that belongs to another worker (a WebChannel
 * session it opened, a transaction it began) is relayed to it over its private socket, and the
 * answer streamed back. A client address's connections all reach one worker, so this is rare,
 * except behind a reverse proxy, whose connections the primary spreads over the workers.
 *
 * Each worker listens on `<relayDir>/<index>.sock` (the folder is the primary's, 0700). A relayed
 * connection carries one request and opens with a line naming the client's address, which the
 * receiving worker takes as the connection's peer: limits and logs count the client, not a worker.
 */

/** The first byte of a worker's transaction tag; the second is its index (six random bytes follow, per start). */
const tagMark = 0xfe;

/** The most workers a transaction tag can name: its index is one byte. */
export const maxWorkers = 256;
const maxPreambleBytes = 64;
/** A SID made by a worker: `w<index>.` and random text. */
const sidPattern = /^w(\d{1,3})\./;

export class WorkerRelay {
  private server: Server | undefined;

  constructor(
    readonly index: number,
    private readonly relayDir: string,
  ) {}

  /** The tag this worker's transaction ids start with. */
  transactionTag(): Buffer {
    return Buffer.concat([Buffer.from([tagMark, this.index]), randomBytes(6)]);
  }

  /** What this worker's session ids and console session tokens start with. */
  sessionPrefix(): string {
    return `w${this.index}.`;
  }

  /** A new WebChannel session id, naming this worker. */
  sessionId(): string {
    return `${this.sessionPrefix()}${randomBytes(18).toString('base64url')}`;
  }

  /** The worker that made this session id (a WebChannel's, a console's token), when another one did. */
  ownerOfSession(sid: string | undefined): number | undefined {
    const match = sid === undefined ? null : sidPattern.exec(sid);
    return this.other(match ? Number(match[1]) : undefined);
  }

  /** The worker whose tag (transactionTag) a transaction id starts with, when another one's. */
  ownerOfTransaction(id: unknown): number | undefined {
    if (typeof id !== 'string') return undefined;
    const raw = Buffer.from(id, 'base64');
    return this.other(raw.length === 24 && raw[0] === tagMark ? raw[1] : undefined);
  }

  private other(index: number | undefined): number | undefined {
    return index !== undefined && index !== this.index ? index : undefined;
  }

  /** Serves relayed requests: each connection's peer becomes the address its first line names. */
  async listen(accept: (socket: Socket) => void): Promise<void> {
    const server = createServer((socket) => {
      let seen = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        seen = Buffer.concat([seen, chunk]);
        const end = seen.indexOf(0x0a);
        if (end < 0) {
          if (seen.length > maxPreambleBytes) socket.destroy();
          return;
        }
        socket.off('data', onData);
        socket.pause();
        const address = seen.subarray(0, end).toString('latin1');
        if (!isIP(address)) {
          socket.destroy();
          return;
        }
        Object.defineProperty(socket, 'remoteAddress', { value: address, configurable: true });
        if (seen.length > end + 1) socket.unshift(seen.subarray(end + 1));
        accept(socket);
        socket.resume();
      };
      socket.on('data', onData);
      socket.on('error', () => socket.destroy());
    });
    const path = join(this.relayDir, `${this.index}.sock`);
    // Left by this worker's previous start (it died): the path is this index's alone.
    rmSync(path, { force: true });
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolveListen());
    });
    this.server = server;
  }

  /**
   * Sends the request to worker `to` and streams its answer back (the reply is hijacked); resolves
   * true then, false when that worker cannot be reached (it is being started again) and nothing was
   * sent. `body`: the request's body as already read (text); without it the raw request streams on.
   */
  relay(to: number, request: FastifyRequest, reply: FastifyReply, body?: string): Promise<boolean> {
    return new Promise((resolveRelay) => {
      const socket: Socket = connect(join(this.relayDir, `${to}.sock`));
      socket.once('error', () => resolveRelay(false));
      socket.once('connect', () => {
        reply.hijack();
        socket.write(`${request.ip}\n`);
        const headers: IncomingHttpHeaders = { ...request.headers };
        if (body !== undefined) {
          delete headers['transfer-encoding'];
          headers['content-length'] = String(Buffer.byteLength(body));
        }
        const outgoing = httpRequest({ createConnection: () => socket, method: request.method, path: request.url, headers: headers as Record<string, string> }, (answer) => {
          reply.raw.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(reply.raw);
        });
        outgoing.on('error', () => reply.raw.destroy());
        // The client gone: so is the relayed request (a back channel would hang on otherwise).
        reply.raw.on('close', () => socket.destroy());
        if (body !== undefined) outgoing.end(body);
        else if (request.raw.readableEnded) outgoing.end();
        else request.raw.pipe(outgoing);
        resolveRelay(true);
      });
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  }
}
