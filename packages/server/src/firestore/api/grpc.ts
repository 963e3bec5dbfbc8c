import { firestoreMetrics } from '../../http/metrics.js';
import * as grpc from '@grpc/grpc-js';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type protobuf from 'protobufjs';
import { ApiError } from '../../http/api-error.js';
import { toApiError } from '../../http/error-handler.js';
import type { DocumentDatabase } from '../core/database.js';
import { firestoreErrors } from '../core/errors.js';
import { parseDatabaseName, pathSegments, relativeName, type DatabaseId, type DatabaseIdRule } from '../core/paths.js';
import type { StreamKind, StreamOpener, StreamSession } from '../streams/stream.js';
import type { FirestoreAccess, FirestoreCaller } from './access.js';
import type { RequestJudge } from '../security/guard.js';
import { createDocument, getDocument, listDocuments, patchDocument, type QueryParams } from './document-handlers.js';
import { decodeRequest, loadFirestoreRoot, messageFromJson, messageToJson, requestProblem } from './grpc-codec.js';
import { batchWriter, writeAtTick } from './grpc-batch-writer.js';
import { listenFramer, listenResponseSerializer } from './listen-encoding.js';
import { callVerb, firestoreBodyLimit } from './rest-routes.js';
import { addressOfGrpcPeer, forwardedBy, type Peer } from '../../auth/api/functions-credential.js';
import { hostPort } from '../../http/host-port.js';

/**
 * google.firestore.v1.Firestore over gRPC, for the Node SDKs (firebase-admin, and the firebase
 * package when it runs in Node). A thin adapter: messages are converted to proto3 JSON and served
 * by the same verbs, document handlers and stream sessions as REST and WebChannel.
 */

type Json = Record<string, unknown>;

export interface GrpcOptions {
  database: DocumentDatabase;
  access: FirestoreAccess;
  streams: StreamOpener;
  /** Also listen on this port by itself (0 picks one); connections handed over by `shareHttpPort` are served either way. */
  port?: number;
  host?: string;
  logger?: Logger;
}

export interface FirestoreGrpc {
  /** The port gRPC listens on by itself; undefined when it only serves connections handed to it. */
  port: number | undefined;
  /** Serves a connection whose first bytes are the HTTP/2 preface (they may have been unshifted); see shared-port.ts. */
  injectConnection(connection: Duplex): void;
  /** Ends every call and connection at once. */
  close(): Promise<void>;
}

const service = 'google.firestore.v1.Firestore';
/** Messages past this are refused by grpc-js itself before they are decoded (RESOURCE_EXHAUSTED). */
export const grpcTransportCeiling = 4 * firestoreBodyLimit;

export async function startGrpc(options: GrpcOptions): Promise<FirestoreGrpc> {
  const root = loadFirestoreRoot();
  // A message over the limit is answered by the handler with INVALID_ARGUMENT, as Google does.
  // grpc-js's own refusal (RESOURCE_EXHAUSTED) is one the SDKs retry with backoff: a batch just over
  // the limit left firebase-admin's commit retrying for minutes. The transport's ceiling stays for
  // what no client sends by mistake.
  const server = new grpc.Server({ 'grpc.max_receive_message_length': grpcTransportCeiling, 'grpc.max_send_message_length': -1 });
  server.addService(serviceDefinition(root), implementation(options, root));
  const credentials = grpc.ServerCredentials.createInsecure();
  const injector = server.createConnectionInjector(credentials);
  let port: number | undefined;
  const ownPort = options.port;
  if (ownPort !== undefined) {
    const host = options.host ?? '127.0.0.1';
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(hostPort(host, ownPort), credentials, (error, bound) => (error ? reject(error) : resolve(bound))),
    );
  }
  let closed = false;
  return {
    port,
    injectConnection(connection) {
      if (closed) connection.destroy();
      else injector.injectConnection(connection);
    },
    async close() {
      if (closed) return;
      closed = true;
      injector.destroy();
      server.forceShutdown();
    },
  };
}

// ---- the service definition -------------------------------------------------------------------

const listenSerializers = new WeakMap<protobuf.Root, (message: Json) => Buffer>();

