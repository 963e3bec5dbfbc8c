/**
 * The WebChannel transport (`/google.firestore.v1.Firestore/{Listen|Write}/channel`) spoken raw over
 * HTTP, as the closure client in the browser SDK speaks it: the handshake, forward-channel POSTs and
 * their acknowledgements, back channels that stream (CI=0) or long-poll (CI=1), noops, and re-sending
 * what the client has not acknowledged. The byte shapes asserted here were compared
 * with Google's emulator (research/firestore-semantics.md §6.3): `<len>\n<json>` frames whose length
 * counts UTF-16 code units, `[[0,["c",SID,"",8,12,keepalive]]]`, `[backChannel, lastArrayId, outstanding]`.
 *
 * The server is the real stack (SQLite documents, FirestoreStreams, FirestoreAccess) on its own
 * Fastify app, so the timings can be shortened: a 600 ms keepalive instead of 30 s and so on. The
 * server and the raw client are in tests/helpers/firestore-webchannel.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Session,
  arrays,
  call,
  channelPath,
  database,
  docName,
  forwardAnswer,
  handshake,
  isNoop,
  isWriteResponse,
  mapsBody,
  owner,
  parseFrames,
  payloads,
  server,
  setWrite,
  useChannelServer,
  writeHandshake,
} from '../helpers/firestore-webchannel.js';

useChannelServer();

describe('handshake and the Write stream', () => {
  test('the handshake answers the c array; the back channel carries the handshake response, a noop, then each WriteResponse', async () => {
    const { session, answer } = await handshake(server, 'Write', writeHandshake);
    // The keepalive announced is this server's (600 ms); the client times a back channel out at 1.5 × it.
    assert.match(answer.text, /^50\n\[\[0,\["c","[A-Za-z0-9_-]{24}","",8,12,600\]\]\]$/);
    assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(answer.headers['x-content-type-options'], 'nosniff');
    assert.equal(answer.headers['cache-control'], 'no-cache, no-store, max-age=0, must-revalidate');
    assert.equal(answer.headers['access-control-allow-origin'], 'http://app.example');
    assert.equal(answer.headers['access-control-allow-credentials'], 'true');
    assert.equal(answer.headers['access-control-expose-headers'], 'x-client-wire-protocol, x-http-session-id, x-http-initial-response');

    const back = session.back(0, 0);
    const opened = await back.until((frames) => frames.length >= 2, 3000, 'the handshake response and a noop');
    assert.equal(back.status, 200);
    assert.equal(back.headers['x-content-type-options'], 'nosniff');
    assert.equal(opened[0]!.raw.length, opened[0]!.length);
    assert.deepEqual(arrays(opened).slice(0, 2), [
      [1, { streamId: (arrays(opened)[0]![1] as { streamId: string }).streamId, streamToken: 'MA==' }],
      [2, 'noop'],
    ]);
    assert.match(opened[0]!.raw, /^\[\[1,\[\{"streamId":"\d+","streamToken":"MA=="\}\]\]\]$/);

    assert.deepEqual(forwardAnswer(await session.forward(2, 1, [setWrite('w/one', { n: { integerValue: '1' } })])), [1, 2, 0]);
    const frames = await back.until((all) => payloads(all).some((p) => (p as { writeResults?: unknown }).writeResults), 3000, 'the WriteResponse');
    const [id, response] = arrays(frames).find(([, p]) => (p as { writeResults?: unknown }).writeResults) as [number, { streamToken: string; writeResults: Array<{ updateTime: string }>; commitTime: string }];
    assert.equal(id, 3);
    assert.equal(response.streamToken, 'MQ==');
    assert.equal(response.writeResults.length, 1);
    assert.match(response.writeResults[0]!.updateTime, /^\d{4}-\d\d-\d\dT.*Z$/);
    assert.match(response.commitTime, /^\d{4}-\d\d-\d\dT.*Z$/);
    assert.equal((await session.terminate()).status, 200);
    await back.ended;
  });

  test('forward POSTs: a retried POST is not delivered twice, and the answer counts what was sent but not acknowledged', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(0, 0);
    await back.until((frames) => arrays(frames).length >= 2);
    const write = setWrite('w/retry', { n: { integerValue: '1' } });
    forwardAnswer(await session.forward(2, 1, [write]));
    await back.until((frames) => arrays(frames).length >= 3);
    const [present, lastId, outstanding] = forwardAnswer(await session.forward(2, 1, [write]));
    assert.equal(present, 1);
    assert.equal(lastId, 3);
    const third = arrays(parseFrames(back.text)).find(([id]) => id === 3)!;
    assert.equal(outstanding, JSON.stringify([3, [third[1]]]).length, 'the unacknowledged WriteResponse, in UTF-16 units');
    // Once acknowledged nothing is outstanding; and the retried write produced no second response.
    assert.deepEqual(forwardAnswer(await session.forward(3, 2, [])), [1, 3, 0]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(payloads(parseFrames(back.text, true)).filter((p) => (p as { writeResults?: unknown }).writeResults).length, 1);
    await session.terminate();
  });

  test('the Authorization may also come in the older $httpHeaders URL parameter, or as a real bearer header', async () => {
    for (const [params, headers] of [
      [{ $httpHeaders: `Authorization:${owner}\r\n` }, {}],
      [{}, { authorization: owner }],
    ] as Array<[Record<string, string>, Record<string, string>]>) {
      const answer = await call(server.port, 'POST', channelPath('Write', { RID: 1, ...params }), mapsBody(0, [writeHandshake]), headers);
      const sid = (parseFrames(answer.text)[0]!.json as [[number, [string, string]]])[0][1][1];
      const session = new Session(server, 'Write', sid);
      forwardAnswer(await session.forward(0, 1, [setWrite('w/old-style', { n: { integerValue: '1' } })]));
      const back = session.back(0, 0);
      const frames = await back.until((all) => payloads(all).some((p) => isWriteResponse(p) || (p as { error?: unknown }).error !== undefined));
      assert.ok(payloads(frames).some(isWriteResponse), JSON.stringify(payloads(frames)));
      await session.terminate();
    }
  });

  test('maps are delivered in map-id order even when a later POST arrives first', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(0, 1);
    await back.ended;
    // Map 2 before map 1: nothing may happen until map 1 is there, then both, in order.
    forwardAnswer(await session.forward(1, 2, [setWrite('w/order', { n: { integerValue: '2' } }, 'MQ==')]));
    forwardAnswer(await session.forward(1, 1, [setWrite('w/order', { n: { integerValue: '1' } })]));
    const responses = session.back(1, 0);
    const frames0 = await responses.until((all) => payloads(all).filter(isWriteResponse).length >= 2);
    assert.deepEqual(payloads(frames0).filter(isWriteResponse).map((p) => (p as { streamToken: string }).streamToken), ['MQ==', 'Mg==']);
    // The document holds map 2's value: the writes ran in map order.
    const listen = await handshake(server, 'Listen', { database, addTarget: { documents: { documents: [docName('w/order')] }, targetId: 2 } });
    const changes = listen.session.back(0, 0);
    const frames = await changes.until((all) => payloads(all).some((p) => (p as { documentChange?: unknown }).documentChange));
    const change = payloads(frames).find((p) => (p as { documentChange?: unknown }).documentChange) as { documentChange: { document: { fields: unknown } } };
    assert.deepEqual(change.documentChange.document.fields, { n: { integerValue: '2' } });
    await listen.session.terminate();
    await session.terminate();
  });
});

describe('back channels', () => {
  test('a long poll (CI=1) answers what is queued and ends; with nothing queued it waits for the next message, or answers a noop', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const first = session.back(0, 1);
    await first.ended;
    assert.equal(first.status, 200);
    assert.deepEqual(arrays(parseFrames(first.text)).map(([id]) => id), [1]);

    // Not acknowledged (AID=0): sent again.
    const again = session.back(0, 1);
    await again.ended;
    assert.deepEqual(arrays(parseFrames(again.text)).map(([id]) => id), [1]);

    // Nothing new: a noop once the long poll times out (600 ms here), never an empty body.
    const idle = session.back(1, 1);
    await idle.ended;
    assert.deepEqual(payloads(parseFrames(idle.text)), ['noop']);
    assert.ok(idle.chunks[0]!.at >= 500, `answered after ${idle.chunks[0]!.at} ms`);
    assert.deepEqual(forwardAnswer(await session.forward(2, 1, [])), [0, 2, 0], 'no back channel open between polls');

    // A message while a poll waits is answered at once.
    const waiting = session.back(2, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(forwardAnswer(await session.forward(2, 1, [setWrite('w/poll', { n: { integerValue: '1' } })]))[0], 1);
    await waiting.ended;
    const [response] = payloads(parseFrames(waiting.text));
    assert.equal((response as { streamToken: string }).streamToken, 'MQ==');
    assert.ok(waiting.chunks[0]!.at < 450, `answered after ${waiting.chunks[0]!.at} ms`);

    // The client's TO shortens the wait.
    const short = session.back(3, 1, { TO: 50 });
    await short.ended;
    assert.deepEqual(payloads(parseFrames(short.text)), ['noop']);
    assert.ok(short.chunks[0]!.at < 450, `answered after ${short.chunks[0]!.at} ms`);
    await session.terminate();
  });

  test('a streaming back channel (CI=0) sends a noop at once and every keepalive, and ends after its maximum time', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(1, 0);
    await back.until((frames) => arrays(frames).filter(([, p]) => isNoop(p)).length >= 3, 3000, 'three noops');
    const noops = back.chunks.filter((chunk) => chunk.text.includes('"noop"'));
    assert.ok(noops[0]!.at < 300, 'the first noop comes at once');
    assert.ok(noops[1]!.at >= 500, 'then every 600 ms');
    await back.ended;
    const elapsed = back.chunks[back.chunks.length - 1]!.at;
    assert.ok(elapsed >= 1100 && elapsed < 2500, `ended after ~1.5 s (last chunk at ${elapsed} ms)`);
    // Noop ids count on; the client acknowledges them like any other array.
    const ids = arrays(parseFrames(back.text)).map(([id]) => id);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
    assert.deepEqual(forwardAnswer(await session.forward(ids[ids.length - 1]!, 1, [])), [0, ids[ids.length - 1]!, 0]);
    await session.terminate();
  });

  test('a new back channel replaces the open one, which ends with a non-empty body', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const poll = session.back(1, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stream = session.back(1, 0);
    await poll.ended;
    assert.deepEqual(payloads(parseFrames(poll.text)), ['noop']);
    await stream.until((frames) => frames.length >= 1);
    await session.terminate();
    await stream.ended;
  });

  test('a client that drops its back channel leaves the session without one (and the next GET gets what it missed)', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(0, 0);
    await back.until((frames) => frames.length >= 2);
    back.abort();
    await back.ended.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(forwardAnswer(await session.forward(0, 1, [setWrite('w/dropped', { n: { integerValue: '1' } })]))[0], 0);
    const next = session.back(0, 0);
    const frames = await next.until((all) => payloads(all).some(isWriteResponse));
    assert.equal((arrays(frames)[0]![1] as { streamToken: string }).streamToken, 'MA==', 'unacknowledged arrays are sent again');
    await session.terminate();
    await next.ended;
  });

  test('lengths count UTF-16 code units: a document with é and 😀 arrives in frames the client can cut', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    forwardAnswer(await session.forward(0, 1, [setWrite('w/emoji', { s: { stringValue: 'é😀 ü 𝄞' } })]));
    const written = session.back(0, 0);
    await written.until((all) => payloads(all).some(isWriteResponse));
    const listen = await handshake(server, 'Listen', { database, addTarget: { documents: { documents: [docName('w/emoji')] }, targetId: 2 } });
    const back = listen.session.back(0, 0);
    const frames = await back.until((all) => payloads(all).some((p) => (p as { documentChange?: unknown }).documentChange));
    const frame = frames.find((f) => f.raw.includes('😀'))!;
    assert.equal(frame.length, frame.raw.length);
    assert.notEqual(frame.length, Buffer.byteLength(frame.raw), 'UTF-16 units, not UTF-8 bytes');
    assert.ok(back.text.startsWith(`${frame.length}\n`) || back.text.includes(`${frame.length}\n${frame.raw}`));
    const change = payloads(frames).find((p) => (p as { documentChange?: unknown }).documentChange) as { documentChange: { document: { fields: { s: { stringValue: string } } } } };
    assert.equal(change.documentChange.document.fields.s.stringValue, 'é😀 ü 𝄞');
    // The Listen sequence: ADD, the document, CURRENT, then the global NO_CHANGE with a read time.
    const kinds = payloads(frames)
      .filter((p) => !isNoop(p))
      .map((p) => Object.keys(p as object)[0] + ((p as { targetChange?: { targetChangeType?: string } }).targetChange?.targetChangeType ?? ''));
    assert.deepEqual(kinds.slice(0, 4), ['targetChangeADD', 'documentChange', 'targetChangeCURRENT', 'targetChange']);
    await listen.session.terminate();
    await session.terminate();
  });
});
