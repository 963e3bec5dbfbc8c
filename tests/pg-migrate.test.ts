/**
 * `hearth migrate`: an SQLite data folder moved into PostgreSQL keeps its accounts, sessions, ID
 * tokens (the signing keys move too), tenants, mails and rules; a non-empty target is refused.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { defaultOptions } from '../packages/server/src/config.js';
import { createHearth, createLogger, type Hearth } from '../packages/server/src/server.js';
import { postJson, repoRoot, tempDataDir } from './helpers/hearth.js';
import { createTestPgDatabase } from './helpers/pg-database.js';

/** Started directly, not through startHearth: the source is SQLite whatever HEARTH_TEST_BACKEND says. */
async function start(dataDir: string, databaseUrl?: string): Promise<Hearth> {
  const options = defaultOptions({ port: 0, dataDir, dev: true, defaultProjectId: 'demo-test', logLevel: 'silent', webRoot: undefined, ...(databaseUrl ? { databaseUrl } : {}) });
  const hearth = await createHearth(options, createLogger('silent'));
  await hearth.listen();
  return hearth;
}

async function migrate(dataDir: string, databaseUrl: string): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(repoRoot, 'packages/server/src/main.ts'), 'migrate', '--data', dataDir, '--database-url', databaseUrl], { cwd: repoRoot });
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
