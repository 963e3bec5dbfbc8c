/**
 * Listen fan-out shares work among listeners (listen-encoding.ts: a document's bytes encoded once,
 * each listener's target id written around them; grpc-batch-writer.ts: one write per listener per
 * commit; listen-stream.ts: one match per distinct query). Sharing must never change what a listener
 * gets: here many listeners on the same query and the same documents, with different target ids
 * (small, multi-byte varints, the int32 maximum, two targets on one stream) and different callers
 * (rules that let one user read and refuse another), each get exactly their own snapshots, through
 * raw gRPC (every message decoded and checked) and through the firebase SDK in Node.
 */
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { getAuth } from 'firebase/auth';
import { collection, doc, onSnapshot, query, where, type DocumentSnapshot, type Firestore, type QuerySnapshot } from 'firebase/firestore';
import { loadFirestoreRoot, messageFromJson, messageToJson } from '../../packages/server/src/firestore/api/grpc-codec.js';
import { listenFramer, listenResponseJson, listenResponseSerializer } from '../../packages/server/src/firestore/api/listen-encoding.js';
import { Snapshots, admin, newClient, run, target, useGrpcTarget, within } from '../helpers/firestore-grpc-clients.js';
import { withRules } from '../helpers/security-rules.js';

useGrpcTarget();

type Json = Record<string, any>;
const root = loadFirestoreRoot();
const ListenRequest = root.lookupType('google.firestore.v1.ListenRequest');
const ListenResponse = root.lookupType('google.firestore.v1.ListenResponse');
const name = `fan-${run}`;

/** Owners read their documents, everyone reads public ones; a query must ask for the caller's own. */
const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /${name}/{id} {
      allow get: if request.auth != null && (resource.data.public == true || resource.data.owner == request.auth.uid);
      allow list: if request.auth != null && resource.data.owner == request.auth.uid;
    }
  }
}
`;

/** One Listen stream over raw HTTP/2 gRPC, every answer decoded to proto3 JSON. */
class RawListen {
  readonly messages: Json[] = [];
  private buffered = Buffer.alloc(0);
  private readonly stream;
  private readonly database = `projects/${target.projectId}/databases/(default)`;

  constructor(session: ClientHttp2Session, token: string) {
    this.stream = session.request({
      ':method': 'POST',
      ':path': '/google.firestore.v1.Firestore/Listen',
      'content-type': 'application/grpc',
      te: 'trailers',
      authorization: `Bearer ${token}`,
    });
    // A stream cut short by a failing test must not outlive it as an uncaught error.
    this.stream.on('error', () => undefined);
    this.stream.on('data', (chunk: Buffer) => {
      let bytes = Buffer.concat([this.buffered, chunk]);
      while (bytes.length >= 5 && bytes.length >= 5 + bytes.readUInt32BE(1)) {
        const length = bytes.readUInt32BE(1);
        this.messages.push(messageToJson(ListenResponse, ListenResponse.decode(bytes.subarray(5, 5 + length)) as unknown as Json) as Json);
        bytes = bytes.subarray(5 + length);
      }
      this.buffered = bytes;
    });
  }

  add(targetId: number, spec: { owner?: string; document?: string }): void {
    const target = spec.document
      ? { documents: { documents: [`${this.database}/documents/${name}/${spec.document}`] } }
      : {
          query: {
            parent: `${this.database}/documents`,
            structuredQuery: { from: [{ collectionId: name }], where: { fieldFilter: { field: { fieldPath: 'owner' }, op: 'EQUAL', value: { stringValue: spec.owner } } } },
          },
        };
    const bytes = ListenRequest.encode(ListenRequest.fromObject({ database: this.database, addTarget: { targetId, ...target } })).finish();
    const frame = Buffer.alloc(5 + bytes.length);
    frame.writeUInt32BE(bytes.length, 1);
    frame.set(bytes, 5);
    this.stream.write(frame);
  }

  close(): void {
    this.stream.close();
  }

  /** Waits until `check` holds over the messages so far. */
  async until(check: (messages: Json[]) => boolean, label: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!check(this.messages)) {
      if (Date.now() > deadline) throw new Error(`${label}: not within 15 s; got ${JSON.stringify(this.messages.map(summary))}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** `doc:<id>@<seq>>[targets]`, `left:…`, `ADD:[ids]`, `REMOVE:[ids]!code`, `CURRENT:[ids]`, `SNAPSHOT`. */
