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
