/** One autocannon run as the bench describes it: what the load client process (or, on request, the bench process itself) runs. */
import autocannon from 'autocannon';
import net from 'node:net';

export interface LoadRun {
  url: string;
  title: string;
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  bodies: string[];
  connections: number;
  seconds: number;
  /** A number of requests: the run ends when every one is answered (`seconds` is then ignored). */
  amount?: number;
  /**
   * Loopback source addresses the connections come from, in turn (127.0.0.2, ...: all of 127/8 is
   * this machine): clients at several addresses, as `--workers` spreads them. Default: one address.
   */
  sourceAddresses?: string[];
}

export async function runAutocannon(spec: LoadRun): Promise<autocannon.Result> {
  if (!spec.sourceAddresses?.length) return autocannonRun(spec);
  // autocannon has no source address option; its client calls net.connect(port, host), so that call
  // is given the next address for the run's length (this is the load client's own process).
  const original = net.connect;
  let turn = 0;
  const addresses = spec.sourceAddresses;
  const connectFrom = ((port: number, host: string) => original({ port, host, localAddress: addresses[turn++ % addresses.length]! })) as typeof net.connect;
  net.connect = connectFrom;
  try {
    return await autocannonRun(spec);
  } finally {
    net.connect = original;
  }
}

async function autocannonRun(spec: LoadRun): Promise<autocannon.Result> {
  let next = 0;
  const pick = (): string => spec.bodies[next++ % spec.bodies.length] ?? '';
  return autocannon({
    url: spec.url,
    title: spec.title,
    connections: spec.connections,
    ...(spec.amount === undefined ? { duration: spec.seconds } : { amount: spec.amount }),
    pipelining: 1,
    // autocannon ends a run (and stamps its duration) only on its sampling tick: at the default 1 s,
    // a run of a number of requests was charged up to a second it did not use (a 5 s run read as
    // up to 6 s), so rates came out up to a sixth low, and by chance.
    sampleInt: 10,
    timeout: 30,
    requests: [
      {
        method: spec.method,
        path: spec.path,
        headers: spec.headers,
        body: pick(),
        setupRequest: (request) => ({ ...request, body: pick() }),
      },
    ],
  });
}
