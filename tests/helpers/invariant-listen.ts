/**
 * Raw Listen streams of the rules invariant, over gRPC and over WebChannel, as one caller: targets are added (fresh,
 * or resumed from a resume token or a read time), and every document a ListenResponse carries (with `targetIds` or
 * `removedTargetIds`) goes to the ledger, judged by `list` for a query target, `get` for a documents target,
 * and `get` or `list` for a version leaving a query target (a limit's window pushes out versions that still match).
 * Nothing is filtered first: these are exactly the bytes the server sent.
 */
import { request as httpRequest } from 'node:http';
import type { Ledger } from './invariant-ledger.js';
import { RawGrpc } from './invariant-grpc.js';
import { authorizationOf, databaseName, documentName, type InvariantServer } from './invariant-servers.js';
import { fromWireFields } from './invariant-wire.js';
import type { CallerName, QuerySpec, Round } from './invariant-world.js';
import { structuredQuery, queryParent } from './invariant-queries.js';
import { arrays, channelPath, mapsBody, parseFrames } from './firestore-webchannel.js';

type Json = Record<string, any>;

/** The target every stream has besides the corpus's: the round's sentinel collection, which everyone may read. */
export const sentinelTargetId = 9999;

export function sentinelQuery(round: Round): QuerySpec {
  return { label: `${round.names.sentinel}`, scope: { kind: 'collection', parent: '', collectionId: round.names.sentinel }, filters: [] };
}

export interface TargetSpec {
  targetId: number;
  /** A query target, or a documents target of one document. */
  query?: QuerySpec;
  document?: string;
  resumeToken?: string;
  readTime?: string;
}

interface TargetState {
  spec: TargetSpec;
  current?: { resumeToken: string; readTime: string };
  removed?: string;
}

/** One Listen stream: what a transport must do; the bookkeeping is shared. */
interface Transport {
  send(request: Json): Promise<void>;
  close(): void;
}

export class RawListen {
  readonly targets = new Map<number, TargetState>();
  /** The titles of the sentinel documents received: the marks the test writes to know a stream caught up. */
  readonly marks = new Set<string>();
  ended: string | undefined;
  messages = 0;
  private transport!: Transport;
  private waiters: Array<() => void> = [];

  private constructor(
    readonly server: InvariantServer,
    readonly round: Round,
    readonly caller: CallerName,
    readonly kind: 'grpc' | 'webchannel',
    private readonly ledger: Ledger,
    /** The read path's name in the ledger: `Listen`, `Listen resume`, ... */
    readonly label: string,
  ) {}

  static async open(server: InvariantServer, round: Round, caller: CallerName, kind: 'grpc' | 'webchannel', ledger: Ledger, label: string, first: TargetSpec): Promise<RawListen> {
    const listen = new RawListen(server, round, caller, kind, ledger, label);
    listen.targets.set(first.targetId, { spec: first });
    const firstRequest = { database: databaseName(server), addTarget: listen.wireTarget(first) };
    listen.transport = kind === 'grpc' ? listen.grpcTransport(firstRequest) : await listen.webChannelTransport(firstRequest);
    await listen.add({ targetId: sentinelTargetId, query: sentinelQuery(round) });
    return listen;
  }

  async add(spec: TargetSpec): Promise<void> {
    this.targets.set(spec.targetId, { spec });
    await this.transport.send({ database: databaseName(this.server), addTarget: this.wireTarget(spec) });
  }

  close(): void {
    this.transport.close();
    this.ended ??= 'closed';
    this.wake();
  }

  /**
   * Waits until every target is CURRENT or removed and the sentinel written with `mark` arrived: a stream sends
   * commits in order, so it then sent all it had to for the commits before. False if that takes longer than `ms`.
   */
  async settled(mark: string, ms = 20_000): Promise<boolean> {
    const deadline = Date.now() + ms;
    const done = () => this.ended !== undefined || ([...this.targets.values()].every((t) => t.current || t.removed) && this.marks.has(mark));
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return true;
  }

  private wireTarget(spec: TargetSpec): Json {
    const target: Json = { targetId: spec.targetId };
    if (spec.query) target.query = { parent: queryParent(this.server, spec.query), structuredQuery: structuredQuery(this.server, spec.query) };
    else target.documents = { documents: [documentName(this.server, spec.document!)] };
    if (spec.resumeToken !== undefined) target.resumeToken = spec.resumeToken;
    if (spec.readTime !== undefined) target.readTime = spec.readTime;
    return target;
  }

