import type * as grpc from '@grpc/grpc-js';
import type { ServerHttp2Stream } from 'node:http2';

type Json = Record<string, unknown>;

/**
 * Several messages of one call written as one HTTP/2 write. A commit sends each listener at least
 * two messages (its documents, then the global NO_CHANGE); through `call.write` each is a write of
 * its own through two Node streams (grpc-js's object stream, then the HTTP/2 stream), and with
 * 1,000 listeners those writes were about two thirds of the server's CPU per commit. Framing the
 * messages here (gRPC's 5-byte prefix each, by `frame`: listen-encoding.ts) and writing them to the
 * HTTP/2 stream at once halves the writes and skips the object stream.
 *
 * grpc-js (1.14, as pinned in package.json) has no public way to do this: the call's `call` is its BaseServerInterceptingCall
 * when the server has no interceptors, holding the HTTP/2 `stream`, and `maybeSendMetadata` sends
 * the response headers before the first message as its own sendMessage does. If those are not
 * found (another grpc-js version, interceptors), undefined is returned and the caller keeps
 * `call.write`, which is always correct.
 */
interface BaseCall {
  stream: ServerHttp2Stream;
  maybeSendMetadata(): void;
  checkCancelled(): boolean;
}

function baseCallOf(call: grpc.ServerDuplexStream<Json, Json>): BaseCall | undefined {
  const inner = (call as unknown as { call?: Partial<BaseCall> }).call;
  if (!inner || typeof inner.maybeSendMetadata !== 'function' || typeof inner.checkCancelled !== 'function') return undefined;
  const stream = inner.stream;
  if (!stream || typeof stream.write !== 'function' || typeof stream.respond !== 'function') return undefined;
  return inner as BaseCall;
}

/** Writes messages in one go, or returns false when they must go through `call.write`. */
export type BatchWriter = (messages: Json[]) => boolean;

export function batchWriter(call: grpc.ServerDuplexStream<Json, Json>, frame: (messages: Json[]) => Buffer): BatchWriter | undefined {
  const base = baseCallOf(call);
  if (!base) return undefined;
  return (messages) => {
    // Anything grpc-js's own stream still holds must go first: keep to it then.
    if (call.writableLength > 0) return false;
    if (base.checkCancelled()) return true;
    const stream = base.stream;
    if (stream.destroyed || stream.writableEnded) return true;
    const out = frame(messages);
    base.maybeSendMetadata();
    stream.write(out);
    return true;
  };
}

/**
 * Streams with messages to write, written together once the current turn is over: a commit sent to
 * a thousand listeners schedules one tick, not one per stream (a nextTick each was a tenth of the
 * fan-out's CPU). nextTick, not queueMicrotask: the latter makes an async resource per call.
 */
let writesDue: Array<() => void> = [];

export function writeAtTick(write: () => void): void {
  writesDue.push(write);
  if (writesDue.length === 1) process.nextTick(writeDue);
}

function writeDue(): void {
  const due = writesDue;
  writesDue = [];
  let at = 0;
  try {
    for (; at < due.length; at++) due[at]!();
  } finally {
    // One that throws does not keep the others' messages back.
    for (const write of due.slice(at + 1)) writeAtTick(write);
  }
}
