/**
 * `npm run bench -- identity-storage`: the identity store's own cost, below HTTP and scrypt (which
 * dominate a real sign-up): sign-up commits (an account row, its refresh token, in one commit) and
 * lookups by email, on SQLite and on PostgreSQL, beside raw pg inserts of the same row into a bare
 * table (the floor PostgreSQL sets: one round trip and one durable commit per row).
 * Settings: BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (1), BENCH_CONNECTIONS (10: commits in flight);
 * HEARTH_BENCH_PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres) where a scratch database is made.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPgPool } from '../packages/server/src/storage/postgres/pg-connection.js';
import { PgStore } from '../packages/server/src/storage/postgres/pg-store.js';
import { SqliteStore } from '../packages/server/src/storage/sqlite/sqlite-store.js';
import type { Mutation, Store, UserRecord } from '../packages/server/src/storage/store.js';
import { envCount, envNumber, machineLine, progress } from './env.js';
import { measureConcurrent, renderTable, type Rate } from './stats.js';

const seconds = envNumber('BENCH_SECONDS', 5);
const warmup = envNumber('BENCH_WARMUP_SECONDS', 1);
const concurrency = envCount('BENCH_CONNECTIONS', 10);
const adminUrl = process.env.HEARTH_BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const project = 'bench-project';

function signUpMutations(): Mutation[] {
  const localId = randomUUID().replace(/-/g, '').slice(0, 28);
  const now = Date.now();
  const user: UserRecord = {
    localId,
    email: `${localId}@example.com`,
    emailVerified: false,
    passwordHash: `scrypt$32768$8$1$${randomBytes(16).toString('base64')}$${randomBytes(32).toString('base64')}`,
    passwordUpdatedAt: now,
    providerUserInfo: [{ providerId: 'password', rawId: `${localId}@example.com`, email: `${localId}@example.com` }],
    disabled: false,
    createdAt: now,
    validSince: Math.floor(now / 1000),
    version: 1,
  };
  return [
    { kind: 'insertUser', projectId: project, user },
    {
      kind: 'insertRefreshToken',
      token: { tokenHash: randomBytes(32).toString('hex'), projectId: project, localId, issuedAt: Math.floor(now / 1000), userCreatedAt: now, authTime: Math.floor(now / 1000), signInProvider: 'password' },
    },
  ];
}

interface StoreRates {
  signUp: Rate;
  lookup: Rate;
}

async function measureStore(store: Store): Promise<StoreRates> {
  const emails: string[] = [];
  const signUp = await measureConcurrent(concurrency, warmup, seconds, async () => {
    const mutations = signUpMutations();
    await store.commit(mutations);
    emails.push((mutations[0] as { user: UserRecord }).user.email!);
  });
  let next = 0;
  const lookup = await measureConcurrent(concurrency, warmup, seconds, async () => {
    const email = emails[next++ % emails.length]!;
    if (!(await store.getUserByEmail(project, email))) throw new Error('lost an account');
  });
  return { signUp, lookup };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function runIdentityStorageBench(): Promise<void> {
  console.log('Identity storage: sign-up commits and email lookups, SQLite beside PostgreSQL beside raw pg inserts');
  console.log(`${machineLine()}; load average at start: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  console.log(`${concurrency} operations in flight, ${seconds} s measured after ${warmup} s warm-up; both databases durable (SQLite synchronous=FULL, PostgreSQL fsync on)`);
  const folder = mkdtempSync(join(tmpdir(), 'hearth-bench-'));
  const database = `hearth_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${database}`);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const pool = openPgPool(url.toString(), { max: concurrency });
  try {
    progress('SQLite store');
    const sqlite = new SqliteStore(join(folder, 'hearth.sqlite'));
    const onSqlite = await measureStore(sqlite);
    await sqlite.close();
    progress('PostgreSQL store');
    const onPg = await measureStore(await PgStore.open(pool));
    progress('raw pg inserts');
    await pool.query('CREATE TABLE bench_raw (project_id TEXT NOT NULL, local_id TEXT NOT NULL, email TEXT, record TEXT NOT NULL, PRIMARY KEY (project_id, local_id))');
    const raw = await measureConcurrent(concurrency, warmup, seconds, async () => {
      const user = (signUpMutations()[0] as { user: UserRecord }).user;
      await pool.query('INSERT INTO bench_raw (project_id, local_id, email, record) VALUES ($1, $2, $3, $4)', [project, user.localId, user.email, JSON.stringify(user)]);
    });
    const rate = (r: Rate) => (r.perSecond >= 100 ? r.perSecond.toFixed(0) : r.perSecond.toFixed(1));
    const lat = (r: Rate) => `${r.p50.toFixed(2)} / ${r.p99.toFixed(2)}`;
    console.log(
      renderTable(
        ['operation', 'ops/s', 'p50 / p99 ms', 'vs raw pg insert'],
        [
          ['raw pg INSERT (one row, autocommit)', rate(raw), lat(raw), '1.00'],
          ['sign-up commit, PostgreSQL', rate(onPg.signUp), lat(onPg.signUp), (onPg.signUp.perSecond / raw.perSecond).toFixed(2)],
          ['sign-up commit, SQLite', rate(onSqlite.signUp), lat(onSqlite.signUp), (onSqlite.signUp.perSecond / raw.perSecond).toFixed(2)],
          ['lookup by email, PostgreSQL', rate(onPg.lookup), lat(onPg.lookup), ''],
          ['lookup by email, SQLite', rate(onSqlite.lookup), lat(onSqlite.lookup), ''],
        ],
      ),
    );
    console.log('A sign-up commit is a transaction of five statements (BEGIN, the account, clearing its federated-identity rows, the refresh token, COMMIT) against one INSERT for the raw row.');
  } finally {
    await pool.end();
    await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    rmSync(folder, { recursive: true, force: true });
  }
}
