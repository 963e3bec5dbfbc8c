/**
 * Request fuzzing: bodies generated from the identity API's JSON schemas (each property given a
 * value of its type, then wrong types, nulls, unknown fields, huge and odd strings, deep nesting)
 * and from Firestore request shapes mutated node by node; raw gRPC frames over HTTP/2. Every answer
 * must come within 5 s, never be a 5xx (gRPC: never INTERNAL or UNKNOWN), and JSON errors must
 * have Google's shape.
 */
import { connect } from 'node:http2';

export type Rand = () => number;

/** A small seeded generator (mulberry32), so a failure names a seed that reproduces it. */
export function seeded(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

const oddStrings = ['', ' ', 'a'.repeat(70_000), '\u0000', '\ud800', '💥'.repeat(50), '../../etc/passwd', '<script>x</script>', '%00%ff', 'projects/x/databases/(default)/documents/a/b', 'a@b', '@', 'NaN', '-1', '1e999'];
const oddNumbers = [0, -1, 1.5, 1e308, -1e308, 2 ** 63, Number.MAX_SAFE_INTEGER + 2];

/** Any JSON value, a few levels deep. */
export function randomJson(rand: Rand, depth = 0): unknown {
  const kind = Math.floor(rand() * (depth > 3 ? 5 : 7));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return pick(rand, oddNumbers);
    case 3:
    case 4:
      return pick(rand, oddStrings);
    case 5:
      return Array.from({ length: Math.floor(rand() * 4) }, () => randomJson(rand, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: Math.floor(rand() * 4) }, () => [pick(rand, ['a', 'fields', 'name', 'value', '__proto__', 'constructor', 'x.y']), randomJson(rand, depth + 1)]));
  }
}

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema };

/** A value that fits a schema (the base every mutation starts from). */
function fitting(rand: Rand, schema: JsonSchema): unknown {
  const types = Array.isArray(schema.type) ? schema.type.filter((t) => t !== 'null') : schema.type ? [schema.type] : ['string'];
  switch (types[0]) {
    case 'boolean':
      return rand() < 0.5;
    case 'integer':
    case 'number':
      return Math.floor(rand() * 100);
    case 'array':
      return [fitting(rand, schema.items ?? {})];
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).filter(() => rand() < 0.5).map(([k, s]) => [k, fitting(rand, s)]));
    default:
      return pick(rand, ['user@example.com', 'secret12', 'PASSWORD_RESET', 'abc', 'https://example.com/x']);
  }
}

/** A body from an object schema: fitting values, then one to three mutations. */
export function bodyFromSchema(rand: Rand, schema: JsonSchema): unknown {
  const body = fitting(rand, { ...schema, properties: schema.properties }) as Record<string, unknown>;
  const names = Object.keys(schema.properties ?? {});
  for (let m = 1 + Math.floor(rand() * 3); m > 0; m--) {
    const choice = rand();
    if (choice < 0.45 && names.length) body[pick(rand, names)] = randomJson(rand);
    else if (choice < 0.6) body[pick(rand, ['unknownField', 'kind', '__proto__', ''])] = randomJson(rand);
    else if (choice < 0.7) return randomJson(rand);
    else if (names.length) body[pick(rand, names)] = pick(rand, oddStrings);
  }
  return body;
}

/** A copy of `value` with one node somewhere replaced by random JSON. */
export function mutateJson(rand: Rand, value: unknown): unknown {
  if (rand() < 0.2 || value === null || typeof value !== 'object') return randomJson(rand);
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  const keys = Object.keys(copy);
  if (keys.length === 0 || rand() < 0.15) {
    copy[Array.isArray(copy) ? copy.length : pick(rand, ['extra', 'fields', 'where'])] = randomJson(rand);
    return copy;
  }
  const key = pick(rand, keys);
  copy[key] = mutateJson(rand, copy[key]);
  return copy;
}

export interface Probe {
  family: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Finding {
  probe: Probe;
  problem: string;
}

const answerWithinMs = 5000;

/** Sends one request and says what is wrong with the answer, if anything. */
export async function check(baseUrl: string, probe: Probe, googleShape: boolean): Promise<string | undefined> {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${probe.path}`, { method: probe.method, headers: probe.headers, body: probe.body, signal: AbortSignal.timeout(answerWithinMs) });
  } catch (err) {
    return `no answer within ${answerWithinMs} ms: ${(err as Error).message}`;
  }
  const text = await response.text().catch((err: Error) => `<<body failed: ${err.message}>>`);
  if (response.status >= 500) return `${response.status}: ${text.slice(0, 300)}`;
  if (response.status >= 400 && googleShape && (response.headers.get('content-type') ?? '').includes('json')) {
    try {
      const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; status?: unknown } };
      if (typeof parsed.error?.code !== 'number' || typeof parsed.error.message !== 'string') return `not Google's error shape: ${text.slice(0, 300)}`;
      if (parsed.error.code !== response.status) return `error.code ${String(parsed.error.code)} but HTTP ${response.status}`;
    } catch {
      return `error body is not JSON: ${text.slice(0, 300)}`;
    }
  }
  return undefined;
}

/** One gRPC call with a raw (likely malformed) message; returns what is wrong, if anything. */
export async function checkGrpc(baseUrl: string, method: string, message: Buffer, authorization: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const session = connect(baseUrl);
    const timer = setTimeout(() => {
      session.destroy();
      resolve(`no gRPC status within ${answerWithinMs} ms`);
    }, answerWithinMs);
    session.on('error', (err) => {
      clearTimeout(timer);
      resolve(`connection error: ${err.message}`);
    });
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt8(0, 0);
    frame.writeUInt32BE(message.length, 1);
    message.copy(frame, 5);
    const stream = session.request({ ':method': 'POST', ':path': `/google.firestore.v1.Firestore/${method}`, 'content-type': 'application/grpc', te: 'trailers', authorization });
    let status: string | undefined;
    let statusMessage = '';
    const readStatus = (headers: Record<string, unknown>) => {
      if (headers['grpc-status'] !== undefined) status = String(headers['grpc-status']);
      if (headers['grpc-message'] !== undefined) statusMessage = decodeURIComponent(String(headers['grpc-message']));
    };
    stream.on('response', readStatus);
    stream.on('trailers', readStatus);
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.on('close', () => {
      clearTimeout(timer);
      session.close();
      // 2 UNKNOWN and 13 INTERNAL are the server failing, the gRPC twins of a 500.
      resolve(status === undefined ? 'no grpc-status' : status === '2' || status === '13' ? `grpc-status ${status}: ${statusMessage}` : undefined);
    });
    stream.end(frame);
  });
}
