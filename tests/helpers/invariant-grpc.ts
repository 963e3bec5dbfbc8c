/**
 * A bare gRPC client of google.firestore.v1.Firestore as one caller (its ID token, or none), for the calls no SDK
 * makes the way an attacker would: unary, server-streaming (BatchGetDocuments, RunQuery, RunAggregationQuery) and
 * the Listen stream, in proto3 JSON through the published protos (Hearth's codec does the JSON mapping).
 */
import * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { loadFirestoreRoot, messageFromJson, messageToJson } from '../../packages/server/src/firestore/api/grpc-codec.js';

type Json = Record<string, any>;

let service: protobuf.Service | undefined;
function firestoreService(): protobuf.Service {
  service ??= loadFirestoreRoot().lookupService('google.firestore.v1.Firestore');
  return service;
}

export interface GrpcAnswer<T> {
  ok: boolean;
  value?: T;
  code?: number;
  message?: string;
}

export class RawGrpc {
  private readonly client: grpc.Client;
  private readonly metadata: grpc.Metadata;

  constructor(hostPort: string, database: string, authorization: string | undefined) {
    this.client = new grpc.Client(hostPort, grpc.credentials.createInsecure());
    this.metadata = new grpc.Metadata();
    if (authorization) this.metadata.set('authorization', authorization);
    this.metadata.set('google-cloud-resource-prefix', database);
  }

  private codec(method: string) {
    const definition = firestoreService().methods[method]!;
    const requestType = definition.resolvedRequestType!;
    const responseType = definition.resolvedResponseType!;
    return {
      serialize: (json: Json) => Buffer.from(requestType.encode(messageFromJson(requestType, json)).finish()),
      deserialize: (bytes: Buffer) => messageToJson(responseType, responseType.decode(bytes) as unknown as Json) as Json,
    };
  }

  unary(method: string, request: Json): Promise<GrpcAnswer<Json>> {
    const { serialize, deserialize } = this.codec(method);
    return new Promise((resolve) => {
      this.client.makeUnaryRequest(`/google.firestore.v1.Firestore/${method}`, serialize, deserialize, request, this.metadata, { deadline: Date.now() + 30_000 }, (error, response) =>
        resolve(error ? { ok: false, code: error.code, message: error.details } : { ok: true, value: response! }),
      );
    });
  }

  /** A server-streaming call: every response, or the error that ended it (with the responses before it). */
  stream(method: string, request: Json): Promise<GrpcAnswer<Json[]> & { partial: Json[] }> {
    const { serialize, deserialize } = this.codec(method);
    return new Promise((resolve) => {
      const responses: Json[] = [];
      const call = this.client.makeServerStreamRequest(`/google.firestore.v1.Firestore/${method}`, serialize, deserialize, request, this.metadata, { deadline: Date.now() + 30_000 });
      call.on('data', (response: Json) => responses.push(response));
      call.on('error', (error: grpc.ServiceError) => resolve({ ok: false, code: error.code, message: error.details, partial: responses }));
      call.on('end', () => resolve({ ok: true, value: responses, partial: responses }));
    });
  }

  /** A Listen stream: `send` ListenRequests; `onMessage` gets every ListenResponse. */
  listen(onMessage: (response: Json) => void, onEnd: (error?: { code: number; message: string }) => void): { send(request: Json): void; close(): void } {
    const { serialize, deserialize } = this.codec('Listen');
    const call = this.client.makeBidiStreamRequest('/google.firestore.v1.Firestore/Listen', serialize, deserialize, this.metadata, {});
    call.on('data', onMessage);
    call.on('error', (error: grpc.ServiceError) => onEnd(error.code === grpc.status.CANCELLED ? undefined : { code: error.code, message: error.details }));
    call.on('end', () => onEnd());
    return {
      send: (request) => call.write(request),
      close: () => call.cancel(),
    };
  }

  close(): void {
    this.client.close();
  }
}
