/**
 * `hearth migrate` moves what functions are owed along with the data: a SQLite data folder's
 * trigger events (here one set aside, with its error) arrive in PostgreSQL as they were.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { migrateToPostgres } from '../../packages/server/src/cli/migrate.js';
import { defaultOptions } from '../../packages/server/src/config.js';
import { createHearth, createLogger } from '../../packages/server/src/server.js';
import { tempDataDir } from '../helpers/hearth.js';
import { createTestPgDatabase } from '../helpers/pg-database.js';
import { testBackend } from '../helpers/test-backend.js';

const fixture = join(import.meta.dirname, 'fixtures/basic');

test('set-aside trigger events move to PostgreSQL', { skip: testBackend !== 'postgres' && 'needs PostgreSQL' }, async () => {
  const dataDir = tempDataDir();
  const hearth = await createHearth(defaultOptions({ port: 0, dataDir, dev: true, defaultProjectId: 'demo-test', logLevel: 'silent', webRoot: undefined, functionsDir: fixture, functionsDispatcher: { pollMs: 100 } }), createLogger('silent'));
  const url = await hearth.listen();
  try {
    await fetch(`${url}/v1/projects/demo-test/databases/(default)/documents/doomed/m1`, { method: 'PATCH', headers: { authorization: 'Bearer owner', 'content-type': 'application/json' }, body: '{"fields":{}}' });
    const deadline = Date.now() + 60_000;
    while ((await hearth.functions.eventCounts()).setAside < 1) {
      if (Date.now() > deadline) throw new Error('no event set aside');
      await new Promise((wake) => setTimeout(wake, 100));
    }
  } finally {
    await hearth.close();
  }
  const database = await createTestPgDatabase();
  try {
    await migrateToPostgres(dataDir, database.url);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ target: string; path: string; set_aside: boolean; last_error: string }>('SELECT target, path, set_aside, last_error FROM fn_events');
      assert.equal(rows.length, 1);
      assert.deepEqual({ target: rows[0]!.target, path: rows[0]!.path, setAside: rows[0]!.set_aside }, { target: 'alwaysFails', path: 'doomed/m1', setAside: true });
      assert.match(rows[0]!.last_error, /always fails/);
    } finally {
      await client.end();
    }
  } finally {
    await database.drop();
  }
});
