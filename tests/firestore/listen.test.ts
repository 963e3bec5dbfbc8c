/**
 * The Listen stream's exact message sequences, below any transport (the SDK suites over
 * WebChannel and gRPC judge the same engine end to end): first listens, deltas per commit in
 * commit order, resuming from a token with only what changed plus an existence filter, a bloom filter
 * of the names when the hub no longer remembers the changes, RESET for tokens that are not ours,
 * limit targets, removal, and errors.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ApiError } from '../../packages/server/src/http/api-error.js';
import pino from 'pino';
import { FirestoreGuard } from '../../packages/server/src/firestore/security/guard.js';
import { RulesRegistry } from '../../packages/server/src/firestore/security/rules-registry.js';
import { FirestoreAccess } from '../../packages/server/src/firestore/api/access.js';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import { parseWrite } from '../../packages/server/src/firestore/core/writes.js';
import type { StreamSession } from '../../packages/server/src/firestore/streams/stream.js';
import { FirestoreStreams } from '../../packages/server/src/firestore/streams/streams.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';

const db = { projectId: 'listen-test', databaseId: '(default)' };
const root = 'projects/listen-test/databases/(default)/documents';
let dir: string;
let store: SqliteStore;
let database: DocumentDatabase;
let streams: FirestoreStreams;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'hearth-listen-'));
  store = new SqliteStore(join(dir, 'data.sqlite'));
  database = new DocumentDatabase(store.documents());
  const silent = pino({ level: 'silent' });
  const guard = new FirestoreGuard(new RulesRegistry(store.rules(), silent), database, { dev: false, logger: silent });
  const access = new FirestoreAccess({ isAdmin: (header) => header === 'admin', verifyIdToken: () => Promise.reject(new Error('no users here')), dev: false, guard });
  streams = new FirestoreStreams(database, access);
});

after(async () => {
  streams.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

type Message = Record<string, any>;

function open(caller: 'admin' | 'anonymous' = 'admin'): { session: StreamSession; messages: Message[]; errors: ApiError[] } {
  const messages: Message[] = [];
  const errors: ApiError[] = [];
  const session = streams.open('Listen', { db, caller: { kind: caller } }, { send: (message) => messages.push(message), fail: (error) => errors.push(error) });
  return { session, messages, errors };
}

async function write(path: string, fields: Record<string, unknown> | null): Promise<void> {
  const wire = fields === null ? { delete: `${root}/${path}` } : { update: { name: `${root}/${path}`, fields } };
  await database.commit(db, [parseWrite(db, wire, 'write')]);
}

const int = (n: number) => ({ integerValue: String(n) });
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** A compact trace: ADD:2, doc:c/a, CURRENT:2, SNAPSHOT, gone:c/b, REMOVE:2, FILTER:2=3 ... */
function trace(messages: Message[]): string[] {
  return messages.map((m) => {
    if (m.targetChange) {
      const change = m.targetChange;
      if (!change.targetChangeType) return change.targetIds?.length ? `NO_CHANGE:${change.targetIds}` : 'SNAPSHOT';
      return `${change.targetChangeType}:${change.targetIds}${change.cause ? `!${change.cause.code}` : ''}`;
    }
    if (m.documentChange) {
      const name = m.documentChange.document.name.slice(root.length + 1);
      return m.documentChange.removedTargetIds?.length ? `left:${name}` : `doc:${name}`;
    }
    if (m.documentDelete) return `deleted:${m.documentDelete.document.slice(root.length + 1)}`;
    if (m.filter) return `FILTER:${m.filter.targetId}=${m.filter.count}`;
    return JSON.stringify(m);
  });
}

const queryTarget = (targetId: number, where: unknown, extra: Record<string, unknown> = {}) => ({
  addTarget: { targetId, query: { parent: root, structuredQuery: { from: [{ collectionId: 'c' }], where, ...extra } }, ...extra.target as object },
});
const below = (n: number) => ({ fieldFilter: { field: { fieldPath: 'n' }, op: 'LESS_THAN', value: int(n) } });

test('a first listen: ADD, the documents, CURRENT, then the global snapshot; then deltas in commit order', async () => {
  await write('c/a', { n: int(1) });
  await write('c/b', { n: int(7) });
  const { session, messages } = open();
  session.receive(queryTarget(2, below(5)));
  await settle();
  assert.deepEqual(trace(messages), ['ADD:2', 'doc:c/a', 'CURRENT:2', 'SNAPSHOT']);
  const times = messages.filter((m) => m.targetChange?.readTime).map((m) => m.targetChange.readTime);

  messages.length = 0;
  await write('c/b', { n: int(2) }); // enters
  await write('c/a', { n: int(9) }); // leaves, still exists
  await write('c/x', { n: int(100) }); // never in: nothing for it
  await settle();
  await write('c/b', null); // deleted
  await settle();
  // One snapshot per commit that touched the target; none for the commit that did not.
  assert.deepEqual(trace(messages), ['doc:c/b', 'SNAPSHOT', 'left:c/a', 'SNAPSHOT', 'deleted:c/b', 'SNAPSHOT']);
  const later = messages.filter((m) => m.targetChange?.readTime).map((m) => m.targetChange.readTime);
  const all = [...times, ...later];
  assert.deepEqual([...all].sort(), all, 'read times only grow');
  session.close();
});

