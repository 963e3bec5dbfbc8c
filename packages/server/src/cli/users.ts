import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ApiError } from '../http/api-error.js';
import { readHashOptions, type WireHashOptions } from '../auth/core/imported-passwords.js';
import { exportAccounts, exportHashOptions, toCsvLine } from '../auth/core/user-export.js';
import { AccountFileError, formatOf, parseAccountFile } from '../auth/core/user-files.js';
import { importAccounts, maxImportBatch, type ImportError } from '../auth/core/user-import.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import { openPgPool } from '../storage/postgres/pg-connection.js';
import { PgStore } from '../storage/postgres/pg-store.js';
import type { Store } from '../storage/store.js';
import { realmKey } from '../auth/tenants/realm.js';

/**
 * `hearth users export` and `hearth users import`: accounts in and out of a data folder in the
 * Firebase CLI's auth:export / auth:import formats and flags. They work on the folder's SQLite file
 * through the Store, so the server may be running meanwhile (WAL; each import batch is one commit).
 */

export interface ExportFlags {
  project: string;
  tenant?: string;
  data: string;
  databaseUrl?: string;
  format?: string;
}

export interface ImportFlags {
  project: string;
  tenant?: string;
  data: string;
  databaseUrl?: string;
  format?: string;
  hashAlgo?: string;
  hashKey?: string;
  saltSeparator?: string;
  rounds?: string;
  memCost?: string;
  parallelization?: string;
  blockSize?: string;
  dkLen?: string;
  hashInputOrder?: string;
}

/** What an export's hashes are, in the Firebase CLI's flags. */
const exportImportFlags = `--hash-algo ${exportHashOptions.hashAlgo} --mem-cost ${exportHashOptions.memCost} --block-size ${exportHashOptions.blockSize} --parallelization ${exportHashOptions.parallelization} --dk-len ${exportHashOptions.dkLen}`;

/** `hearth users export` (cli/commands.ts registers the command and its flags). */
export function runUsersExport(file: string, flags: ExportFlags): Promise<void> {
  return run(() => exportCommand(file, flags));
}

/** `hearth users import`. */
export function runUsersImport(file: string, flags: ImportFlags): Promise<void> {
  return run(() => importCommand(file, flags));
}

/** Errors a user can act on are one line on stderr and exit code 1; the rest are bugs and show their stack. */
async function run(command: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await command();
  } catch (error) {
    if (!(error instanceof AccountFileError || error instanceof ApiError || error instanceof UsageError)) throw error;
    process.stderr.write(`hearth users: ${error.message}\n`);
    process.exitCode = 1;
  }
}

class UsageError extends Error {}

