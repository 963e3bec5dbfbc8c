/**
 * One process of listening clients (driver.ts forks several, so that the clients' own CPU is spread
 * over processes and is not what the bench measures). A client is one HTTP/2 connection speaking
 * raw gRPC (h2-client.ts: frames read off the socket); each listener is a Listen stream of its own
 * on `messages where room == R`. Nothing is decoded past what a listener needs: its first CURRENT
 * (protobufjs, once), then only the commit number the writer stamped into each document
 * (`@@seq=<n>;`, found in the bytes). A listener's receipt time is when the bytes that complete its
 * message were read from the socket, as `performance.timeOrigin + performance.now()`, a clock every
 * process on the machine shares, so the driver can set it against the writer's acknowledgement.
 *
 * One process may also be the writer: it commits over REST and reports when it sent each commit
 * and when the commit was acknowledged, on the same clock.
 *
 * Started with the server as JSON in argv[2] ({name, origin, projectId}); answers the requests of
 * protocol.ts over the IPC channel, and tells the driver on its own when all its listeners have a
 * commit (`{event: 'seen', seq}`).
 */
import { loadFirestoreRoot } from '../../packages/server/src/firestore/api/grpc-codec.js';
import { checkCommit, commitBody } from '../firestore/data.js';
import { post, type Endpoint } from '../firestore/targets.js';
import { H2Connection } from './h2-client.js';
import type { ClientEvent, ClientOps, ClientReply, ClientRequest } from './protocol.js';

const server = JSON.parse(process.argv[2] ?? '{}') as Endpoint;
const collection = 'messages';
const database = `projects/${server.projectId}/databases/(default)`;
/** Listeners opened at once, per process. */
const openBatch = 200;
const waitMs = 120_000;
/** Commits write `{room}-0` … `{room}-19` in turn, so a query's result stays 20 long. */
const slots = 20;

const root = loadFirestoreRoot();
const ListenRequest = root.lookupType('google.firestore.v1.ListenRequest');
const ListenResponse = root.lookupType('google.firestore.v1.ListenResponse');
const clock = () => performance.timeOrigin + performance.now();
/** The writer stamps `@@seq=<n>;` in each document; a listener finds the number in the raw bytes. */
const marker = Buffer.from('@@seq=');

/** A Listen stream and the gRPC frames it has not yet read whole. */
class Listener {
  ready = false;
  lastSeq = -1;
  private buffered: Buffer = Buffer.alloc(0);

  constructor(
    connection: H2Connection,
    readonly room: Room,
    targetId: number,
  ) {
    const request = ListenRequest.encode(
      ListenRequest.fromObject({
        database,
        addTarget: {
          targetId,
          query: {
            parent: `${database}/documents`,
            structuredQuery: { from: [{ collectionId: collection }], where: { fieldFilter: { field: { fieldPath: 'room' }, op: 'EQUAL', value: { stringValue: room.name } } } },
          },
        },
      }),
    ).finish();
    const frame = Buffer.alloc(5 + request.length);
    frame.writeUInt32BE(request.length, 1);
    frame.set(request, 5);
    const headers: Array<[string, string]> = [
      ['content-type', 'application/grpc'],
      ['te', 'trailers'],
      ['authorization', 'Bearer owner'],
      ['google-cloud-resource-prefix', database],
    ];
    connection.request('/google.firestore.v1.Firestore/Listen', headers, frame, {
      data: (chunk, at) => this.onData(chunk, at),
      closed: (reason) => {
        if (!room.closing) room.fail(new Error(`a Listen stream of ${room.name} closed: ${reason}`));
      },
    });
  }

  private onData(chunk: Buffer, at: number): void {
    let bytes = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    while (bytes.length >= 5) {
      const length = bytes.readUInt32BE(1);
      if (bytes.length < 5 + length) break;
      this.onMessage(bytes.subarray(5, 5 + length), at);
      bytes = bytes.subarray(5 + length);
    }
    // The chunk is the connection's, valid only during this call: a partial message is copied.
    this.buffered = bytes.length ? Buffer.from(bytes) : Buffer.alloc(0);
  }

