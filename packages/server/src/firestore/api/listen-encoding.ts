import type protobuf from 'protobufjs';
import { messageFromJson } from './grpc-codec.js';

/**
 * Listen fan-out, encoded once. A commit seen by N listeners of one query sends each of them the
 * same document and the same global NO_CHANGE; only the target id differs. The stream layer hands
 * every listener the same wire objects (listen-gate.ts `sharedWire`, listen-shared.ts `readTimeChange`), so the
 * transports key their encodings by object identity: a document is turned into protobuf bytes (gRPC)
 * or JSON text (WebChannel) once, and each listener's message is that shared part with its own
 * target id written around it. Everything else takes the general path. Wire objects are never
 * changed once built, so a cached encoding stays valid as long as its object lives (WeakMap).
 */

type Json = Record<string, unknown>;

/** `{documentChange: {document, targetIds: [id]}}` (or `removedTargetIds`) with a shared document, else undefined. */
function singleTargetDocumentChange(message: Json): { document: Json; id: number; removed: boolean } | undefined {
  const change = message.documentChange as Json | undefined;
  if (change === undefined || typeof change !== 'object' || change === null) return undefined;
  let keys = 0;
  for (const _key in message) keys++;
  if (keys !== 1) return undefined;
  const document = change.document;
  const ids = (change.targetIds ?? change.removedTargetIds) as unknown;
  let inner = 0;
  for (const _key in change) inner++;
  if (inner !== 2 || typeof document !== 'object' || document === null || !Array.isArray(ids) || ids.length !== 1) return undefined;
  const id = ids[0] as unknown;
  // int32 on the wire: ids past it take the general path (and its errors).
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > 0x7fffffff) return undefined;
  return { document: document as Json, id, removed: change.targetIds === undefined };
}

/** The global NO_CHANGE (a targetChange naming no target): one object per read time, sent to every listener. */
function globalTargetChange(message: Json): Json | undefined {
  const change = message.targetChange as Json | undefined;
  if (typeof change !== 'object' || change === null || change.targetIds !== undefined || change.targetChangeType !== undefined) return undefined;
  for (const key in message) if (key !== 'targetChange') return undefined;
  return change;
}

// ---- gRPC: protobuf bytes ----------------------------------------------------------------------

const documentBytes = new WeakMap<object, Uint8Array>();
const targetChangeBytes = new WeakMap<object, Uint8Array>();

function varintLength(value: number): number {
  let length = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    length++;
  }
  return length;
}

function writeVarint(out: Buffer, at: number, value: number): number {
  while (value >= 0x80) {
    out[at++] = (value & 0x7f) | 0x80;
    value = Math.floor(value / 128);
  }
  out[at++] = value;
  return at;
}

/**
 * A single-target documentChange up to its target id (the Document's bytes encoded once per
 * document and shared): its length without the id, and a writer of those bytes at `at` of `out`,
 * returning where the id goes. `idLength`: the id's varint length, which the lengths before it count.
 */
function documentChangeHead(documentType: protobuf.Type, change: { document: Json; removed: boolean }, idLength: number): { length: number; write(out: Buffer, at: number): number } {
  let doc = documentBytes.get(change.document);
  if (!doc) {
    doc = documentType.encode(messageFromJson(documentType, change.document)).finish();
    documentBytes.set(change.document, doc);
  }
  const bytes = doc;
  const inner = 1 + varintLength(bytes.length) + bytes.length + 1 + 1 + idLength;
  return {
    length: 1 + varintLength(inner) + inner - idLength,
    write(out, at) {
      out[at++] = 0x1a;
      at = writeVarint(out, at, inner);
      out[at++] = 0x0a;
      at = writeVarint(out, at, bytes.length);
      out.set(bytes, at);
      at += bytes.length;
      out[at++] = change.removed ? 0x32 : 0x2a;
      out[at++] = idLength;
      return at;
    },
  };
}

/**
 * The gRPC serializer of ListenResponse. A single-target documentChange is
 * `0x1a len (0x0a len <Document bytes, shared>) (0x2a|0x32 len <varint id>)`: field 3
 * documentChange, holding field 1 document and the packed field 5 target_ids (6 removed_target_ids).
 */
