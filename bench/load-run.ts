/** One autocannon run as the bench describes it: what the load client process (or, on request, the bench process itself) runs. */
import autocannon from 'autocannon';

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
}

export async function runAutocannon(spec: LoadRun): Promise<autocannon.Result> {
  let next = 0;
  const pick = (): string => spec.bodies[next++ % spec.bodies.length] ?? '';
  return autocannon({
    url: spec.url,
    title: spec.title,
    connections: spec.connections,
    ...(spec.amount === undefined ? { duration: spec.seconds } : { amount: spec.amount }),
    pipelining: 1,
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
