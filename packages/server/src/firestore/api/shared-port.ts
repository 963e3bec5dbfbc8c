import type { Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * One port for HTTP/1.1 and gRPC, as Google's emulator does: gRPC is HTTP/2 without TLS (h2c with
 * prior knowledge), so its connections open with the HTTP/2 preface, which no HTTP/1.1 request
 * starts with.
 */

const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
/** A client that connects and says nothing this long is handed to HTTP, whose own timeouts apply. */
const silentClientMs = 10_000;

/**
 * Makes an HTTP/1.1 server (Fastify's) also serve gRPC: each new connection's first bytes are
 * read; the HTTP/2 connection preface goes to gRPC, anything else to the server's own listeners,
 * the bytes put back first. Call it once, before or after `listen`. Close gRPC before the HTTP
 * server, whose `close` waits for every connection, the handed-over ones included; and `close` the
 * returned handle before either.
 */
export function shareHttpPort(httpServer: NetServer, target: { injectConnection(connection: Duplex): void }): SharedPort {
  const httpListeners = httpServer.listeners('connection') as Array<(socket: Socket) => void>;
  httpServer.removeAllListeners('connection');
  // Connections that have not said which protocol they speak yet: neither server knows them, so
  // neither server's close would end them (browsers keep such preconnected sockets open for long).
  const unclassified = new Set<Socket>();
  let closing = false;
  httpServer.on('connection', (socket: Socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    unclassified.add(socket);
    let seen: Buffer = Buffer.alloc(0);
    const hand = (toGrpc: boolean) => {
      clearTimeout(timer);
      unclassified.delete(socket);
      // Paused, so nothing flows to a 'data' event nobody listens to any more.
      socket.pause();
      socket.removeListener('data', onData);
      socket.removeListener('error', onError);
      if (seen.length) socket.unshift(seen);
      if (toGrpc) {
        // Node's HTTP server accepts its sockets half-open (HTTP/1.1 handles a peer's FIN itself),
        // and HTTP/2 does not: a gRPC client that ended its side (after a GOAWAY, or closing its
        // socket) left a half-open connection whose session, streams and listeners lived on. Ended
        // by the peer, the socket now ends too, and the session with it.
        socket.allowHalfOpen = false;
        // The HTTP/2 session reads what was put back, then reads the socket natively.
        target.injectConnection(socket);
      } else {
        for (const listener of httpListeners) listener.call(httpServer, socket);
        // The HTTP parser gets the put-back bytes as 'data' once the socket flows again.
        socket.resume();
      }
    };
    const onData = (chunk: Buffer) => {
      seen = seen.length ? Buffer.concat([seen, chunk]) : chunk;
      const compared = Math.min(seen.length, preface.length);
      if (!seen.subarray(0, compared).equals(preface.subarray(0, compared))) hand(false);
      else if (seen.length >= preface.length) hand(true);
    };
    const onError = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(() => hand(false), silentClientMs);
    timer.unref();
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', () => {
      clearTimeout(timer);
      unclassified.delete(socket);
    });
  });
  return {
    close() {
      closing = true;
      for (const socket of unclassified) socket.destroy();
      unclassified.clear();
    },
  };
}

export interface SharedPort {
  /** Ends the connections not yet handed to either server, and every new one; call before closing both. */
  close(): void;
}
