/**
 * Shutdown is prompt whatever the open connections are doing. A browser keeps speculative
 * connections open that have sent nothing yet (Chromium preconnects while a page retries), and a
 * slow or hostile client may hold a request half-sent; neither may keep close() (a restart, a
 * deploy, the tests' own server swaps) waiting for minutes.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { startHearth } from '../helpers/hearth.js';

const promptMs = 6_000;

function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.on('error', reject);
  });
}

async function timedClose(close: () => Promise<void>): Promise<number> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    close(),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`close() did not settle within ${promptMs * 3} ms`)), promptMs * 3);
    }),
  ]).finally(() => clearTimeout(timer));
  return Date.now() - started;
}

test('close() settles promptly with a connection open that has sent nothing yet', async () => {
  const server = await startHearth();
  const socket = await openSocket(server.url);
  socket.on('error', () => undefined);
  const closedBy = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  try {
    const took = await timedClose(() => server.close());
    assert.ok(took < promptMs, `close() took ${took} ms`);
    await closedBy;
  } finally {
    socket.destroy();
  }
});

test('close() settles promptly with a request half-sent', async () => {
  const server = await startHearth();
  const socket = await openSocket(server.url);
  socket.on('error', () => undefined);
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  await new Promise((resolve) => setTimeout(resolve, 50));
  try {
    const took = await timedClose(() => server.close());
    assert.ok(took < promptMs, `close() took ${took} ms`);
  } finally {
    socket.destroy();
  }
});

test('close() settles promptly with an idle keep-alive connection, and a request in flight is answered first', async () => {
  const server = await startHearth();
  const socket = await openSocket(server.url);
  socket.on('error', () => undefined);
  let answered = '';
  socket.on('data', (chunk: Buffer) => (answered += chunk.toString('latin1')));
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (answered.includes('"status":"ok"')) {
        clearInterval(check);
        resolve();
      }
    }, 10);
  });
  try {
    const took = await timedClose(() => server.close());
    assert.ok(took < promptMs, `close() took ${took} ms`);
    assert.match(answered, /^HTTP\/1\.1 200/);
  } finally {
    socket.destroy();
  }
});
