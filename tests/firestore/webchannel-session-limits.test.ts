/**
 * Issue 18, item 3: the WebChannel session table cannot be filled by one client. 10,000
 * unauthenticated handshakes from one address used to take every slot for five minutes, and
 * every handshake after them, the administrator's too, got 429. Sessions are now bounded per
 * address and per user, callers without an identity may fill only half the table (signed-in users
 * 90%), and a session whose back channel never opened is forgotten after 20 s instead of 5 min.
 * The small tables here use the real WebChannel server (tests/helpers/firestore-webchannel.ts:
 * `Bearer owner` is the admin, `Bearer user` a signed-in user); the last test is the whole Hearth.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { call, channelPath, handshake, mapsBody, owner, startChannelServer, writeHandshake, type ChannelServer } from '../helpers/firestore-webchannel.js';
import { startHearth } from '../helpers/hearth.js';

/** A handshake's status; `authorization` undefined sends none, as a client that is not signed in. */
async function handshakeStatus(server: ChannelServer, authorization: string | undefined): Promise<number> {
  const headers = `Content-Type:text/plain\r\n${authorization ? `Authorization:${authorization}\r\n` : ''}`;
  const answer = await call(server.port, 'POST', channelPath('Write', { RID: 1, CVER: 22 }), `headers=${encodeURIComponent(headers)}&${mapsBody(0, [writeHandshake])}`);
  return answer.status;
}

async function statuses(server: ChannelServer, authorization: string | undefined, count: number): Promise<number[]> {
  const result: number[] = [];
  for (let i = 0; i < count; i++) result.push(await handshakeStatus(server, authorization));
  return result;
}

const times = (status: number, count: number) => Array<number>(count).fill(status);

describe('bounds on WebChannel sessions', () => {
  test('one address gets its share and no more; the administrator still gets in from it', async () => {
    const server = await startChannelServer({ maxSessions: 100, maxSessionsPerAddress: 5 });
    try {
      assert.deepEqual(await statuses(server, undefined, 7), [...times(200, 5), 429, 429]);
      assert.equal(await handshakeStatus(server, 'Bearer user'), 429, 'a signed-in user from the same address counts against it too');
      assert.deepEqual(await statuses(server, owner, 3), times(200, 3));
    } finally {
      await server.close();
    }
  });

  test('callers without an identity fill half the table; signed-in users and the administrator keep the rest', async () => {
    const server = await startChannelServer({ maxSessions: 10, maxSessionsPerAddress: 100 });
    try {
      assert.deepEqual(await statuses(server, undefined, 6), [...times(200, 5), 429]);
      // A token that does not verify is no identity either.
      assert.equal(await handshakeStatus(server, 'Bearer forged'), 429);
      assert.deepEqual(await statuses(server, 'Bearer user', 5), [...times(200, 4), 429]);
      assert.deepEqual(await statuses(server, owner, 2), [200, 429]);
    } finally {
      await server.close();
    }
  });

  test('one user gets its share', async () => {
    const server = await startChannelServer({ maxSessions: 100, maxSessionsPerUser: 3 });
    try {
      assert.deepEqual(await statuses(server, 'Bearer user', 4), [...times(200, 3), 429]);
      assert.equal(await handshakeStatus(server, undefined), 200);
    } finally {
      await server.close();
    }
  });

  test('a session whose back channel never opened is forgotten quickly; one that opened keeps the longer idle time', async () => {
    const server = await startChannelServer({ unopenedSessionMs: 300, sessionIdleMs: 60_000, keepaliveMs: 400, backChannelMaxMs: 1000 });
    try {
      const neverOpened = await handshake(server, 'Write', writeHandshake);
      const opened = await handshake(server, 'Write', writeHandshake);
      const poll = opened.session.back(0, 1);
      await poll.ended;
      await new Promise((resolve) => setTimeout(resolve, 900));
      assert.equal((await neverOpened.session.forward(0, 1, [])).status, 400, 'forgotten');
      assert.equal((await opened.session.forward(1, 1, [])).status, 200, 'kept');
      await opened.session.terminate();
      assert.equal(server.channels.sessionCount, 0);
    } finally {
      await server.close();
    }
  });
});

test('Hearth: a flood of anonymous handshakes from one address is cut at its share, and the administrator still connects', async () => {
  const hearth = await startHearth({ dev: true });
  try {
    const database = `projects/${hearth.projectId}/databases/(default)`;
    const handshakeAs = async (authorization: string | undefined) => {
      const headers = authorization ? `headers=${encodeURIComponent(`Authorization:${authorization}\r\n`)}&` : '';
      const response = await fetch(`${hearth.url}/google.firestore.v1.Firestore/Write/channel?database=${encodeURIComponent(database)}&VER=8&RID=1&CVER=22&t=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `${headers}count=1&ofs=0&req0___data__=${encodeURIComponent(JSON.stringify({ database }))}`,
      });
      await response.arrayBuffer();
      return response.status;
    };
    const flood: number[] = [];
    for (let i = 0; i < 260; i++) flood.push(await handshakeAs(undefined));
    assert.equal(flood.filter((status) => status === 200).length, 200);
    assert.deepEqual(flood.slice(200), times(429, 60));
    assert.equal(await handshakeAs('Bearer owner'), 200);
  } finally {
    await hearth.close();
  }
});
