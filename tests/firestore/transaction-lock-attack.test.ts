/**
 * Issue 28, item 6: one caller must not be able to hold another's writes. Rules used to be checked
 * after a transaction's read had taken its lock, so an anonymous client repeating denied reads in
 * transactions kept the owner's writes waiting 15 s and failing ABORTED (which the SDKs retry
 * forever), and, on a project without rules, the administrator's. Now a read is judged before its
 * transaction records it, and the transactions of callers judged by rules are optimistic (they
 * lock nothing and are checked at commit), so even reads the rules allow hold nobody's writes;
 * the administrator's transactions keep their locks and are never wounded by such a caller.
 *
 * Each attack runs on loopback, bounded, while the legitimate client writes; what is asserted is
 * that those writes succeed (never how long they took) and that the attacker got only refusals.
 * Production mode, rules released; raw REST and gRPC for the attacker (no SDK sends a read it was
 * refused again and again), the client SDK and @google-cloud/firestore for the legitimate side.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { doc, setDoc, updateDoc } from 'firebase/firestore';
import { ProductionFirestore, wireFields, type ProductionUser, type RestAnswer } from '../helpers/production-firestore.js';

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /users/{uid}/notes/{note} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /posts/{post} {
      allow read: if true;
      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
      allow update: if request.auth != null && resource.data.owner == request.auth.uid;
    }
    match /counters/{id} {
      allow read, write: if request.auth != null;
    }
    match /guestbook/{id} {
      allow create: if true;
    }
  }
}
`;

let env: ProductionFirestore;
let alice: ProductionUser;
let bob: ProductionUser;

before(async () => {
  env = await ProductionFirestore.start();
  await env.releaseRules(rules);
  alice = await env.signUp('alice');
  bob = await env.signUp('bob');
});

after(() => env.close());

/** Longest an attack may run: the legitimate writes end it long before, unless they are held. */
const attackBoundMs = 90_000;

/**
 * `loops` callers repeating `attempt` until stopped (or the bound), each outcome tallied by its
 * label; `warmedUp` resolves once every loop has had `warmUp` answers, so the attack is in place.
 */
function attack(loops: number, attempt: () => Promise<string>, warmUp = 5) {
  const outcomes = new Map<string, number>();
  let stopped = false;
  let answered = 0;
  const deadline = Date.now() + attackBoundMs;
  let markWarm: () => void;
  const warmedUp = new Promise<void>((resolve) => (markWarm = resolve));
  const running = Promise.all(
    Array.from({ length: loops }, async () => {
      while (!stopped && Date.now() < deadline) {
        const outcome = await attempt().catch((error: Error) => `threw ${error.message}`);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        if (++answered === loops * warmUp) markWarm();
      }
    }),
  );
  return {
    warmedUp,
    /** Ends the attack; whether it was still running (not cut by its bound). */
    async stop(): Promise<{ outcomes: Map<string, number>; cutByBound: boolean }> {
      const cutByBound = Date.now() >= deadline;
      stopped = true;
      await running;
      return { outcomes, cutByBound };
    },
  };
}

const statusOf = (answer: RestAnswer) => `${answer.status} ${answer.body?.error?.status ?? 'OK'}`;

/** The legitimate writes: a raw commit whose exact answer we see, then client-SDK writes (which would retry ABORTED forever). */
async function ownerKeepsWriting(label: string, rawCommit: () => Promise<RestAnswer>, sdkWrites: Array<() => Promise<unknown>>): Promise<void> {
  const raw = await rawCommit();
  assert.equal(raw.status, 200, `${label}: the owner's commit under attack answered ${JSON.stringify(raw.body)}`);
  for (const write of sdkWrites) await write();
}

