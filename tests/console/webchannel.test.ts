/**
 * Issue 14, part A: the console's live view, on the console's own WebChannel
 * (/hearth/v1/console/firestore, issue 29: a channel of its own, not a mark on the SDKs' one). A
 * Listen handshake there (the browser SDK's onSnapshot, from a firebase app with no signed-in user)
 * that carries the console session cookie from Hearth's own origin is the administrator: it sees
 * documents of a database closed to everyone else. Without the cookie, from another site, without
 * the browser's same-origin word, or with a credential of its own, the console's channel refuses
 * the handshake; on the SDKs' channel the cookie counts for nothing. Writes over a Write stream the
 * console opened are the administrator's and go to the audit log. Raw WebChannel over HTTP, outside --dev.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, channelPath, isWriteResponse, mapsBody, parseFrames, payloads, Reader, type Frame } from '../helpers/firestore-webchannel.js';
import { startHearth, type TestHearth } from '../helpers/hearth.js';

let server: TestHearth;
let port = 0;
let cookie = '';
const database = () => `projects/${server.projectId}/databases/(default)`;
const consoleChannel = '/hearth/v1/console/firestore';

before(async () => {
  server = await startHearth({ dev: false });
  port = Number(new URL(server.url).port);
  const stored = await fetch(`${server.url}/v1/${database()}/documents/secrets/s1`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ fields: { value: { stringValue: 'for operators' } } }),
  });
  assert.equal(stored.status, 200);
  const session = await fetch(`${server.url}/hearth/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ adminKey: server.adminKey }) });
  cookie = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
});
after(async () => server.close());

/** Listens to secrets/s1 over a new WebChannel session; returns what the back channel says. */
async function listen(headers: Record<string, string>, authorization?: string, prefix = consoleChannel): Promise<'document' | 'denied' | `refused ${number}`> {
  const first = { database: database(), addTarget: { documents: { documents: [`${database()}/documents/secrets/s1`] }, targetId: 2 } };
  const headerBlock = `X-Goog-Api-Client:gl-js/ fire/12.19.0\r\nContent-Type:text/plain\r\n${authorization ? `Authorization:${authorization}\r\n` : ''}`;
  const body = `headers=${encodeURIComponent(headerBlock)}&${mapsBody(0, [first])}`;
  const answer = await call(port, 'POST', channelPath('Listen', { RID: 4242, CVER: 22, 'X-HTTP-Session-Id': 'gsessionid' }, database(), prefix), body, headers);
  if (answer.status !== 200) return `refused ${answer.status}`;
  const sid = (parseFrames(answer.text)[0]!.json as [[number, [string, string]]])[0][1][1];
  const back = new Reader(port, 'GET', channelPath('Listen', { RID: 'rpc', SID: sid, AID: 0, CI: 0, TYPE: 'xmlhttp' }, database(), prefix), undefined, headers);
  // Aborting the long poll once it has said enough rejects its end: expected, not a failure.
  back.ended.catch(() => undefined);
  const decided = (frames: Frame[]) => payloads(frames).some((payload) => isDocument(payload) || isDenial(payload));
  try {
    const frames = await back.until(decided, 5000, 'a document or a denial');
    return payloads(frames).some(isDocument) ? 'document' : 'denied';
  } finally {
    back.abort();
  }
}

function isDocument(payload: unknown): boolean {
  return JSON.stringify(payload).includes('for operators');
}

function isDenial(payload: unknown): boolean {
  const text = JSON.stringify(payload);
  return text.includes('PERMISSION_DENIED') || text.includes('"code":7') || text.includes('UNAUTHENTICATED') || text.includes('"code":16');
}

const sameOrigin = () => ({ cookie, 'sec-fetch-site': 'same-origin', origin: server.url });

test('with the console cookie, from the same origin and no credential of its own, a Listen sees the closed database', async () => {
  assert.equal(await listen(sameOrigin()), 'document');
});

test('without the cookie, or with a made-up one, the console channel refuses the handshake', async () => {
  assert.equal(await listen({ 'sec-fetch-site': 'same-origin', origin: server.url }), 'refused 403');
  assert.equal(await listen({ ...sameOrigin(), cookie: 'hearth_console=forged' }), 'refused 403');
});

