/**
 * The worker: runs in a child process of its own, with the code base's folder as its working
 * directory, never in Hearth's process. It loads the code base as the Firebase CLI's emulator
 * runtime does (the package's main module, CommonJS or ES module), serves a loopback HTTP port,
 * and calls an export when Hearth asks:
 *   POST /__hearth/events/{name}   a background function: `{ signature: 'cloudevent', event }`
 *                                  (event.data as `{ base64 }` becomes a Buffer, as Eventarc hands
 *                                  protobuf bytes) or `{ signature: 'event', data, context }` (v1)
 *   ANY  /__hearth/http/{name}/... an HTTPS or callable function, given the request as Express gives it
 *   GET  /__hearth/ping            a plain round trip (the bench's baseline)
 * Every request must carry the key Hearth handed over the IPC channel (never in the environment,
 * which the code base can read): another local process cannot invoke functions through the port.
 * Its express is the one firebase-functions itself depends on, resolved from the code base.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { presentCredential } from './outbound-credential.js';

interface StartMessage {
  type: 'start';
  key: string;
  /** What firebase-admin presents to Hearth instead of the emulator's `Bearer owner` (outbound-credential.ts). */
  credential?: string;
}

type Handler = ((...args: unknown[]) => unknown) & { __endpoint?: unknown; run?: (...args: unknown[]) => unknown };

interface ExpressRequest extends IncomingMessage {
  body?: unknown;
  rawBody?: Buffer;
  url: string;
}
interface ExpressResponse extends ServerResponse {
  status(code: number): ExpressResponse;
  json(body: unknown): void;
  send(body: unknown): void;
}
type Middleware = (req: ExpressRequest, res: ExpressResponse, next: (error?: unknown) => void) => void;
interface ExpressApp {
  use(...handlers: unknown[]): void;
  listen(port: number, host: string, ready: () => void): { address(): unknown; close(): void };
}
interface ExpressModule {
  (): ExpressApp;
  json(options: object): Middleware;
  raw(options: object): Middleware;
  text(options: object): Middleware;
  urlencoded(options: object): Middleware;
}

const codeBase = resolve(process.cwd());

/**
 * Each invocation's printed lines (console.log, firebase-functions' logger) go to Hearth over IPC
 * with the invocation's id (the `x-hearth-invocation` header), as well as to the worker's own output.
 */
const invocation = new AsyncLocalStorage<string>();
for (const name of ['stdout', 'stderr'] as const) {
  const stream = process[name];
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const id = invocation.getStore();
    if (id && process.connected) process.send?.({ type: 'log', invocation: id, stream: name, text: String(chunk).slice(0, 16_384) });
    return write(chunk, ...rest);
  }) as typeof stream.write;
}

function within<T>(req: IncomingMessage, work: () => T): T {
  const id = req.headers['x-hearth-invocation'];
  return typeof id === 'string' && id ? invocation.run(id, work) : work();
}
const requireFromCodeBase = createRequire(join(codeBase, 'package.json'));

async function loadCodeBase(): Promise<Record<string, unknown>> {
  try {
    return requireFromCodeBase(codeBase) as Record<string, unknown>;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ERR_REQUIRE_ESM' && code !== 'ERR_REQUIRE_ASYNC_MODULE') throw error;
    return (await import(pathToFileURL(requireFromCodeBase.resolve(codeBase)).href)) as Record<string, unknown>;
  }
}

/** An export by its manifest name: `group-fn` is `exports.group.fn`, as the CLI names grouped functions. */
function findExport(module: Record<string, unknown>, name: string): Handler | undefined {
  let value: unknown = module;
  for (const part of name.split('-')) {
    // Own properties only: `constructor` or `__proto__` name no export.
    if (value === null || (typeof value !== 'object' && typeof value !== 'function') || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return typeof value === 'function' ? (value as Handler) : undefined;
}

function fromBase64Data(event: Record<string, unknown>): Record<string, unknown> {
  const data = event.data as { base64?: unknown } | undefined;
  if (data && typeof data === 'object' && typeof data.base64 === 'string') return { ...event, data: Buffer.from(data.base64, 'base64') };
  return event;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.stack ?? error.message;
  return String(error);
}

async function main(key: string): Promise<void> {
  const module = await loadCodeBase();
  // Resolved from firebase-functions' own module: its express, whichever version it depends on.
  const functionsRequire = createRequire(requireFromCodeBase.resolve('firebase-functions'));
  const express = functionsRequire('express') as ExpressModule;
  const app = express();
  app.use((req: ExpressRequest, res: ExpressResponse, next: () => void) => {
    if (req.headers['x-hearth-worker-key'] !== key) {
      res.status(403).json({ error: 'not from Hearth' });
      return;
    }
    next();
  });
  const keepRaw = (req: ExpressRequest, _res: unknown, buffer: Buffer) => {
    req.rawBody = buffer;
  };
  app.use(express.json({ limit: '32mb', verify: keepRaw }));
  app.use(express.raw({ type: 'application/octet-stream', limit: '32mb', verify: keepRaw }));
  app.use(express.text({ limit: '32mb', verify: keepRaw }));
  app.use(express.urlencoded({ extended: true, limit: '32mb', verify: keepRaw }));
  app.use(async (req: ExpressRequest, res: ExpressResponse) => {
    const match = /^\/__hearth\/(events|http|ping)(?:\/([^/?]+))?(.*)$/.exec(req.url);
    if (!match) {
      res.status(404).json({ error: 'no such path' });
      return;
    }
    if (match[1] === 'ping') {
      res.json({ ok: true });
      return;
    }
    const name = decodeURIComponent(match[2] ?? '');
    const handler = findExport(module, name);
    if (!handler) {
      res.status(404).json({ error: `the code base exports no function ${name}` });
      return;
    }
    if (match[1] === 'http') {
      // The function sees the path below its name, as under https://REGION-PROJECT.cloudfunctions.net/NAME.
      const rest = match[3] ?? '';
      req.url = rest.startsWith('/') ? rest : `/${rest}`;
      try {
        await within(req, () => handler(req, res));
      } catch (error) {
        console.error(errorText(error));
        if (!res.headersSent) res.status(500).send('Internal Server Error');
      }
      return;
    }
    const body = req.body as { signature?: unknown; event?: unknown; data?: unknown; context?: unknown } | undefined;
    try {
      if (body?.signature === 'cloudevent' && body.event && typeof body.event === 'object') {
        await within(req, () => handler(fromBase64Data(body.event as Record<string, unknown>)));
      } else if (body?.signature === 'event') {
        await within(req, () => handler(body.data, body.context));
      } else {
        res.status(400).json({ error: 'signature must be cloudevent or event' });
        return;
      }
      res.json({ ok: true });
    } catch (error) {
      within(req, () => console.error(errorText(error)));
      res.status(500).json({ error: error instanceof Error ? error.message : String(error) });
    }
  });
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    process.send?.({ type: 'ready', port: address.port });
  });
}

process.once('message', (message: StartMessage) => {
  if (message?.type !== 'start' || typeof message.key !== 'string') process.exit(2);
  // Before the code base loads: its firebase-admin's connections are made with the patched modules.
  const hearthHost = process.env.FIRESTORE_EMULATOR_HOST;
  if (typeof message.credential === 'string' && hearthHost) presentCredential(message.credential, hearthHost);
  main(message.key).catch((error: unknown) => {
    console.error(`the code base failed to load: ${errorText(error)}`);
    process.exit(3);
  });
});
// Hearth gone (its IPC channel closed): nothing will call this worker again.
process.on('disconnect', () => process.exit(0));
