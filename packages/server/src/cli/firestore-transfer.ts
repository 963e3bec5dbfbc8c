import { mkdirSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { ApiError } from '../http/api-error.js';
import { DatabaseNotEmpty } from '../storage/document-store.js';
import { openStorage, type IdentityStorage } from '../storage/identity-storage.js';
import { openPgPool, type PgPool } from '../storage/postgres/pg-connection.js';
import { loadIndexFile } from '../firestore/core/index-file.js';
import { checkDatabase } from '../firestore/core/paths.js';
import { exportDatabase, importExport, NotAnExport, UnreadableEntity, type ImportReport } from '../firestore/exports/firestore-transfer.js';
import { CorruptLog } from '../firestore/exports/leveldb-log.js';
import { EmulatorAccountsError } from '../auth/core/emulator-accounts.js';
import { StorageExportError } from '../files/exports/storage-export.js';

/**
 * `hearth import firestore DIR` and `hearth export firestore DIR`: a database in and out in the
 * layout of Google's Firestore exports (firestore/exports/). They work on the data folder's SQLite
 * file or the PostgreSQL database directly; an import is one transaction, so while it runs a
 * server on the same SQLite file waits to write (stop it, or import into a database it does not use).
 */

export interface StorageFlags {
  data: string;
  databaseUrl?: string;
}

export class TransferRefusal extends Error {}

/** The data folder's storage or the PostgreSQL database's (flag or HEARTH_DATABASE_URL). */
export async function openTransferStorage(flags: StorageFlags): Promise<{ storage: IdentityStorage; close: () => Promise<void> }> {
  const databaseUrl = flags.databaseUrl ?? process.env.HEARTH_DATABASE_URL;
  let pool: PgPool | undefined;
  if (databaseUrl) pool = openPgPool(databaseUrl, { max: 2 });
  else mkdirSync(resolve(flags.data), { recursive: true, mode: 0o700 });
  try {
    const storage = await openStorage(resolve(flags.data), pool);
    return { storage, close: async () => (await storage.close(), await pool?.end()) };
  } catch (error) {
    await pool?.end();
    throw new TransferRefusal(`cannot open the storage: ${(error as Error).message}`);
  }
}

/** Progress on stderr (synchronously: an SQLite import holds the event loop): at most every 2 s. */
export function progressLine(what: string): { tick: (count: number, extra?: string) => void; rate: (count: number) => string } {
  const started = Date.now();
  let printed = started;
  const rate = (count: number) => `${Math.round(count / Math.max((Date.now() - started) / 1000, 0.001))}/s`;
  return {
    rate,
    tick: (count, extra = '') => {
      if (Date.now() - printed < 2000) return;
      printed = Date.now();
      writeSync(2, `${what}: ${count} documents${extra}, ${rate(count)}\n`);
    },
  };
}

function collectionIds(list: string | undefined): string[] | undefined {
  return list === undefined ? undefined : list.split(',').map((id) => id.trim()).filter(Boolean);
}

export interface FirestoreImportFlags extends StorageFlags {
  project?: string;
  database?: string;
  collectionIds?: string;
  indexes?: string;
}

export async function importFirestore(dir: string, flags: FirestoreImportFlags): Promise<ImportReport> {
  const { storage, close } = await openTransferStorage(flags);
  const progress = progressLine('importing');
  try {
    return await importExport(storage.documents, dir, {
      ...(flags.project !== undefined && { projectId: flags.project }),
      ...(flags.database !== undefined && { databaseId: flags.database }),
      ...(flags.collectionIds !== undefined && { collectionIds: collectionIds(flags.collectionIds)! }),
      compositeIndexes: flags.indexes ? loadIndexFile(flags.indexes) : [],
      progress: (read, written) => progress.tick(written, ` written of ${read} read`),
    });
  } finally {
    await close();
  }
}

export function describeImport(report: ImportReport, seconds: number): string {
  const { target, source } = report;
  const from = source ? ` (exported from ${source.projectId}/${source.databaseId})` : '';
  const skipped = report.skipped ? `, ${report.skipped} left out by --collection-ids` : '';
  const rate = Math.round(report.documents / Math.max(seconds, 0.001));
  return `Imported ${report.documents} document(s) into ${target.projectId}/${target.databaseId}${from}: read ${report.records} record(s) from ${report.files} file(s)${skipped}; ${report.indexEntries} index entries; ${seconds.toFixed(1)} s, ${rate} documents/s.`;
}

/** Errors a user can act on are one line on stderr and exit code 1; the rest are bugs and show their stack. */
export async function runTransfer(name: string, command: () => Promise<void>): Promise<void> {
  try {
    await command();
  } catch (error) {
    const known = [TransferRefusal, NotAnExport, UnreadableEntity, CorruptLog, DatabaseNotEmpty, ApiError, EmulatorAccountsError, StorageExportError];
    if (!known.some((kind) => error instanceof kind)) throw error;
    process.stderr.write(`hearth ${name}: ${(error as Error).message}${error instanceof DatabaseNotEmpty ? ' (nothing was written)' : ''}\n`);
    process.exitCode = 1;
  }
}

/** `hearth import firestore DIR` (cli/commands.ts registers the command and its flags). */
export function runFirestoreImport(dir: string, flags: FirestoreImportFlags): Promise<void> {
  return runTransfer('import firestore', async () => {
    const started = Date.now();
    const report = await importFirestore(dir, flags);
    process.stderr.write(`${describeImport(report, (Date.now() - started) / 1000)}\n`);
  });
}

/** `hearth export firestore DIR`. */
export function runFirestoreExport(dir: string, flags: FirestoreExportFlags): Promise<void> {
  return runTransfer('export firestore', async () => {
    const started = Date.now();
    const report = await exportFirestore(dir, flags);
    const seconds = (Date.now() - started) / 1000;
    process.stderr.write(`Exported ${report.documents} document(s) of ${flags.project}/${flags.database} to ${resolve(dir)} (${report.bytes} bytes, ${seconds.toFixed(1)} s).\n`);
  });
}

export type FirestoreExportFlags = StorageFlags & { project: string; database: string; collectionIds?: string };

export async function exportFirestore(dir: string, flags: FirestoreExportFlags) {
  const db = checkDatabase(flags.project, flags.database, 'emulator');
  const { storage, close } = await openTransferStorage(flags);
  const progress = progressLine('exporting');
  try {
    const ids = collectionIds(flags.collectionIds);
    return await exportDatabase(storage.documents, db, dir, { ...(ids && { collectionIds: ids }), progress: (n) => progress.tick(n) });
  } finally {
    await close();
  }
}
