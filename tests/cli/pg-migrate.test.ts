/**
 * `hearth migrate`: an SQLite data folder moved into PostgreSQL keeps its accounts, sessions, ID
 * tokens (the signing keys move too), tenants, mails and rules; a non-empty target is refused.
 * Documents move too: the firebase SDK reads the same documents and query answers (a composite
 * index, a collection group) from PostgreSQL, listeners work, commit times go on after the old
 * ones, reads at a past time find the old versions; a killed migrate leaves the target empty.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { deleteApp, initializeApp } from 'firebase/app';
import {
  collection,
  collectionGroup,
  connectFirestoreEmulator,
  doc,
  getDocs,
  getFirestore,
  onSnapshot,
  orderBy,
  query,
  setDoc,
  setLogLevel,
  terminate,
  where,
  writeBatch,
  type Firestore,
  type Query,
} from 'firebase/firestore';
import pg from 'pg';
import { defaultOptions } from '../../packages/server/src/config.js';
import { createHearth, createLogger, type Hearth } from '../../packages/server/src/server.js';
import { postJson, repoRoot, tempDataDir } from '../helpers/hearth.js';
import { createTestPgDatabase } from '../helpers/pg-database.js';
import { hearthCommand } from '../helpers/hearth-command.js';

/** Started directly, not through startHearth: the source is SQLite whatever HEARTH_TEST_BACKEND says. */
async function start(dataDir: string, databaseUrl?: string, indexesFile?: string): Promise<Hearth> {
  const options = defaultOptions({
    port: 0, dataDir, dev: true, defaultProjectId: 'demo-test', logLevel: 'silent', webRoot: undefined,
    ...(databaseUrl ? { databaseUrl } : {}),
    ...(indexesFile ? { indexesFile } : {}),
  });
  const hearth = await createHearth(options, createLogger('silent'));
  await hearth.listen();
  return hearth;
}

async function migrate(dataDir: string, databaseUrl: string): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, [...hearthCommand(), 'migrate', '--data', dataDir, '--database-url', databaseUrl], { cwd: repoRoot });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
}

test('hearth migrate moves a data folder into an empty database, and refuses a non-empty one', async () => {
  const database = await createTestPgDatabase();
  const source = tempDataDir();
  const fresh = tempDataDir();
  try {
    const old = await start(source);
    const v1 = (hearth: Hearth, name: string) => `${hearth.url}/identitytoolkit.googleapis.com/v1/accounts:${name}?key=any`;
    const email = `moved-${Date.now()}@example.com`;
    const signedUp = await postJson(v1(old, 'signUp'), { email, password: 'secret12', returnSecureToken: true });
    assert.equal(signedUp.status, 200, JSON.stringify(signedUp.body));
    const mailed = await postJson(v1(old, 'sendOobCode'), { requestType: 'PASSWORD_RESET', email });
    assert.equal(mailed.status, 200, JSON.stringify(mailed.body));
    const admin = { authorization: `Bearer ${old.adminKey}` };
    const tenant = await postJson(`${old.url}/identitytoolkit.googleapis.com/v2/projects/demo-test/tenants`, { displayName: 'Moved', allowPasswordSignup: true }, admin);
    assert.equal(tenant.status, 200, JSON.stringify(tenant.body));
    await old.close();

    const moved = await migrate(source, database.url);
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(moved.stderr, /users 1\b/);

    const next = await start(fresh, database.url);
    try {
      const signedIn = await postJson(v1(next, 'signInWithPassword'), { email, password: 'secret12', returnSecureToken: true });
      assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
      assert.equal(signedIn.body.localId, signedUp.body.localId);
      // The old instance's ID token verifies: its signing key moved with it.
      const lookup = await postJson(v1(next, 'lookup'), { idToken: signedUp.body.idToken });
      assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
      const refreshed = await fetch(`${next.url}/securetoken.googleapis.com/v1/token?key=any`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: signedUp.body.refreshToken }),
      });
      assert.equal(refreshed.status, 200);
      const outbox = await (await fetch(`${next.url}/emulator/v1/projects/demo-test/oobCodes`)).json();
      assert.ok(outbox.oobCodes.some((entry: { email: string }) => entry.email === email), 'the mail moved');
      const inTenant = await postJson(v1(next, 'signUp'), { email: `t-${email}`, password: 'secret12', tenantId: tenant.body.tenantId, returnSecureToken: true });
      assert.equal(inTenant.status, 200, JSON.stringify(inTenant.body));
    } finally {
      await next.close();
    }

    const again = await migrate(source, database.url);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not empty/);
  } finally {
    await database.drop();
    rmSync(source, { recursive: true, force: true });
    rmSync(fresh, { recursive: true, force: true });
  }
});

setLogLevel('silent');

const root = 'projects/demo-test/databases/(default)/documents';
const owner = { authorization: 'Bearer owner' };
let appCount = 0;

