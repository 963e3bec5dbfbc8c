/**
 * The WebChannel transport (`/google.firestore.v1.Firestore/{Listen|Write}/channel`) spoken raw over
 * HTTP, as the closure client in the browser SDK speaks it: sessions (unknown SIDs, terminate), the
 * stream errors the SDK turns into `permission-denied` and `unauthenticated`, a denied Listen target,
 * hostile input, and session expiry, bounds and shutdown (on servers of their own with tighter limits).
 *
 * The server is the real stack (SQLite documents, FirestoreStreams, FirestoreAccess) on its own
 * Fastify app, so the timings can be shortened: a 600 ms keepalive instead of 30 s and so on. The
 * server and the raw client are in tests/helpers/firestore-webchannel.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Session,
  arrays,
  call,
  channelPath,
  database,
  docName,
  forwardAnswer,
  handshake,
  mapsBody,
  parseFrames,
  payloads,
  server,
  setWrite,
  startChannelServer,
  useChannelServer,
  writeHandshake,
  type ChannelServer,
} from '../helpers/firestore-webchannel.js';

useChannelServer();

describe('sessions', () => {
  test('an unknown SID gets 400 with "Unknown SID" (the client starts a new session), on POST and GET alike', async () => {
    const ghost = new Session(server, 'Write', 'no-such-session');
    for (const answer of [await ghost.forward(0, 1, [{}]), await call(server.port, 'GET', channelPath('Write', { RID: 'rpc', SID: 'nope', AID: 0, CI: 0, TYPE: 'xmlhttp' }))]) {
      assert.equal(answer.status, 400);
      assert.ok(answer.text.indexOf('Unknown SID') > 0, answer.text);
    }
    // A Write session is unknown on the Listen path, and to another database.
    const { session } = await handshake(server, 'Write', writeHandshake);
    assert.equal((await new Session(server, 'Listen', session.sid).forward(0, 1, [])).status, 400);
    assert.equal((await call(server.port, 'POST', channelPath('Write', { SID: session.sid, RID: 1, AID: 0 }, 'projects/other/databases/(default)'), mapsBody(1, []))).status, 400);
    await session.terminate();
  });

  test('terminate closes the session and ends its back channel', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const back = session.back(0, 0);
    await back.until((frames) => frames.length >= 1);
    const answer = await session.terminate();
    assert.equal(answer.status, 200);
    assert.equal(answer.text, '');
    await back.ended;
    assert.equal((await session.forward(0, 1, [])).status, 400);
    // An unknown session's terminate is answered all the same (the client ignores it anyway).
    assert.equal((await new Session(server, 'Write', 'gone').terminate()).status, 200);
  });

  test('stream errors: PERMISSION_DENIED and UNAUTHENTICATED arrive as the payload the SDK maps to its codes, then close', async () => {
    // Nobody signed in: the Write stream opens, the write is refused and ends the stream.
    const { session } = await handshake(server, 'Write', writeHandshake, '');
    const back = session.back(0, 0);
    await back.until((frames) => frames.length >= 1);
    forwardAnswer(await session.forward(1, 1, [setWrite('w/denied', { n: { integerValue: '1' } })]));
    await back.ended;
    const frames = parseFrames(back.text);
    const tail = arrays(frames).slice(-2).map(([, p]) => p);
    assert.deepEqual(tail, [{ error: { code: 7, message: 'Missing or insufficient permissions.', status: 'PERMISSION_DENIED' } }, 'close']);
    assert.match(frames[frames.length - 1]!.raw, /\[\{"error":\{"code":7,"message":"Missing or insufficient permissions\.","status":"PERMISSION_DENIED"\}\}\]\],\[\d+,\["close"\]\]\]$/);
    // The session stays answerable until the client terminates it.
    assert.equal(forwardAnswer(await session.forward(1, 2, [setWrite('w/denied', {})]))[0], 0);
    await session.terminate();

    // A token that does not verify: UNAUTHENTICATED (the SDK refreshes its token and reconnects).
    const bad = await handshake(server, 'Listen', { database, addTarget: { documents: { documents: [docName('w/x')] }, targetId: 2 } }, 'Bearer not-a-token');
    const poll = bad.session.back(0, 1);
    await poll.ended;
    const [error, close] = payloads(parseFrames(poll.text));
    assert.equal((error as { error: { status: string; code: number } }).error.status, 'UNAUTHENTICATED');
    assert.equal((error as { error: { code: number } }).error.code, 16);
    assert.equal(close, 'close');
    await bad.session.terminate();
  });

  test('a denied Listen target is acknowledged, then REMOVEd with a cause, and the stream goes on', async () => {
    const { session } = await handshake(server, 'Listen', { database, addTarget: { documents: { documents: [docName('w/x')] }, targetId: 2 } }, 'Bearer user');
    const poll = session.back(0, 1);
    await poll.ended;
    const [added, removal] = payloads(parseFrames(poll.text)) as Array<{ targetChange: { targetChangeType: string; targetIds: number[]; cause: { code: number } } }>;
    assert.equal(added!.targetChange.targetChangeType, 'ADD');
    assert.equal(removal!.targetChange.targetChangeType, 'REMOVE');
    assert.deepEqual(removal!.targetChange.targetIds, [2]);
    assert.equal(removal!.targetChange.cause.code, 7);
    await session.terminate();
  });
});

describe('hostile input', () => {
  test('malformed bodies, parameters and JSON get a 4xx, never a 5xx, and the server goes on working', async () => {
    const { session } = await handshake(server, 'Write', writeHandshake);
    const path = () => channelPath('Write', { SID: session.sid, RID: 7, AID: 0 });
    const handshakePath = channelPath('Write', { RID: 1, CVER: 22 });
    const cases: Array<[string, string, string | undefined, Record<string, string>?]> = [
      ['POST', path(), 'count=1&ofs=1&req0___data__=not%20json'],
      ['POST', path(), 'count=1&ofs=1&req0___data__=%7B'],
      ['POST', path(), 'count=1&ofs=1&req0___data__=%ZZ%7B'],
      ['POST', path(), `count=1&ofs=1&req0___data__=${encodeURIComponent('{"__proto__":{"x":1}}')}`],
      ['POST', path(), 'count=abc&ofs=1'],
      ['POST', path(), 'count=5000&ofs=1'],
      ['POST', path(), 'count=-1&ofs=1'],
      ['POST', path(), 'count=1&ofs=-4&req0___data__=%7B%7D'],
      ['POST', path(), 'count=2&ofs=1&req0___data__=%7B%7D'],
      ['POST', path(), 'count=1&ofs=1&req0_database=x'],
      ['POST', path(), '\u0000\u0001garbage&&&==&count'],
      ['POST', path(), '{"json":"instead"}', { 'content-type': 'application/json' }],
      ['POST', path(), 'x'.repeat(300 * 1024)],
      ['POST', handshakePath, 'count=1&ofs=0&req0___data__=%7B'],
      ['POST', handshakePath, 'garbage'],
      ['POST', channelPath('Write', { RID: 1 }, 'nonsense'), mapsBody(0, [{ database }])],
      ['POST', channelPath('Write', { RID: 1 }, 'projects/UPPER/databases/(default)'), mapsBody(0, [{ database }])],
      ['POST', `/google.firestore.v1.Firestore/Write/channel?VER=8&RID=1`, mapsBody(0, [{ database }])],
      ['GET', channelPath('Write', { RID: 'nope', SID: session.sid, AID: 0, CI: 0 }), undefined],
      ['GET', channelPath('Write', { SID: 'x'.repeat(5000), RID: 'rpc', AID: 0, CI: 0 }), undefined],
      ['GET', `/google.firestore.v1.Firestore/Write/channel?SID=${session.sid}&SID=other&RID=rpc&database=%ZZ`, undefined],
      ['PUT', path(), 'count=0&ofs=1'],
    ];
    for (const [method, target, body, headers] of cases) {
      const answer = await call(server.port, method, target, body, headers);
      assert.ok(answer.status >= 400 && answer.status < 500, `${method} ${target.slice(0, 80)} ${JSON.stringify(body?.slice(0, 60))} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    }
    // A handshake whose first message is JSON but not a WriteRequest opens, then fails the stream.
    const odd = await handshake(server, 'Write', [1, 2, 3]);
    const poll = odd.session.back(0, 1);
    await poll.ended;
    assert.equal((payloads(parseFrames(poll.text))[0] as { error: { status: string } }).error.status, 'INVALID_ARGUMENT');
    await odd.session.terminate();
    // Still serving, and the hostile POSTs above delivered nothing.
    const back = session.back(0, 1);
    await back.ended;
    assert.deepEqual(payloads(parseFrames(back.text)).length, 1);
    assert.deepEqual(forwardAnswer(await session.forward(1, 1, [])), [0, 1, 0]);
    await session.terminate();
  });
});

describe('bounds, expiry and shutdown', () => {
  let tight: ChannelServer;

  before(async () => {
    tight = await startChannelServer({ keepaliveMs: 400, backChannelMaxMs: 1500, sessionIdleMs: 300, maxQueuedChars: 2000, maxSessions: 3 });
  });

  after(async () => {
    await tight.close();
  });

  test('a session with no back channel and no traffic expires; one with an open back channel does not', async () => {
    const idle = await handshake(tight, 'Write', writeHandshake);
    const busy = await handshake(tight, 'Write', writeHandshake);
    const back = busy.session.back(0, 0);
    await back.until((frames) => frames.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 900));
    assert.equal((await idle.session.forward(0, 1, [])).status, 400, 'expired');
    assert.equal(forwardAnswer(await busy.session.forward(1, 1, []))[0], 1, 'alive');
    await busy.session.terminate();
    await back.ended;
  });

  test('too many sessions: the handshake is refused with 429; a client that never reads is failed, not buffered forever', async (t) => {
    // Its own server: on `tight` a session whose back channel is not open yet is forgotten after
    // 300 ms, which a loaded machine can spend on the forwards below before the back channel opens.
    const bounded = await startChannelServer({ keepaliveMs: 400, backChannelMaxMs: 1500, maxQueuedChars: 2000, maxSessions: 3 });
    t.after(() => bounded.close());
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push((await handshake(bounded, 'Write', writeHandshake)).session);
    const refused = await call(bounded.port, 'POST', channelPath('Write', { RID: 1 }), mapsBody(0, [writeHandshake]));
    assert.equal(refused.status, 429);
    for (const session of sessions.slice(1)) await session.terminate();

    // Nothing read, nothing acknowledged: the queue passes 2000 characters and the stream fails.
    const reckless = sessions[0]!;
    for (let i = 1; i <= 20; i++) forwardAnswer(await reckless.forward(0, i, [setWrite(`w/q${i}`, { n: { integerValue: String(i) } }, 'MA==')]));
    const poll = reckless.back(0, 1);
    await poll.ended;
    const got = payloads(parseFrames(poll.text));
    assert.deepEqual(got.slice(-2), [{ error: { code: 8, message: 'The client is not reading the stream fast enough.', status: 'RESOURCE_EXHAUSTED' } }, 'close']);
    assert.ok(poll.text.length < 2500);
    await reckless.terminate();
  });

  test('closing the app ends open back channels at once, with UNAVAILABLE (the SDK reconnects later)', async () => {
    const own = await startChannelServer({});
    const { session, answer } = await handshake(own, 'Write', writeHandshake);
    // With the default 30 s keepalive the handshake is byte for byte the shape of the emulator's.
    assert.match(answer.text, /^52\n\[\[0,\["c","[A-Za-z0-9_-]{24}","",8,12,30000\]\]\]$/);
    const back = session.back(0, 0);
    await back.until((frames) => frames.length >= 2);
    const poller = (await handshake(own, 'Write', writeHandshake)).session;
    const poll = poller.back(1, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await own.close();
    assert.ok(Date.now() - started < 2000, `closed in ${Date.now() - started} ms`);
    await back.ended;
    await poll.ended;
    for (const reader of [back, poll]) {
      const got = payloads(parseFrames(reader.text));
      assert.deepEqual(got.slice(-2), [{ error: { code: 14, message: 'The server is shutting down.', status: 'UNAVAILABLE' } }, 'close']);
    }
    assert.equal(own.channels.sessionCount, 0);
  });
});
