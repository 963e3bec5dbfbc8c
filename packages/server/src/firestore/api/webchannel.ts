import { randomBytes } from 'node:crypto';
import type { WorkerRelay } from '../../http/worker-relay.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../http/api-error.js';
import { foreignAdminRefusal } from '../../http/app.js';
import { toApiError } from '../../http/error-handler.js';
import { firestoreErrors } from '../core/errors.js';
import { parseDatabaseName, type DatabaseId, type DatabaseIdRule } from '../core/paths.js';
import type { StreamKind, StreamOpener } from '../streams/stream.js';
import { getHeapStatistics } from 'node:v8';
import type { FirestoreAccess, FirestoreCaller } from './access.js';
import { QueueBudget } from './webchannel-budget.js';
import { ChannelSession, frame, type ChannelTimings } from './webchannel-session.js';
import { holderOf, SessionTable } from './webchannel-table.js';
import { countWebChannelSessions } from '../../http/metrics.js';

/**
 * The WebChannel transport the browser SDK (`firebase/firestore`) uses for the Listen and Write
 * streams: `/google.firestore.v1.Firestore/{Listen|Write}/channel`. A handshake POST opens a
 * session (its Authorization travels inside the form body), forward POSTs carry the client's
 * messages, a back channel GET carries the server's (streaming, CI=0, or long polling, CI=1), and
 * `TYPE=terminate` ends it. research/firestore-semantics.md §6.3, research/sdk-protocols.md §B.2.
 */
export interface WebChannelOptions extends Partial<ChannelTimings> {
  /** A session without a back channel and without forward traffic for this long is forgotten. */
  sessionIdleMs?: number;
  /** A session whose back channel was never opened is forgotten this soon (the SDK opens it at once). */
  unopenedSessionMs?: number;
  maxSessions?: number;
  /** Sessions one client address may hold (IPv6: one /64), unless it is the administrator. */
  maxSessionsPerAddress?: number;
  /** Sessions one signed-in user may hold. */
  maxSessionsPerUser?: number;
  /** Unacknowledged characters all the sessions of one client address may hold (webchannel-budget.ts). */
  maxQueuedCharsPerAddress?: number;
  /** Unacknowledged characters all sessions together may hold. */
  maxQueuedCharsTotal?: number;
  /** Per request; the form encoding makes a 10 MiB Firestore request somewhat larger. */
  maxBodyBytes?: number;
  /**
   * Is this the admin credential? A handshake carries its Authorization in the body or the URL,
   * where the HTTP layer's check cannot see it, and a page on any site can post a form here.
   */
  isAdminCredential?: (authorization: string | undefined) => boolean;
  /** Where the two channels are served: `${prefix}/google.firestore.v1.Firestore/{Listen,Write}/channel`. */
  prefix?: string;
  /** A worker of --workers: session ids name the worker, and a session another worker opened is relayed to it. */
  relay?: WorkerRelay;
  /**
   * An operator's channel instead of the SDKs' one: every handshake must name an operator (others
   * are refused), whose session then acts as the administrator. The console registers one at its
   * own prefix; the SDKs' channel has none, so nothing a browser sends to it can make it privileged.
   */
  operators?: OperatorChannel;
}

export interface OperatorChannel {
  /** The operator a handshake is made for (the console session it carries), or undefined. */
  operatorOf(request: FastifyRequest, authorization: string | undefined): string | undefined;
  /** A Write request of an operator's session that carries writes (for the audit log). */
  noteWrites(request: FastifyRequest, operator: string, maps: unknown[]): void;
}

export interface WebChannelServer {
  readonly sessionCount: number;
  /** Ends every session (the SDK sees UNAVAILABLE and reconnects later). Runs on app close too. */
  close(): void;
}

export const webChannelDefaults = {
  keepaliveMs: 30_000,
  backChannelMaxMs: 60_000,
  sessionIdleMs: 5 * 60_000,
  unopenedSessionMs: 20_000,
  maxSessions: 10_000,
  maxSessionsPerAddress: 200,
  maxSessionsPerUser: 100,
  maxQueuedChars: 16 * 1024 * 1024,
  maxQueuedCharsPerAddress: 32 * 1024 * 1024,
  // An eighth of the heap: two-byte text at most a quarter, and what back channels buffer beside it.
  maxQueuedCharsTotal: Math.floor(getHeapStatistics().heap_size_limit / 8),
  maxPendingMaps: 10_000,
  maxBodyBytes: 24 * 1024 * 1024,
};

