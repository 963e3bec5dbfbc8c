/**
 * The WebChannel transport (`/google.firestore.v1.Firestore/{Listen|Write}/channel`) spoken raw over
 * HTTP, as the closure client in the browser SDK speaks it: the handshake, forward-channel POSTs and
 * their acknowledgements, back channels that stream (CI=0) or long-poll (CI=1), noops, re-sending
 * what the client has not acknowledged, terminate, session expiry and bounds, hostile input, and the
 * stream error the SDK turns into `permission-denied`. The byte shapes asserted here were compared
 * with Google's emulator (research/firestore-semantics.md §6.3): `<len>\n<json>` frames whose length
 * counts UTF-16 code units, `[[0,["c",SID,"",8,12,keepalive]]]`, `[backChannel, lastArrayId, outstanding]`.
 *
 * The server is the real stack (SQLite documents, FirestoreStreams, FirestoreAccess) on its own
 * Fastify app, so the timings can be shortened: a 600 ms keepalive instead of 30 s and so on.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { FirestoreAccess } from '../packages/server/src/firestore/api/access.js';
import { registerWebChannelRoutes, type WebChannelOptions, type WebChannelServer } from '../packages/server/src/firestore/api/webchannel.js';
import { DocumentDatabase } from '../packages/server/src/firestore/core/database.js';
import { FirestoreStreams } from '../packages/server/src/firestore/streams/streams.js';
import { createHttpApp } from '../packages/server/src/http/app.js';
import { SqliteStore } from '../packages/server/src/storage/sqlite/sqlite-store.js';
import { tempDataDir } from './helpers/hearth.js';

const project = 'demo-wc';
const database = `projects/${project}/databases/(default)`;
const docName = (path: string) => `${database}/documents/${path}`;
const owner = 'Bearer owner';

interface ChannelServer {
  port: number;
  channels: WebChannelServer;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Hearth's Firestore stack behind the WebChannel routes: `Bearer owner` is the admin, `Bearer user` a signed-in user who may not touch data. */