test('resuming from a token sends only what changed since, with an existence filter', async () => {
  await write('c/r1', { n: int(1) });
  await write('c/r2', { n: int(2) });
  const first = open();
  first.session.receive(queryTarget(4, below(3)));
  await settle();
  const current = first.messages.find((m) => m.targetChange?.targetChangeType === 'CURRENT')!;
  const token = current.targetChange.resumeToken as string;
  first.session.close();

  await write('c/r2', { n: int(50) }); // left while away
  await write('c/r3', { n: int(0) }); // entered while away
  const second = open();
  second.session.receive({ addTarget: { targetId: 4, resumeToken: token, query: { parent: root, structuredQuery: { from: [{ collectionId: 'c' }], where: below(3) } } } });
  await settle();
  const expectedCount = second.messages.find((m) => m.filter)!.filter.count;
  assert.deepEqual(trace(second.messages).sort(), ['ADD:4', 'left:c/r2', 'doc:c/r3', `FILTER:4=${expectedCount}`, 'CURRENT:4', 'SNAPSHOT'].sort());
  assert.deepEqual(trace(second.messages).slice(0, 1), ['ADD:4']);
  assert.equal(trace(second.messages).at(-1), 'SNAPSHOT');
  second.session.close();
});

test('a token the history cannot serve gets RESET and the whole result', async () => {
  const { session, messages } = open();
  session.receive({ addTarget: { targetId: 6, resumeToken: Buffer.from('from another server').toString('base64'), query: { parent: root, structuredQuery: { from: [{ collectionId: 'c' }], where: below(1) } } } });
  await settle();
  assert.deepEqual(trace(messages), ['ADD:6', 'RESET:6', 'doc:c/r3', 'CURRENT:6', 'SNAPSHOT']);
  session.close();
});

test('a resume the hub no longer remembers gets the newer documents and a bloom filter of the names, not RESET', async () => {
  await write('c/h1', { n: int(-3) });
  await write('c/h2', { n: int(-2) });
  const first = open();
  const where = { fieldFilter: { field: { fieldPath: 'n' }, op: 'LESS_THAN', value: int(-1) } };
  const target = (extra: Record<string, unknown>) => ({ addTarget: { targetId: 8, query: { parent: root, structuredQuery: { from: [{ collectionId: 'c' }], where } }, ...extra } });
  first.session.receive(target({}));
  await settle();
  const token = first.messages.find((m) => m.targetChange?.targetChangeType === 'CURRENT')!.targetChange.resumeToken as string;
  first.session.close();
  await write('c/h1', null); // gone while away
  await write('c/h3', { n: int(-5) }); // entered while away

  // A new set of streams has a new hub, which remembers nothing: as after a restart.
  const restarted = new FirestoreStreams(database, new FirestoreAccess({ isAdmin: (header) => header === 'admin', verifyIdToken: () => Promise.reject(new Error('no users here')), dev: false, guard: new FirestoreGuard(new RulesRegistry(store.rules(), pino({ level: 'silent' })), database, { dev: false, logger: pino({ level: 'silent' }) }) }));
  const messages: Message[] = [];
  const session = restarted.open('Listen', { db, caller: { kind: 'admin' } }, { send: (message) => messages.push(message), fail: (error) => assert.fail(error.message) });
  session.receive(target({ resumeToken: token }));
  await settle();
  assert.deepEqual(trace(messages), ['ADD:8', 'doc:c/h3', 'FILTER:8=2', 'CURRENT:8', 'SNAPSHOT']);
  const bloom = messages.find((m) => m.filter)!.filter.unchangedNames;
  assert.equal(typeof bloom.bits.bitmap, 'string');
  assert.ok(bloom.hashCount > 0 && bloom.bits.padding >= 0 && bloom.bits.padding < 8);
  session.close();
  restarted.close();
});

