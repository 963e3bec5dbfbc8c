/**
 * `node --import tsx bench/listeners/fanout-rules.ts`: the stream layer's CPU per commit when listeners are judged
 * by security rules (issue 28), in process, without transports: N anonymous Listen sessions on one public listing
 * (`posts where visibility == 'public'`, rules released, production regime), their messages counted and dropped.
 * Listeners are anonymous (one identity for the rules) or each a user of its own. Three kinds of commit, each measured as process CPU (user + system) from the commit until every session has its
 * snapshot, per commit: a public post updated (it stays in: the common fan-out), a post made private (it leaves:
 * every listener judges `get` on its new version) and published again (it enters), and, for scale, the same commits
 * with nobody listening. Run it against two commits for an A/B on a machine too busy for bench/listeners
 * (HEARTH_BENCH_FANOUT_LISTENERS: 1000; _COMMITS: 200 per kind; _ROUNDS: 3, the best round kept).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { FirestoreAccess } from '../../packages/server/src/firestore/api/access.js';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import { parseWrite } from '../../packages/server/src/firestore/core/writes.js';
import { FirestoreGuard } from '../../packages/server/src/firestore/security/guard.js';
import { RulesRegistry } from '../../packages/server/src/firestore/security/rules-registry.js';
import { FirestoreStreams } from '../../packages/server/src/firestore/streams/streams.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';

const listeners = Number(process.env.HEARTH_BENCH_FANOUT_LISTENERS ?? 1000);
const commits = Number(process.env.HEARTH_BENCH_FANOUT_COMMITS ?? 200);
const rounds = Number(process.env.HEARTH_BENCH_FANOUT_ROUNDS ?? 3);

const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{post} {
      allow read: if resource.data.visibility == 'public' || (request.auth != null && resource.data.owner == request.auth.uid);
    }
  }
}`;

const db = { projectId: 'bench-fanout', databaseId: '(default)' };
const root = 'projects/bench-fanout/databases/(default)/documents';
const dir = mkdtempSync(join(tmpdir(), 'hearth-fanout-'));
const store = new SqliteStore(join(dir, 'data.sqlite'));
const database = new DocumentDatabase(store.documents());
const silent = pino({ level: 'silent' });
const registry = new RulesRegistry(store.rules(), silent);
await registry.deploy(db.projectId, [{ name: 'firestore.rules', content: rules }]);
const guard = new FirestoreGuard(registry, database, { dev: false, logger: silent });
const access = new FirestoreAccess({ isAdmin: () => false, verifyIdToken: () => Promise.reject(new Error('anonymous only')), dev: false, guard });
const streams = new FirestoreStreams(database, access);

let snapshots = 0;
let documentMessages = 0;
const write = (id: string, visibility: string, n: number) =>
  database.commit(db, [parseWrite(db, { update: { name: `${root}/posts/${id}`, fields: { visibility: { stringValue: visibility }, owner: { stringValue: 'alice' }, n: { integerValue: String(n) } } } }, 'write')]);

/** Anonymous listeners share one identity (a leaving version is judged once); users each have their own. */
async function openListeners(count: number, who: 'anonymous' | 'users'): Promise<Array<{ close(): void }>> {
  const sessions = [];
  for (let i = 0; i < count; i++) {
    const caller = who === 'anonymous' ? ({ kind: 'anonymous' } as const) : ({ kind: 'user', claims: { sub: `u${i}`, user_id: `u${i}` } as never } as const);
    const session = streams.open('Listen', { db, caller }, {
      send(message) {
        if ('documentChange' in message || 'documentRemove' in message || 'documentDelete' in message) documentMessages++;
        const change = message.targetChange as { targetChangeType?: string; targetIds?: unknown[] } | undefined;
        if (change && !change.targetChangeType && !change.targetIds) snapshots++;
      },
      fail(error) {
        throw error;
      },
    });
    session.receive({ addTarget: { targetId: 2, query: { parent: root, structuredQuery: { from: [{ collectionId: 'posts' }], where: { fieldFilter: { field: { fieldPath: 'visibility' }, op: 'EQUAL', value: { stringValue: 'public' } } } } } } });
    sessions.push(session);
  }
  await until(() => snapshots >= count);
  return sessions;
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

/** CPU µs per commit of `step`, each waited for until every listener has its snapshot. */
async function measure(count: number, step: (i: number) => Promise<unknown>): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < rounds; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < commits; i++) {
      const before = snapshots;
      await step(round * commits + i);
      await until(() => snapshots >= before + count);
    }
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / commits);
  }
  return best;
}

await write('stays', 'public', 0);
await write('moves', 'public', 0);
const rows: Array<[string, number, number]> = [];
for (const [count, who] of [[0, 'anonymous'], [listeners, 'anonymous'], [listeners, 'users']] as const) {
  const sessions = await openListeners(count, who);
  documentMessages = 0;
  const update = await measure(count, (i) => write('stays', 'public', i + 1));
  const leaveEnter = await measure(count, (i) => write('moves', i % 2 === 0 ? 'private' : 'public', i + 1));
  rows.push([`${count} ${count ? who : 'listeners'}`, update, leaveEnter]);
  for (const session of sessions) session.close();
}
console.log(`CPU per commit (µs, best of ${rounds} rounds of ${commits}), listeners on posts where visibility == 'public':`);
console.log('                      update (stays in)   leave / enter (alternating)');
for (const [label, update, leaveEnter] of rows) console.log(`${label.padEnd(22)}${update.toFixed(0).padStart(17)}${leaveEnter.toFixed(0).padStart(30)}`);
const [idle, ...busy] = rows;
for (const row of busy) console.log(`per listener (${row[0]}): update ${((row[1] - idle![1]) / listeners).toFixed(2)} µs, leave/enter ${((row[2] - idle![2]) / listeners).toFixed(2)} µs`);
streams.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
