/**
 * Issue 28, item 4: every document version answered at a past read time is judged on THAT version.
 * A draft later published must not be readable at its draft time through a query naming it, an
 * aggregation over it or a read-only transaction (get and batchGet were already judged on the
 * version read); a post public then and private now is readable at its public time, as Google's
 * emulator answers (checked by hand: tests/firestore/read-time-rules.test.ts's cases, same rules).
 * Production mode, rules released; the reader is @google-cloud/firestore over gRPC with a user's
 * ID token (the client SDKs cannot read at a past time), and raw REST for the anonymous caller.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AggregateField, FieldPath, Timestamp, type Firestore as GcloudFirestore } from '@google-cloud/firestore';
import { namedQuery, ProductionFirestore, wireFields, type ProductionUser } from '../helpers/production-firestore.js';

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{post} {
      allow read: if resource.data.visibility == 'public'
        || (request.auth != null && resource.data.owner == request.auth.uid);
    }
  }
}
`;

let env: ProductionFirestore;
let alice: ProductionUser;
let bob: ProductionUser;
let asAlice: GcloudFirestore;
let asBob: GcloudFirestore;
/** When draft1 was a draft, and when it was published. */
let draftTime: string;
let publishedTime: string;
/** When post2 was public (it is private now). */
let publicTime: string;

const permissionDenied = 7;

/** An RFC 3339 time of an answer, exactly (microseconds too), as the SDK's Timestamp. */
function timestampOf(text: string): Timestamp {
  const match = /^(.*?)(?:\.(\d+))?Z$/.exec(text)!;
  return new Timestamp(Date.parse(`${match[1]}Z`) / 1000, Number((match[2] ?? '').padEnd(9, '0')));
}

async function deniedCode(promise: Promise<unknown>): Promise<number | string> {
  return promise.then(
    () => 'allowed',
    (error: { code?: number }) => error.code ?? String(error),
  );
}

function post(path: string, fields: Record<string, string | number>) {
  return { update: { name: env.name(path), fields: wireFields(fields) } };
}

before(async () => {
  env = await ProductionFirestore.start();
  await env.releaseRules(rules);
  alice = await env.signUp('alice');
  bob = await env.signUp('bob');
  asAlice = env.gcloud(alice.authorization);
  asBob = env.gcloud(bob.authorization);
  draftTime = await env.adminCommit([post('posts/draft1', { owner: alice.uid, visibility: 'draft', title: 'secret plan', secret: 42 })]);
  publicTime = await env.adminCommit([post('posts/post2', { owner: alice.uid, visibility: 'public', title: 'was public', secret: 7 })]);
  publishedTime = await env.adminCommit([post('posts/draft1', { owner: alice.uid, visibility: 'public', title: 'announcement', secret: 0 })]);
  await env.adminCommit([post('posts/post2', { owner: alice.uid, visibility: 'private', title: 'now private', secret: 8 })]);
});

after(() => env.close());