test('a limit target keeps exactly its first documents as others come and go', async () => {
  for (const [id, n] of [['l1', 10], ['l2', 20], ['l3', 30]] as const) await write(`lim/${id}`, { n: int(n) });
  const { session, messages } = open();
  session.receive({ addTarget: { targetId: 8, query: { parent: root, structuredQuery: { from: [{ collectionId: 'lim' }], orderBy: [{ field: { fieldPath: 'n' } }], limit: 2 } } } });
  await settle();
  assert.deepEqual(trace(messages), ['ADD:8', 'doc:lim/l1', 'doc:lim/l2', 'CURRENT:8', 'SNAPSHOT']);
  messages.length = 0;
  await write('lim/l0', { n: int(5) }); // pushes l2 out
  await settle();
  assert.deepEqual(trace(messages), ['doc:lim/l0', 'left:lim/l2', 'SNAPSHOT']);
  session.close();
});

test('documents targets, removal, a reused target id, and a denied target', async () => {
  const { session, messages, errors } = open();
  session.receive({ addTarget: { targetId: 10, documents: { documents: [`${root}/d/missing`] } } });
  await settle();
  assert.deepEqual(trace(messages), ['ADD:10', 'CURRENT:10', 'SNAPSHOT']);
  messages.length = 0;
  await write('d/missing', { n: int(1) });
  await settle();
  assert.deepEqual(trace(messages), ['doc:d/missing', 'SNAPSHOT']);
  messages.length = 0;
  session.receive({ removeTarget: 10 });
  await settle();
  assert.deepEqual(trace(messages), ['REMOVE:10']);
  await write('d/missing', { n: int(2) });
  await settle();
  assert.deepEqual(trace(messages), ['REMOVE:10'], 'nothing after removal');
  session.receive({ addTarget: { targetId: 12, documents: { documents: [`${root}/d/x`] } } });
  session.receive({ addTarget: { targetId: 12, documents: { documents: [`${root}/d/x`] } } });
  await settle();
  assert.equal(errors[0]?.status, 'INVALID_ARGUMENT');

  const projected = open();
  projected.session.receive({ addTarget: { targetId: 14, query: { parent: root, structuredQuery: { from: [{ collectionId: 'c' }], select: { fields: [{ fieldPath: 'n' }] } } } } });
  await settle();
  assert.deepEqual(trace(projected.messages), ['ADD:14', 'REMOVE:14!3'], 'a projection cannot be listened to, as in production');
  projected.session.close();

  const denied = open('anonymous');
  denied.session.receive({ addTarget: { targetId: 2, documents: { documents: [`${root}/d/x`] } } });
  await settle();
  assert.deepEqual(trace(denied.messages), ['ADD:2', 'REMOVE:2!7']);
  assert.deepEqual(denied.errors, []);
  denied.session.close();
});

test('a commit reaches a stream before any request that came after it, as one snapshot across its targets', async () => {
  const { session, messages } = open();
  session.receive(queryTarget(2, below(5)));
  session.receive(queryTarget(3, below(0)));
  session.receive({ addTarget: { targetId: 11, documents: { documents: [`${root}/o/two`] } } });
  await settle();
  messages.length = 0;
  // Idle streams send a commit at the next tick, with every other stream's: a request in between waits for it.
  await write('c/o1', { n: int(1) });
  session.receive({ removeTarget: 3 });
  await settle();
  assert.deepEqual(trace(messages), ['doc:c/o1', 'SNAPSHOT', 'REMOVE:3']);
  messages.length = 0;
  // A query target and a documents target (judged again, which reads) in one commit: still one snapshot.
  await database.commit(db, [parseWrite(db, { update: { name: `${root}/c/o3`, fields: { n: int(3) } } }, 'write'), parseWrite(db, { update: { name: `${root}/o/two`, fields: { n: int(2) } } }, 'write')]);
  await settle();
  assert.deepEqual(trace(messages), ['doc:c/o3', 'doc:o/two', 'SNAPSHOT']);
  session.close();
});

test('a commit in one collection reaches its collection-group and documents targets too', async () => {
  const { session, messages } = open();
  const targetsOf = () => messages.filter((m) => m.documentChange).map((m) => `${m.documentChange.targetIds}`);
  const commitAndSee = async (path: string) => {
    messages.length = 0;
    await write(path, { n: int(1) });
    await settle();
    return targetsOf();
  };
  session.receive({ addTarget: { targetId: 20, query: { parent: root, structuredQuery: { from: [{ collectionId: 'g' }] } } } });
  session.receive({ addTarget: { targetId: 22, documents: { documents: [`${root}/g/b`] } } });
  await settle();
  assert.deepEqual(await commitAndSee('g/b'), ['20', '22']);
  session.receive({ removeTarget: 22 });
  session.receive({ addTarget: { targetId: 21, query: { parent: root, structuredQuery: { from: [{ collectionId: 'g', allDescendants: true }] } } } });
  await settle();
  assert.deepEqual(await commitAndSee('g/a'), ['20', '21']);
  assert.deepEqual(await commitAndSee('p/x/g/c'), ['21']);
  session.close();
});
