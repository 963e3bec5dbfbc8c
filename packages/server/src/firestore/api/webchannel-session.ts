import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { ApiError } from '../../http/api-error.js';
import { toApiError } from '../../http/error-handler.js';
import { firestoreErrors } from '../core/errors.js';
import type { DatabaseId } from '../core/paths.js';
import type { StreamKind, StreamSession, StreamSink } from '../streams/stream.js';
import { listenResponseJson } from './listen-encoding.js';
import type { QueueBudget, QueueHolder } from './webchannel-budget.js';

/**
 * One WebChannel session (closure `goog.labs.net.webchannel`, wire version 8) carrying one Listen
 * or Write stream: the client's maps go to the stream in map-id order, and what the stream sends
 * is numbered as arrays and kept until the client acknowledges it (AID), so a back channel that
 * broke can be re-sent on the next. research/firestore-semantics.md §6.3, sdk-protocols.md §B.2.
 */
export interface ChannelTimings {
  /** A streaming back channel gets a noop this often (and the handshake announces it). */
  keepaliveMs: number;
  /** A streaming back channel is ended after this long; the client opens the next one. */
  backChannelMaxMs: number;
  /** A long poll (CI=1) with nothing to send answers a noop after this long (or the client's TO). */
  longPollTimeoutMs: number;
  /**
   * Arrays the client has not acknowledged, in UTF-16 units; past it the stream fails. Past half
   * of it a streaming back channel is ended, so the client opens the next with its acknowledgement.
   */
  maxQueuedChars: number;
  /** Maps waiting for an earlier one (concurrent forward POSTs may arrive out of order). */
  maxPendingMaps: number;
}

/** `<length>\n<json>`; the client slices its responseText, so the length counts UTF-16 code units. */
export function frame(json: string): string {
  return `${json.length}\n${json}`;
}


/**
 * A stream error as the browser SDK reads it (`msg.data[0].error`): it maps `status` to its code
 * and shows `message` as is, so the message carries no "STATUS: " prefix (the emulator adds one).
 */
export function errorPayload(error: ApiError): { error: { code: number; message: string; status: string } } {
  return { error: { ...error.toRpcStatus(), status: error.status ?? 'UNKNOWN' } };
}

interface Outgoing {
  id: number;
  /** `[id,[payload]]` */
  text: string;
}

interface BackChannel {
  body: PassThrough;
  streaming: boolean;
  /** The response it is piped to, when it is an HTTP request's. */
  response: ServerResponse | undefined;
  /** The last stored array written on this back channel. */
  cursor: number;
  /** A write is waiting for the connection to take what was written before (backpressure). */
  blocked: boolean;
  wrote: boolean;
  timers: NodeJS.Timeout[];
}

/**
 * At most this much is written to a back channel at once, and nothing more until the connection
 * has taken it: a client that does not read costs the server no more than this per back channel.
 */
const maxWriteChars = 64 * 1024;

export class ChannelSession implements QueueHolder {
  private stream: StreamSession | undefined;
  private state: 'open' | 'failed' | 'closed' = 'open';
  private outgoing: Outgoing[] = [];
  private queued = 0;
  /** Array 0 is the handshake's `c`. */
  private nextArrayId = 1;
  private lastSentArrayId = 0;
  private nextMapId = 0;
  private readonly pendingMaps = new Map<number, unknown>();
  private back: BackChannel | undefined;
  /** The last back channel opened, open or ended. */
  private lastBack: BackChannel | undefined;
  private flushScheduled = false;
  private opened = false;
  readonly createdAt = Date.now();
  lastActivity = this.createdAt;

  /** What the stream writes to. It may call these before `open` has returned. */
  readonly sink: StreamSink = {
    send: (message) => {
      // Listen's answers share their documents' JSON among listeners (listen-encoding.ts).
      if (this.state === 'open') this.enqueue(this.kind === 'Listen' ? listenResponseJson(message) : JSON.stringify(message));
    },
    fail: (error) => this.fail(error),
  };

  constructor(
    readonly id: string,
    readonly kind: StreamKind,
    readonly db: DatabaseId,
    private readonly timings: ChannelTimings,
    /** The client address its queue counts against (undefined: the administrator's session). */
    readonly address: string | undefined,
    private readonly budget: QueueBudget,
  ) {
    budget.add(this);
  }

