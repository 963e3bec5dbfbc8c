import type { ApiError } from '../../http/api-error.js';
import type { FirestoreCaller } from '../api/access.js';
import type { DatabaseId } from '../core/paths.js';

/**
 * The two bidirectional streams (Listen, Write), independent of their transport. A transport
 * (WebChannel for browsers, gRPC for Node) opens a session with the caller and database it
 * authenticated, hands it each request as proto3 JSON, and forwards what the session sends.
 */
export type StreamKind = 'Listen' | 'Write';

export interface StreamSink {
  /** One ListenResponse / WriteResponse, proto3 JSON. */
  send(message: Record<string, unknown>): void;
  /** Ends the stream with an error status; nothing is sent after it. */
  fail(error: ApiError): void;
}

export interface StreamSession {
  /** One ListenRequest / WriteRequest, proto3 JSON. A bad request ends the stream through `fail`. */
  receive(request: unknown): void;
  /** The client went away (or the transport ended the stream): release everything. */
  close(): void;
}

export interface StreamContext {
  db: DatabaseId;
  caller: FirestoreCaller;
}

export interface StreamOpener {
  open(kind: StreamKind, context: StreamContext, sink: StreamSink): StreamSession;
}
