import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { openDatabaseFile } from '../storage/sqlite/sqlite-file.js';
import { applyPgMigrations, inPgTransaction, openPgPool, type PgClient } from '../storage/postgres/pg-connection.js';
import { identitySchemaSteps, rulesSchemaSteps } from '../storage/postgres/pg-identity-schema.js';
import { documentSchemaSteps } from '../storage/postgres/pg-document-schema.js';
import { filesSchemaSteps } from '../storage/postgres/pg-files-store.js';
import { copyDocuments, documentTables, inBatches, type CopyProgress, type DocumentCopyReport } from './migrate-documents.js';

/**
 * `hearth migrate --data DIR --database-url URL`: an SQLite data folder's identity and rules rows,
 * Cloud Storage metadata, key rings, instance secrets and documents (migrate-documents.ts) copied into an empty PostgreSQL
 * database, in one transaction: a failure or a kill midway leaves the target as it was (only the
 * empty schema, which any instance would make at start).
 */

/**
 * Copied tables and their columns, the same on both sides; `boolean` columns are 0/1 in SQLite;
 * `select` reads a column PostgreSQL keeps apart from a SQLite row's JSON record.
 */
const tables: ReadonlyArray<{ name: string; columns: string[]; boolean?: string[]; serial?: boolean; select?: string[] }> = [
  { name: 'projects', columns: ['project_id', 'config'] },
  { name: 'users', columns: ['project_id', 'local_id', 'email', 'phone_number', 'version', 'record'] },
  { name: 'user_providers', columns: ['project_id', 'provider_id', 'raw_id', 'local_id'] },
  { name: 'refresh_tokens', columns: ['token_hash', 'project_id', 'local_id', 'user_created_at', 'issued_at', 'auth_time', 'sign_in_provider', 'developer_claims', 'second_factor'] },
  { name: 'oob_codes', columns: ['code_hash', 'project_id', 'expires_at', 'record'] },
  { name: 'outbox', columns: ['id', 'project_id', 'created_at', 'message', 'state', 'decoy', 'next_attempt_at', 'delivery'], boolean: ['decoy'], serial: true },
  { name: 'handler_sessions', columns: ['id', 'expires_at', 'record'] },
  { name: 'throttle_state', columns: ['scope', 'key_hash', 'expires_at', 'state'] },
  { name: 'service_account_keys', columns: ['project_id', 'key_id', 'client_email', 'public_key', 'created_at'] },
  { name: 'service_account_tokens', columns: ['token_hash', 'project_id', 'key_id', 'expires_at'] },
  { name: 'human_checks', columns: ['key_hash', 'project_id', 'expires_at', 'used_at'] },
  { name: 'phone_verifications', columns: ['session_hash', 'project_id', 'expires_at', 'attempts_left', 'record'] },
  { name: 'sms_outbox', columns: ['id', 'project_id', 'created_at', 'message'], serial: true },
  { name: 'account_erasures', columns: ['project_id', 'local_id', 'requested_at'] },
  { name: 'rules_rulesets', columns: ['project_id', 'ruleset_id', 'create_time', 'source'] },
  { name: 'rules_releases', columns: ['project_id', 'name', 'ruleset_id', 'create_time', 'update_time'] },
  // Cloud Storage metadata (the bytes stay where they are: the data folder's files/, or the S3 bucket).
  { name: 'files_objects', columns: ['bucket', 'name', 'project_id', 'generation', 'metageneration', 'size', 'blob_key', 'record'] },
  { name: 'files_usage', columns: ['project_id', 'bytes'] },
  {
    name: 'files_uploads',
    columns: ['upload_id', 'expires_at', 'received', 'state', 'record'],
    select: ['upload_id', 'expires_at', "json_extract(record, '$.received')", "json_extract(record, '$.state')", 'record'],
  },
  { name: 'files_events', columns: ['id', 'project_id', 'bucket', 'name', 'kind', 'at', 'object'], serial: true },
  // Functions' trigger events not delivered yet (and set aside), and how far Cloud Storage's log was read.
  { name: 'fn_events', columns: ['id', 'target', 'db', 'path', 'commit_time', 'payload', 'attempts', 'next_at', 'lease_owner', 'lease_until', 'set_aside', 'last_error'], boolean: ['set_aside'] },
  { name: 'fn_cursors', columns: ['source', 'value'] },
];

/** Data-folder files that become rows shared by every instance. */
const keyRingFiles = [
  { file: 'signing-keys.json', name: 'signing-keys' },
  { file: 'session-cookie-keys.json', name: 'session-cookie-keys' },
];
const secretFiles = ['captcha-key', 'mfa-key'];

const batchRows = 500;

export class MigrateRefusal extends Error {}

export interface MigrateReport {
  rows: Record<string, number>;
  documents: DocumentCopyReport;
  keyRings: number;
  secrets: number;
}

