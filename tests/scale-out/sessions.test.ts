/**
 * What a load balancer in front of several instances must know, tested on two Hearths sharing one
 * PostgreSQL database:
 * - WebChannel sessions live in the instance that opened them (the load balancer must be sticky
 *   for them): a session's request reaching another instance answers 400 "Unknown SID", on which
 *   the browser SDK drops the session and opens a new one, and a new session on the other
 *   instance serves the same listen and sees writes committed through the first.
 * - Server transactions live in the instance that began them: one named on another instance is
 *   ABORTED (the SDKs retry the whole transaction, on whichever instance), while an id no
 *   instance issued is still INVALID_ARGUMENT.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHearth, postJson, type TestHearth } from '../helpers/hearth.js';
import { createTestPgDatabase, type TestPgDatabase } from '../helpers/pg-database.js';
import { Session, handshake, payloads, type ChannelServer } from '../helpers/firestore-webchannel.js';

let pgDatabase: TestPgDatabase;
let first: TestHearth;
let second: TestHearth;
const projectId = 'demo-wc';
const database = `projects/${projectId}/databases/(default)`;
const docName = (path: string) => `${database}/documents/${path}`;

/** The raw WebChannel client only needs the port of the server it talks to. */
const channelServer = (hearth: TestHearth) => ({ port: Number(new URL(hearth.url).port) }) as ChannelServer;

async function commit(hearth: TestHearth, body: unknown): Promise<{ status: number; body: any }> {
  return postJson(`${hearth.url}/v1/${database}/documents:commit`, body, { authorization: 'Bearer owner' });
}

const changeOf = (payload: unknown) => (payload as { documentChange?: { document: { fields: { n: { integerValue: string } } } } }).documentChange;

describe('sessions and transactions across instances', () => {
  before(async () => {
    pgDatabase = await createTestPgDatabase();
    first = await startHearth({ databaseUrl: pgDatabase.url, defaultProjectId: projectId });
    second = await startHearth({ databaseUrl: pgDatabase.url, defaultProjectId: projectId });
  });

  after(async () => {
    await first?.close();
    await second?.close();
    await pgDatabase?.drop();
  });

  test('a WebChannel session is unknown to another instance (400 Unknown SID); a new session there listens and sees writes made through the first', async () => {
    const write = (n: number) => commit(first, { writes: [{ update: { name: docName('rooms/r1'), fields: { n: { integerValue: String(n) } } } }] });
    assert.equal((await write(1)).status, 200);
    const addTarget = { database, addTarget: { documents: { documents: [docName('rooms/r1')] }, targetId: 2 } };
    // As a web page would: no admin credential (Hearth refuses one from another origin); --dev lets anyone read.
    const onFirst = await handshake(channelServer(first), 'Listen', addTarget, '');
    const firstBack = onFirst.session.back(0, 0);
    await firstBack.until((frames) => payloads(frames).some((p) => changeOf(p)?.document.fields.n.integerValue === '1'), 10_000, 'the document on the first instance');

    // The balancer sends the session's next request to the other instance.
    const stray = await new Session(channelServer(second), 'Listen', onFirst.session.sid).forward(1, 1, [{ database, removeTarget: 2 }]);
    assert.equal(stray.status, 400);
    assert.ok(stray.text.includes('Unknown SID'), stray.text);

    // The SDK's answer to that: a new session, wherever it lands.
    const onSecond = await handshake(channelServer(second), 'Listen', addTarget, '');
    const secondBack = onSecond.session.back(0, 0);
    await secondBack.until((frames) => payloads(frames).some((p) => changeOf(p)?.document.fields.n.integerValue === '1'), 10_000, 'the document on the second instance');
    assert.equal((await write(2)).status, 200);
    await secondBack.until((frames) => payloads(frames).some((p) => changeOf(p)?.document.fields.n.integerValue === '2'), 10_000, 'the write made through the first instance');
    await firstBack.until((frames) => payloads(frames).some((p) => changeOf(p)?.document.fields.n.integerValue === '2'), 10_000, 'the write on the first instance too');
    for (const back of [firstBack, secondBack]) {
      back.ended.catch(() => undefined);
      back.abort();
    }
    await onFirst.session.terminate();
    await onSecond.session.terminate();
  });

  test('a transaction begun on one instance is ABORTED on another (the SDK retries it whole); an id nobody issued is INVALID_ARGUMENT', async () => {
    const begun = await postJson(`${first.url}/v1/${database}/documents:beginTransaction`, {}, { authorization: 'Bearer owner' });
    assert.equal(begun.status, 200, JSON.stringify(begun.body));
    const elsewhere = await commit(second, { transaction: begun.body.transaction, writes: [{ update: { name: docName('rooms/t1'), fields: { n: { integerValue: '1' } } } }] });
    assert.equal(elsewhere.status, 409, JSON.stringify(elsewhere.body));
    assert.equal(elsewhere.body.error.status, 'ABORTED');
    const stored = await fetch(`${first.url}/v1/${database}/documents/rooms/t1`, { headers: { authorization: 'Bearer owner' } });
    assert.equal(stored.status, 404, 'the refused commit wrote nothing');

    const unknown = await commit(second, { transaction: Buffer.from('not an id').toString('base64'), writes: [] });
    assert.equal(unknown.status, 400, JSON.stringify(unknown.body));
    assert.equal(unknown.body.error.status, 'INVALID_ARGUMENT');

    // On its own instance the transaction still commits.
    const home = await commit(first, { transaction: begun.body.transaction, writes: [{ update: { name: docName('rooms/t1'), fields: { n: { integerValue: '1' } } } }] });
    assert.equal(home.status, 200, JSON.stringify(home.body));
  });
});