function summary(message: Json): string {
  if (message.targetChange) {
    const change = message.targetChange;
    if (!change.targetChangeType) return change.targetIds?.length ? `NO_CHANGE:${change.targetIds}` : 'SNAPSHOT';
    return `${change.targetChangeType}:${change.targetIds ?? ''}${change.cause ? `!${change.cause.code}` : ''}`;
  }
  if (message.documentChange) {
    const change = message.documentChange;
    const id = String(change.document.name).split('/').pop();
    const seq = change.document.fields?.seq?.integerValue;
    return change.removedTargetIds?.length ? `left:${id}@${seq}>${change.removedTargetIds}` : `doc:${id}@${seq}>${change.targetIds}`;
  }
  if (message.documentDelete) return `deleted:${message.documentDelete.document}`;
  return JSON.stringify(message);
}

/** The documents each target received, in order, as `id@seq`. */
function receivedBy(messages: Json[], targetId: number): string[] {
  return messages.filter((m) => m.documentChange?.targetIds?.includes(targetId)).map((m) => summary(m).slice(4).split('>')[0]!);
}

async function write(id: string, owner: string, seq: number, isPublic = false): Promise<void> {
  await within(admin.doc(`${name}/${id}`).set({ owner, seq, public: isPublic }), `write ${id}@${seq}`);
}