const listenFramers = new WeakMap<protobuf.Root, (messages: Json[]) => Buffer>();

function listenFramerOf(root: protobuf.Root): (messages: Json[]) => Buffer {
  let framer = listenFramers.get(root);
  if (!framer) {
    framer = listenFramer(root.lookupType('google.firestore.v1.ListenResponse'));
    listenFramers.set(root, framer);
  }
  return framer;
}

function listenSerializer(root: protobuf.Root): (message: Json) => Buffer {
  let serializer = listenSerializers.get(root);
  if (!serializer) {
    serializer = listenResponseSerializer(root.lookupType('google.firestore.v1.ListenResponse'));
    listenSerializers.set(root, serializer);
  }
  return serializer;
}

function serviceDefinition(root: protobuf.Root): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<Json, unknown>> = {};
  for (const method of root.lookupService(service).methodsArray) {
    const requestType = method.resolvedRequestType!;
    const responseType = method.resolvedResponseType!;
    definition[method.name] = {
      path: `/${service}/${method.name}`,
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
      // grpc-js answers anything thrown here with INTERNAL: a message that does not decode is
      // carried to the handler, which answers INVALID_ARGUMENT.
      requestDeserialize: (bytes: Buffer) => decodeRequest(requestType, bytes, firestoreBodyLimit) as Json,
      requestSerialize: (json: Json) => Buffer.from(requestType.encode(messageFromJson(requestType, json)).finish()),
      // Listen's answers share their documents' bytes among listeners (listen-encoding.ts).
      responseSerialize:
        method.name === 'Listen' ? (listenSerializer(root) as (json: unknown) => Buffer) : (json: unknown) => Buffer.from(responseType.encode(messageFromJson(responseType, json)).finish()),
      responseDeserialize: (bytes: Buffer) => messageToJson(responseType, responseType.decode(bytes) as unknown as Json),
    };
  }
  return definition;
}

interface CallContext {
  db: DatabaseId;
  caller: FirestoreCaller;
  request: Json;
}

type Handler = (context: CallContext) => Promise<unknown>;

/** Where each RPC names its database. */
const databaseField: Record<string, (request: Json) => unknown> = {
  GetDocument: (request) => request.name,
  DeleteDocument: (request) => request.name,
  UpdateDocument: (request) => (request.document as Json | undefined)?.name,
  ListDocuments: (request) => request.parent,
  CreateDocument: (request) => request.parent,
  RunQuery: (request) => request.parent,
  RunAggregationQuery: (request) => request.parent,
  PartitionQuery: (request) => request.parent,
  ListCollectionIds: (request) => request.parent,
};