export async function migrateToPostgres(dataDir: string, databaseUrl: string, progress?: CopyProgress): Promise<MigrateReport> {
  const dir = resolve(dataDir);
  const file = join(dir, 'hearth.sqlite');
  if (!existsSync(file)) throw new MigrateRefusal(`no Hearth data in ${dir} (give --data)`);
  const sqlite = openDatabaseFile(file); // brings an older file's schema up to date first
  const pool = openPgPool(databaseUrl, { max: 1 });
  try {
    await applyPgMigrations(pool, 'identity', identitySchemaSteps);
    await applyPgMigrations(pool, 'rules', rulesSchemaSteps);
    await applyPgMigrations(pool, 'documents', documentSchemaSteps);
    await applyPgMigrations(pool, 'files', filesSchemaSteps);
    const targetTables = [...tables.map((t) => t.name), 'key_rings', 'shared_secrets', ...documentTables];
    return await inPgTransaction(pool, async (client) => {
      // Locked against an instance starting on the target meanwhile: it would write its own defaults.
      await client.query(`LOCK TABLE ${targetTables.join(', ')} IN EXCLUSIVE MODE`);
      for (const table of targetTables) {
        const { rows } = await client.query(`SELECT 1 FROM ${table} LIMIT 1`);
        if (rows.length > 0) throw new MigrateRefusal(`the target database is not empty (table ${table} has rows): migrate into a new, empty database`);
      }
      const rows: Record<string, number> = {};
      for (const table of tables) rows[table.name] = await copyTable(sqlite, client, table);
      const report: MigrateReport = { rows, documents: await copyDocuments(sqlite, client, progress), keyRings: 0, secrets: 0 };
      for (const { file: name, name: ring } of keyRingFiles) {
        const path = join(dir, name);
        if (!existsSync(path)) continue;
        await client.query('INSERT INTO key_rings (name, keys) VALUES ($1, $2)', [ring, readFileSync(path, 'utf8')]);
        report.keyRings++;
      }
      for (const name of secretFiles) {
        const path = join(dir, name);
        if (!existsSync(path)) continue;
        await client.query('INSERT INTO shared_secrets (name, secret) VALUES ($1, $2)', [name, readFileSync(path, 'utf8').trim()]);
        report.secrets++;
      }
      return report;
    });
  } finally {
    sqlite.close();
    await pool.end();
  }
}

/** Progress on stderr: the first batch of each table, then at most every 2 s (nothing is committed until the end). */
function progressPrinter(): CopyProgress {
  let table = '';
  let printed = 0;
  return (name, rows) => {
    if (name === table && Date.now() - printed < 2000) return;
    table = name;
    printed = Date.now();
    process.stderr.write(`copying ${name}: ${rows} rows\n`);
  };
}

async function copyTable(sqlite: Database.Database, client: PgClient, table: (typeof tables)[number]): Promise<number> {
  const select = sqlite.prepare(`SELECT ${(table.select ?? table.columns).join(', ')} FROM ${table.name}`).raw(true);
  let count = 0;
  const booleans = new Set((table.boolean ?? []).map((column) => table.columns.indexOf(column)));
  await inBatches(select.iterate() as Iterable<unknown[]>, batchRows, async (batch) => {
    const values: unknown[] = [];
    const tuples = batch.map((row) => `(${row.map((value, index) => (values.push(booleans.has(index) ? value === 1 : value), `$${values.length}`)).join(', ')})`);
    await client.query(`INSERT INTO ${table.name} (${table.columns.join(', ')}) VALUES ${tuples.join(', ')}`, values);
    count += batch.length;
  });
  // Ids were copied as they were: the sequence goes on after the largest.
  if (table.serial) await client.query(`SELECT setval(pg_get_serial_sequence('${table.name}', 'id'), GREATEST((SELECT max(id) FROM ${table.name}), 1))`);
  return count;
}

/** `hearth migrate` (cli/commands.ts registers the command and its flags). */
export async function runMigrate(flags: { data: string; databaseUrl?: string }): Promise<void> {
  const databaseUrl = flags.databaseUrl ?? process.env.HEARTH_DATABASE_URL;
  try {
    if (!databaseUrl) throw new MigrateRefusal('give --database-url (or HEARTH_DATABASE_URL)');
    const report = await migrateToPostgres(flags.data, databaseUrl, progressPrinter());
    const counts = Object.entries(report.rows).map(([table, n]) => `${table} ${n}`).join(', ');
    const docs = report.documents;
    process.stderr.write(
      `Copied ${counts}; ${report.keyRings} key ring(s), ${report.secrets} secret(s); ` +
        `${docs.documents} document(s) in ${docs.databases} database(s), ${docs.indexEntries} index entries, ${docs.versions} past version(s).\n`,
    );
  } catch (error) {
    if (!(error instanceof MigrateRefusal)) throw error;
    process.stderr.write(`hearth migrate: ${error.message}\n`);
    process.exitCode = 1;
  }
}
