/**
 * The WebChannel transport (what the browser SDK speaks) on a named database, raw: a Write session
 * and a Listen session on `projects/demo-wc/databases/other` see only that database's documents,
 * and a query target resumed from a token older than the server's memory is answered with its
 * documents and an existence filter carrying the bloom filter (`unchangedNames`) in proto3 JSON.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { call, channelPath, database, forwardAnswer, handshake, isWriteResponse, payloads, project, server, useChannelServer } from '../helpers/firestore-webchannel.js';

const other = `projects/${project}/databases/other`;
const otherName = (path: string) => `${other}/documents/${path}`;
const defaultName = (path: string) => `${database}/documents/${path}`;
const write = (name: string, token: string) => ({ streamToken: token, writes: [{ update: { name, fields: { n: { integerValue: '1' } } } }] });

useChannelServer();

describe('WebChannel on a named database', () => {
  test("Write and Listen on 'other': its own documents, and a resumed query gets a bloom filter", async () => {
    const startedBefore = (Date.now() - 60_000) * 1000;
    for (const [db, names] of [[database, [defaultName('wn/a'), defaultName('wn/z')]], [other, [otherName('wn/a'), otherName('wn/b')]]] as const) {
      const { session } = await handshake(server, 'Write', { database: db }, undefined, db);
      const back = session.back(0, 0);
      const hasToken = (p: unknown) => typeof (p as { streamToken?: unknown } | null)?.streamToken === 'string';
      const token = (payloads(await back.until((all) => payloads(all).some(hasToken))).find(hasToken) as { streamToken: string }).streamToken;
      forwardAnswer(await session.forward(0, 1, [write(names[0], token)]));
      await back.until((all) => payloads(all).filter(isWriteResponse).length >= 1);
      forwardAnswer(await session.forward(0, 2, [write(names[1], token)]));
      await back.until((all) => payloads(all).filter(isWriteResponse).length >= 2);
      await session.terminate();
    }

    const resumeToken = Buffer.from(`t${startedBefore}`).toString('base64');
    const listen = await handshake(server, 'Listen', { database: other, addTarget: { targetId: 2, resumeToken, query: { parent: `${other}/documents`, structuredQuery: { from: [{ collectionId: 'wn' }] } } } }, undefined, other);
    const back = listen.session.back(0, 0);
    const frames = await back.until((all) => payloads(all).some((p) => (p as { targetChange?: { targetChangeType?: string } }).targetChange?.targetChangeType === 'CURRENT'));
    const messages = payloads(frames) as Array<Record<string, any>>;
    const names = messages.filter((m) => m.documentChange).map((m) => m.documentChange.document.name);
    assert.deepEqual(names.sort(), [otherName('wn/a'), otherName('wn/b')]);
    assert.equal(messages.some((m) => m.targetChange?.targetChangeType === 'RESET'), false);
    const filter = messages.find((m) => m.filter)!.filter;
    assert.equal(filter.targetId, 2);
    assert.equal(filter.count, 2);
    assert.equal(typeof filter.unchangedNames.bits.bitmap, 'string');
    assert.ok(Buffer.from(filter.unchangedNames.bits.bitmap, 'base64').length > 0);
    assert.ok(filter.unchangedNames.hashCount > 0);
    await listen.session.terminate();
  });

  test('a Listen URL naming an invalid database id is refused', async () => {
    const path = channelPath('Listen', { RID: 1, CVER: 22 }, `projects/${project}/databases/abc`);
    const answer = await call(server.port, 'POST', path, 'count=0&ofs=0');
    assert.equal(answer.status, 400, answer.text);
  });
});