describe('listeners sharing one query and one document, with different target ids and callers', () => {
  let alice: { db: Firestore; uid: string; token: string };
  let bob: { db: Firestore; uid: string; token: string };
  let sessions: ClientHttp2Session[] = [];

  before(async () => {
    const user = async () => {
      const db = await newClient();
      const current = getAuth(db.app).currentUser!;
      return { db, uid: current.uid, token: await current.getIdToken() };
    };
    alice = await user();
    bob = await user();
  });

  after(() => {
    for (const session of sessions) session.close();
    sessions = [];
  });

  test('raw gRPC: allowed targets get each document once under their own id, denied ones nothing', async () => {
    await withRules(`http://${target.hostPort}`, target.projectId, rules, async () => {
      await write('a1', alice.uid, 0);
      await write('shared', alice.uid, 0, true);
      const session = connect(`http://${target.hostPort}`);
      sessions.push(session);
      // Alice's query targets: ids of one, two and five varint bytes, and two targets on one stream.
      const aliceIds = [1, 2, 200, 70_000, 0x7fffffff];
      const aliceStreams = aliceIds.map((id) => {
        const stream = new RawListen(session, alice.token);
        stream.add(id, { owner: alice.uid });
        return stream;
      });
      aliceStreams[0]!.add(300, { owner: alice.uid });
      // Bob asks for the same query (Alice's documents): refused, on streams of their own and beside an allowed target.
      const bobStreams = [5, 6].map((id) => {
        const stream = new RawListen(session, bob.token);
        stream.add(id, { owner: alice.uid });
        return stream;
      });
      bobStreams[0]!.add(7, { owner: bob.uid });
      // Both listen to the public document; Alice's and Bob's target ids interleave.
      const docStreams = [
        { stream: aliceStreams[1]!, id: 10, owner: 'alice' },
        { stream: bobStreams[1]!, id: 11, owner: 'bob' },
        { stream: bobStreams[0]!, id: 12, owner: 'bob' },
      ];
      for (const { stream, id } of docStreams) stream.add(id, { document: 'shared' });

      const current = (id: number) => (messages: Json[]) => messages.some((m) => m.targetChange?.targetChangeType === 'CURRENT' && m.targetChange.targetIds?.includes(id));
      const removed = (id: number) => (messages: Json[]) => messages.some((m) => m.targetChange?.targetChangeType === 'REMOVE' && m.targetChange.targetIds?.includes(id));
      for (const [i, stream] of aliceStreams.entries()) await stream.until(current(aliceIds[i]!), `alice ${aliceIds[i]} current`);
      await aliceStreams[0]!.until(current(300), 'alice 300 current');
      for (const [i, stream] of bobStreams.entries()) await stream.until(removed([5, 6][i]!), `bob ${[5, 6][i]} refused`);
      await bobStreams[0]!.until(current(7), 'bob 7 current');
      for (const { stream, id } of docStreams) await stream.until(current(id), `document target ${id} current`);

      // Commits: Alice's documents change twice, then the public document turns private.
      for (let seq = 1; seq <= 2; seq++) {
        await write('a1', alice.uid, seq);
        await write('shared', alice.uid, seq, true);
      }
      await write('shared', alice.uid, 3, false);
      await write('a1', alice.uid, 4);

      const expectedQuery = ['a1@0', 'shared@0', 'a1@1', 'shared@1', 'a1@2', 'shared@2', 'shared@3', 'a1@4'];
      for (const [i, stream] of aliceStreams.entries()) {
        const id = aliceIds[i]!;
        await stream.until((messages) => receivedBy(messages, id).length >= expectedQuery.length, `alice ${id} all commits`);
        assert.deepEqual(receivedBy(stream.messages, id), expectedQuery, `target ${id}`);
      }
      assert.deepEqual(receivedBy(aliceStreams[0]!.messages, 300), expectedQuery, 'target 300 (second on a stream)');
      await aliceStreams[1]!.until((messages) => receivedBy(messages, 10).length >= 4, 'alice document target');
      assert.deepEqual(receivedBy(aliceStreams[1]!.messages, 10), ['shared@0', 'shared@1', 'shared@2', 'shared@3'], 'alice keeps the document as it turns private');
      for (const { stream, id } of docStreams.filter((d) => d.owner === 'bob')) {
        await stream.until(removed(id), `bob's document target ${id} removed when the document turns private`);
        assert.deepEqual(receivedBy(stream.messages, id), ['shared@0', 'shared@1', 'shared@2'], `bob's target ${id} never gets the private version`);
        const removal = stream.messages.find((m) => m.targetChange?.targetChangeType === 'REMOVE' && m.targetChange.targetIds?.includes(id));
        assert.equal(removal?.targetChange.cause?.code, 7);
      }

      // Every document message names exactly one target, and only ones its stream holds and may read.
      const allowedOn = new Map<RawListen, number[]>([...aliceStreams.map((s, i) => [s, [aliceIds[i]!]] as [RawListen, number[]])]);
      allowedOn.get(aliceStreams[0]!)!.push(300);
      allowedOn.get(aliceStreams[1]!)!.push(10);
      allowedOn.set(bobStreams[0]!, [12]);
      allowedOn.set(bobStreams[1]!, [11]);
      for (const [stream, allowed] of allowedOn) {
        for (const message of stream.messages) {
          const change = message.documentChange;
          if (!change) continue;
          const ids = [...(change.targetIds ?? []), ...(change.removedTargetIds ?? [])];
          assert.equal(ids.length, 1, `one target per message: ${summary(message)}`);
          assert.ok(allowed.includes(ids[0]), `a message for target ${ids[0]} on a stream holding ${allowed}: ${summary(message)}`);
        }
      }
      // A snapshot after each delivery: the global NO_CHANGE follows the documents.
      for (const stream of aliceStreams) assert.equal(summary(stream.messages[stream.messages.length - 1]!), 'SNAPSHOT');
      // Bob's own (empty) query saw none of Alice's documents.
      assert.deepEqual(receivedBy(bobStreams[0]!.messages, 7), []);
      for (const stream of [...aliceStreams, ...bobStreams]) stream.close();
    });
  });

  test('the firebase SDK: two users on one query and one document each see only what rules let them', async () => {
    await withRules(`http://${target.hostPort}`, target.projectId, rules, async () => {
      await write('sdk', alice.uid, 10, true);
      const watch = (db: Firestore, owner: string) => {
        const snapshots = new Snapshots<QuerySnapshot>();
        snapshots.stop = onSnapshot(query(collection(db, name), where('owner', '==', owner)), snapshots.push, snapshots.fail);
        return snapshots;
      };
      const watchDoc = (db: Firestore) => {
        const snapshots = new Snapshots<DocumentSnapshot>();
        snapshots.stop = onSnapshot(doc(db, `${name}/sdk`), snapshots.push, snapshots.fail);
        return snapshots;
      };
      // A second client of Alice's: the SDK shares identical queries within one client, not across clients.
      const alice2 = await newClient();
      const alice2Uid = getAuth(alice2.app).currentUser!.uid;
      assert.notEqual(alice2Uid, alice.uid);
      const aliceQuery = watch(alice.db, alice.uid);
      const bobQuery = watch(bob.db, alice.uid);
      const aliceDoc = watchDoc(alice.db);
      const bobDoc = watchDoc(bob.db);
      const alice2Doc = watchDoc(alice2);
      const seq = (s: DocumentSnapshot) => (s.exists() ? (s.get('seq') as number) : undefined);
      await aliceQuery.until((s) => s.docs.some((d) => d.id === 'sdk' && d.get('seq') === 10), 'alice sees sdk@10');
      await within(
        bobQuery.until(() => false, 'never').catch((error: { code?: string }) => assert.equal(error.code, 'permission-denied')),
        'bob refused',
      );
      for (const snapshots of [aliceDoc, bobDoc, alice2Doc]) await snapshots.until((s) => seq(s) === 10, 'sdk@10');

      await write('sdk', alice.uid, 11, true);
      for (const snapshots of [aliceDoc, bobDoc, alice2Doc]) await snapshots.until((s) => seq(s) === 11, 'sdk@11');
      await write('sdk', alice.uid, 12, false);
      await aliceDoc.until((s) => seq(s) === 12, 'alice sees sdk@12');
      await aliceQuery.until((s) => s.docs.some((d) => d.id === 'sdk' && d.get('seq') === 12), 'alice query sees sdk@12');
      for (const snapshots of [bobDoc, alice2Doc]) {
        await within(
          snapshots.until(() => false, 'never').catch((error: { code?: string }) => assert.equal(error.code, 'permission-denied')),
          'refused once private',
        );
        assert.ok(!snapshots.seen.some((s) => seq(s) === 12), 'the private version never reached a reader the rules refuse');
      }
      assert.ok(!bobQuery.seen.length, 'bob never had a snapshot of Alice\'s query');
      for (const snapshots of [aliceQuery, bobQuery, aliceDoc, bobDoc, alice2Doc]) snapshots.stop();
    });
  });
});