function implementation(options: GrpcOptions, root: protobuf.Root): grpc.UntypedServiceImplementation {
  const { database, access } = options;
  const verb =
    (name: string, routing: 'database' | 'parent'): Handler =>
    ({ db, caller, request }) => {
      const { [routing]: _routing, ...body } = request;
      return callVerb(database, access, caller, db, routing === 'parent' ? documentPath(db, request.parent) : '', name, body);
    };
  // Document calls reach the database directly (verbs judge in callVerb): each gets its caller's judge.
  const documentCall =
    (handler: (context: CallContext, judge: RequestJudge) => Promise<unknown>): Handler =>
    (call) =>
      handler(call, access.judge(call.caller, call.db));
  const collectionSegments = (db: DatabaseId, request: Json): string[] => {
    if (typeof request.collectionId !== 'string' || request.collectionId === '') throw firestoreErrors.invalidArgument('collectionId must be set.');
    return [...pathSegments(documentPath(db, request.parent)), request.collectionId];
  };
  const unary: Record<string, Handler> = {
    GetDocument: documentCall(async ({ db, request }, judge) => {
      return getDocument(database, judge, db, documentPath(db, request.name), {
        ...maskParam(request.mask, 'mask'),
        ...stringParam('transaction', request.transaction),
        ...stringParam('readTime', request.readTime),
      });
    }),
    ListDocuments: documentCall(async ({ db, request }, judge) => {
      return listDocuments(database, judge, db, collectionSegments(db, request), {
        ...stringParam('pageSize', request.pageSize),
        ...stringParam('pageToken', request.pageToken),
        ...stringParam('orderBy', request.orderBy),
        ...stringParam('showMissing', request.showMissing),
        ...stringParam('transaction', request.transaction),
        ...stringParam('readTime', request.readTime),
        ...maskParam(request.mask, 'mask'),
      });
    }),
    CreateDocument: documentCall(async ({ db, request }, judge) => {
      const query = { ...stringParam('documentId', request.documentId), ...maskParam(request.mask, 'mask') };
      return createDocument(database, judge, db, collectionSegments(db, request), query, (request.document ?? {}) as Json);
    }),
    UpdateDocument: documentCall(async ({ db, request }, judge) => {
      const document = (request.document ?? {}) as Json;
      const precondition = (request.currentDocument ?? {}) as Json;
      return patchDocument(
        database,
        judge,
        db,
        documentPath(db, document.name),
        {
          ...maskParam(request.updateMask, 'updateMask'),
          ...maskParam(request.mask, 'mask'),
          ...stringParam('currentDocument.exists', precondition.exists),
          ...stringParam('currentDocument.updateTime', precondition.updateTime),
        },
        document,
      );
    }),
    DeleteDocument: async ({ db, caller, request }) => {
      const write: Json = { delete: request.name };
      if (request.currentDocument !== undefined) write.currentDocument = request.currentDocument;
      await callVerb(database, access, caller, db, '', 'commit', { writes: [write] });
      return {};
    },
    BeginTransaction: verb('beginTransaction', 'database'),
    Commit: verb('commit', 'database'),
    Rollback: verb('rollback', 'database'),
    BatchWrite: verb('batchWrite', 'database'),
    ListCollectionIds: verb('listCollectionIds', 'parent'),
    PartitionQuery: verb('partitionQuery', 'parent'),
  };
  const serverStreaming: Record<string, Handler> = {
    BatchGetDocuments: verb('batchGet', 'database'),
    RunQuery: verb('runQuery', 'parent'),
    RunAggregationQuery: verb('runAggregationQuery', 'parent'),
  };

  const context = async (method: string, call: { metadata: grpc.Metadata; getPeer(): string }, request: Json): Promise<CallContext> => {
    const problem = requestProblem(request);
    if (problem) throw problem;
    const db = databaseOf(databaseField[method]?.(request) ?? request.database, call.metadata, access.databaseIdRule);
    return { db, caller: await access.callerOf(authorization(call.metadata), db.projectId, false, peerOfCall(call)), request };
  };
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const [method, handler] of Object.entries(unary)) {
    handlers[method] = (call: grpc.ServerUnaryCall<Json, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      context(method, call, call.request)
        .then(handler)
        .then(
          (response) => callback(null, response),
          (error: unknown) => callback(toStatus(error, options.logger)),
        );
    };
  }
  for (const [method, handler] of Object.entries(serverStreaming)) {
    handlers[method] = (call: grpc.ServerWritableStream<Json, unknown>) => {
      context(method, call, call.request)
        .then(handler)
        .then(
          (responses) => {
            for (const response of responses as unknown[]) {
              if (call.cancelled) return;
              call.write(response);
            }
            call.end();
          },
          (error: unknown) => call.emit('error', toStatus(error, options.logger)),
        );
    };
  }
  handlers.Listen = bidi('Listen', options, listenFramerOf(root));
  handlers.Write = bidi('Write', options);
  return handlers;
}

/**
 * Listen and Write: a session opens once the database is known (the first request's `database`,
 * else the `google-cloud-resource-prefix` metadata) and the caller authenticated; requests that
 * arrive meanwhile wait for it.
 */