async function startChannelServer(options: WebChannelOptions): Promise<ChannelServer> {
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
    openToUsers: false,
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

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A response read as it arrives (back channels stay open). */
class Reader {
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

async function call(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const reader = new Reader(port, method, path, body, headers);
  await reader.ended;
  return { status: reader.status, headers: reader.headers, text: reader.text };
}

interface Frame {
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
function parseFrames(text: string, partial = false): Frame[] {
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
function arrays(frames: Frame[]): Array<[number, unknown]> {
  return frames.flatMap((frame) => (frame.json as Array<[number, [unknown]]>).map(([id, data]) => [id, data[0]] as [number, unknown]));
}

const payloads = (frames: Frame[]) => arrays(frames).map(([, payload]) => payload);
const isNoop = (payload: unknown) => payload === 'noop';
const isWriteResponse = (payload: unknown): boolean => typeof payload === 'object' && payload !== null && 'writeResults' in payload;

// ---- the protocol ---------------------------------------------------------------------------------

type Kind = 'Listen' | 'Write';

function channelPath(kind: Kind, params: Record<string, string | number>, db = database): string {
  const query = new URLSearchParams({ VER: '8', database: db, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])), zx: Math.random().toString(36).slice(2), t: '1' });
  return `/google.firestore.v1.Firestore/${kind}/channel?${query}`;
}

function mapsBody(ofs: number, messages: unknown[]): string {
  return [`count=${messages.length}`, `ofs=${ofs}`, ...messages.map((m, i) => `req${i}___data__=${encodeURIComponent(typeof m === 'string' ? m : JSON.stringify(m))}`)].join('&');
}

function headerBlock(authorization: string | undefined): string {
  return `X-Goog-Api-Client:gl-js/ fire/12.19.0\r\nContent-Type:text/plain\r\n${authorization ? `Authorization:${authorization}\r\n` : ''}`;
}

class Session {
  private rid = 1000;
  constructor(
    readonly server: ChannelServer,
    readonly kind: Kind,
    readonly sid: string,
  ) {}

  forward(aid: number, ofs: number, messages: unknown[]): Promise<Answer> {
    return call(this.server.port, 'POST', channelPath(this.kind, { SID: this.sid, RID: ++this.rid, AID: aid }), mapsBody(ofs, messages));
  }

  back(aid: number, ci: 0 | 1, extra: Record<string, string | number> = {}): Reader {
    return new Reader(this.server.port, 'GET', channelPath(this.kind, { RID: 'rpc', SID: this.sid, AID: aid, CI: ci, TYPE: 'xmlhttp', ...extra }));
  }

  terminate(): Promise<Answer> {
    return call(this.server.port, 'POST', channelPath(this.kind, { SID: this.sid, RID: ++this.rid, TYPE: 'terminate' }), '', { 'content-type': 'text/plain;charset=UTF-8' });
  }
}

async function handshake(server: ChannelServer, kind: Kind, first: unknown, authorization: string | undefined = owner): Promise<{ session: Session; answer: Answer }> {
  const body = `headers=${encodeURIComponent(headerBlock(authorization))}&${mapsBody(0, [first])}`;
  const answer = await call(server.port, 'POST', channelPath(kind, { RID: 4242, CVER: 22, 'X-HTTP-Session-Id': 'gsessionid' }), body, { origin: 'http://app.example' });
  assert.equal(answer.status, 200, answer.text);
  const [frame] = parseFrames(answer.text);
  const sid = (frame!.json as [[number, [string, string]]])[0][1][1];
  return { session: new Session(server, kind, sid), answer };
}

const writeHandshake = { database };
const setWrite = (path: string, fields: Record<string, unknown>, token = 'MA==') => ({ streamToken: token, writes: [{ update: { name: docName(path), fields } }] });

function forwardAnswer(answer: Answer): [number, number, number] {
  assert.equal(answer.status, 200, answer.text);
  const frames = parseFrames(answer.text);
  assert.equal(frames.length, 1);
  return frames[0]!.json as [number, number, number];
}

// ---- tests ----------------------------------------------------------------------------------------

let server: ChannelServer;

before(async () => {
  server = await startChannelServer({ keepaliveMs: 600, backChannelMaxMs: 1500, longPollTimeoutMs: 600, maxBodyBytes: 256 * 1024 });
});

after(async () => {
  await server.close();
});

describe('handshake and the Write stream', () => {
  test('the handshake answers the c array; the back channel carries the handshake response, a noop, then each WriteResponse', async () => {
    const { session, answer } = await handshake(server, 'Write', writeHandshake);
    // The keepalive announced is this server's (600 ms); the client times a back channel out at 1.5 × it.
    assert.match(answer.text, /^50\n\[\[0,\["c","[A-Za-z0-9_-]{24}","",8,12,600\]\]\]$/);
    assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(answer.headers['x-content-type-options'], 'nosniff');
    assert.equal(answer.headers['cache-control'], 'no-cache, no-store, max-age=0, must-revalidate');
    assert.equal(answer.headers['access-control-allow-origin'], 'http://app.example');
    assert.equal(answer.headers['access-control-allow-credentials'], 'true');
    assert.equal(answer.headers['access-control-expose-headers'], 'x-client-wire-protocol, x-http-session-id, x-http-initial-response');

    const back = session.back(0, 0);
    const opened = await back.until((frames) => frames.length >= 2, 3000, 'the handshake response and a noop');
    assert.equal(back.status, 200);
    assert.equal(back.headers['x-content-type-options'], 'nosniff');
    assert.equal(opened[0]!.raw.length, opened[0]!.length);
    assert.deepEqual(arrays(opened).slice(0, 2), [
      [1, { streamId: (arrays(opened)[0]![1] as { streamId: string }).streamId, streamToken: 'MA==' }],
      [2, 'noop'],
    ]);
    assert.match(opened[0]!.raw, /^\[\[1,\[\{"streamId":"\d+","streamToken":"MA=="\}\]\]\]$/);

    assert.deepEqual(forwardAnswer(await session.forward(2, 1, [setWrite('w/one', { n: { integerValue: '1' } })])), [1, 2, 0]);
    const frames = await back.until((all) => payloads(all).some((p) => (p as { writeResults?: unknown }).writeResults), 3000, 'the WriteResponse');
    const [id, response] = arrays(frames).find(([, p]) => (p as { writeResults?: unknown }).writeResults) as [number, { streamToken: string; writeResults: Array<{ updateTime: string }>; commitTime: string }];
    assert.equal(id, 3);
    assert.equal(response.streamToken, 'MQ==');
    assert.equal(response.writeResults.length, 1);
    assert.match(response.writeResults[0]!.updateTime, /^\d{4}-\d\d-\d\dT.*Z$/);
    assert.match(response.commitTime, /^\d{4}-\d\d-\d\dT.*Z$/);
    assert.equal((await session.terminate()).status, 200);
    await back.ended;
  });

  test('forward POSTs: a retried POST is not delivered twice, and the answer counts what was sent but not acknowledged', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(0, 0);
    await back.until((frames) => arrays(frames).length >= 2);
    const write = setWrite('w/retry', { n: { integerValue: '1' } });
    forwardAnswer(await session.forward(2, 1, [write]));
    await back.until((frames) => arrays(frames).length >= 3);
    const [present, lastId, outstanding] = forwardAnswer(await session.forward(2, 1, [write]));
    assert.equal(present, 1);
    assert.equal(lastId, 3);
    const third = arrays(parseFrames(back.text)).find(([id]) => id === 3)!;
    assert.equal(outstanding, JSON.stringify([3, [third[1]]]).length, 'the unacknowledged WriteResponse, in UTF-16 units');
    // Once acknowledged nothing is outstanding; and the retried write produced no second response.
    assert.deepEqual(forwardAnswer(await session.forward(3, 2, [])), [1, 3, 0]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(payloads(parseFrames(back.text, true)).filter((p) => (p as { writeResults?: unknown }).writeResults).length, 1);
    await session.terminate();
  });

  test('the Authorization may also come in the older $httpHeaders URL parameter, or as a real bearer header', async () => {
    for (const [params, headers] of [
      [{ $httpHeaders: `Authorization:${owner}\r\n` }, {}],
      [{}, { authorization: owner }],
    ] as Array<[Record<string, string>, Record<string, string>]>) {
      const answer = await call(server.port, 'POST', channelPath('Write', { RID: 1, ...params }), mapsBody(0, [writeHandshake]), headers);
      const sid = (parseFrames(answer.text)[0]!.json as [[number, [string, string]]])[0][1][1];
      const session = new Session(server, 'Write', sid);
      forwardAnswer(await session.forward(0, 1, [setWrite('w/old-style', { n: { integerValue: '1' } })]));
      const back = session.back(0, 0);
      const frames = await back.until((all) => payloads(all).some((p) => isWriteResponse(p) || (p as { error?: unknown }).error !== undefined));
      assert.ok(payloads(frames).some(isWriteResponse), JSON.stringify(payloads(frames)));
      await session.terminate();
    }
  });

  test('maps are delivered in map-id order even when a later POST arrives first', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(0, 1);
    await back.ended;
    // Map 2 before map 1: nothing may happen until map 1 is there, then both, in order.
    forwardAnswer(await session.forward(1, 2, [setWrite('w/order', { n: { integerValue: '2' } }, 'MQ==')]));
    forwardAnswer(await session.forward(1, 1, [setWrite('w/order', { n: { integerValue: '1' } })]));
    const responses = session.back(1, 0);
    const frames0 = await responses.until((all) => payloads(all).filter(isWriteResponse).length >= 2);
    assert.deepEqual(payloads(frames0).filter(isWriteResponse).map((p) => (p as { streamToken: string }).streamToken), ['MQ==', 'Mg==']);
    // The document holds map 2's value: the writes ran in map order.
    const listen = await handshake(server, 'Listen', { database, addTarget: { documents: { documents: [docName('w/order')] }, targetId: 2 } });
    const changes = listen.session.back(0, 0);
    const frames = await changes.until((all) => payloads(all).some((p) => (p as { documentChange?: unknown }).documentChange));
    const change = payloads(frames).find((p) => (p as { documentChange?: unknown }).documentChange) as { documentChange: { document: { fields: unknown } } };
    assert.deepEqual(change.documentChange.document.fields, { n: { integerValue: '2' } });
    await listen.session.terminate();
    await session.terminate();
  });
});

