/**
 * Issue 28, item 4 (the same class, at the present): a query naming one document is judged on that
 * document before it runs; a commit landing between that judgement and the query's own read must
 * not let the new version through unjudged. The race cannot be timed from outside, so it is made
 * here on Hearth's real parts (SQLite documents, the rules registry, the guard): judge, commit,
 * then hand the query's answer to the check the judgement returned, as the database does.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { DocumentDatabase } from '../../packages/server/src/firestore/core/database.js';
import { parseWrite } from '../../packages/server/src/firestore/core/writes.js';
import { FirestoreGuard } from '../../packages/server/src/firestore/security/guard.js';
import { RulesRegistry } from '../../packages/server/src/firestore/security/rules-registry.js';
import { SqliteStore } from '../../packages/server/src/storage/sqlite/sqlite-store.js';
import { tempDataDir } from '../helpers/hearth.js';
import { namedQuery, wireFields } from '../helpers/production-firestore.js';

const db = { projectId: 'demo-named', databaseId: '(default)' };
const root = `projects/${db.projectId}/databases/(default)/documents`;
const rules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{post} { allow read: if resource.data.visibility == 'public'; }
  }
}`;

let dataDir: string;
let store: SqliteStore;
let database: DocumentDatabase;
let guard: FirestoreGuard;

before(async () => {
  dataDir = tempDataDir();
  store = new SqliteStore(join(dataDir, 'hearth.sqlite'));
  database = new DocumentDatabase(store.documents());
  const logger = pino({ level: 'silent' });
  const registry = new RulesRegistry(store.rules(), logger);
  await registry.deploy(db.projectId, [{ name: 'firestore.rules', content: rules }]);
  guard = new FirestoreGuard(registry, database, { dev: false, logger });
});

after(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const write = (visibility: string) => parseWrite(db, { update: { name: `${root}/posts/p`, fields: wireFields({ visibility }) } }, 'write');

test('a version committed between the judgement of a named query and its read is judged again, and refused', async () => {
  await database.commit(db, [write('public')]);
  const query = database.parseQuery(db, '', namedQuery('posts', `${root}/posts/p`));
  const judge = guard.judge({ kind: 'anonymous' }, db);
  const check = await judge.query(query);
  // The owner makes it private before the query reads it.
  await database.commit(db, [write('private')]);
  await assert.rejects(database.runQuery(db, query, {}, check), { status: 'PERMISSION_DENIED' });
  // The version judged itself passes its check.
  await database.commit(db, [write('public')]);
  const again = await judge.query(query);
  const { docs } = await database.runQuery(db, query, {}, again);
  assert.equal(docs.length, 1);
});