/** The closure client sends at most this many maps per POST (MAX_MAPS_PER_REQUEST). */
const maxMapsPerPost = 1000;

const channelHeaders = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-cache, no-store, max-age=0, must-revalidate',
  // The client reads these on the handshake; unexposed, Chrome logs "Refused to get unsafe header".
  'access-control-expose-headers': 'x-client-wire-protocol, x-http-session-id, x-http-initial-response',
};

const textPlain = 'text/plain; charset=utf-8';

/**
 * "Unknown SID" past index 0 of a 400 makes the client drop the session and start a new one
 * (UNKNOWN_SESSION_ID). Any other failure would also make it fetch google.com's cleardot.gif to
 * test the network, which a self-hosted server should not cause.
 */
const unknownSid = 'Error 400: Unknown SID';

type Query = Record<string, string | string[] | undefined>;

export async function registerWebChannelRoutes(app: FastifyInstance, streams: StreamOpener, access: FirestoreAccess, options: WebChannelOptions = {}): Promise<WebChannelServer> {
  const keepaliveMs = options.keepaliveMs ?? webChannelDefaults.keepaliveMs;
  const timings: ChannelTimings = {
    keepaliveMs,
    backChannelMaxMs: options.backChannelMaxMs ?? webChannelDefaults.backChannelMaxMs,
    // The client's back channel watchdog is 1.5 × the keepalive the handshake announces.
    longPollTimeoutMs: Math.min(options.longPollTimeoutMs ?? keepaliveMs, keepaliveMs),
    maxQueuedChars: options.maxQueuedChars ?? webChannelDefaults.maxQueuedChars,
    maxPendingMaps: options.maxPendingMaps ?? webChannelDefaults.maxPendingMaps,
  };
  const sessionIdleMs = options.sessionIdleMs ?? webChannelDefaults.sessionIdleMs;
  const unopenedSessionMs = Math.min(options.unopenedSessionMs ?? webChannelDefaults.unopenedSessionMs, sessionIdleMs);
  const maxBodyBytes = options.maxBodyBytes ?? webChannelDefaults.maxBodyBytes;
  const maxSessions = options.maxSessions ?? webChannelDefaults.maxSessions;
  const sessions = new SessionTable({
    maxSessions,
    perAddress: options.maxSessionsPerAddress ?? webChannelDefaults.maxSessionsPerAddress,
    perUser: options.maxSessionsPerUser ?? webChannelDefaults.maxSessionsPerUser,
  });
  const budget = new QueueBudget({
    perSession: timings.maxQueuedChars,
    perAddress: options.maxQueuedCharsPerAddress ?? webChannelDefaults.maxQueuedCharsPerAddress,
    total: options.maxQueuedCharsTotal ?? webChannelDefaults.maxQueuedCharsTotal,
  });
  let closed = false;

  const sweep = () => {
    const now = Date.now();
    for (const session of sessions.values()) {
      const unopened = !session.everOpened && now - session.createdAt > unopenedSessionMs;
      if (session.closed || unopened || (!session.hasBackChannel && now - session.lastActivity > sessionIdleMs)) {
        session.close();
        sessions.delete(session);
      }
    }
  };
  const sweeper = setInterval(sweep, Math.max(10, Math.min(unopenedSessionMs / 2, 30_000)));
  sweeper.unref();

  const uncount = countWebChannelSessions(() => sessions.size);
  /** Write sessions of an operator's channel: their writes go to the audit log. */
  const operatorWriters = new WeakMap<ChannelSession, string>();
  const server: WebChannelServer = {
    get sessionCount() {
      return sessions.size;
    },
    close() {
      if (closed) return;
      closed = true;
      uncount();
      clearInterval(sweeper);
      for (const session of sessions.values()) session.shutDown();
      sessions.clear();
    },
  };
  // Open back channels would otherwise hold app.close() until they time out.
  app.addHook('preClose', async () => server.close());

  const jsonParser = app.getDefaultJsonParser('error', 'error');
  const parseJson = (text: string, where: string): unknown => {
    let value: unknown;
    let failed = false;
    jsonParser(undefined as never, text, (error, parsed) => {
      failed = error !== null;
      value = parsed;
    });
    if (failed) throw firestoreErrors.invalidArgument(`Invalid JSON payload received in ${where}.`);
    return value;
  };

  const find = (kind: StreamKind, db: DatabaseId | undefined, sid: string | undefined): ChannelSession | undefined => {
    const session = sid === undefined ? undefined : sessions.get(sid);
    if (!session || session.closed || session.kind !== kind) return undefined;
    if (db && (db.projectId !== session.db.projectId || db.databaseId !== session.db.databaseId)) return undefined;
    return session;
  };

  const handshake = async (kind: StreamKind, db: DatabaseId, query: Query, request: FastifyRequest, reply: FastifyReply) => {
    if (closed) throw new ApiError(503, 'The server is shutting down.', 'UNAVAILABLE');
    const form = formOf(request.body);
    const { ofs, maps } = mapsOf(form, parseJson);
    // The SDK sends it in the body; a real header is taken only if it is a bearer token (a
    // browser may attach a proxy's Basic credentials to these credentialed requests on its own).
    const bearer = /^bearer\s/i.test(request.headers.authorization ?? '') ? request.headers.authorization : undefined;
    const authorization = headerFrom(form.get('headers'), 'authorization') ?? headerFrom(param(query, '$httpHeaders'), 'authorization') ?? bearer;
    if (request.fromForeignPage && options.isAdminCredential?.(authorization)) throw foreignAdminRefusal(request.url);
    let caller: FirestoreCaller | undefined;
    let authFailure: ApiError | undefined;
    const operator = options.operators?.operatorOf(request, authorization);
    if (options.operators && !operator) throw firestoreErrors.permissionDeniedWith('This channel is the console\'s: it needs a console session.');
    try {
      caller = await access.callerOf(authorization, db.projectId, operator !== undefined);
    } catch (error) {
      authFailure = toApiError(error);
    }
    if (closed) throw new ApiError(503, 'The server is shutting down.', 'UNAVAILABLE');
    const holder = holderOf(caller, request.ip);
    // Sweeping walks every session: only when the table itself is full, not per refused address.
    if (sessions.size >= maxSessions) sweep();
    const refusal = sessions.refusal(holder);
    if (refusal) throw firestoreErrors.resourceExhausted(refusal);
    const session = new ChannelSession(options.relay?.sessionId() ?? randomBytes(18).toString('base64url'), kind, db, timings, holder.kind === 'admin' ? undefined : holder.address, budget);
    sessions.add(session, holder);
    // The SDK answers UNAUTHENTICATED by refreshing its token and opening a new stream.
    if (authFailure) session.fail(authFailure);
    if (caller) {
      try {
        session.attach(streams.open(kind, { db, caller }, session.sink));
      } catch (error) {
        session.fail(toApiError(error));
      }
    }
    if (operator && kind === 'Write') {
      operatorWriters.set(session, operator);
      options.operators!.noteWrites(request, operator, maps);
    }
    session.deliver(ofs, maps);
    // Like the emulator, everything the stream answers goes on the back channel.
    return reply.type(textPlain).send(frame(JSON.stringify([[0, ['c', session.id, '', 8, 12, keepaliveMs]]])));
  };

  const forward = (session: ChannelSession, query: Query, request: FastifyRequest, reply: FastifyReply) => {
    const { ofs, maps } = mapsOf(formOf(request.body), parseJson);
    const operator = operatorWriters.get(session);
    if (operator) options.operators!.noteWrites(request, operator, maps);
    session.ack(intOf(param(query, 'AID')));
    session.deliver(ofs, maps);
    return reply.type(textPlain).send(session.forwardAnswer());
  };

  const backChannel = (session: ChannelSession, query: Query, reply: FastifyReply) => {
    if (param(query, 'RID') !== 'rpc') throw firestoreErrors.invalidArgument('A back channel request has RID=rpc.');
    session.ack(intOf(param(query, 'AID')));
    const requested = intOf(param(query, 'TO'));
    const longPollMs = requested > 0 ? Math.min(requested, timings.longPollTimeoutMs) : timings.longPollTimeoutMs;
    const body = session.openBackChannel(param(query, 'CI') !== '1', longPollMs, reply.raw);
    // A reverse proxy that buffers (nginx does by default) would hold the stream back.
    return reply.type(textPlain).header('x-accel-buffering', 'no').send(body);
  };

  const handle = async (kind: StreamKind, request: FastifyRequest, reply: FastifyReply) => {
    const query = (request.query ?? {}) as Query;
    const sid = param(query, 'SID');
    if (param(query, 'TYPE') === 'terminate') {
      // Sent by navigator.sendBeacon (or an <img>) as the page goes away: the answer is ignored.
      const session = find(kind, undefined, sid);
      if (session) {
        session.close();
        sessions.delete(session);
      }
      return reply.type(textPlain).send('');
    }
    const db = databaseOf(param(query, 'database'), access.databaseIdRule);
    if (request.method === 'POST' && sid === undefined) return handshake(kind, db, query, request, reply);
    const session = find(kind, db, sid);
    if (!session) return reply.code(400).type(textPlain).send(unknownSid);
    if (request.method === 'GET') return backChannel(session, query, reply);
    return forward(session, query, request, reply);
  };

  await app.register(async (scope) => {
    // Form bodies (and sendBeacon's text/plain) are read as text here and parsed per map.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: maxBodyBytes }, (_request, body, done) => done(null, body));
    scope.addHook('onRequest', async (_request, reply) => {
      void reply.headers(channelHeaders);
    });
    const relay = options.relay;
    if (relay) {
      scope.addHook('onRequest', async (request, reply) => {
        const owner = relay.ownerOfSession(param((request.query ?? {}) as Query, 'SID'));
        if (owner === undefined) return;
        // Its worker is being started again: the session is gone, and the SDK opens another.
        if (!(await relay.relay(owner, request, reply))) return reply.code(400).type(textPlain).send(unknownSid);
        return reply;
      });
    }
    for (const kind of ['Listen', 'Write'] as const) {
      scope.route({
        method: ['GET', 'POST'],
        url: `${options.prefix ?? ''}/google.firestore.v1.Firestore/${kind}/channel`,
        bodyLimit: maxBodyBytes,
        exposeHeadRoute: false,
        handler: (request, reply) => handle(kind, request, reply),
      });
    }
  });
  return server;
}

