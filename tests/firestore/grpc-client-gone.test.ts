/**
 * A gRPC client that goes away must take its streams with it. gRPC shares the HTTP server's port
 * (shared-port.ts), and Node's HTTP server keeps its sockets half-open when the peer sends FIN: a
 * client that ended its side of the connection (after a GOAWAY, or a process closing its socket)
 * left its Listen streams, their targets in the listen hub and their memory on the server for good,
 * and every later commit was still matched and written for them. Here a raw HTTP/2 client opens
 * Listen streams, sees their first answers, then ends its socket; the server must close the
 * connection and count no open gRPC stream, and go on serving others.
 */
import assert from 'node:assert/strict';
import { connect as connectHttp2 } from 'node:http2';
import { connect as connectTcp, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { loadFirestoreRoot } from '../../packages/server/src/firestore/api/grpc-codec.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

const root = loadFirestoreRoot();
const ListenRequest = root.lookupType('google.firestore.v1.ListenRequest');

let server: TestHearth;
before(async () => {
  server = await startHearth({ dev: true });
});
after(async () => server.close());

async function openStreams(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.adminKey}` } })).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith('hearth_grpc_streams '));
  return line === undefined ? 0 : Number(line.slice('hearth_grpc_streams '.length));
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`never: ${what}`);
}

/** An HTTP/2 client on a TCP socket of our own, with `streams` Listen streams that have each had an answer. */
async function listeningClient(streams: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  const { port } = new URL(server.url);
  const socket = connectTcp(Number(port), '127.0.0.1');
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const session = connectHttp2(server.url, { createConnection: () => socket });
  session.on('error', () => undefined);
  const database = `projects/${server.hearth.options.defaultProjectId}/databases/(default)`;
  const answered: Promise<void>[] = [];
  for (let i = 0; i < streams; i++) {
    const stream = session.request({
      ':method': 'POST',
      ':path': '/google.firestore.v1.Firestore/Listen',
      'content-type': 'application/grpc',
      te: 'trailers',
      authorization: 'Bearer owner',
    });
    stream.on('error', () => undefined);
    answered.push(new Promise((resolve) => stream.once('data', () => resolve())));
    const request = ListenRequest.encode(
      ListenRequest.fromObject({ database, addTarget: { targetId: i + 1, query: { parent: `${database}/documents`, structuredQuery: { from: [{ collectionId: `gone-${i}` }] } } } }),
    ).finish();
    const frame = Buffer.alloc(5 + request.length);
    frame.writeUInt32BE(request.length, 1);
    frame.set(request, 5);
    stream.write(frame);
  }
  await Promise.all(answered);
  return { socket, closed };
}

test('a client that ends its socket (FIN) leaves no stream open on the server', async () => {
  const open = await openStreams();
  const { socket, closed } = await listeningClient(3);
  assert.equal(await openStreams(), open + 3);
  socket.end();
  await until(async () => (await openStreams()) === open, 'the server closed the streams of a client that ended its socket');
  // The server closed its side too: the connection is gone, not half-open.
  await closed;
});

test('a client whose socket is destroyed leaves no stream open either, and others are still served', async () => {
  const open = await openStreams();
  const gone = await listeningClient(2);
  const staying = await listeningClient(1);
  assert.equal(await openStreams(), open + 3);
  gone.socket.destroy();
  await until(async () => (await openStreams()) === open + 1, 'the server closed the streams of a destroyed connection');
  staying.socket.end();
  await until(async () => (await openStreams()) === open, 'the last client left');
});
