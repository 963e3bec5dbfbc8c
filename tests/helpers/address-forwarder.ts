import { connect, createServer, type Socket } from 'node:net';
import { stickyWorker } from '../../packages/server/src/workers/worker-count.js';

/**
 * A local port whose connections reach `targetPort` from another loopback source address
 * (127.0.0.2, ...: all of 127/8 is this machine), so SDK clients, which cannot pick their source
 * address, appear to the server as a client at `sourceAddress`.
 */
export interface AddressForwarder {
  port: number;
  close(): Promise<void>;
}

export async function forwardFrom(sourceAddress: string, targetPort: number): Promise<AddressForwarder> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port: targetPort, localAddress: sourceAddress });
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    }
    client.pipe(upstream);
    upstream.pipe(client);
    // One side gone (a killed server process, a client that left): the other goes too.
    client.once('error', () => upstream.destroy());
    upstream.once('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Loopback source addresses, one per entry, each served by the worker (0-based, of `workers`) the entry names. */
export function addressesOfWorkers(wanted: number[], workers = 2): string[] {
  const chosen: string[] = [];
  for (let last = 2; chosen.length < wanted.length; last++) {
    const address = `127.0.0.${last}`;
    if (stickyWorker(address, workers) === wanted[chosen.length]) chosen.push(address);
  }
  return chosen;
}