describe('back channels', () => {
  test('a long poll (CI=1) answers what is queued and ends; with nothing queued it waits for the next message, or answers a noop', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const first = session.back(0, 1);
    await first.ended;
    assert.equal(first.status, 200);
    assert.deepEqual(arrays(parseFrames(first.text)).map(([id]) => id), [1]);

    // Not acknowledged (AID=0): sent again.
    const again = session.back(0, 1);
    await again.ended;
    assert.deepEqual(arrays(parseFrames(again.text)).map(([id]) => id), [1]);

    // Nothing new: a noop once the long poll times out (600 ms here), never an empty body.
    const idle = session.back(1, 1);
    await idle.ended;
    assert.deepEqual(payloads(parseFrames(idle.text)), ['noop']);
    assert.ok(idle.chunks[0]!.at >= 500, `answered after ${idle.chunks[0]!.at} ms`);
    assert.deepEqual(forwardAnswer(await session.forward(2, 1, [])), [0, 2, 0], 'no back channel open between polls');

    // A message while a poll waits is answered at once.
    const waiting = session.back(2, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(forwardAnswer(await session.forward(2, 1, [setWrite('w/poll', { n: { integerValue: '1' } })]))[0], 1);
    await waiting.ended;
    const [response] = payloads(parseFrames(waiting.text));
    assert.equal((response as { streamToken: string }).streamToken, 'MQ==');
    assert.ok(waiting.chunks[0]!.at < 450, `answered after ${waiting.chunks[0]!.at} ms`);

    // The client's TO shortens the wait.
    const short = session.back(3, 1, { TO: 50 });
    await short.ended;
    assert.deepEqual(payloads(parseFrames(short.text)), ['noop']);
    assert.ok(short.chunks[0]!.at < 450, `answered after ${short.chunks[0]!.at} ms`);
    await session.terminate();
  });

  test('a streaming back channel (CI=0) sends a noop at once and every keepalive, and ends after its maximum time', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(1, 0);
    await back.until((frames) => arrays(frames).filter(([, p]) => isNoop(p)).length >= 3, 3000, 'three noops');
    const noops = back.chunks.filter((chunk) => chunk.text.includes('"noop"'));
    assert.ok(noops[0]!.at < 300, 'the first noop comes at once');
    assert.ok(noops[1]!.at >= 500, 'then every 600 ms');
    await back.ended;
    const elapsed = back.chunks[back.chunks.length - 1]!.at;
    assert.ok(elapsed >= 1100 && elapsed < 2500, `ended after ~1.5 s (last chunk at ${elapsed} ms)`);
    // Noop ids count on; the client acknowledges them like any other array.
    const ids = arrays(parseFrames(back.text)).map(([id]) => id);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
    assert.deepEqual(forwardAnswer(await session.forward(ids[ids.length - 1]!, 1, [])), [0, ids[ids.length - 1]!, 0]);
    await session.terminate();
  });

  test('a new back channel replaces the open one, which ends with a non-empty body', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const poll = session.back(1, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stream = session.back(1, 0);
    await poll.ended;
    assert.deepEqual(payloads(parseFrames(poll.text)), ['noop']);
    await stream.until((frames) => frames.length >= 1);
    await session.terminate();
    await stream.ended;
  });

  test('a client that drops its back channel leaves the session without one (and the next GET gets what it missed)', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(0, 0);
    await back.until((frames) => frames.length >= 2);
    back.abort();
    await back.ended.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(forwardAnswer(await session.forward(0, 1, [setWrite('w/dropped', { n: { integerValue: '1' } })]))[0], 0);
    const next = session.back(0, 0);
    const frames = await next.until((all) => payloads(all).some(isWriteResponse));
    assert.equal((arrays(frames)[0]![1] as { streamToken: string }).streamToken, 'MA==', 'unacknowledged arrays are sent again');
    await session.terminate();
    await next.ended;
  });

  test('lengths count UTF-16 code units: a document with é and 😀 arrives in frames the client can cut', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    forwardAnswer(await session.forward(0, 1, [setWrite('w/emoji', { s: { stringValue: 'é😀 ü 𝄞' } })]));
    const written = session.back(0, 0);
    await written.until((all) => payloads(all).some(isWriteResponse));
    const listen = await handshake(server, 'Listen', { database, addTarget: { documents: { documents: [docName('w/emoji')] }, targetId: 2 } });
    const back = listen.session.back(0, 0);
    const frames = await back.until((all) => payloads(all).some((p) => (p as { documentChange?: unknown }).documentChange));
    const frame = frames.find((f) => f.raw.includes('😀'))!;
    assert.equal(frame.length, frame.raw.length);
    assert.notEqual(frame.length, Buffer.byteLength(frame.raw), 'UTF-16 units, not UTF-8 bytes');
    assert.ok(back.text.startsWith(`${frame.length}\n`) || back.text.includes(`${frame.length}\n${frame.raw}`));
    const change = payloads(frames).find((p) => (p as { documentChange?: unknown }).documentChange) as { documentChange: { document: { fields: { s: { stringValue: string } } } } };
    assert.equal(change.documentChange.document.fields.s.stringValue, 'é😀 ü 𝄞');
    // The Listen sequence: ADD, the document, CURRENT, then the global NO_CHANGE with a read time.
    const kinds = payloads(frames)
      .filter((p) => !isNoop(p))
      .map((p) => Object.keys(p as object)[0] + ((p as { targetChange?: { targetChangeType?: string } }).targetChange?.targetChangeType ?? ''));
    assert.deepEqual(kinds.slice(0, 4), ['targetChangeADD', 'documentChange', 'targetChangeCURRENT', 'targetChange']);
    await listen.session.terminate();
    await session.terminate();
  });
});

