/**
 * Listen streams spoken raw, for what the SDKs cannot ask (a resume token or read time of one's own choosing):
 * over gRPC (grpc-js, messages encoded with the protos @google-cloud/firestore ships, so against Hearth or Google's
 * emulator alike) and over WebChannel (raw HTTP, tests/helpers/firestore-webchannel.ts). Requests are written and
 * responses read as proto3 JSON; `disclosures` says what a stream told about documents.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { handshake, type ChannelServer, type Reader, type Session } from './firestore-webchannel.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- proto3 JSON, read loosely by the tests
export type ListenMessage = Record<string, any>;

export interface RawListen {
  /** Every ListenResponse so far, as proto3 JSON. */
  readonly messages: ListenMessage[];
  /** Waits (up to `ms`) until the messages received pass `test`. */
  until(test: (messages: ListenMessage[]) => boolean, what: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

const root = protobuf.Root.fromJSON(createRequire(import.meta.url)('@google-cloud/firestore/build/protos/v1.json') as protobuf.INamespace);
const listenRequest = root.lookupType('google.firestore.v1.ListenRequest');
const listenResponse = root.lookupType('google.firestore.v1.ListenResponse');

/** RFC 3339 text -> google.protobuf.Timestamp, for the request fields that carry one. */
function timestamp(text: string): { seconds: number; nanos: number } {
  const match = /^(.*?)(?:\.(\d{1,9}))?Z$/.exec(text);
  assert.ok(match, `not an RFC 3339 time: ${text}`);
  return { seconds: Math.floor(Date.parse(`${match[1]}Z`) / 1000), nanos: Number((match[2] ?? '').padEnd(9, '0')) };
}

function toTimestampText(value: { seconds: string; nanos?: number }): string {
  const date = new Date(Number(value.seconds) * 1000).toISOString().slice(0, 19);
  return `${date}.${String(value.nanos ?? 0).padStart(9, '0')}Z`;
}

/** The proto3 JSON of a decoded message: timestamps as RFC 3339 text, the rest as protobufjs gives it. */
function jsonOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonOf);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const keys = entries.map(([key]) => key).sort().join();
  if (keys === 'nanos,seconds' || keys === 'seconds') return toTimestampText(value as { seconds: string; nanos?: number });
  return Object.fromEntries(entries.map(([key, inner]) => [key, jsonOf(inner)]));
}

function encodeRequest(request: ListenMessage): Buffer {
  const copy = structuredClone(request);
  if (typeof copy.addTarget?.readTime === 'string') copy.addTarget.readTime = timestamp(copy.addTarget.readTime);
  const problem = listenRequest.verify(listenRequest.fromObject(copy));
  assert.equal(problem, null, `ListenRequest: ${problem}`);
  return Buffer.from(listenRequest.encode(listenRequest.fromObject(copy)).finish());
}

function decodeResponse(bytes: Buffer): ListenMessage {
  const message = listenResponse.decode(bytes);
  return jsonOf(listenResponse.toObject(message, { enums: String, longs: String, bytes: String, defaults: false, oneofs: false })) as ListenMessage;
}