describe('denied reads inside transactions take nothing', () => {
  test('anonymous and signed-in strangers repeating refused transactional reads of a note do not hold its owner\'s writes', async () => {
    const note = doc(alice.client, 'users', alice.uid, 'notes', 'diary');
    await setDoc(note, { text: 'day 0' });
    const name = env.name(`users/${alice.uid}/notes/diary`);
    const database = `projects/${env.projectId}/databases/(default)`;
    const strangers = attack(3, async () => {
      // REST: a transaction begun by the read itself, and one begun first then named by a GET.
      const begunByRead = await env.rest('POST', `${env.root()}:batchGet`, { documents: [name], newTransaction: { readWrite: {} } });
      const begun = await env.rest('POST', `${env.root()}:beginTransaction`, {});
      const named = await env.rest('GET', `${name}?transaction=${encodeURIComponent(begun.body.transaction)}`);
      // gRPC, signed in as someone else: BeginTransaction, then GetDocument in it.
      const grpcBegun = await env.grpc('BeginTransaction', { database }, bob.authorization);
      const grpcRead = grpcBegun.ok ? await env.grpc('GetDocument', { name, transaction: grpcBegun.body.transaction }, bob.authorization) : grpcBegun;
      return [statusOf(begunByRead), statusOf(named), grpcRead.ok ? 'grpc OK' : `grpc ${grpc.status[grpcRead.code]}`].join(' | ');
    });
    await strangers.warmedUp;
    try {
      await ownerKeepsWriting(
        'note',
        () => env.rest('POST', `${env.root()}:commit`, { writes: [{ update: { name, fields: wireFields({ text: 'day 1' }) } }] }, alice.authorization),
        [1, 2, 3].map((day) => () => updateDoc(note, { text: `day ${day + 1}` })),
      );
    } finally {
      const { outcomes, cutByBound } = await strangers.stop();
      assert.equal(cutByBound, false, 'the owner\'s writes were held until the attack gave up');
      assert.deepEqual([...outcomes.keys()], ['403 PERMISSION_DENIED | 403 PERMISSION_DENIED | grpc PERMISSION_DENIED']);
    }
  });

  test('on a project without rules, anonymous transactional reads do not hold the administrator\'s writes', async () => {
    const closed = 'demo-no-rules';
    const name = env.name('things/t1', closed);
    const admin = env.gcloud(env.adminAuthorization, closed);
    await admin.doc('things/t1').set({ n: 0 });
    const stranger = attack(3, async () => statusOf(await env.rest('POST', `${env.root(closed)}:batchGet`, { documents: [name], newTransaction: {} })));
    await stranger.warmedUp;
    try {
      await ownerKeepsWriting(
        'admin',
        () => env.rest('POST', `${env.root(closed)}:commit`, { writes: [{ update: { name, fields: wireFields({ n: 1 }) } }] }, env.adminAuthorization),
        [2, 3].map((n) => () => admin.doc('things/t1').set({ n })),
      );
    } finally {
      const { outcomes, cutByBound } = await stranger.stop();
      assert.equal(cutByBound, false, 'the administrator\'s writes were held until the attack gave up');
      assert.deepEqual([...outcomes.keys()], ['403 PERMISSION_DENIED']);
    }
    assert.equal((await admin.doc('things/t1').get()).get('n'), 3);
  });

  test('a refused read leaves nothing in its transaction: the commit does not tell whether that document changed since', async () => {
    const name = env.name(`users/${alice.uid}/notes/secret`);
    await env.adminCommit([{ update: { name, fields: wireFields({ text: 'v1' }) } }]);
    const begun = await env.rest('POST', `${env.root()}:beginTransaction`, {});
    assert.equal(begun.status, 200);
    const refused = await env.rest('POST', `${env.root()}:batchGet`, { documents: [name], transaction: begun.body.transaction });
    assert.equal(statusOf(refused), '403 PERMISSION_DENIED');
    await env.rest('POST', `${env.root()}:commit`, { writes: [{ update: { name, fields: wireFields({ text: 'v2' }) } }] }, alice.authorization);
    const signed = await env.rest('POST', `${env.root()}:commit`, {
      transaction: begun.body.transaction,
      writes: [{ update: { name: env.name('guestbook/g1'), fields: wireFields({ hello: true }) }, currentDocument: { exists: false } }],
    });
    assert.equal(statusOf(signed), '200 OK', 'an ABORTED here would say the refused document changed');
  });
});