function bidi(kind: StreamKind, options: GrpcOptions, frame?: (messages: Json[]) => Buffer): grpc.handleBidiStreamingCall<Json, Json> {
  return (call) => {
    let session: StreamSession | undefined;
    let opening = false;
    let finished = false;
    let cancelled = false;
    const waiting: Json[] = [];
    const uncount = firestoreMetrics.grpcStreamOpened();
    call.once('close', uncount);
    // Messages a session sends in one go (a commit's documents and NO_CHANGE) leave in one write.
    const batch = frame ? batchWriter(call, frame) : undefined;
    let outgoing: Json[] = [];
    const writeOutgoing = () => {
      const messages = outgoing;
      outgoing = [];
      if (cancelled || !messages.length) return;
      if (!batch!(messages)) for (const message of messages) call.write(message);
    };
    const finish = (error?: unknown) => {
      if (finished) return;
      if (batch) writeOutgoing();
      finished = true;
      uncount();
      session?.close();
      if (error === undefined) call.end();
      else call.emit('error', toStatus(error, options.logger));
    };
    const open = async (first: Json) => {
      const db = databaseOf(first.database, call.metadata, options.access.databaseIdRule);
      const caller = await options.access.callerOf(authorization(call.metadata), db.projectId, false, peerOfCall(call));
      if (finished) return;
      const sink = {
        send: (message: Json) => {
          if (finished) return;
          if (!batch) return call.write(message);
          outgoing.push(message);
          if (outgoing.length === 1) writeAtTick(writeOutgoing);
        },
        fail: (error: ApiError) => finish(error),
      };
      session = options.streams.open(kind, { db, caller }, sink);
      for (const request of waiting.splice(0)) if (!finished) session.receive(request);
    };
    call.on('data', (request: Json) => {
      if (finished) return;
      const problem = requestProblem(request);
      if (problem) return finish(problem);
      if (session) return session.receive(request);
      waiting.push(request);
      if (opening) return;
      opening = true;
      open(request).catch(finish);
    });
    // The client half-closed its side: the stream is over.
    call.on('end', () => finish());
    call.on('cancelled', () => {
      finished = true;
      cancelled = true;
      uncount();
      session?.close();
    });
  };
}

// ---- names, metadata, errors --------------------------------------------------------------------

/** `projects/{p}/databases/{d}`, possibly followed by `/documents…`; else the metadata's prefix. */
function databaseOf(name: unknown, metadata: grpc.Metadata | undefined, rule: DatabaseIdRule): DatabaseId {
  const text = typeof name === 'string' && name !== '' ? name : metadata ? metadataPrefix(metadata) : undefined;
  const db = text === undefined ? undefined : parseDatabaseName(text, true, rule);
  if (!db) throw firestoreErrors.invalidArgument(text === undefined ? 'The request names no database.' : `Invalid resource name: "${text}".`);
  return db;
}

/** A name under `…/documents` as a relative path ('' for the root). */
function documentPath(db: DatabaseId, name: unknown): string {
  if (typeof name !== 'string' || name === '') throw firestoreErrors.invalidArgument('A document or parent name must be set.');
  return relativeName(db, name, 'Name');
}

function metadataPrefix(metadata: grpc.Metadata): string | undefined {
  const value = metadata.get('google-cloud-resource-prefix')[0];
  return value === undefined ? undefined : String(value);
}

/** The connection's peer; a forwarding proxy's metadata says so (auth/api/functions-credential.ts). */
function peerOfCall(call: { metadata: grpc.Metadata; getPeer(): string }): Peer {
  return { address: addressOfGrpcPeer(call.getPeer()), forwarded: forwardedBy(call.metadata.getMap()) };
}

function authorization(metadata: grpc.Metadata): string | undefined {
  const value = metadata.get('authorization')[0];
  return value === undefined ? undefined : String(value);
}

/** REST's URL parameters, from a request field. */
function stringParam(name: string, value: unknown): QueryParams {
  return value === undefined ? {} : { [name]: String(value) };
}

/** A DocumentMask that is present but empty still masks everything out. */
function maskParam(mask: unknown, name: string): QueryParams {
  if (mask === undefined) return {};
  const paths = (mask as { fieldPaths?: string[] }).fieldPaths ?? [];
  return { [`${name}.fieldPaths`]: paths };
}


function toStatus(error: unknown, logger: Logger | undefined): Partial<grpc.StatusObject> {
  const apiError = toApiError(error);
  if (apiError.httpStatus >= 500 && apiError.status !== 'UNIMPLEMENTED') logger?.error({ err: error }, 'gRPC call failed');
  const { code, message } = apiError.toRpcStatus();
  return { code: code as grpc.status, details: message };
}