/** Polls `messages` until `test` passes, or fails naming `what` and what came. */
async function waitFor(messages: ListenMessage[], test: (messages: ListenMessage[]) => boolean, what: string, ms: number, failed: () => string | undefined): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test(messages)) {
    const failure = failed();
    if (failure) assert.fail(`the stream ended (${failure}) before ${what}: ${JSON.stringify(messages)}`);
    if (Date.now() > deadline) assert.fail(`no ${what} within ${ms} ms: ${JSON.stringify(messages)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A Listen call over gRPC to `hostPort` (no TLS), with `authorization` as its metadata when given. */
export function grpcListen(hostPort: string, authorization: string | undefined, requests: ListenMessage[]): RawListen {
  const client = new grpc.Client(hostPort, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  if (authorization) metadata.set('authorization', authorization);
  // What the SDKs send: Google's emulator routes by it.
  if (typeof requests[0]?.database === 'string') metadata.set('google-cloud-resource-prefix', requests[0].database);
  const call = client.makeBidiStreamRequest('/google.firestore.v1.Firestore/Listen', encodeRequest, decodeResponse, metadata);
  const messages: ListenMessage[] = [];
  let ended: string | undefined;
  call.on('data', (message: ListenMessage) => messages.push(message));
  call.on('error', (error: grpc.ServiceError) => (ended = `${error.code} ${error.details}`));
  call.on('end', () => (ended ??= 'end'));
  for (const request of requests) call.write(request);
  return {
    messages,
    until: (test, what, ms = 15_000) => waitFor(messages, test, what, ms, () => ended),
    async close() {
      call.cancel();
      client.close();
    },
  };
}

/** A Listen session over WebChannel (raw HTTP, as the browser SDK speaks it) on Hearth's HTTP port. */
export async function webChannelListen(port: number, database: string, authorization: string | undefined, requests: ListenMessage[]): Promise<RawListen> {
  const [first, ...rest] = requests;
  // '' rather than undefined: the helper's default is the --dev owner.
  const { session } = await handshake({ port } as ChannelServer, 'Listen', first, authorization ?? '', database);
  const messages: ListenMessage[] = [];
  let back: Reader | undefined;
  const sessionOf: Session = session;
  let ofs = 1;
  for (const request of rest) await sessionOf.forward(0, ofs++, [request]);
  // One back channel at a time: each long poll answers what is queued, read on from where the last one stopped.
  let closed = false;
  const poll = async () => {
    let aid = 0;
    while (!closed) {
      back = sessionOf.back(aid, 1);
      await back.ended.catch(() => undefined);
      const arrays = (back.text ? payloadsWithIds(back.text) : []).filter(([id]) => id > aid);
      for (const [id, payload] of arrays) {
        aid = Math.max(aid, id);
        if (payload !== 'noop' && typeof payload === 'object') messages.push(payload as ListenMessage);
      }
    }
  };
  const polling = poll();
  return {
    messages,
    until: (test, what, ms = 15_000) => waitFor(messages, test, what, ms, () => undefined),
    async close() {
      closed = true;
      back?.abort();
      await sessionOf.terminate().catch(() => undefined);
      await polling.catch(() => undefined);
    },
  };
}

function payloadsWithIds(text: string): Array<[number, unknown]> {
  const frames: Array<[number, unknown]> = [];
  let at = 0;
  while (at < text.length) {
    const newline = text.indexOf('\n', at);
    if (newline < 0) break;
    const length = Number(text.slice(at, newline));
    const raw = text.slice(newline + 1, newline + 1 + length);
    at = newline + 1 + length;
    for (const [id, data] of JSON.parse(raw) as Array<[number, [unknown]]>) frames.push([id, data[0]]);
  }
  return frames;
}

/** What a stream told about documents: their content (with the target ids it came for), removals, deletes. */
export interface Disclosure {
  kind: 'content' | 'removed' | 'deleted';
  /** Relative to the database's documents: `posts/p1`. */
  path: string;
  fields?: Record<string, unknown>;
  /** For content: whether it came as leaving targets (removedTargetIds) rather than in them. */
  leaving?: boolean;
}

export function disclosures(messages: ListenMessage[]): Disclosure[] {
  const relative = (name: string) => name.replace(/^projects\/[^/]+\/databases\/[^/]+\/documents\//, '');
  const out: Disclosure[] = [];
  for (const message of messages) {
    if (message.documentChange) {
      const change = message.documentChange;
      out.push({ kind: 'content', path: relative(change.document.name as string), fields: change.document.fields ?? {}, leaving: !change.targetIds?.length });
    } else if (message.documentRemove) out.push({ kind: 'removed', path: relative(message.documentRemove.document as string) });
    else if (message.documentDelete) out.push({ kind: 'deleted', path: relative(message.documentDelete.document as string) });
  }
  return out;
}

/** The stream reached CURRENT for `targetId` and the global snapshot after it. */
export function currentFor(targetId: number): (messages: ListenMessage[]) => boolean {
  return (messages) => {
    const current = messages.findIndex((m) => m.targetChange?.targetChangeType === 'CURRENT' && m.targetChange.targetIds?.includes(targetId));
    return current >= 0 && messages.slice(current + 1).some((m) => m.targetChange && !m.targetChange.targetChangeType && !m.targetChange.targetIds?.length);
  };
}

/** The target was removed (with or without a cause). */
export function removedTarget(targetId: number): (messages: ListenMessage[]) => boolean {
  return (messages) => messages.some((m) => m.targetChange?.targetChangeType === 'REMOVE' && m.targetChange.targetIds?.includes(targetId));
}