describe('sessions', () => {
  test('an unknown SID gets 400 with "Unknown SID" (the client starts a new session), on POST and GET alike', async () => {
    const ghost = new Session(server, 'Write', 'no-such-session');
    for (const answer of [await ghost.forward(0, 1, [{}]), await call(server.port, 'GET', channelPath('Write', { RID: 'rpc', SID: 'nope', AID: 0, CI: 0, TYPE: 'xmlhttp' }))]) {
      assert.equal(answer.status, 400);
      assert.ok(answer.text.indexOf('Unknown SID') > 0, answer.text);
    }
    // A Write session is unknown on the Listen path, and to another database.
    const { session } = await handshake(server, 'Write', writeHandshake);
    assert.equal((await new Session(server, 'Listen', session.sid).forward(0, 1, [])).status, 400);
    assert.equal((await call(server.port, 'POST', channelPath('Write', { SID: session.sid, RID: 1, AID: 0 }, 'projects/other/databases/(default)'), mapsBody(1, []))).status, 400);
    await session.terminate();
  });

  test('terminate closes the session and ends its back channel', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(0, 0);
    await back.until((frames) => frames.length >= 1);
    const answer = await session.terminate();
    assert.equal(answer.status, 200);
    assert.equal(answer.text, '');
    await back.ended;
    assert.equal((await session.forward(0, 1, [])).status, 400);
    // An unknown session's terminate is answered all the same (the client ignores it anyway).
    assert.equal((await new Session(server, 'Write', 'gone').terminate()).status, 200);
  });

  test('stream errors: PERMISSION_DENIED and UNAUTHENTICATED arrive as the payload the SDK maps to its codes, then close', async () => {
    // Nobody signed in: the Write stream opens, the write is refused and ends the stream.
    const { session } = await handshake(server, 'Write', writeHandshake, '');
    const back = session.back(0, 0);
    await back.until((frames) => frames.length >= 1);
    forwardAnswer(await session.forward(1, 1, [setWrite('w/denied', { n: { integerValue: '1' } })]));
    await back.ended;
    const frames = parseFrames(back.text);
    const tail = arrays(frames).slice(-2).map(([, p]) => p);
    assert.deepEqual(tail, [{ error: { code: 7, message: 'Missing or insufficient permissions.', status: 'PERMISSION_DENIED' } }, 'close']);
    assert.match(frames[frames.length - 1]!.raw, /\[\{"error":\{"code":7,"message":"Missing or insufficient permissions\.","status":"PERMISSION_DENIED"\}\}\]\],\[\d+,\["close"\]\]\]$/);
    // The session stays answerable until the client terminates it.
    assert.equal(forwardAnswer(await session.forward(1, 2, [setWrite('w/denied', {})]))[0], 0);
    await session.terminate();

    // A token that does not verify: UNAUTHENTICATED (the SDK refreshes its token and reconnects).
    const bad = await handshake(server, 'Listen', { database, addTarget: { documents: { documents: [docName('w/x')] }, targetId: 2 } }, 'Bearer not-a-token');
    const poll = bad.session.back(0, 1);
    await poll.ended;
    const [error, close] = payloads(parseFrames(poll.text));
    assert.equal((error as { error: { status: string; code: number } }).error.status, 'UNAUTHENTICATED');
    assert.equal((error as { error: { code: number } }).error.code, 16);
    assert.equal(close, 'close');
    await bad.session.terminate();
  });

  test('a denied Listen target is acknowledged, then REMOVEd with a cause, and the stream goes on', async () => {
    const { session } = await handshake(server, 'Listen', { database, addTarget: { documents: { documents: [docName('w/x')] }, targetId: 2 } }, 'Bearer user');
    const poll = session.back(0, 1);
    await poll.ended;
    const [added, removal] = payloads(parseFrames(poll.text)) as Array<{ targetChange: { targetChangeType: string; targetIds: number[]; cause: { code: number } } }>;
    assert.equal(added!.targetChange.targetChangeType, 'ADD');
    assert.equal(removal!.targetChange.targetChangeType, 'REMOVE');
    assert.deepEqual(removal!.targetChange.targetIds, [2]);
    assert.equal(removal!.targetChange.cause.code, 7);
    await session.terminate();
  });
});

