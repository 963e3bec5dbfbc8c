/**
 * The relay between workers of --workers on its own (tests/scale-out/workers.test.ts runs it end to
 * end): what it believes of a relayed connection's first line, and which ids it sends elsewhere.
 * Only processes of the same user reach its socket (a 0700 folder), but what they send is still
 * checked: a first line that is not an IP address, or none within 64 bytes, ends the connection
 * before anything is handed on.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WorkerRelay } from '../../packages/server/src/http/worker-relay.js';

let dir: string;
let relay: WorkerRelay;
const accepted: Array<{ address: string | undefined; first: string }> = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hearth-relay-'));
  relay = new WorkerRelay(1, dir);
  await relay.listen((socket: Socket) => {
    socket.once('data', (chunk: Buffer) => {
      accepted.push({ address: socket.remoteAddress, first: chunk.toString() });
      socket.end();
    });
  });
});

after(async () => {
  await relay.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends `bytes` to the relay's socket; resolves when the relay ends the connection. */
function send(bytes: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(join(dir, '1.sock'));
    socket.on('error', () => resolve());
    socket.on('close', () => resolve());
    socket.on('data', () => undefined);
    socket.write(bytes);
  });
}

test("a relayed connection's first line becomes its peer address, and the rest reaches the server untouched", async () => {
  await send('203.0.113.7\nGET / HTTP/1.1\r\n\r\n');
  assert.deepEqual(accepted.pop(), { address: '203.0.113.7', first: 'GET / HTTP/1.1\r\n\r\n' });
  await send('2001:db8::1\nPOST');
  assert.deepEqual(accepted.pop(), { address: '2001:db8::1', first: 'POST' });
});

test('a first line that is not an address, or none within 64 bytes, ends the connection and hands nothing on', async () => {
  for (const hostile of ['not-an-address\nGET / HTTP/1.1\r\n\r\n', '10.0.0.1 extra\nGET /', '\nGET /', `${'1'.repeat(80)}`]) {
    await send(hostile);
  }
  assert.deepEqual(accepted, []);
});

test('ids name their worker: another worker\'s are relayed, this one\'s and forged or foreign ones are not', () => {
  const other = new WorkerRelay(2, dir);
  assert.equal(relay.ownerOfSession(other.sessionId()), 2);
  assert.equal(relay.ownerOfSession(relay.sessionId()), undefined);
  assert.equal(relay.ownerOfSession('plain-random-sid'), undefined);
  assert.equal(relay.ownerOfSession(undefined), undefined);
  const theirs = Buffer.concat([other.transactionTag(), Buffer.alloc(16, 7)]).toString('base64');
  const ours = Buffer.concat([relay.transactionTag(), Buffer.alloc(16, 7)]).toString('base64');
  assert.equal(relay.ownerOfTransaction(theirs), 2);
  assert.equal(relay.ownerOfTransaction(ours), undefined);
  // An instance's random tag (no worker's mark), a short id, not a string.
  assert.equal(relay.ownerOfTransaction(Buffer.alloc(24, 1).toString('base64')), undefined);
  assert.equal(relay.ownerOfTransaction(Buffer.from([0xfe, 2]).toString('base64')), undefined);
  assert.equal(relay.ownerOfTransaction(42), undefined);
});
