/**
 * The smallest reproductions of the breaches the rules invariant (tests/rules/rules-invariant*.test.ts) found in
 * issue 28's items 1-5, pinned: each is a round of the same corpus shape, written by hand (a ruleset, one to three
 * documents, one or two writes), run through the same clients and judged by the same judge and ledger. Hearth in
 * production mode, ID tokens it signed; raw gRPC and WebChannel streams, REST and gRPC reads. The last case is a
 * Listen bug the invariant met on the way (on PostgreSQL): resumed listeners that never got a commit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { History, Ledger } from '../helpers/invariant-ledger.js';
import { RawListen, type TargetSpec } from '../helpers/invariant-listen.js';
import { CallerReads, type Consistency } from '../helpers/invariant-reads.js';
import { rulesSource, type Condition, type RoundRules } from '../helpers/invariant-rules.js';
import { commitAsAdmin, releaseRules, startInvariantHearth, writeMark, type InvariantServer } from '../helpers/invariant-servers.js';
import { SdkClient } from '../helpers/invariant-sdk.js';
import { callerNames, generateCorpus, namesOf, queryLabel, type CallerName, type DocData, type QuerySpec, type Round, type WriteStep } from '../helpers/invariant-world.js';

const publicOnly: Condition = { kind: 'atom', atom: { kind: 'field', field: 'visibility', value: 'public' } };
const ownerOnly: Condition = { kind: 'atom', atom: { kind: 'ownerField' } };
const nobody: Condition = { kind: 'atom', atom: { kind: 'level', op: '>', value: 100 } };

let hearth: InvariantServer;
let next = 900;

/** A round of its own (collections named after it): the posts and the notes group readable as `posts` and `group` say. */
function round(posts: Condition, group: Condition, seed: Record<string, DocData>, writes: WriteStep[] = [], queries: QuerySpec[] = []): Round {
  const index = next++;
  const names = namesOf(index);
  const rename = (path: string) => path.replace(/^posts\//, `${names.posts}/`).replace(/^users\/(\w+)\/notes\//, `${names.users}/$1/${names.notes}/`);
  const rules: RoundRules = { posts: { combined: true, get: posts, list: posts }, notes: { combined: false }, group: { combined: true, get: group, list: group } };
  return {
    index,
    names,
    rules,
    seed: new Map(Object.entries(seed).map(([path, data]) => [rename(path), data])),
    writes: writes.map((write) => ({ ...write, path: rename(write.path) })),
    queries: queries.map((query) => ({
      ...query,
      scope: query.scope.kind === 'group' ? { kind: 'group', collectionId: names.notes } : { kind: 'collection', parent: '', collectionId: names.posts },
      filters: query.filters.map((filter) => (filter.field === '__name__' ? { ...filter, path: rename(filter.path) } : filter)),
    })),
    documents: [],
  };
}

function posts(filters: QuerySpec['filters'], limit?: number): QuerySpec {
  const spec = { scope: { kind: 'collection' as const, parent: '', collectionId: 'posts' }, filters, ...(limit !== undefined ? { limit } : {}) };
  return { ...spec, label: queryLabel(spec) };
}

function group(filters: QuerySpec['filters']): QuerySpec {
  const spec = { scope: { kind: 'group' as const, collectionId: 'notes' }, filters };
  return { ...spec, label: queryLabel(spec) };
}

/** Seeds the round; answers its history (Hearth's commit times) and the seed's commit time. */
async function start(r: Round): Promise<{ history: History; seeded: number }> {
  await releaseRules(hearth, rulesSource(r.rules, r.names));
  const history = new History();
  const steps = [...r.seed].map(([path, data]) => ({ kind: 'set' as const, path, data }));
  const seeded = await commitAsAdmin(hearth, steps);
  history.apply(seeded, steps);
  return { history, seeded };
}

async function write(r: Round, history: History): Promise<void> {
  for (const step of r.writes) history.apply(await commitAsAdmin(hearth, [step]), [step]);
}

/** The caller listens to each query over gRPC and WebChannel; `between` runs once every stream is current. */
async function listening(r: Round, caller: CallerName, ledger: Ledger, between: (streams: RawListen[]) => Promise<void>): Promise<void> {
  const streams: RawListen[] = [];
  try {
    for (const kind of ['grpc', 'webchannel'] as const) {
      const targets: TargetSpec[] = r.queries.map((query, i) => ({ targetId: i + 1, query }));
      const stream = await RawListen.open(hearth, r, caller, kind, ledger, 'Listen', targets[0]!);
      for (const target of targets.slice(1)) await stream.add(target);
      streams.push(stream);
    }
    await writeMark(hearth, r, 'ready');
    for (const stream of streams) assert.ok(await stream.settled('ready'), `${stream.kind} stream never caught up`);
    await between(streams);
    await writeMark(hearth, r, 'done');
    for (const stream of streams) await stream.settled('done');
  } finally {
    for (const stream of streams) stream.close();
  }
}

/** Resumes each of the caller's targets on new streams, from the resume token and from the read time the first streams had. */
async function resumed(r: Round, caller: CallerName, ledger: Ledger, earlier: RawListen): Promise<void> {
  const specs: TargetSpec[] = [];
  for (const [id, state] of earlier.targets) {
    if (!state.current || !state.spec.query || id > 100) continue;
    specs.push({ targetId: id, query: state.spec.query, resumeToken: state.current.resumeToken });
    specs.push({ targetId: id + 500, query: state.spec.query, readTime: state.current.readTime });
  }
  assert.ok(specs.length > 0, 'the first stream had a current target to resume');
  for (const kind of ['grpc', 'webchannel'] as const) {
    const stream = await RawListen.open(hearth, r, caller, kind, ledger, 'Listen', specs[0]!);
    try {
      for (const spec of specs.slice(1)) await stream.add(spec);
      await writeMark(hearth, r, `resumed-${kind}`);
      assert.ok(await stream.settled(`resumed-${kind}`), `the ${kind} resume never caught up`);
    } finally {
      stream.close();
    }
  }
}

function assertClean(ledger: Ledger, r: Round): void {
  assert.equal(ledger.breaches.length, 0, `${rulesSource(r.rules, r.names)}\n${ledger.report()}`);
}

describe('rules invariant: the pinned reproductions of issue 28 items 1-5 (production mode)', () => {
  before(async () => {
    hearth = await startInvariantHearth([]);
  });
  after(async () => hearth?.close());

  test('1. a Listen target resumed from a resume token or a read time gets no document changed since that the caller may not read', async () => {
    // Anonymous on the public listing; user u2 on its own notes across the collection group.
    const listing = round(publicOnly, nobody, { 'posts/a': { visibility: 'public', title: 'a' }, 'posts/b': { visibility: 'private', title: 'b' } }, [
      { kind: 'update', path: 'posts/b', data: { visibility: 'private', title: 'b2' }, mask: ['title'] },
    ], [posts([{ field: 'visibility', op: '==', value: 'public' }])]);
    const notes = round(nobody, ownerOnly, { 'users/u1/notes/n': { owner: 'u1', title: 'n' }, 'users/u2/notes/m': { owner: 'u2', title: 'm' } }, [
      { kind: 'update', path: 'users/u1/notes/n', data: { owner: 'u1', title: 'n2' }, mask: ['title'] },
    ], [group([{ field: 'owner', op: '==', value: 'u2' }])]);
    const ledger = new Ledger(0);
    for (const [r, caller] of [[listing, 'anonymous'], [notes, 'u2']] as const) {
      const { history } = await start(r);
      await listening(r, caller, ledger, async (streams) => {
        await write(r, history);
        await resumed(r, caller, ledger, streams[0]!);
      });
    }
    assert.equal(ledger.breaches.length, 0, ledger.report());
  });

  test('2. a document leaving a live query (plain or limit) is removed, never sent with content the caller may not read', async () => {
    const r = round(publicOnly, nobody, { 'posts/a': { visibility: 'public', title: 'a' }, 'posts/b': { visibility: 'public', title: 'b' } }, [
      { kind: 'update', path: 'posts/a', data: { visibility: 'private', title: 'a' }, mask: ['visibility'] },
      { kind: 'update', path: 'posts/b', data: { visibility: 'private', title: 'b' }, mask: ['visibility'] },
    ], [posts([{ field: 'visibility', op: '==', value: 'public' }]), posts([{ field: 'visibility', op: '==', value: 'public' }], 1)]);
    const { history } = await start(r);
    const ledger = new Ledger(0);
    await listening(r, 'anonymous', ledger, () => write(r, history));
    assertClean(ledger, r);
  });

  test('3. a query naming one document (__name__ ==) is judged on each version: a later denied version is not streamed', async () => {
    const r = round(publicOnly, nobody, { 'posts/a': { visibility: 'public', title: 'a' } }, [
      { kind: 'update', path: 'posts/a', data: { visibility: 'private', title: 'a' }, mask: ['visibility'] },
      { kind: 'update', path: 'posts/a', data: { visibility: 'private', title: 'secret' }, mask: ['title'] },
    ], [posts([{ field: '__name__', op: '==', path: 'posts/a' }])]);
    const { history } = await start(r);
    const ledger = new Ledger(0);
    await listening(r, 'anonymous', ledger, () => write(r, history));
    assertClean(ledger, r);
  });

  test('4. a query, an aggregation or a read-only transaction at a past read time is judged on the version of that time', async () => {
    // A draft, later published: at the draft's time the caller may not read it.
    const r = round(publicOnly, nobody, { 'posts/d': { visibility: 'private', title: 'draft', level: 1 } }, [{ kind: 'update', path: 'posts/d', data: { visibility: 'public', title: 'draft', level: 1 }, mask: ['visibility'] }], [
      posts([{ field: '__name__', op: '==', path: 'posts/d' }]),
    ]);
    const { history, seeded } = await start(r);
    await write(r, history);
    const ledger = new Ledger(0);
    for (const transport of ['rest', 'grpc'] as const) {
      const reads = new CallerReads(hearth, r, 'anonymous', transport, ledger, history);
      try {
        const past: Consistency[] = [{ kind: 'readTime', time: seeded }, { kind: 'newReadOnly', time: seeded }];
        const readOnly = await reads.begin(seeded);
        if (readOnly) past.push({ kind: 'transaction', id: readOnly, readOnlyAt: seeded });
        for (const consistency of past) {
          await reads.runQuery(r.queries[0]!, consistency);
          await reads.aggregate(r.queries[0]!, consistency);
        }
      } finally {
        reads.close();
      }
    }
    assertClean(ledger, r);
  });

  test('5. a verify write about a document the caller may not get is refused, whether it exists or not', async () => {
    const r = round(publicOnly, nobody, { 'posts/secret': { visibility: 'private', title: 's' } });
    const { history } = await start(r);
    const ledger = new Ledger(0);
    for (const transport of ['rest', 'grpc'] as const) {
      const reads = new CallerReads(hearth, r, 'anonymous', transport, ledger, history);
      try {
        await reads.verify(`${r.names.posts}/secret`);
        await reads.verify(`${r.names.posts}/missing`);
      } finally {
        reads.close();
      }
    }
    assertClean(ledger, r);
  });

  test('a listener that resumes (the SDK back online) misses no commit made meanwhile or just after', async () => {
    // Found by the invariant on PostgreSQL: a resumed target's first answer read the documents as stored while
    // the change feed had not yet brought the latest commits to the listen hub, counted them as sent, and
    // then skipped them when they came. Eight SDK clients going offline and back at once make the race likely.
    const r = generateCorpus(42, { rounds: 1, postsPerRound: 7, notesPerUser: 2, writesPerRound: 18 })[0]!;
    const { history } = await start(r);
    const ledger = new Ledger(42);
    const clients: SdkClient[] = [];
    try {
      for (const caller of callerNames) {
        for (const kind of ['firebase-grpc', 'firebase-webchannel'] as const) {
          const client = await SdkClient.open(kind, hearth, r, caller, ledger);
          for (const query of r.queries) client.listen({ query });
          clients.push(client);
        }
      }
      await writeMark(hearth, r, 'ready');
      for (const client of clients) assert.ok(await client.settled('ready'), `${client.kind} of ${client.caller} never caught up`);
      for (let stretch = 0; stretch < 3; stretch++) {
        const away = clients.filter((_, i) => i % 2 === stretch % 2);
        await Promise.all(away.map((client) => client.offline()));
        for (const step of r.writes.slice(stretch * 6, stretch * 6 + 6)) history.apply(await commitAsAdmin(hearth, [step]), [step]);
        await Promise.all(away.map((client) => client.online()));
        await writeMark(hearth, r, `back${stretch}`);
        const late: string[] = [];
        for (const client of clients) if (!(await client.settled(`back${stretch}`))) late.push(`${client.kind} of ${client.caller}: ${client.pending(`back${stretch}`)}`);
        assert.deepEqual(late, [], `clients that never got the commit after they came back (stretch ${stretch})`);
      }
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});