describe('hostile input', () => {
  test('malformed bodies, parameters and JSON get a 4xx, never a 5xx, and the server goes on working', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const path = () => channelPath('Write', { SID: session.sid, RID: 7, AID: 0 });
    const handshakePath = channelPath('Write', { RID: 1, CVER: 22 });
    const cases: Array<[string, string, string | undefined, Record<string, string>?]> = [
      ['POST', path(), 'count=1&ofs=1&req0___data__=not%20json'],
      ['POST', path(), 'count=1&ofs=1&req0___data__=%7B'],
      ['POST', path(), 'count=1&ofs=1&req0___data__=%ZZ%7B'],
      ['POST', path(), `count=1&ofs=1&req0___data__=${encodeURIComponent('{"__proto__":{"x":1}}')}`],
      ['POST', path(), 'count=abc&ofs=1'],
      ['POST', path(), 'count=5000&ofs=1'],
      ['POST', path(), 'count=-1&ofs=1'],
      ['POST', path(), 'count=1&ofs=-4&req0___data__=%7B%7D'],
      ['POST', path(), 'count=2&ofs=1&req0___data__=%7B%7D'],
      ['POST', path(), 'count=1&ofs=1&req0_database=x'],
      ['POST', path(), '\u0000\u0001garbage&&&==&count'],
      ['POST', path(), '{"json":"instead"}', { 'content-type': 'application/json' }],
      ['POST', path(), 'x'.repeat(300 * 1024)],
      ['POST', handshakePath, 'count=1&ofs=0&req0___data__=%7B'],
      ['POST', handshakePath, 'garbage'],
      ['POST', channelPath('Write', { RID: 1 }, 'nonsense'), mapsBody(0, [{ database }])],
      ['POST', channelPath('Write', { RID: 1 }, 'projects/UPPER/databases/(default)'), mapsBody(0, [{ database }])],
      ['POST', `/google.firestore.v1.Firestore/Write/channel?VER=8&RID=1`, mapsBody(0, [{ database }])],
      ['GET', channelPath('Write', { RID: 'nope', SID: session.sid, AID: 0, CI: 0 }), undefined],
      ['GET', channelPath('Write', { SID: 'x'.repeat(5000), RID: 'rpc', AID: 0, CI: 0 }), undefined],
      ['GET', `/google.firestore.v1.Firestore/Write/channel?SID=${session.sid}&SID=other&RID=rpc&database=%ZZ`, undefined],
      ['PUT', path(), 'count=0&ofs=1'],
    ];
    for (const [method, target, body, headers] of cases) {
      const answer = await call(server.port, method, target, body, headers);
      assert.ok(answer.status >= 400 && answer.status < 500, `${method} ${target.slice(0, 80)} ${JSON.stringify(body?.slice(0, 60))} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    }
    // A handshake whose first message is JSON but not a WriteRequest opens, then fails the stream.
    const odd = await handshake(server, 'Write', [1, 2, 3]);
    const poll = odd.session.back(0, 1);
    await poll.ended;
    assert.equal((payloads(parseFrames(poll.text))[0] as { error: { status: string } }).error.status, 'INVALID_ARGUMENT');
    await odd.session.terminate();
    // Still serving, and the hostile POSTs above delivered nothing.
    const back = session.back(0, 1);
    await back.ended;
    assert.deepEqual(payloads(parseFrames(back.text)).length, 1);
    assert.deepEqual(forwardAnswer(await session.forward(1, 1, [])), [0, 1, 0]);
    await session.terminate();
  });
});

describe('bounds, expiry and shutdown', () => {
  let tight: ChannelServer;

  before(async () => {
    tight = await startChannelServer({ keepaliveMs: 400, backChannelMaxMs: 1500, sessionIdleMs: 300, maxQueuedChars: 2000, maxSessions: 3 });
  });

  after(async () => {
    await tight.close();
  });

  test('a session with no back channel and no traffic expires; one with an open back channel does not', async () => {
    const idle = await handshake(tight, 'Write', writeHandshake);
    const busy = await handshake(tight, 'Write', writeHandshake);
    const back = busy.session.back(0, 0);
    await back.until((frames) => frames.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 900));
    assert.equal((await idle.session.forward(0, 1, [])).status, 400, 'expired');
    assert.equal(forwardAnswer(await busy.session.forward(1, 1, []))[0], 1, 'alive');
    await busy.session.terminate();
    await back.ended;
  });

  test('too many sessions: the handshake is refused with 429; a client that never reads is failed, not buffered forever', async () => {
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push((await handshake(tight, 'Write', writeHandshake)).session);
    const refused = await call(tight.port, 'POST', channelPath('Write', { RID: 1 }), mapsBody(0, [writeHandshake]));
    assert.equal(refused.status, 429);
    for (const session of sessions.slice(1)) await session.terminate();

    // Nothing read, nothing acknowledged: the queue passes 2000 characters and the stream fails.
    const reckless = sessions[0]!;
    for (let i = 1; i <= 20; i++) forwardAnswer(await reckless.forward(0, i, [setWrite(`w/q${i}`, { n: { integerValue: String(i) } }, 'MA==')]));
    const poll = reckless.back(0, 1);
    await poll.ended;
    const got = payloads(parseFrames(poll.text));
    assert.deepEqual(got.slice(-2), [{ error: { code: 8, message: 'The client is not reading the stream fast enough.', status: 'RESOURCE_EXHAUSTED' } }, 'close']);
    assert.ok(poll.text.length < 2500);
    await reckless.terminate();
  });

  test('closing the app ends open back channels at once, with UNAVAILABLE (the SDK reconnects later)', async () => {
    const own = await startChannelServer({});
    const { session, answer } = await handshake(own, 'Write', writeHandshake);
    // With the default 30 s keepalive the handshake is byte for byte the shape of the emulator's.
    assert.match(answer.text, /^52\n\[\[0,\["c","[A-Za-z0-9_-]{24}","",8,12,30000\]\]\]$/);
    const back = session.back(0, 0);
    await back.until((frames) => frames.length >= 2);
    const poller = (await handshake(own, 'Write', writeHandshake)).session;
    const poll = poller.back(1, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await own.close();
    assert.ok(Date.now() - started < 2000, `closed in ${Date.now() - started} ms`);
    await back.ended;
    await poll.ended;
    for (const reader of [back, poll]) {
      const got = payloads(parseFrames(reader.text));
      assert.deepEqual(got.slice(-2), [{ error: { code: 14, message: 'The server is shutting down.', status: 'UNAVAILABLE' } }, 'close']);
    }
    assert.equal(own.channels.sessionCount, 0);
  });
});
