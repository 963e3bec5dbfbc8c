/**
 * Issue 28, items 1 and 2, where the SDKs cannot express the attack: a Listen target added with a resume token or
 * read time of the caller's choosing (neither is authenticated), spoken raw over gRPC and WebChannel to Hearth in
 * production mode (rules: owner-only notes in any collection group, posts readable when public or by their owner),
 * and over gRPC to Google's emulator with the same rules as the oracle. Every document a stream tells about with
 * content must be readable by the caller in that very version, and documents the caller could never read must not
 * even be named.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import { findCloudSdkWithFirestoreEmulator } from '../helpers/firestore-emulator.js';
import { setPost, startEmulatorWithRules, startHearthWithRules, type RulesServer } from '../helpers/listen-rules-servers.js';
import { currentFor, disclosures, grpcListen, webChannelListen, type Disclosure, type ListenMessage, type RawListen } from '../helpers/raw-listen.js';

const servers = new Map<string, RulesServer>();

before(async () => {
  servers.set('hearth', await startHearthWithRules());
  if (findCloudSdkWithFirestoreEmulator()) {
    const emulator = await startEmulatorWithRules();
    if (emulator) servers.set('google-emulator', emulator);
  }
});

const streams: RawListen[] = [];

afterEach(async () => {
  for (const stream of streams.splice(0)) await stream.close();
});

after(async () => {
  for (const server of servers.values()) await server.close();
});

type Caller = { uid?: string; authorization?: string };
type Fields = Record<string, { stringValue?: string } | undefined>;

/** The rules above, for one version: may this caller read it? */
function readable(caller: Caller, disclosure: Disclosure): boolean {
  const fields = (disclosure.fields ?? {}) as Fields;
  const owner = fields.owner?.stringValue;
  if (disclosure.path.startsWith('posts/')) return fields.visibility?.stringValue === 'public' || (caller.uid !== undefined && owner === caller.uid);
  return caller.uid !== undefined && owner === caller.uid;
}

/** Every version sent with content is readable by the caller; none of `unnamed` is even named. */
function assertInvariant(caller: Caller, messages: ListenMessage[], unnamed: string[]): void {
  const told = disclosures(messages);
  for (const disclosure of told) {
    if (disclosure.kind === 'content') assert.ok(readable(caller, disclosure), `sent a version the caller may not read: ${JSON.stringify(disclosure)}`);
    assert.ok(!unnamed.includes(disclosure.path), `named a document the caller never could read: ${JSON.stringify(disclosure)}`);
  }
}

/** proto3 JSON of a query on `parent`'s collection (or group) with string equalities. */
function queryOf(database: string, collectionId: string, equalities: Record<string, string>, allDescendants = false): ListenMessage {
  const filters = Object.entries(equalities).map(([field, value]) => ({ fieldFilter: { field: { fieldPath: field }, op: 'EQUAL', value: { stringValue: value } } }));
  return { parent: `${database}/documents`, structuredQuery: { from: [{ collectionId, ...(allDescendants ? { allDescendants: true } : {}) }], where: { compositeFilter: { op: 'AND', filters } } } };
}

/** Hearth's resume tokens carry their time; a made-up one names any time the caller likes. */
function madeUpToken(commitTime: string): string {
  const match = /^(.*?)\.(\d+)Z$/.exec(commitTime)!;
  const micros = BigInt(Date.parse(`${match[1]}Z`)) * 1000n + BigInt(match[2]!.padEnd(9, '0').slice(0, 6));
  return Buffer.from(`t${micros}`).toString('base64');
}

type Transport = 'grpc' | 'webchannel';

/** A Listen stream with one target, closed after the test. */
async function open(server: RulesServer, transport: Transport, caller: Caller, addTarget: ListenMessage): Promise<RawListen> {
  const request = { database: server.database, addTarget };
  const stream = transport === 'grpc' ? grpcListen(server.hostPort, caller.authorization, [request]) : await webChannelListen(server.port, server.database, caller.authorization, [request]);
  streams.push(stream);
  return stream;
}

const cases: Array<{ label: string; transport: Transport }> = [
  { label: 'hearth', transport: 'grpc' },
  { label: 'hearth', transport: 'webchannel' },
  { label: 'google-emulator', transport: 'grpc' },
];