function param(query: Query, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A decimal integer, or NaN. */
function intOf(text: string | undefined): number {
  return text !== undefined && /^-?\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
}

function databaseOf(name: string | undefined, rule: DatabaseIdRule): DatabaseId {
  const db = parseDatabaseName(name ?? '', false, rule);
  if (!db) throw firestoreErrors.invalidArgument('The database URL parameter must be projects/{project}/databases/{database}.');
  return db;
}

function formOf(body: unknown): URLSearchParams {
  return new URLSearchParams(typeof body === 'string' ? body : '');
}

/** `count=k&ofs=N&req0___data__=<json>…`: the maps, each a raw JSON message (the SDK's sendRawJson). */
function mapsOf(form: URLSearchParams, parseJson: (text: string, where: string) => unknown): { ofs: number; maps: unknown[] } {
  const count = intOf(form.get('count') ?? undefined);
  const ofs = intOf(form.get('ofs') ?? undefined);
  if (!(count >= 0 && count <= maxMapsPerPost)) throw firestoreErrors.invalidArgument(`count must be an integer from 0 to ${maxMapsPerPost}.`);
  if (!(ofs >= 0)) throw firestoreErrors.invalidArgument('ofs must be a non-negative integer.');
  const maps: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const data = form.get(`req${i}___data__`);
    if (data === null) throw firestoreErrors.invalidArgument(`Message req${i} is missing; messages are sent as req<i>___data__=<JSON>.`);
    maps.push(parseJson(data, `req${i}___data__`));
  }
  return { ofs, maps };
}

/** One header from the `Name:Value\r\n…` block the client puts in the handshake (`headers=`, or `$httpHeaders`). */
function headerFrom(block: string | null | undefined, name: string): string | undefined {
  if (!block) return undefined;
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === name) return line.slice(colon + 1).trim();
  }
  return undefined;
}
