/**
 * Downloads per client address (`--max-downloads-per-address`): one address that opens downloads
 * and never reads them holds at most its own slots; more of its downloads wait their turn (and get
 * their bytes once a slot frees), past that it is answered 429 in Google's JSON, while another
 * address downloads at once. Addresses come from X-Forwarded-For behind a trusted proxy (loopback).
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { after, before, test } from 'node:test';
import { defaultOptions } from '../../packages/server/src/config.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';
import { v0Url } from '../helpers/storage-clients.js';

const maxInFlight = 2;
const maxWaiting = maxInFlight * 4;
/** Far more than the loopback socket buffers hold: a client that stops reading stalls the download. */
const bigSize = 48 * 1024 * 1024;

let server: TestHearth;

before(async () => {
  server = await startHearth({ trustProxy: ['loopback'], files: { ...defaultOptions().files, downloadsPerAddress: maxInFlight } });
  const owner = { authorization: 'Bearer owner' };
  for (const [name, size] of [['big.bin', bigSize], ['small.txt', 1000]] as const) {
    const uploaded = await fetch(`${v0Url(server)}?name=${name}`, { method: 'POST', headers: { ...owner, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(size, 7) });
    assert.equal(uploaded.status, 200, await uploaded.text());
  }
});
after(async () => {
  await server?.close();
});

interface Download {
  request: ClientRequest;
  /** Settles with the response once its headers arrive (its body is not read: the download stalls). */
  response: Promise<IncomingMessage>;
}

function download(name: string, address: string): Download {
  const url = new URL(`${v0Url(server, name)}?alt=media`);
  const request = httpRequest(url, { headers: { 'x-forwarded-for': address }, agent: false });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', (answer) => {
      answer.pause();
      resolve(answer);
    });
    request.once('error', reject);
  });
  response.catch(() => undefined);
  request.end();
  return { request, response };
}

async function bodyOf(answer: IncomingMessage): Promise<Buffer> {
  answer.resume();
  const chunks: Buffer[] = [];
  for await (const chunk of answer) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

test('one address holds its own download slots, waits past them, is refused past its queue; another address is served meanwhile', { timeout: 240_000 }, async () => {
  const flooder = '203.0.113.7';
  const holding = [download('big.bin', flooder), download('big.bin', flooder)];
  for (const held of holding) assert.equal((await held.response).statusCode, 200);

  // Queued behind the two stalled downloads, and one more than the queue takes.
  const queued = Array.from({ length: maxWaiting + 1 }, () => download('small.txt', flooder));
  const refused = await Promise.race(queued.map((entry, index) => entry.response.then((answer) => ({ answer, index }))));
  assert.equal(refused.answer.statusCode, 429);
  assert.deepEqual(JSON.parse((await bodyOf(refused.answer)).toString()), { error: { code: 429, message: 'Too many requests from this address; slow down.' } });
  const waiting = queued.filter((_, index) => index !== refused.index);

  // Another address is not held up by the first one's flood.
  const other = download('small.txt', '198.51.100.20');
  const otherAnswer = await other.response;
  assert.equal(otherAnswer.statusCode, 200);
  assert.equal((await bodyOf(otherAnswer)).length, 1000);

  // The stalled downloads end (the client goes away): every waiting download gets its bytes in turn.
  for (const held of holding) held.request.destroy();
  for (const entry of waiting) {
    const answer = await entry.response;
    assert.equal(answer.statusCode, 200);
    assert.deepEqual(await bodyOf(answer), Buffer.alloc(1000, 7));
  }

  // A client that leaves while waiting gives its place up: with both slots held again, a waiter that
  // is cut off, then the slots freed, the address downloads as before.
  const again = [download('big.bin', flooder), download('big.bin', flooder)];
  for (const held of again) assert.equal((await held.response).statusCode, 200);
  const leaving = Array.from({ length: maxWaiting }, () => download('small.txt', flooder));
  for (const entry of leaving) entry.request.destroy();
  for (const held of again) held.request.destroy();
  const last = await eventually(() => download('small.txt', flooder));
  assert.deepEqual(await bodyOf(last), Buffer.alloc(1000, 7));
});

/** Asks until the answer is 200: the server sees closed connections a moment after the client closed them. */
async function eventually(ask: () => Download): Promise<IncomingMessage> {
  for (;;) {
    const answer = await ask().response;
    if (answer.statusCode === 200) return answer;
    answer.resume();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