describe('shared Listen encodings', () => {
  const generic = (message: Json) => Buffer.from(ListenResponse.encode(messageFromJson(ListenResponse, message)).finish());
  const serialize = listenResponseSerializer(ListenResponse);
  const document = {
    name: 'projects/p/databases/(default)/documents/c/d',
    fields: { text: { stringValue: 'ünïcode' }, n: { integerValue: '7' }, m: { mapValue: { fields: { x: { doubleValue: 0.5 } } } } },
    createTime: '2024-01-01T00:00:00.000001Z',
    updateTime: '2024-01-01T00:00:01.5Z',
  };
  const global = { resumeToken: Buffer.from('t1').toString('base64'), readTime: '2024-01-01T00:00:01.5Z' };
  const messages: Json[] = [
    ...[0, 1, 127, 128, 300, 16_384, 70_000, 0x7fffffff].map((id) => ({ documentChange: { document, targetIds: [id] } })),
    { documentChange: { document, removedTargetIds: [9] } },
    { documentChange: { document, targetIds: [1, 2] } },
    { documentChange: { document, targetIds: [1], removedTargetIds: [2] } },
    { targetChange: global },
    { targetChange: global },
    { targetChange: { targetChangeType: 'CURRENT', targetIds: [3], ...global } },
    { documentDelete: { document: document.name, removedTargetIds: [4], readTime: global.readTime } },
    { filter: { targetId: 4, count: 2 } },
  ];

  test('the gRPC bytes are those of the general encoder, and the JSON that of JSON.stringify, for every message', () => {
    for (const message of messages) {
      assert.deepEqual(serialize(message), generic(message), JSON.stringify(message));
      assert.equal(listenResponseJson(message), JSON.stringify(message));
    }
    // Encoded twice from the cache, with another target id between: still each its own id.
    const first = ListenResponse.decode(serialize({ documentChange: { document, targetIds: [5] } })) as unknown as Json;
    const second = ListenResponse.decode(serialize({ documentChange: { document, targetIds: [6] } })) as unknown as Json;
    assert.deepEqual([first.documentChange.targetIds, second.documentChange.targetIds], [[5], [6]]);
  });

  test('a call\'s messages framed at once are the general encoder\'s bytes, each behind its gRPC prefix', () => {
    const frame = listenFramer(ListenResponse);
    const framed = (message: Json) => {
      const body = generic(message);
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(body.length, 1);
      return Buffer.concat([prefix, body]);
    };
    // Every message after every other (the document's frames cached by id length and kind as they go), then all at once.
    for (const a of messages) for (const b of messages) assert.deepEqual(frame([a, b]), Buffer.concat([framed(a), framed(b)]), JSON.stringify([a, b]));
    assert.deepEqual(frame(messages), Buffer.concat(messages.map(framed)));
  });
});