  private receive(response: Json): void {
    this.messages++;
    if (response.documentChange) {
      const change = response.documentChange as { document: Json; targetIds?: number[]; removedTargetIds?: number[] };
      const document = String(change.document.name).slice(`${databaseName(this.server)}/documents/`.length);
      const data = fromWireFields(change.document.fields);
      if (document.startsWith(`${this.round.names.sentinel}/`) && data.title) this.marks.add(data.title);
      const tagged: Array<[number, boolean]> = [...(change.targetIds ?? []).map((id) => [id, false] as [number, boolean]), ...(change.removedTargetIds ?? []).map((id) => [id, true] as [number, boolean])];
      for (const [id, removal] of tagged) {
        const target = this.targets.get(id);
        if (!target) continue;
        const spec = target.spec;
        const resumed = spec.resumeToken !== undefined || spec.readTime !== undefined;
        this.ledger.deliver({
          round: this.round,
          caller: this.caller,
          transport: this.kind,
          path: `${this.label}${resumed ? (spec.resumeToken !== undefined ? ' (resumeToken)' : ' (readTime)') : ''}${removal ? ', removedTargetIds' : ''} ${spec.query ? 'query' : 'document'} target`,
          // A version leaving a query target is the caller's if `get` allows it, or if it still matches
          // the query whose `list` was allowed (pushed out of a limit): else only a removal may go.
          method: spec.query ? (removal ? 'read' : 'list') : 'get',
          request: `${this.kind} Listen as ${this.caller}: addTarget ${spec.query ? spec.query.label : `documents [${spec.document}]`}${spec.resumeToken !== undefined ? ` with resumeToken ${spec.resumeToken}` : ''}${spec.readTime !== undefined ? ` with readTime ${spec.readTime}` : ''}`,
          document,
          updateTime: change.document.updateTime,
          data,
        });
      }
    }
    const targetChange = response.targetChange as { targetChangeType?: string; targetIds?: number[]; resumeToken?: string; readTime?: string; cause?: { message?: string } } | undefined;
    if (targetChange) {
      const ids = targetChange.targetIds ?? [];
      for (const id of ids) {
        const target = this.targets.get(id);
        if (!target) continue;
        if (targetChange.targetChangeType === 'CURRENT' && targetChange.resumeToken && targetChange.readTime) target.current = { resumeToken: targetChange.resumeToken, readTime: targetChange.readTime };
        if (targetChange.targetChangeType === 'REMOVE') target.removed = targetChange.cause?.message ?? 'removed';
      }
    }
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private grpcTransport(first: Json): Transport {
    const client = new RawGrpc(this.server.hostPort, databaseName(this.server), authorizationOf(this.server, this.caller));
    const stream = client.listen(
      (response) => this.receive(response),
      (error) => {
        this.ended ??= error ? `${error.code} ${error.message}` : 'ended';
        this.wake();
      },
    );
    stream.send(first);
    return {
      send: async (request) => stream.send(request),
      close: () => {
        stream.close();
        client.close();
      },
    };
  }

  /** The browser SDK's WebChannel exchange: handshake with the first request, forward POSTs, back channels reopened as they end. */
  private async webChannelTransport(first: Json): Promise<Transport> {
    const port = Number(new URL(this.server.url).port);
    const db = databaseName(this.server);
    const authorization = authorizationOf(this.server, this.caller);
    const headers = `X-Goog-Api-Client:gl-js/ fire/12.19.0\r\nContent-Type:text/plain\r\n${authorization ? `Authorization:${authorization}\r\n` : ''}`;
    const body = `headers=${encodeURIComponent(headers)}&${mapsBody(0, [first])}`;
    const handshake = await post(port, channelPath('Listen', { RID: 4242, CVER: 22, 'X-HTTP-Session-Id': 'gsessionid' }, db), body);
    if (handshake.status !== 200) throw new Error(`WebChannel handshake: ${handshake.status} ${handshake.text}`);
    const sid = (parseFrames(handshake.text)[0]!.json as [[number, [string, string]]])[0][1][1];
    let sent = 1;
    let rid = 5000;
    let lastArray = 0;
    let closed = false;
    let abort: () => void = () => undefined;
    const backChannel = () => {
      if (closed) return;
      let text = '';
      let consumed = 0;
      const request = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: channelPath('Listen', { RID: 'rpc', SID: sid, AID: lastArray, CI: 0, TYPE: 'xmlhttp' }, db), agent: false }, (response) => {
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          const frames = parseFrames(text, true);
          for (const [id, payload] of arrays(frames.slice(consumed))) {
            lastArray = Math.max(lastArray, id);
            if (payload !== 'noop' && typeof payload === 'object' && payload !== null) this.receive(payload as Json);
            if (Array.isArray(payload) && payload[0] === 'close') {
              this.ended ??= 'closed by the server';
              this.wake();
            }
          }
          consumed = frames.length;
        });
        response.on('end', () => {
          if (response.statusCode !== 200) {
            this.ended ??= `back channel ${response.statusCode}`;
            this.wake();
          } else backChannel();
        });
      });
      request.on('error', () => {
        if (!closed) this.ended ??= 'back channel failed';
        this.wake();
      });
      abort = () => request.destroy();
      request.end();
    };
    backChannel();
    return {
      send: async (request) => {
        const answer = await post(port, channelPath('Listen', { SID: sid, RID: ++rid, AID: lastArray }, db), mapsBody(sent++, [request]));
        if (answer.status !== 200) throw new Error(`WebChannel forward: ${answer.status} ${answer.text}`);
      },
      close: () => {
        closed = true;
        abort();
        void post(port, channelPath('Listen', { SID: sid, RID: ++rid, TYPE: 'terminate' }, db), '').catch(() => undefined);
      },
    };
  }
}

function post(port: number, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, method: 'POST', path, agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded' } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}