  /** Characters kept for the client until it acknowledges them (QueueHolder). */
  get queuedChars(): number {
    return this.queued;
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  get hasBackChannel(): boolean {
    return this.back !== undefined;
  }

  /** Has a back channel ever been opened? The SDK opens one right after the handshake. */
  get everOpened(): boolean {
    return this.opened;
  }

  attach(stream: StreamSession): void {
    if (this.state === 'open') this.stream = stream;
    else safely(() => stream.close());
  }

  /**
   * The client's maps `ofs`, `ofs+1`, … Each reaches the stream once and in order: a retried POST
   * repeats maps already delivered, and maps past a gap wait for it.
   */
  deliver(ofs: number, maps: unknown[]): void {
    this.touch();
    maps.forEach((map, i) => {
      const mapId = ofs + i;
      if (mapId < this.nextMapId || this.pendingMaps.has(mapId)) return;
      if (this.pendingMaps.size >= this.timings.maxPendingMaps) throw firestoreErrors.invalidArgument('Too many maps are waiting for an earlier one.');
      this.pendingMaps.set(mapId, map);
    });
    while (this.pendingMaps.has(this.nextMapId)) {
      const map = this.pendingMaps.get(this.nextMapId);
      this.pendingMaps.delete(this.nextMapId++);
      const stream = this.stream;
      if (this.state !== 'open' || !stream) continue;
      try {
        stream.receive(map);
      } catch (error) {
        this.fail(toApiError(error));
      }
    }
  }

  /** The client has every array up to `aid`: they need not be kept. */
  ack(aid: number): void {
    if (!Number.isSafeInteger(aid)) return;
    let drop = 0;
    let released = 0;
    while (drop < this.outgoing.length && this.outgoing[drop]!.id <= aid) released += this.outgoing[drop++]!.text.length;
    if (drop) {
      this.outgoing.splice(0, drop);
      this.queued -= released;
      this.budget.change(this, -released);
    }
  }

  /** The forward channel's answer: back channel present, last array id sent, characters sent but not acknowledged. */
  forwardAnswer(): string {
    let outstanding = 0;
    for (const message of this.outgoing) if (message.id <= this.lastSentArrayId) outstanding += message.text.length;
    return frame(JSON.stringify([this.back ? 1 : 0, this.lastSentArrayId, outstanding]));
  }

  /**
   * A back channel GET. It replaces any open one, re-sends every unacknowledged array, then either
   * streams (CI=0) or answers once (CI=1). The body it returns is never empty when it ends, since
   * the client counts an empty answer as a failed request.
   */
  openBackChannel(streaming: boolean, longPollMs: number, response?: ServerResponse): PassThrough {
    this.touch();
    this.opened = true;
    if (this.lastBack) this.replaceBackChannel(this.lastBack, response);
    const body = new PassThrough();
    const back: BackChannel = { body, response, streaming, cursor: -1, blocked: false, wrote: false, timers: [] };
    this.back = back;
    this.lastBack = back;
    body.on('close', () => this.detach(back));
    body.on('error', () => this.detach(back)); // a client gone mid-write; 'close' follows
    this.flush();
    if (this.back !== back) return body; // answered (long poll) or finished (failed stream)
    if (streaming) {
      // As the emulator does; the first bytes also tell the client no buffering proxy is in the way.
      this.writeNoop(back);
      back.timers.push(setInterval(() => this.keepalive(back), this.timings.keepaliveMs));
      back.timers.push(setTimeout(() => this.endBackChannel(back), this.timings.backChannelMaxMs));
    } else {
      back.timers.push(setTimeout(() => this.endBackChannel(back), longPollMs));
    }
    return body;
  }

  /** Ends the stream with an error the SDK understands, then `close`; nothing else is sent. */
  fail(error: ApiError): void {
    if (this.state !== 'open') return;
    this.state = 'failed';
    this.closeStream();
    this.push(JSON.stringify(errorPayload(error)));
    this.push('"close"');
    this.scheduleFlush();
  }

  /** Terminate, expiry or shutdown: release the stream and end the back channel. */
  close(): void {
    if (this.state === 'closed') return;
    this.closeStream();
    this.state = 'closed';
    if (this.back) this.endBackChannel(this.back);
    this.dropQueue();
    this.budget.remove(this);
    this.pendingMaps.clear();
  }

  /** The budget's verdict past a bound (QueueBudget): this session holds the most, so it ends. */
  evict(): void {
    if (this.state !== 'open') return;
    this.giveUp();
  }

  /** For shutdown: tell the client to come back later, on whatever back channel is open now. */
  shutDown(): void {
    this.fail(new ApiError(503, 'The server is shutting down.', 'UNAVAILABLE'));
    this.flush();
    this.close();
  }

  private touch(): void {
    this.lastActivity = Date.now();
  }

  private enqueue(json: string): void {
    this.push(json);
    if (this.queued > this.timings.maxQueuedChars) return this.giveUp();
    this.budget.enforce(this);
    this.scheduleFlush();
  }

  /** The client is not reading (or not acknowledging): give up on it rather than grow forever. */
  private giveUp(): void {
    this.dropQueue();
    const back = this.back;
    if (back) {
      this.detach(back);
      back.body.destroy();
    }
    this.fail(firestoreErrors.resourceExhausted('The client is not reading the stream fast enough.'));
  }

  private dropQueue(): void {
    this.budget.change(this, -this.queued);
    this.outgoing = [];
    this.queued = 0;
  }

  private push(json: string): void {
    const id = this.nextArrayId++;
    const text = `[${id},[${json}]]`;
    this.outgoing.push({ id, text });
    this.queued += text.length;
    this.budget.change(this, text.length);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || !this.back) return;
    this.flushScheduled = true;
    // Messages a stream sends in one go (ADD, documents, CURRENT, NO_CHANGE) leave as one frame.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /**
   * Writes what this back channel has not carried yet, as fast as the connection takes it; a long
   * poll then ends, as does a failed stream.
   */
  private flush(): void {
    const back = this.back;
    if (!back) return;
    for (let start = this.firstAfter(back.cursor); start < this.outgoing.length && !back.blocked; start = this.firstAfter(back.cursor)) {
      let end = start + 1;
      let chars = this.outgoing[start]!.text.length;
      while (end < this.outgoing.length && chars + this.outgoing[end]!.text.length <= maxWriteChars) chars += this.outgoing[end++]!.text.length;
      const batch = this.outgoing.slice(start, end);
      back.cursor = batch[batch.length - 1]!.id;
      this.write(back, `[${batch.map((message) => message.text).join(',')}]`, back.cursor);
      if (back.body.destroyed || back.body.writableEnded) return;
    }
    if (back.blocked) return; // the rest, and the end, once the connection has taken this
    // Past half the budget, end a streaming back channel: the client opens the next one with its acknowledgement.
    const recycle = back.streaming && this.queued > this.timings.maxQueuedChars / 2;
    if (back.wrote && (!back.streaming || this.state === 'failed' || recycle)) this.endBackChannel(back);
  }

  /** The index of the first kept array after `id` (ids only grow). */
  private firstAfter(id: number): number {
    let low = 0;
    let high = this.outgoing.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.outgoing[middle]!.id <= id) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private keepalive(back: BackChannel): void {
    if (this.back !== back || back.blocked) return;
    if (this.firstAfter(back.cursor) < this.outgoing.length) this.flush();
    else this.writeNoop(back);
  }

  /** Noops take an array id but are not kept: nothing is lost if one never arrives. */
  private writeNoop(back: BackChannel): void {
    const id = this.nextArrayId++;
    this.write(back, `[[${id},["noop"]]]`, id);
  }

  private write(back: BackChannel, json: string, lastId: number): void {
    if (back.body.destroyed || back.body.writableEnded) return;
    const more = back.body.write(frame(json));
    back.wrote = true;
    this.lastSentArrayId = Math.max(this.lastSentArrayId, lastId);
    if (!more) {
      back.blocked = true;
      back.body.once('drain', () => {
        back.blocked = false;
        if (this.back === back) this.flush();
      });
    }
  }

  private endBackChannel(back: BackChannel): void {
    if (this.back === back && !back.wrote) this.writeNoop(back);
    this.detach(back);
    if (!back.body.destroyed) back.body.end();
  }

  /**
   * The client opened another back channel: it has given this one up (a well-behaved client reads
   * one to its end before it opens the next). What it still holds, for a client that does not
   * read, is dropped rather than kept beside the next one's copy.
   */
  private replaceBackChannel(back: BackChannel, next: ServerResponse | undefined): void {
    const buffered = back.body.writableLength + back.body.readableLength + (back.response?.writableLength ?? 0) > 0;
    const unread = buffered || (this.back !== back && back.response !== undefined && !back.response.writableFinished);
    // On the same connection the new request waits behind this answer: ending it lets it through.
    const sameConnection = back.response !== undefined && back.response.socket === next?.socket;
    if (!unread || sameConnection) {
      if (this.back === back) this.endBackChannel(back);
      return;
    }
    this.detach(back);
    back.body.destroy();
    back.response?.destroy();
  }

  private detach(back: BackChannel): void {
    for (const timer of back.timers) clearTimeout(timer);
    back.timers = [];
    if (this.back === back) {
      this.back = undefined;
      this.touch();
    }
  }

  private closeStream(): void {
    const stream = this.stream;
    this.stream = undefined;
    if (stream) safely(() => stream.close());
  }
}

function safely(action: () => void): void {
  try {
    action();
  } catch {
    // a stream that fails to close has nothing left to tell the client
  }
}
