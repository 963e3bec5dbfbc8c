import autocannon from 'autocannon';
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
  /** Request bodies, used in turn across all connections so the load spreads over every user. */
  bodies: readonly string[];
}

async function once(target: LoadTarget, connections: number, seconds: number): Promise<autocannon.Result> {
  let next = 0;
  const pick = (): string => target.bodies[next++ % target.bodies.length] ?? '';
  const result = await autocannon({
    url: target.url,
    title: target.title,
    connections,
    duration: seconds,
    pipelining: 1,
    timeout: 30,
    requests: [
      {
        method: target.method,
        path: target.path,
        headers: target.headers,
        body: pick(),
        setupRequest: (request) => ({ ...request, body: pick() }),
      },
    ],
  });
  return result;
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

/** A warm-up run (checked, not counted), then the measured autocannon run. */
export async function measureLoad(target: LoadTarget, settings: LoadSettings): Promise<Rate> {
  if (target.bodies.length === 0) throw new Error(`${target.title}: no request bodies`);
  if (settings.warmupSeconds > 0) assertClean('warm-up', target, await once(target, settings.connections, settings.warmupSeconds));
  const cpu = process.cpuUsage();
  const result = await once(target, settings.connections, settings.seconds);
  const cpuMs = cpuMsSince(cpu);
  assertClean('measured', target, result);
  return {
    perSecond: result['2xx'] / result.duration,
    ops: result['2xx'],
    seconds: result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMsPerOp: cpuMs / Math.max(1, result['2xx']),
  };
}
