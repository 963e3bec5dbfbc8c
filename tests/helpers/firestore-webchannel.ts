/**
 * The WebChannel transport (`/google.firestore.v1.Firestore/{Listen|Write}/channel`) spoken raw over HTTP, as
 * the closure client in the browser SDK speaks it, for tests/firestore-webchannel-*.test.ts: a server with
 * Hearth's real Firestore stack (SQLite documents, FirestoreStreams, FirestoreAccess) on its own Fastify app, so
 * the timings can be shortened, and a client: responses read as they arrive, `<len>\n<json>` frames cut exactly
 * as the closure client cuts them, the handshake, forward-channel POSTs and back channels of a session.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { FirestoreAccess } from '../../packages/server/src/firestore/api/access.js';
import { FirestoreGuard } from '../../packages/server/src/firestore/security/guard.js';
import { RulesRegistry } from '../../packages/server/src/firestore/security/rules-registry.js';
import { registerWebChannelRoutes, type WebChannelOptions, type WebChannelServer } from '../../packages/server/src/firestore/api/webchannel.js';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import { FirestoreStreams } from '../../packages/server/src/firestore/streams/streams.js';
import { createHttpApp } from '../../packages/server/src/http/app.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { tempDataDir } from './hearth.js';

export const project = 'demo-wc';
export const database = `projects/${project}/databases/(default)`;
export const docName = (path: string) => `${database}/documents/${path}`;
export const owner = 'Bearer owner';

export interface ChannelServer {
  port: number;
  channels: WebChannelServer;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Hearth's Firestore stack behind the WebChannel routes: `Bearer owner` is the admin, `Bearer user` a signed-in user who may not touch data. */