for (const { label, transport } of cases) {
  const skip = label === 'google-emulator' && !findCloudSdkWithFirestoreEmulator() ? 'gcloud with the Firestore emulator is not installed' : false;
  describe(`${transport} on ${label}`, { skip }, () => {
    const server = () => servers.get(label)!;
    const post = (tag: string, id: string, fields: Record<string, string>) => setPost(server().database, `posts/${tag}-${id}`, { tag, owner: 'alice', ...fields });

    /** Public posts p1, p2 at t0; then p2 made private, p3 written private, p4 published. */
    async function publicListingHistory(tag: string): Promise<string> {
      const t0 = await server().commit([post(tag, 'p1', { visibility: 'public' }), post(tag, 'p2', { visibility: 'public' })]);
      await server().commit([post(tag, 'p2', { visibility: 'private', secret: 'unpublished' })]);
      await server().commit([post(tag, 'p3', { visibility: 'private', secret: 'never public' })]);
      await server().commit([post(tag, 'p4', { visibility: 'public' })]);
      return t0;
    }

    test('an anonymous listing resumed from a made-up read time gets only public versions, and no name of a post never public', async () => {
      const tag = randomUUID().slice(0, 8);
      const t0 = await publicListingHistory(tag);
      const stream = await open(server(), transport, {}, { targetId: 2, query: queryOf(server().database, 'posts', { tag, visibility: 'public' }), readTime: t0 });
      await stream.until(currentFor(2), 'CURRENT');
      assertInvariant({}, stream.messages, [`posts/${tag}-p3`]);
      const told = disclosures(stream.messages);
      assert.ok(told.some((d) => d.path === `posts/${tag}-p4` && d.kind === 'content'), `p4 was published after t0: ${JSON.stringify(told)}`);
    });

    test("a user's collection-group listing resumed from a made-up time gets none of another user's notes", async () => {
      const tag = randomUUID().slice(0, 8);
      const bob = await server().newUserToken();
      const alice = `alice-${tag}`;
      const note = (owner: string, id: string, fields: Record<string, string> = {}) => setPost(server().database, `users/${owner}/notes/${tag}-${id}`, { owner, tag, ...fields });
      const t0 = await server().commit([note(bob.uid, 'b0')]);
      await server().commit([note(alice, 'a1', { secret: 'hers' })]);
      await server().commit([note(bob.uid, 'b1')]);
      await server().commit([note(alice, 'a2', { secret: 'hers too' })]);
      const caller = { uid: bob.uid, authorization: `Bearer ${bob.token}` };
      const stream = await open(server(), transport, caller, { targetId: 4, query: queryOf(server().database, 'notes', { owner: bob.uid, tag }, true), readTime: t0 });
      await stream.until(currentFor(4), 'CURRENT');
      assertInvariant(caller, stream.messages, [`users/${alice}/notes/${tag}-a1`, `users/${alice}/notes/${tag}-a2`]);
      assert.ok(disclosures(stream.messages).some((d) => d.path === `users/${bob.uid}/notes/${tag}-b1` && d.kind === 'content'));
    });

    test('a made-up resume token is no better than a read time', { skip: label !== 'hearth' ? "Hearth's own token format" : false }, async () => {
      const tag = randomUUID().slice(0, 8);
      const t0 = await publicListingHistory(tag);
      const stream = await open(server(), transport, {}, { targetId: 6, query: queryOf(server().database, 'posts', { tag, visibility: 'public' }), resumeToken: madeUpToken(t0) });
      await stream.until(currentFor(6), 'CURRENT');
      assertInvariant({}, stream.messages, [`posts/${tag}-p3`]);
      // p2 was in the listing at t0 and is private now: told as gone, without its new content.
      assert.deepEqual(disclosures(stream.messages).filter((d) => d.path === `posts/${tag}-p2`), [{ kind: 'removed', path: `posts/${tag}-p2` }]);
    });

    test('a post leaving a live listing goes as a removal without content when the listener may not read it, with it when it may', async () => {
      const tag = randomUUID().slice(0, 8);
      const owner = await server().newUserToken();
      await server().commit([setPost(server().database, `posts/${tag}-p1`, { tag, owner: owner.uid, visibility: 'public' })]);
      const anonymous = await open(server(), transport, {}, { targetId: 8, query: queryOf(server().database, 'posts', { tag, visibility: 'public' }) });
      const ownerCaller = { uid: owner.uid, authorization: `Bearer ${owner.token}` };
      const theOwner = await open(server(), transport, ownerCaller, { targetId: 10, query: queryOf(server().database, 'posts', { tag, visibility: 'public' }) });
      await anonymous.until(currentFor(8), 'CURRENT');
      await theOwner.until(currentFor(10), 'CURRENT');
      await server().commit([setPost(server().database, `posts/${tag}-p1`, { tag, owner: owner.uid, visibility: 'private', secret: 'withdrawn' })]);
      const left = (messages: ListenMessage[]) => messages.some((m) => m.documentRemove || m.documentChange?.removedTargetIds?.length || m.targetChange?.targetChangeType === 'RESET');
      await anonymous.until(left, 'p1 leaving the anonymous listing');
      await theOwner.until(left, "p1 leaving the owner's listing");
      // Let anything else the commit would send arrive.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assertInvariant({}, anonymous.messages, []);
      assertInvariant(ownerCaller, theOwner.messages, []);
      if (label === 'hearth') {
        assert.deepEqual(disclosures(anonymous.messages).filter((d) => d.kind !== 'content' || d.leaving), [{ kind: 'removed', path: `posts/${tag}-p1` }]);
        const ownersLeaving = disclosures(theOwner.messages).filter((d) => d.leaving);
        assert.equal(ownersLeaving.length, 1);
        assert.equal((ownersLeaving[0]!.fields as Fields).secret?.stringValue, 'withdrawn', 'the owner may read the new version: it goes with the removal');
      }
    });
  });
}