test('from another site the cookie counts for nothing', async () => {
  assert.equal(await listen({ ...sameOrigin(), 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' }), 'refused 403');
  assert.equal(await listen({ cookie, origin: 'http://evil.example' }), 'refused 403');
});

test('the browser must vouch for the same origin: without Sec-Fetch-Site it is not the console', async () => {
  assert.equal(await listen({ cookie }), 'refused 403');
});

test('a handshake with its own credential is not the console', async () => {
  assert.equal(await listen(sameOrigin(), 'Bearer not-a-token'), 'refused 403');
});

test("on the SDKs' channel the console cookie makes nobody the administrator", async () => {
  assert.equal(await listen(sameOrigin(), undefined, ''), 'denied');
});

test('after sign-out the cookie no longer opens the live view', async () => {
  const session = await fetch(`${server.url}/hearth/v1/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ adminKey: server.adminKey }) });
  const own = (session.headers.get('set-cookie') ?? '').split(';')[0]!;
  assert.equal(await listen({ ...sameOrigin(), cookie: own }), 'document');
  const out = await fetch(`${server.url}/hearth/v1/console/session`, { method: 'DELETE', headers: { cookie: own, 'x-hearth-console': '1' } });
  assert.equal(out.status, 200);
  assert.equal(await listen({ ...sameOrigin(), cookie: own }), 'refused 403');
});

test('a Write stream the console opened writes as the administrator, and its writes are audited', async () => {
  const headers = sameOrigin();
  const headerBlock = 'X-Goog-Api-Client:gl-js/ fire/12.19.0\r\nContent-Type:text/plain\r\n';
  const opened = await call(port, 'POST', channelPath('Write', { RID: 4242, CVER: 22, 'X-HTTP-Session-Id': 'gsessionid' }, database(), consoleChannel), `headers=${encodeURIComponent(headerBlock)}&${mapsBody(0, [{ database: database() }])}`, headers);
  assert.equal(opened.status, 200, opened.text);
  const sid = (parseFrames(opened.text)[0]!.json as [[number, [string, string]]])[0][1][1];
  const back = new Reader(port, 'GET', channelPath('Write', { RID: 'rpc', SID: sid, AID: 0, CI: 0, TYPE: 'xmlhttp' }, database(), consoleChannel), undefined, headers);
  back.ended.catch(() => undefined);
  try {
    const tokenOf = (frames: Frame[]) => payloads(frames).find((payload): payload is { streamToken: string } => typeof payload === 'object' && payload !== null && 'streamToken' in payload);
    const token = tokenOf(await back.until((frames) => tokenOf(frames) !== undefined, 5000, 'the handshake answer'))!.streamToken;
    const write = { streamToken: token, writes: [{ update: { name: `${database()}/documents/secrets/by-console`, fields: { v: { stringValue: 'written live' } } } }] };
    const sent = await call(port, 'POST', channelPath('Write', { SID: sid, RID: 4243, AID: 1 }, database(), consoleChannel), mapsBody(1, [write]), headers);
    assert.equal(sent.status, 200, sent.text);
    await back.until((frames) => payloads(frames).some(isWriteResponse), 5000, 'the write response');
  } finally {
    back.abort();
  }
  const stored = await fetch(`${server.url}/v1/${database()}/documents/secrets/by-console`, { headers: { authorization: `Bearer ${server.adminKey}` } });
  assert.equal(stored.status, 200);
  const audit = await fetch(`${server.url}/hearth/v1/console/audit?pageSize=5`, { headers: { authorization: `Bearer ${server.adminKey}` } });
  const entries = ((await audit.json()) as { entries: Array<{ operator: string; path: string; summary: string }> }).entries;
  const logged = entries.filter((entry) => entry.path === `${consoleChannel}/google.firestore.v1.Firestore/Write/channel`);
  assert.equal(logged.length, 1, JSON.stringify(entries));
  assert.equal(logged[0]!.operator, 'admin');
  assert.match(logged[0]!.summary, /secrets\/by-console/);
  assert.match(logged[0]!.summary, /"streamToken":"\[redacted\]"/);
});