function sdk(hearth: Hearth): Firestore {
  const app = initializeApp({ apiKey: 'migrate-test', projectId: 'demo-test' }, `migrate-${++appCount}`);
  const db = getFirestore(app);
  const { hostname, port } = new URL(hearth.url);
  connectFirestoreEmulator(db, hostname, Number(port));
  return db;
}

async function closeSdk(db: Firestore): Promise<void> {
  await terminate(db);
  await deleteApp(db.app);
}

/** What a query answers, as ids and data in order. */
async function answer(q: Query): Promise<Array<[string, unknown]>> {
  return (await getDocs(q)).docs.map((snapshot) => [snapshot.ref.path, snapshot.data()]);
}

function queries(db: Firestore): Record<string, Query> {
  return {
    // Equality on one field and order on another: served by the declared composite index.
    composite: query(collection(db, 'shop'), where('cat', '==', 'b'), orderBy('price', 'desc')),
    group: query(collectionGroup(db, 'shop'), where('price', '>=', 20), orderBy('price')),
    contains: query(collection(db, 'shop'), where('tags', 'array-contains', 't1')),
    all: query(collection(db, 'shop')),
  };
}

async function restCommit(hearth: Hearth, writes: unknown[]): Promise<string> {
  const committed = await postJson(`${hearth.url}/v1/${root}:commit`, { writes }, owner);
  assert.equal(committed.status, 200, JSON.stringify(committed.body));
  return committed.body.commitTime as string;
}

const vector = (xs: readonly number[]) => ({ mapValue: { fields: { __type__: { stringValue: '__vector__' }, value: { arrayValue: { values: xs.map((x) => ({ doubleValue: x })) } } } } });

/** The 5 nearest of vecs to (1, 2), with their distances. */
async function restNearest(hearth: Hearth): Promise<Array<[string, unknown]>> {
  const findNearest = { vectorField: { fieldPath: 'embedding' }, queryVector: vector([1, 2]), distanceMeasure: 'EUCLIDEAN', limit: 5, distanceResultField: 'd' };
  const reply = await postJson(`${hearth.url}/v1/${root}:runQuery`, { structuredQuery: { from: [{ collectionId: 'vecs' }], findNearest } }, owner);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return (reply.body as Array<{ document?: { name: string; fields: { d: unknown } } }>).filter((a) => a.document).map((a) => [a.document!.name.split('/').pop()!, a.document!.fields.d]);
}

async function restGet(hearth: Hearth, path: string, readTime?: string): Promise<{ status: number; body: any }> {
  const at = readTime ? `?readTime=${encodeURIComponent(readTime)}` : '';
  const got = await fetch(`${hearth.url}/v1/${root}/${path}${at}`, { headers: owner });
  return { status: got.status, body: await got.json() };
}

/** Every row of every table but the schema versions, by table: what "the target is unchanged" compares. */
async function targetRows(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'hearth_schema' ORDER BY table_name");
    const counts: Record<string, number> = {};
    for (const { table_name: table } of rows) {
      const found = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
      if (Number(found.rows[0]!.n) > 0) counts[table] = Number(found.rows[0]!.n);
    }
    return counts;
  } finally {
    await client.end();
  }
}

const indexes = {
  indexes: [
    { collectionGroup: 'shop', queryScope: 'COLLECTION', fields: [{ fieldPath: 'cat', order: 'ASCENDING' }, { fieldPath: 'price', order: 'DESCENDING' }] },
    // Its side table moves too (fs_vectors): findNearest answers from it after the move.
    { collectionGroup: 'vecs', queryScope: 'COLLECTION', fields: [{ fieldPath: 'embedding', vectorConfig: { dimension: 2, flat: {} } }] },
  ],
  fieldOverrides: [],
};