describe('a query naming one document, at a past read time (gRPC, @google-cloud/firestore)', () => {
  const named = (db: GcloudFirestore, id: string) => db.collection('posts').where(FieldPath.documentId(), '==', id);
  const readAt = <T>(db: GcloudFirestore, time: string, read: (tx: FirebaseFirestore.Transaction) => Promise<T>) =>
    db.runTransaction(read, { readOnly: true, readTime: timestampOf(time) });

  test('is refused where the version it would answer is refused: a draft, published later, at its draft time', async () => {
    assert.equal(await deniedCode(readAt(asBob, draftTime, (tx) => tx.get(named(asBob, 'draft1')))), permissionDenied);
    // The owner reads her draft; everyone reads what was published, at its time.
    const ownDraft = await readAt(asAlice, draftTime, (tx) => tx.get(named(asAlice, 'draft1')));
    assert.deepEqual(ownDraft.docs.map((doc) => doc.get('title')), ['secret plan']);
    const published = await readAt(asBob, publishedTime, (tx) => tx.get(named(asBob, 'draft1')));
    assert.deepEqual(published.docs.map((doc) => doc.get('title')), ['announcement']);
  });

  test('is answered where that version is allowed: a post public then, private now', async () => {
    const then = await readAt(asBob, publicTime, (tx) => tx.get(named(asBob, 'post2')));
    assert.deepEqual(then.docs.map((doc) => doc.get('title')), ['was public']);
    assert.equal(await deniedCode(named(asBob, 'post2').get()), permissionDenied);
  });

  test('aggregations over it are judged on that version too (count, sum)', async () => {
    const draft = named(asBob, 'draft1');
    assert.equal(await deniedCode(readAt(asBob, draftTime, (tx) => tx.get(draft.aggregate({ secret: AggregateField.sum('secret') })))), permissionDenied);
    assert.equal(await deniedCode(readAt(asBob, draftTime, (tx) => tx.get(draft.count()))), permissionDenied);
    const sum = await readAt(asAlice, draftTime, (tx) => tx.get(named(asAlice, 'draft1').aggregate({ secret: AggregateField.sum('secret') })));
    assert.equal(sum.data().secret, 42);
  });

  test('a read-only transaction reads at its start: a document published after it began is judged as it was then', async () => {
    await env.adminCommit([post('posts/draft3', { owner: alice.uid, visibility: 'draft', title: 'early draft', secret: 3 })]);
    let attempts = 0;
    const outcome = await deniedCode(
      asBob.runTransaction(
        async (tx) => {
          attempts++;
          // The first read begins the transaction (newTransaction: readOnly), at the present.
          const listing = await tx.get(asBob.collection('posts').where('visibility', '==', 'public'));
          assert.ok(!listing.docs.some((doc) => doc.id === 'draft3'));
          if (attempts === 1) await env.adminCommit([post('posts/draft3', { owner: alice.uid, visibility: 'public', title: 'published later', secret: 0 })]);
          return tx.get(named(asBob, 'draft3'));
        },
        { readOnly: true },
      ),
    );
    assert.equal(outcome, permissionDenied);
  });
});

describe('the same reads over REST, anonymous', () => {
  test('runQuery, runAggregationQuery and read-only transactions at the draft time are refused; get is too', async () => {
    const query = namedQuery('posts', env.name('posts/draft1'));
    const asked = [
      await env.rest('POST', `${env.root()}:runQuery`, { structuredQuery: query, readTime: draftTime }),
      await env.rest('POST', `${env.root()}:runQuery`, { structuredQuery: query, newTransaction: { readOnly: { readTime: draftTime } } }),
      await env.rest('POST', `${env.root()}:runAggregationQuery`, {
        structuredAggregationQuery: { structuredQuery: query, aggregations: [{ alias: 's', sum: { field: { fieldPath: 'secret' } } }] },
        readTime: draftTime,
      }),
      await env.rest('POST', `${env.root()}:batchGet`, { documents: [env.name('posts/draft1')], readTime: draftTime }),
    ];
    const begun = await env.rest('POST', `${env.root()}:beginTransaction`, { options: { readOnly: { readTime: draftTime } } });
    assert.equal(begun.status, 200, JSON.stringify(begun.body));
    asked.push(await env.rest('POST', `${env.root()}:runQuery`, { structuredQuery: query, transaction: begun.body.transaction }));
    for (const answer of asked) {
      assert.equal(answer.status, 403, JSON.stringify(answer.body));
      assert.equal(answer.body.error.status, 'PERMISSION_DENIED');
      assert.ok(!JSON.stringify(answer.body).includes('secret plan'));
    }
    // At the time it was published, the same query answers the published version.
    const later = await env.rest('POST', `${env.root()}:runQuery`, { structuredQuery: query, readTime: publishedTime });
    assert.equal(later.status, 200, JSON.stringify(later.body));
    assert.equal(later.body[0].document.fields.title.stringValue, 'announcement');
  });
});