/** The data folder's SQLite file, or the PostgreSQL database when one is named (flag or HEARTH_DATABASE_URL). */
async function openStore(flags: { data: string; databaseUrl?: string }, mustExist: boolean): Promise<Store> {
  const databaseUrl = flags.databaseUrl ?? process.env.HEARTH_DATABASE_URL;
  if (databaseUrl) {
    const pool = openPgPool(databaseUrl, { max: 2 });
    return PgStore.open(pool, { ownsPool: true }).catch(async (error: unknown) => {
      await pool.end();
      throw new UsageError(`cannot open the database: ${(error as Error).message}`);
    });
  }
  const dir = resolve(flags.data);
  const file = join(dir, 'hearth.sqlite');
  if (mustExist && !existsSync(file)) throw new UsageError(`no Hearth data in ${dir} (give --data)`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return new SqliteStore(file);
}

async function exportCommand(file: string, flags: ExportFlags): Promise<number> {
  const format = formatOf(file, flags.format);
  const store = await openStore(flags, true);
  // The file holds password hashes: private to the owner from its first byte.
  const fd = openSync(file, 'w', 0o600);
  let count = 0;
  let withoutHash = 0;
  let withPasskeys = 0;
  try {
    if (format === 'json') writeSync(fd, '{"users": [\n');
    for await (const { account, passwordLeftOut } of exportAccounts(store, await realmOf(store, flags))) {
      if (passwordLeftOut) withoutHash++;
      if (account.passkeys) withPasskeys++;
      if (format === 'json') writeSync(fd, `${count ? ',\n' : ''}${JSON.stringify(account, null, 2)}`);
      else writeSync(fd, `${toCsvLine(account)}\n`);
      count++;
    }
    if (format === 'json') writeSync(fd, '\n]}\n');
  } finally {
    closeSync(fd);
    await store.close();
  }
  const lines = [`Exported ${count} account(s) of ${described(flags)} to ${file}.`];
  if (withoutHash) lines.push(`${withoutHash} account(s) have an imported password hash not yet re-hashed by a sign-in: exported without it (they can reset their password).`);
  if (withPasskeys && format === 'csv') lines.push(`${withPasskeys} account(s) have passkeys, which a CSV has no column for: export to a .json file to keep them.`);
  else if (withPasskeys) lines.push(`${withPasskeys} account(s) have passkeys: Hearth imports them (a server whose --public-url has the same host signs them in); Firebase's auth:import has no field for them.`);
  lines.push(`Passwords are Hearth's scrypt. Import them with: hearth users import ${file} --hash-algo HEARTH_SCRYPT`);
  lines.push(`or into Firebase with: firebase auth:import ${file} ${exportImportFlags}`);
  process.stderr.write(`${lines.join('\n')}\n`);
  return 0;
}

async function importCommand(file: string, flags: ImportFlags): Promise<number> {
  const format = formatOf(file, flags.format);
  const hashOptions = wireHashOptions(flags);
  readHashOptions(hashOptions); // refuses bad flags before the file is read
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const accounts = parseAccountFile(text, format);
  if (!hashOptions.hashAlgorithm && accounts.some((a) => a.passwordHash)) {
    throw new UsageError(`${file} has password hashes: say how they were made with --hash-algo (HEARTH_SCRYPT for a Hearth export, or your Firebase project's password hash parameters)`);
  }
  const store = await openStore(flags, false);
  const errors: ImportError[] = [];
  try {
    const realm = await realmOf(store, flags);
    for (let start = 0; start < accounts.length; start += maxImportBatch) {
      const batch = accounts.slice(start, start + maxImportBatch);
      const result = await importAccounts(store, realm, { ...hashOptions, users: batch }, 'owner');
      errors.push(...result.errors.map((e) => ({ index: start + e.index, message: e.message })));
    }
  } finally {
    await store.close();
  }
  const lines = [`Imported ${accounts.length - errors.length} of ${accounts.length} account(s) into ${described(flags)}.`];
  for (const { index, message } of errors) lines.push(`  account ${index + 1} (${accounts[index]?.localId ?? 'no localId'}): ${message}`);
  process.stderr.write(`${lines.join('\n')}\n`);
  return errors.length ? 2 : 0;
}

/** The realm the flags name: the project's own, or one of its tenants (which must exist). */
async function realmOf(store: Store, flags: { project: string; tenant?: string }): Promise<string> {
  if (flags.tenant === undefined) return flags.project;
  const realm = realmKey(flags.project, flags.tenant);
  if (!(await store.listProjects()).some((row) => row.projectId === realm)) throw new UsageError(`project ${flags.project} has no tenant ${flags.tenant}`);
  return realm;
}

function described(flags: { project: string; tenant?: string }): string {
  return flags.tenant === undefined ? flags.project : `tenant ${flags.tenant} of ${flags.project}`;
}

/** The Firebase CLI's flags as batchCreate's hash options (checked there). */
function wireHashOptions(flags: ImportFlags): WireHashOptions {
  const algorithm = flags.hashAlgo?.toUpperCase();
  if (algorithm === undefined) return {};
  if (algorithm === 'HEARTH_SCRYPT') {
    const { memCost, blockSize, parallelization, dkLen } = exportHashOptions;
    return { hashAlgorithm: 'STANDARD_SCRYPT', cpuMemCost: memCost, blockSize, parallelization, dkLen };
  }
  const options: WireHashOptions = { hashAlgorithm: algorithm };
  if (flags.hashKey !== undefined) options.signerKey = flags.hashKey;
  if (flags.saltSeparator !== undefined) options.saltSeparator = flags.saltSeparator;
  if (flags.rounds !== undefined) options.rounds = flags.rounds;
  if (flags.memCost !== undefined) {
    if (algorithm === 'STANDARD_SCRYPT') options.cpuMemCost = flags.memCost;
    else options.memoryCost = flags.memCost;
  }
  if (flags.parallelization !== undefined) options.parallelization = flags.parallelization;
  if (flags.blockSize !== undefined) options.blockSize = flags.blockSize;
  if (flags.dkLen !== undefined) options.dkLen = flags.dkLen;
  if (flags.hashInputOrder !== undefined) {
    const order = flags.hashInputOrder.toUpperCase();
    if (order !== 'SALT_FIRST' && order !== 'PASSWORD_FIRST') throw new UsageError('--hash-input-order is SALT_FIRST or PASSWORD_FIRST');
    options.passwordHashOrder = order === 'SALT_FIRST' ? 'SALT_AND_PASSWORD' : 'PASSWORD_AND_SALT';
  }
  return options;
}