test('hearth migrate moves documents: the SDK reads the same documents and query answers, listeners work, times go on', async () => {
  const database = await createTestPgDatabase();
  const source = tempDataDir();
  const fresh = tempDataDir();
  const indexesFile = join(source, 'firestore.indexes.json');
  writeFileSync(indexesFile, JSON.stringify(indexes));
  try {
    const old = await start(source, undefined, indexesFile);
    const before: Record<string, Array<[string, unknown]>> = {};
    let lastOldCommit: string;
    let firstVersionTime: string;
    {
      const db = sdk(old);
      const batch = writeBatch(db);
      for (let i = 0; i < 60; i++) {
        batch.set(doc(db, 'shop', `p${i}`), { cat: ['a', 'b', 'c'][i % 3], price: (i * 7) % 50, tags: [`t${i % 4}`, 'all'], name: `item ${i}`, at: new Date(1_700_000_000_000 + i) });
      }
      for (let i = 0; i < 5; i++) batch.set(doc(db, 'users', `u${i}`, 'shop', `s${i}`), { cat: 'b', price: 10 * i, tags: ['t1'] });
      // Numeric and odd ids keep their stored forms and order.
      batch.set(doc(db, 'shop', '__id42__'), { cat: 'b', price: 33, tags: [] });
      batch.set(doc(db, 'shop', 'é ü'), { cat: 'b', price: 33, tags: ['t1'] });
      await batch.commit();
      // A document with a past version: a read at the first version's time finds it after the move.
      firstVersionTime = await restCommit(old, [{ update: { name: `${root}/history/h`, fields: { v: { integerValue: '1' } } } }]);
      await setDoc(doc(db, 'history', 'h'), { v: 2 });
      for (const [name, q] of Object.entries(queries(db))) before[name] = await answer(q);
      await closeSdk(db);
      await restCommit(old, Array.from({ length: 8 }, (_, i) => ({ update: { name: `${root}/vecs/v${i}`, fields: { embedding: vector([i % 3, (i * 5) % 7]) } } })));
      before.nearest = await restNearest(old);
      lastOldCommit = await restCommit(old, [{ update: { name: `${root}/history/last`, fields: {} } }]);
    }
    assert.ok(before.composite!.length >= 20 && before.group!.length > 10 && before.contains!.length > 10, JSON.stringify(before).slice(0, 300));
    await old.close();

    const moved = await migrate(source, database.url);
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(moved.stderr, /\b77 document\(s\) in 1 database\(s\)/);
    assert.match(moved.stderr, /\b1 past version\(s\)/);

    const next = await start(fresh, database.url, indexesFile);
    try {
      const db = sdk(next);
      for (const [name, q] of Object.entries(queries(db))) assert.deepEqual(await answer(q), before[name], `query ${name} answers as on SQLite`);
      assert.equal(before.nearest!.length, 5);
      assert.deepEqual(await restNearest(next), before.nearest, 'findNearest answers as on SQLite');
      // A listener on PostgreSQL hears a write made after the move.
      const heard: string[][] = [];
      const stop = onSnapshot(queries(db).composite!, (snapshot) => heard.push(snapshot.docs.map((snapshot) => snapshot.id)));
      await setDoc(doc(db, 'shop', 'new'), { cat: 'b', price: 1000, tags: [] });
      for (let tries = 0; !heard.some((ids) => ids[0] === 'new'); tries++) {
        assert.ok(tries < 200, `the listener heard the new document (${JSON.stringify(heard)})`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      stop();
      await closeSdk(db);

      const newCommit = await restCommit(next, [{ update: { name: `${root}/history/after`, fields: {} } }]);
      assert.ok(Date.parse(newCommit) > Date.parse(lastOldCommit), `commit times go on after the old ones (${newCommit} > ${lastOldCommit})`);
      const past = await restGet(next, 'history/h', firstVersionTime);
      assert.equal(past.status, 200, JSON.stringify(past.body));
      assert.deepEqual(past.body.fields, { v: { integerValue: '1' } });
      const present = await restGet(next, 'history/h');
      assert.deepEqual(present.body.fields, { v: { integerValue: '2' } });
    } finally {
      await next.close();
    }
  } finally {
    await database.drop();
    rmSync(source, { recursive: true, force: true });
    rmSync(fresh, { recursive: true, force: true });
  }
});

test('a migrate killed midway leaves the target empty; a target with documents is refused and left as it was', async () => {
  const database = await createTestPgDatabase();
  const source = tempDataDir();
  const other = tempDataDir();
  try {
    const old = await start(source);
    // Enough rows that the copy is still running when its first batch is reported.
    for (let batch = 0; batch < 16; batch++) {
      const writes = Array.from({ length: 500 }, (_, i) => ({
        update: { name: `${root}/bulk/d${batch * 500 + i}`, fields: { n: { integerValue: String(i) }, s: { stringValue: `text ${i}` }, tags: { arrayValue: { values: [{ stringValue: 'a' }, { stringValue: `b${i % 7}` }] } } } },
      }));
      await restCommit(old, writes);
    }
    await old.close();

    const child = spawn(process.execPath, [...hearthCommand(), 'migrate', '--data', source, '--database-url', database.url], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (/copying fs_documents/.test(stderr)) resolve();
      });
      void ended.then(() => reject(new Error(`migrate ended before copying documents: ${stderr}`)));
    });
    child.kill('SIGKILL');
    const { signal } = await ended;
    assert.equal(signal, 'SIGKILL', `migrate was killed midway, not finished (${stderr})`);
    assert.deepEqual(await targetRows(database.url), {}, 'nothing of the killed migrate is in the target');

    // The target now holds a document of its own: refused, and left as it was.
    const target = await start(other, database.url);
    await restCommit(target, [{ update: { name: `${root}/own/doc`, fields: {} } }]);
    await target.close();
    const rowsBefore = await targetRows(database.url);
    assert.equal(rowsBefore.fs_documents, 1);
    const refused = await migrate(source, database.url);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /not empty/);
    assert.deepEqual(await targetRows(database.url), rowsBefore);
  } finally {
    await database.drop();
    rmSync(source, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  }
});
