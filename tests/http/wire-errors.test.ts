/**
 * Issue 18, item 6: bad input gets Google's error JSON (or gRPC status), never a 500, INTERNAL or
 * Fastify's own shape: requests Node's HTTP parser refuses, bad `%` escapes, composite filters
 * nested 2,000 deep, and gRPC messages that do not decode. 501 answers are not logged as errors.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

interface LogRecord {
  level: number;
  msg?: string;
  err?: { stack?: string };
}

/** Sends bytes as they are and reads the answer until the server closes. */
function rawExchange(port: number, request: Buffer | string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
    socket.end(request);
  });
}

/** `and(and(...(a == 1)))`, `depth` composites deep, as text (JSON.stringify itself overflows at 2,000). */
function nestedFilterJson(depth: number): string {
  const leaf = '{"fieldFilter":{"field":{"fieldPath":"a"},"op":"EQUAL","value":{"integerValue":"1"}}}';
  return '{"compositeFilter":{"op":"AND","filters":['.repeat(depth) + leaf + ']}}'.repeat(depth);
}

describe('wire errors', () => {
  let hearth: TestHearth;
  let port: number;
  const logs: LogRecord[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line) as LogRecord);
        done();
      },
    });
    hearth = await startHearth({ dev: true, logLevel: 'info' }, pino({ level: 'info' }, sink));
    port = Number(new URL(hearth.url).port);
  });
  after(() => hearth.close());

  const googleError = (body: string, code: number) => {
    const parsed = JSON.parse(body) as { error: { code: number; message: string; status: string } };
    assert.equal(parsed.error.code, code);
    assert.equal(parsed.error.status, 'INVALID_ARGUMENT');
    assert.equal(typeof parsed.error.message, 'string');
  };

  test('a bad % escape in the path answers 400 in Google\'s shape', async () => {
    const answer = await rawExchange(port, `GET /v1/projects/${hearth.projectId}/databases/(default)/documents/a%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.equal(answer.status, 400);
    googleError(answer.body, 400);
  });

  test('raw non-ASCII in the request line answers 400 in Google\'s shape', async () => {
    const request = Buffer.concat([Buffer.from('GET /v1/projects/'), Buffer.from('d\u00e9mo', 'utf8'), Buffer.from(' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]);
    const answer = await rawExchange(port, request);
    assert.equal(answer.status, 400);
    googleError(answer.body, 400);
  });

  test('over-long headers answer 431 in Google\'s shape', async () => {
    const answer = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`);
    assert.equal(answer.status, 431);
    googleError(answer.body, 431);
  });

  test('a composite filter nested 2,000 deep answers INVALID_ARGUMENT over REST (it overflowed the stack: 500)', async () => {
    const response = await fetch(`${hearth.url}/v1/projects/${hearth.projectId}/databases/(default)/documents:runQuery`, {
      method: 'POST',
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: `{"structuredQuery":{"from":[{"collectionId":"c"}],"where":${nestedFilterJson(2000)}}}`,
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { message: string } };
    assert.match(body.error.message, /nests composite filters more than 20 deep/);
  });

  test('filters nested 20 deep are still served', async () => {
    const response = await fetch(`${hearth.url}/v1/projects/${hearth.projectId}/databases/(default)/documents:runQuery`, {
      method: 'POST',
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: `{"structuredQuery":{"from":[{"collectionId":"c"}],"where":${nestedFilterJson(20)}}}`,
    });
    assert.equal(response.status, 200);
  });

  test('a 501 answer is logged at info, without a stack trace', async () => {
    const before = logs.length;
    const response = await fetch(`${hearth.url}/v1/projects/${hearth.projectId}/databases/(default)/documents:executePipeline`, {
      method: 'POST',
      headers: { authorization: 'Bearer owner', 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(response.status, 501);
    const written = logs.slice(before);
    assert.ok(written.some((record) => record.msg === 'request'), 'the request was logged');
    assert.deepEqual(written.filter((record) => record.level >= 50 || record.err?.stack), []);
  });
});

/** Until grpc.ts decodes with decodeRequest and answers requestProblem (see the issue 18 report); remove then. */

describe('gRPC messages that do not decode', () => {
  let hearth: TestHearth;
  let client: grpc.Client;
  before(async () => {
    hearth = await startHearth({ dev: true });
    client = new grpc.Client(hearth.hostPort, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await hearth.close();
  });

  const unaryRaw = (method: string, bytes: Buffer) =>
    new Promise<grpc.ServiceError | undefined>((resolve) => {
      const metadata = new grpc.Metadata();
      metadata.set('authorization', 'Bearer owner');
      client.makeUnaryRequest(`/google.firestore.v1.Firestore/${method}`, (message: Buffer) => message, (answer: Buffer) => answer, bytes, metadata, { deadline: Date.now() + 10_000 }, (error) => resolve(error ?? undefined));
    });

  test('a GetDocument cut inside a field\'s length answers INVALID_ARGUMENT, not INTERNAL "Error deserializing request"', async () => {
    // Field 1 (name), then the first byte of a length that never ends.
    const error = await unaryRaw('GetDocument', Buffer.from([0x0a, 0xff]));
    assert.equal(error?.code, grpc.status.INVALID_ARGUMENT, error?.details);
    assert.match(error?.details ?? '', /GetDocumentRequest could not be decoded/);
  });

  test('bytes with a wrong wire type answer INVALID_ARGUMENT', async () => {
    const error = await unaryRaw('Commit', Buffer.from([0x0f, 0xff, 0xff, 0xff]));
    assert.equal(error?.code, grpc.status.INVALID_ARGUMENT, error?.details);
  });

  test('a Write stream whose message does not decode ends with INVALID_ARGUMENT', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', 'Bearer owner');
    const call = client.makeBidiStreamRequest('/google.firestore.v1.Firestore/Write', (message: Buffer) => message, (answer: Buffer) => answer, metadata, { deadline: Date.now() + 10_000 });
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => undefined);
    call.on('data', () => undefined);
    call.write(Buffer.from([0x0f, 0xff, 0xff]));
    assert.equal((await status).code, grpc.status.INVALID_ARGUMENT);
  });
});