export function listenResponseSerializer(responseType: protobuf.Type): (message: Json) => Buffer {
  const documentType = responseType.lookupType('google.firestore.v1.Document');
  const general = (message: Json) => Buffer.from(responseType.encode(messageFromJson(responseType, message)).finish());
  return (message) => {
    const change = singleTargetDocumentChange(message);
    if (change) {
      const idLength = varintLength(change.id);
      const head = documentChangeHead(documentType, change, idLength);
      const out = Buffer.allocUnsafe(head.length + idLength);
      writeVarint(out, head.write(out, 0), change.id);
      return out;
    }
    const global = globalTargetChange(message);
    if (global) {
      let bytes = targetChangeBytes.get(global);
      if (!bytes) {
        bytes = general(message);
        targetChangeBytes.set(global, bytes);
      }
      // grpc-js copies it into its frame; the cached bytes are never handed out to be changed.
      return bytes as Buffer;
    }
    return general(message);
  };
}

/** A message behind gRPC's 5-byte prefix (uncompressed, its length). */
function grpcFrame(body: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + body.length);
  out[0] = 0;
  out.writeUInt32BE(body.length, 1);
  out.set(body, 5);
  return out;
}

/**
 * What a Listen call sends in one go (a commit's documents, then the global NO_CHANGE), as gRPC
 * frames in one buffer: the bytes `listenResponseSerializer` makes, each behind its 5-byte prefix.
 * After a commit every listener of a query sends the same frames but for its target id, so the
 * frame of a single-target documentChange up to the id is built once per document (and id length,
 * which the lengths before it count), the framed NO_CHANGE once per read time; a listener's buffer
 * is those copied, its id written in.
 */
export function listenFramer(responseType: protobuf.Type): (messages: Json[]) => Buffer {
  const documentType = responseType.lookupType('google.firestore.v1.Document');
  const serialize = listenResponseSerializer(responseType);
  const heads: Uint8Array[] = [];
  const ids: number[] = [];
  const headOf = (change: { document: Json; id: number; removed: boolean }, idLength: number): Uint8Array => {
    let frames = documentFrames.get(change.document);
    if (!frames) documentFrames.set(change.document, (frames = []));
    const slot = idLength * 2 + (change.removed ? 1 : 0);
    let framed = frames[slot];
    if (!framed) {
      const head = documentChangeHead(documentType, change, idLength);
      const out = Buffer.allocUnsafe(5 + head.length);
      out[0] = 0;
      out.writeUInt32BE(head.length + idLength, 1);
      head.write(out, 5);
      frames[slot] = framed = out;
    }
    return framed;
  };
  return (messages) => {
    heads.length = 0;
    ids.length = 0;
    let length = 0;
    for (const message of messages) {
      const change = singleTargetDocumentChange(message);
      let head: Uint8Array;
      if (change) {
        const idLength = varintLength(change.id);
        head = headOf(change, idLength);
        ids.push(change.id);
        length += idLength;
      } else {
        const global = globalTargetChange(message);
        let framed = global && targetChangeFrames.get(global);
        if (!framed) {
          framed = grpcFrame(serialize(message));
          if (global) targetChangeFrames.set(global, framed);
        }
        head = framed;
        ids.push(-1);
      }
      heads.push(head);
      length += head.length;
    }
    const out = Buffer.allocUnsafe(length);
    let at = 0;
    for (let i = 0; i < heads.length; i++) {
      out.set(heads[i]!, at);
      at += heads[i]!.length;
      if (ids[i]! >= 0) at = writeVarint(out, at, ids[i]!);
    }
    return out;
  };
}

/** By document: its documentChange frames up to the target id, by id length and kind (`listenFramer`). */
const documentFrames = new WeakMap<object, Array<Uint8Array | undefined>>();
const targetChangeFrames = new WeakMap<object, Buffer>();

// ---- WebChannel: JSON text -----------------------------------------------------------------------

const documentJson = new WeakMap<object, string>();
const targetChangeJson = new WeakMap<object, string>();

/** JSON.stringify(message) for a ListenResponse, with the shared parts stringified once. */
export function listenResponseJson(message: Json): string {
  const change = singleTargetDocumentChange(message);
  if (change) {
    let doc = documentJson.get(change.document);
    if (doc === undefined) {
      doc = JSON.stringify(change.document);
      documentJson.set(change.document, doc);
    }
    return `{"documentChange":{"document":${doc},"${change.removed ? 'removedTargetIds' : 'targetIds'}":[${change.id}]}}`;
  }
  const global = globalTargetChange(message);
  if (global) {
    let text = targetChangeJson.get(global);
    if (text === undefined) {
      text = JSON.stringify(message);
      targetChangeJson.set(global, text);
    }
    return text;
  }
  return JSON.stringify(message);
}