describe('transactions of callers judged by rules lock nothing', () => {
  test('abandoned transactions that read a public post (allowed) do not hold its owner\'s writes', async () => {
    const post = doc(alice.client, 'posts', 'hello');
    await setDoc(post, { owner: alice.uid, title: 'v0' });
    const name = env.name('posts/hello');
    const readers = attack(3, async () => statusOf(await env.rest('POST', `${env.root()}:batchGet`, { documents: [name], newTransaction: {} })));
    await readers.warmedUp;
    try {
      await ownerKeepsWriting(
        'post',
        () => env.rest('POST', `${env.root()}:commit`, { writes: [{ update: { name, fields: wireFields({ owner: alice.uid, title: 'v1' }) } }] }, alice.authorization),
        [2, 3].map((version) => () => updateDoc(post, { title: `v${version}` })),
      );
    } finally {
      const { outcomes, cutByBound } = await readers.stop();
      assert.equal(cutByBound, false, 'the owner\'s writes were held until the readers gave up');
      assert.deepEqual([...outcomes.keys()], ['200 OK']);
    }
  });

  test('a signed-in user\'s transaction is optimistic: a write after its read goes through, and the transaction retries on the new value', async () => {
    const counter = env.name('counters/shared');
    await env.adminCommit([{ update: { name: counter, fields: wireFields({ n: 0 }) } }]);
    const asBob = env.gcloud(bob.authorization);
    let attempts = 0;
    let interleaved: RestAnswer | undefined;
    await asBob.runTransaction(async (transaction) => {
      attempts++;
      const seen = await transaction.get(asBob.doc('counters/shared'));
      // Alice writes the counter after bob's transaction read it (it waited on bob's lock before).
      if (attempts === 1) interleaved = await env.rest('POST', `${env.root()}:commit`, { writes: [{ update: { name: counter, fields: wireFields({ n: 10 }) } }] }, alice.authorization);
      transaction.update(asBob.doc('counters/shared'), { n: (seen.get('n') as number) + 1 });
    });
    assert.equal(interleaved?.status, 200, JSON.stringify(interleaved?.body));
    assert.equal(attempts, 2, 'the first attempt, whose read had changed, was aborted and retried');
    assert.equal((await env.gcloud(env.adminAuthorization).doc('counters/shared').get()).get('n'), 11);
  });

  test('a signed-in user\'s older transaction waits for the administrator\'s, never wounds it, and aborts if what it read changed', async () => {
    const name = env.name('counters/audited');
    await env.adminCommit([{ update: { name: name, fields: wireFields({ n: 0 }) } }]);
    const begun = await env.rest('POST', `${env.root()}:beginTransaction`, {}, bob.authorization);
    const read = await env.rest('POST', `${env.root()}:batchGet`, { documents: [name], transaction: begun.body.transaction }, bob.authorization);
    assert.equal(read.status, 200);
    const admin = env.gcloud(env.adminAuthorization);
    let adminAttempts = 0;
    let bobsCommit: Promise<RestAnswer> | undefined;
    await admin.runTransaction(async (transaction) => {
      adminAttempts++;
      const seen = await transaction.get(admin.doc('counters/audited'));
      // Bob's transaction (older) now commits a write to what both read.
      bobsCommit ??= env.rest('POST', `${env.root()}:commit`, { transaction: begun.body.transaction, writes: [{ update: { name, fields: wireFields({ n: -1 }) } }] }, bob.authorization);
      await new Promise((resolve) => setTimeout(resolve, 200));
      transaction.update(admin.doc('counters/audited'), { n: (seen.get('n') as number) + 100 });
    });
    assert.equal(adminAttempts, 1, 'the administrator\'s transaction was not wounded');
    const bobs = await bobsCommit!;
    assert.equal(statusOf(bobs), '409 ABORTED', JSON.stringify(bobs.body));
    assert.equal((await admin.doc('counters/audited').get()).get('n'), 100);
  });
});