  private onMessage(message: Buffer, at: number): void {
    if (!this.ready) {
      // ADD, the 20 documents already there, CURRENT: only the last matters.
      if (message[0] !== 0x12) return;
      const change = (ListenResponse.decode(message) as unknown as { targetChange?: { targetChangeType?: number } }).targetChange;
      if (change?.targetChangeType === 3) {
        // CURRENT (the enum: NO_CHANGE 0, ADD 1, REMOVE 2, CURRENT 3, RESET 4)
        this.ready = true;
        this.room.onReady();
      } else if (change?.targetChangeType === 2) {
        this.room.fail(new Error(`a listener of ${this.room.name} was removed: ${JSON.stringify(ListenResponse.toObject(ListenResponse.decode(message)))}`));
      }
      return;
    }
    // Field 3, documentChange; targetChange (NO_CHANGE) and the rest need nothing.
    if (message[0] !== 0x1a) {
      if (message[0] !== 0x12) this.room.fail(new Error(`a listener of ${this.room.name} got an unexpected message (field ${message[0]! >> 3})`));
      return;
    }
    // A marker no protobuf framing byte sequence makes by chance (a lone '#' did: commit 35's seq is the byte 0x23).
    const start = message.indexOf(marker);
    const end = message.indexOf(0x3b, start + marker.length);
    const seq = Number(message.toString('latin1', start + marker.length, end));
    if (start < 0 || end < 0 || !(seq > this.lastSeq)) {
      const shown = start < 0 ? `a document without a commit number: ${JSON.stringify(ListenResponse.toObject(ListenResponse.decode(message), { longs: String, enums: String, bytes: String }))}` : `commit ${seq}`;
      this.room.fail(new Error(`a listener of ${this.room.name} saw ${shown} after ${this.lastSeq}`));
      return;
    }
    this.lastSeq = seq;
    this.room.onArrival(seq, at);
  }
}

/** The listeners of this process on one query, and when each commit reached them. */
class Room {
  closing = false;
  readonly listeners: Listener[] = [];
  private readyCount = 0;
  private problem: Error | undefined;
  private readonly arrivals = new Map<number, number[]>();

  constructor(readonly name: string) {}

  onReady(): void {
    this.readyCount++;
  }

  onArrival(seq: number, at: number): void {
    let times = this.arrivals.get(seq);
    if (!times) this.arrivals.set(seq, (times = []));
    times.push(at);
    if (times.length === this.listeners.length) process.send!({ event: 'seen', seq } satisfies ClientEvent);
  }

  fail(error: Error): void {
    // Told at once: the driver would otherwise wait out its deadline for a commit nobody can see.
    if (!this.problem) process.send!({ event: 'failed', error: error.stack ?? error.message } satisfies ClientEvent);
    this.problem ??= error;
  }

  /** Every receipt so far, by commit, handed over once. */
  takeArrivals(): Record<number, number[]> {
    if (this.problem) throw this.problem;
    const out = Object.fromEntries(this.arrivals);
    this.arrivals.clear();
    return out;
  }

  async ready(): Promise<void> {
    const deadline = performance.now() + waitMs;
    while (this.readyCount < this.listeners.length) {
      if (this.problem) throw this.problem;
      if (performance.now() > deadline) throw new Error(`${this.name}: ${this.readyCount} of ${this.listeners.length} listeners were current after ${waitMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (this.problem) throw this.problem;
  }
}

let room: Room | undefined;
let sessions: H2Connection[] = [];
let nextTargetId = 1;
let cpuMark = process.cpuUsage();

function openSession(): Promise<H2Connection> {
  return H2Connection.open(server.origin);
}

const handlers: { [K in keyof ClientOps]: (args: ClientOps[K]['args']) => Promise<ClientOps[K]['result']> } = {
  async open({ room: name, listeners, clients }) {
    const began = performance.now();
    if (room?.name !== name) room = new Room(name);
    const added: H2Connection[] = [];
    for (let i = 0; i < clients; i += openBatch) added.push(...(await Promise.all(Array.from({ length: Math.min(openBatch, clients - i) }, openSession))));
    sessions.push(...added);
    for (let i = 0; i < listeners; i += openBatch) {
      for (let j = i; j < Math.min(listeners, i + openBatch); j++) room.listeners.push(new Listener(added[j % added.length]!, room, nextTargetId++));
      await room.ready();
    }
    const memory = process.memoryUsage();
    return { openMs: performance.now() - began, clientRss: memory.rss };
  },
  async commit({ room: name, seq }) {
    const fields = { room: { stringValue: name }, seq: { integerValue: String(seq) }, stamp: { stringValue: `@@seq=${seq};` } };
    const body = commitBody(server, collection, [{ id: `${name}-${seq % slots}`, fields }]);
    const sentAt = clock();
    const answer = await post(server, ':commit', body);
    const ackAt = clock();
    checkCommit(server, answer, 1);
    return { sentAt, ackAt };
  },
  async take() {
    const used = process.cpuUsage(cpuMark);
    cpuMark = process.cpuUsage();
    return { arrivals: room?.takeArrivals() ?? {}, cpuMs: (used.user + used.system) / 1000 };
  },
  async close() {
    if (room) room.closing = true;
    await Promise.all(sessions.map((session) => session.close()));
    sessions = [];
    room = undefined;
    return null;
  },
};

process.on('message', (request: ClientRequest) => {
  const handler = handlers[request.op] as (args: unknown) => Promise<unknown>;
  handler(request.args).then(
    (result) => process.send!({ id: request.id, ok: true, result } satisfies ClientReply),
    (error: unknown) => process.send!({ id: request.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies ClientReply),
  );
});
// The bench ended without closing this process (a crash, Ctrl-C): end with it.
process.on('disconnect', () => process.exit(0));
process.send!('ready');
