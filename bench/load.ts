import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type autocannon from 'autocannon';
import type { ClientMessage } from './load-client.js';
import { runAutocannon, type LoadRun } from './load-run.js';
import { cpuMsSince, type Rate } from './stats.js';

export interface LoadSettings {
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

export interface LoadTarget {
  title: string;
  /** Origin, e.g. http://127.0.0.1:1234 */
  url: string;
  method: 'POST' | 'GET';
  /** Path with query string. */
  path: string;
  headers: Record<string, string>;
  /**
   * Request bodies, used in turn across all connections so the load spreads over every user; or a
   * function drawing a fresh list for each run (bodies that may be used once, such as TOTP codes),
   * given how many requests the run makes (for a timed run, an estimate: 1,000 a second).
   */
  bodies: readonly string[] | ((count: number) => readonly string[]);
  /** Requests in the warm-up when bodies are drawn (default a hundred per connection). */
  warmupRequests?: number;
  /** Loopback source addresses the connections come from, in turn (LoadRun.sourceAddresses). */
  sourceAddresses?: string[];
}

/**
 * The load generator runs in a child process of its own (bench/load-client.ts). It used to run
 * inside the bench process, beside the server it loaded: the client's parsing and socket work then
 * took CPU from the server (a bare Fastify round trip alone capped some ratios near 0.4), and took
 * a different share from each server according to how much work each left it.
 */
class LoadClient {
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<LoadClient> {
    const child = fork(resolve(import.meta.dirname, 'load-client.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const client = new LoadClient(child);
    await client.next('ready');
    return client;
  }

  private next(kind: ClientMessage['kind']): Promise<ClientMessage> {
    return new Promise((resolvePromise, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the load client exited (${code}) before answering`));
      this.child.once('exit', onExit);
      this.child.once('message', (message: ClientMessage) => {
        this.child.off('exit', onExit);
        if (message.kind === 'error') reject(new Error(`load client: ${message.message}`));
        else if (message.kind !== kind) reject(new Error(`load client answered ${message.kind}, not ${kind}`));
        else resolvePromise(message);
      });
    });
  }

  async run(spec: LoadRun): Promise<{ result: autocannon.Result; clientCpuMs: number }> {
    const answer = this.next('result');
    this.child.send(spec);
    const message = await answer;
    if (message.kind !== 'result') throw new Error('unreachable');
    return { result: message.result, clientCpuMs: message.cpuMs };
  }

  close(): void {
    if (this.child.connected) this.child.disconnect();
  }
}

/**
 * BENCH_LOAD_CLIENT=in-process: the old layout (autocannon in the bench process, beside the server),
 * kept only to measure what moving the client out changed; its client CPU counts as the server's.
 */
const inProcess = process.env.BENCH_LOAD_CLIENT === 'in-process';

export function loadClientLine(): string {
  return inProcess
    ? 'load client: autocannon IN the bench process (BENCH_LOAD_CLIENT=in-process), sharing the server\'s event loop and CPU'
    : 'load client: autocannon in a child process of its own (bench/load-client.ts), the same for Hearth and the trivial route';
}

/** The Firestore bench's line on how its commits are sent. */
export function commitClientLine(): string {
  return inProcess
    ? 'autocannon IN the bench process (BENCH_LOAD_CLIENT=in-process), sharing Hearth\'s event loop and CPU'
    : 'autocannon in a child process of its own (bench/load-client.ts), for Hearth and the emulator alike';
}

async function startClient(): Promise<Pick<LoadClient, 'run' | 'close'>> {
  if (!inProcess) return LoadClient.start();
  return {
    run: async (run) => ({ result: await runAutocannon(run), clientCpuMs: 0 }),
    close: () => undefined,
  };
}

function spec(target: LoadTarget, connections: number, seconds: number, amount?: number): LoadRun {
  const drawn = typeof target.bodies === 'function';
  const bodies = typeof target.bodies === 'function' ? target.bodies(amount ?? Math.ceil(seconds * 1000)) : target.bodies;
  if (bodies.length === 0) throw new Error(`${target.title}: no request bodies`);
  // Bodies usable once: never more requests than bodies (a reused one is refused as a replay).
  const count = drawn && amount !== undefined ? Math.min(amount, bodies.length) : amount;
  return { url: target.url, title: target.title, method: target.method, path: target.path, headers: target.headers, bodies: [...bodies], connections, seconds, ...(count === undefined ? {} : { amount: count }), ...(target.sourceAddresses ? { sourceAddresses: target.sourceAddresses } : {}) };
}

/** Throws unless every response was 2xx: a failing server must not report a "fast" number. */
function assertClean(phase: string, target: LoadTarget, result: autocannon.Result): void {
  const problems: string[] = [];
  if (result.non2xx !== 0) problems.push(`${result.non2xx} non-2xx (status counts ${JSON.stringify(result.statusCodeStats)})`);
  if (result.errors !== 0) problems.push(`${result.errors} errors`);
  if (result.timeouts !== 0) problems.push(`${result.timeouts} timeouts`);
  // A warm-up may end before a slow request (scrypt on a busy machine) finishes; the measured run may not.
  if (result['2xx'] === 0 && phase !== 'warm-up') problems.push('no 2xx response at all');
  if (problems.length > 0) throw new Error(`${target.title} (${phase}): ${problems.join(', ')}`);
}

/**
 * A warm-up run (checked, not counted), then the measured run, from a separate client process.
 *
 * The measured run is a number of requests (the warm-up's rate times `seconds`), not a duration: a
 * run cut off by time drops the answers still in flight while the server goes on working for them,
 * into the next run. For slow requests that skewed everything: ten sign-ins in flight are over a
 * second of scrypt work, charged to a 5-second run that counted none of it, and left behind for the
 * next. The in-process baselines (stats.ts runConcurrent) finish and count what is in flight too.
 * Between the two runs one request is sent alone and answered, so what the warm-up left queued on
 * the server (the thread pool is first in, first out) is done before the measured run starts.
 */
export async function measureLoad(target: LoadTarget, settings: LoadSettings): Promise<Rate> {
  const client = await startClient();
  try {
    let amount: number | undefined;
    if (settings.warmupSeconds > 0) {
      // Bodies usable once are drawn by count, so the warm-up is a count too (a hundred per connection).
      const warmAmount = typeof target.bodies === 'function' ? (target.warmupRequests ?? settings.connections * 100) : undefined;
      const warm = (await client.run(spec(target, settings.connections, settings.warmupSeconds, warmAmount))).result;
      assertClean('warm-up', target, warm);
      assertClean('drain', target, (await client.run(spec(target, 1, settings.warmupSeconds, 1))).result);
      const rate = warm['2xx'] / Math.max(warm.duration, 0.01);
      amount = Math.max(settings.connections * 5, Math.round(rate * settings.seconds));
    }
    const run = spec(target, settings.connections, settings.seconds, amount);
    const cpu = process.cpuUsage();
    const { result, clientCpuMs } = await client.run(run);
    const cpuMs = cpuMsSince(cpu);
    assertClean('measured', target, result);
    const ops = Math.max(1, result['2xx']);
    return {
      perSecond: result['2xx'] / result.duration,
      ops: result['2xx'],
      seconds: result.duration,
      p50: result.latency.p50,
      p99: result.latency.p99,
      cpuMsPerOp: cpuMs / ops,
      clientCpuMsPerOp: inProcess ? undefined : clientCpuMs / ops,
    };
  } finally {
    client.close();
  }
}