export async function startChannelServer(options: WebChannelOptions): Promise<ChannelServer> {
  const dataDir = tempDataDir();
  const app = await createHttpApp(pino({ level: 'silent' }));
  const store = new SqliteStore(join(dataDir, 'hearth.sqlite'));
  const documents = new DocumentDatabase(store.documents());
  const access = new FirestoreAccess({
    isAdmin: (authorization) => authorization === owner,
    verifyIdToken: async (_projectId, token) => {
      if (token === 'user') return { sub: 'u1', user_id: 'u1' } as never;
      throw new Error('not a token');
    },
    // No rules released and not --dev: closed to everyone but the admin.
    dev: false,
    guard: new FirestoreGuard(new RulesRegistry(store.rules(), pino({ level: 'silent' })), documents, { dev: false, logger: pino({ level: 'silent' }) }),
  });
  const streams = new FirestoreStreams(documents, access);
  const channels = await registerWebChannelRoutes(app, streams, access, options);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    channels,
    app,
    async close() {
      await app.close();
      streams.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---- raw HTTP -------------------------------------------------------------------------------------

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A response read as it arrives (back channels stay open). */
export class Reader {
  status = 0;
  headers: IncomingHttpHeaders = {};
  text = '';
  done = false;
  readonly chunks: Array<{ at: number; text: string }> = [];
  readonly ended: Promise<void>;
  private readonly started = Date.now();
  private waiters: Array<() => void> = [];
  private abortRequest: () => void = () => undefined;

  constructor(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}) {
    this.ended = new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method, path, agent: false, headers: body === undefined ? headers : { 'content-type': 'application/x-www-form-urlencoded', ...headers } }, (res) => {
        this.status = res.statusCode ?? 0;
        this.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          this.text += chunk;
          this.chunks.push({ at: Date.now() - this.started, text: chunk });
          this.wake();
        });
        res.on('end', () => {
          this.done = true;
          this.wake();
          resolve();
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      this.abortRequest = () => req.destroy();
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  abort(): void {
    this.abortRequest();
  }

  /** Waits until the frames received so far satisfy `test`. */
  async until(test: (frames: Frame[]) => boolean, ms = 3000, what = 'the expected frames'): Promise<Frame[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const frames = parseFrames(this.text, true);
      if (test(frames)) return frames;
      if (this.done) assert.fail(`the response ended without ${what}: ${JSON.stringify(this.text)}`);
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`no ${what} within ${ms} ms: ${JSON.stringify(this.text)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

export async function call(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const reader = new Reader(port, method, path, body, headers);
  await reader.ended;
  return { status: reader.status, headers: reader.headers, text: reader.text };
}

export interface Frame {
  /** The declared length. */
  length: number;
  raw: string;
  json: any;
}

/**
 * Splits `<len>\n<json>…` exactly as the closure client does (ChannelRequest.getNextChunk_): the
 * length is counted in UTF-16 code units of the response text. Strict: anything left over fails,
 * unless `partial` (a stream still being received).
 */
export function parseFrames(text: string, partial = false): Frame[] {
  const frames: Frame[] = [];
  let at = 0;
  while (at < text.length) {
    const newline = text.indexOf('\n', at);
    if (newline < 0 && partial) break;
    assert.ok(newline > at, `no length line at ${at} in ${JSON.stringify(text)}`);
    const lengthText = text.slice(at, newline);
    assert.match(lengthText, /^\d+$/, `bad length ${JSON.stringify(lengthText)}`);
    const length = Number(lengthText);
    if (newline + 1 + length > text.length && partial) break;
    assert.ok(newline + 1 + length <= text.length, `frame of ${length} runs past the end of ${JSON.stringify(text)}`);
    const raw = text.slice(newline + 1, newline + 1 + length);
    frames.push({ length, raw, json: JSON.parse(raw) });
    at = newline + 1 + length;
  }
  return frames;
}

/** The arrays of back-channel frames, flattened: [[id, payload], …]. */
export function arrays(frames: Frame[]): Array<[number, unknown]> {
  return frames.flatMap((frame) => (frame.json as Array<[number, [unknown]]>).map(([id, data]) => [id, data[0]] as [number, unknown]));
}

export const payloads = (frames: Frame[]) => arrays(frames).map(([, payload]) => payload);
export const isNoop = (payload: unknown) => payload === 'noop';
export const isWriteResponse = (payload: unknown): boolean => typeof payload === 'object' && payload !== null && 'writeResults' in payload;

// ---- the protocol ---------------------------------------------------------------------------------

export type Kind = 'Listen' | 'Write';

/** A channel's path; `prefix` names another server path than the SDKs' (the console's own channel). */
export function channelPath(kind: Kind, params: Record<string, string | number>, db = database, prefix = ''): string {
  const query = new URLSearchParams({ VER: '8', database: db, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])), zx: Math.random().toString(36).slice(2), t: '1' });
  return `${prefix}/google.firestore.v1.Firestore/${kind}/channel?${query}`;
}

export function mapsBody(ofs: number, messages: unknown[]): string {
  return [`count=${messages.length}`, `ofs=${ofs}`, ...messages.map((m, i) => `req${i}___data__=${encodeURIComponent(typeof m === 'string' ? m : JSON.stringify(m))}`)].join('&');
}

function headerBlock(authorization: string | undefined): string {
  return `X-Goog-Api-Client:gl-js/ fire/12.19.0\r\nContent-Type:text/plain\r\n${authorization ? `Authorization:${authorization}\r\n` : ''}`;
}

export class Session {
  private rid = 1000;
  constructor(
    readonly server: ChannelServer,
    readonly kind: Kind,
    readonly sid: string,
    /** The database the session's URLs name (the browser SDK puts it on every request). */
    readonly db = database,
  ) {}

  forward(aid: number, ofs: number, messages: unknown[]): Promise<Answer> {
    return call(this.server.port, 'POST', channelPath(this.kind, { SID: this.sid, RID: ++this.rid, AID: aid }, this.db), mapsBody(ofs, messages));
  }

  back(aid: number, ci: 0 | 1, extra: Record<string, string | number> = {}): Reader {
    return new Reader(this.server.port, 'GET', channelPath(this.kind, { RID: 'rpc', SID: this.sid, AID: aid, CI: ci, TYPE: 'xmlhttp', ...extra }, this.db));
  }

  terminate(): Promise<Answer> {
    return call(this.server.port, 'POST', channelPath(this.kind, { SID: this.sid, RID: ++this.rid, TYPE: 'terminate' }, this.db), '', { 'content-type': 'text/plain;charset=UTF-8' });
  }
}

export async function handshake(server: ChannelServer, kind: Kind, first: unknown, authorization: string | undefined = owner, db = database): Promise<{ session: Session; answer: Answer }> {
  const body = `headers=${encodeURIComponent(headerBlock(authorization))}&${mapsBody(0, [first])}`;
  const answer = await call(server.port, 'POST', channelPath(kind, { RID: 4242, CVER: 22, 'X-HTTP-Session-Id': 'gsessionid' }, db), body, { origin: 'http://app.example' });
  assert.equal(answer.status, 200, answer.text);
  const [frame] = parseFrames(answer.text);
  const sid = (frame!.json as [[number, [string, string]]])[0][1][1];
  return { session: new Session(server, kind, sid, db), answer };
}

export const writeHandshake = { database };
export const setWrite = (path: string, fields: Record<string, unknown>, token = 'MA==') => ({ streamToken: token, writes: [{ update: { name: docName(path), fields } }] });

export function forwardAnswer(answer: Answer): [number, number, number] {
  assert.equal(answer.status, 200, answer.text);
  const frames = parseFrames(answer.text);
  assert.equal(frames.length, 1);
  return frames[0]!.json as [number, number, number];
}

// ---- the server of a test file ------------------------------------------------------------------------

/** Set by useChannelServer's `before`. */
export let server: ChannelServer;

/** Starts `server` with short timings (a 600 ms keepalive and long poll, 1.5 s back channels, 256 KiB bodies) before the file's tests. */
export function useChannelServer(): void {
  before(async () => {
    server = await startChannelServer({ keepaliveMs: 600, backChannelMaxMs: 1500, longPollTimeoutMs: 600, maxBodyBytes: 256 * 1024 });
  });

  after(async () => {
    await server.close();
  });
}
