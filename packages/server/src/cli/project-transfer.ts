import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import pino from 'pino';
import { emulatorImportHashOptions, fromEmulatorAccounts, toEmulatorAccounts } from '../auth/core/emulator-accounts.js';
import { exportAccounts, exportHashOptions, type ExportedAccount } from '../auth/core/user-export.js';
import { importAccounts, maxImportBatch } from '../auth/core/user-import.js';
import { loadIndexFile } from '../firestore/core/index-file.js';
import { checkDatabase } from '../firestore/core/paths.js';
import { exportDatabase, importExport } from '../firestore/exports/firestore-transfer.js';
import { releaseRulesFile } from '../firestore/security/rules-file.js';
import { firestoreFile, firestoreRelease, RulesRegistry, storageFile, storageRelease } from '../firestore/security/rules-registry.js';
import type { ByteStore } from '../files/bytes/byte-store.js';
import { DiskByteStore } from '../files/bytes/disk-byte-store.js';
import { exportStorage, importStorageExport } from '../files/exports/storage-export.js';
import { defaultBucketsOf } from '../files/files-setup.js';
import { describeImport, openTransferStorage, progressLine, runTransfer, TransferRefusal, type StorageFlags } from './firestore-transfer.js';

/**
 * `hearth import DIR` and `hearth export DIR`: a whole project in the folder layout of `firebase
 * emulators:export` (firebase-export-metadata.json, firestore_export/, auth_export/, storage_export/) with the
 * project's firebase.json (security rules, indexes). The Firestore part is all or nothing (one
 * transaction, into a database with no documents) and goes first; accounts and rules follow.
 */

interface FirebaseJson {
  firestore?: { rules?: string; indexes?: string } | Array<{ database?: string; rules?: string; indexes?: string }>;
  storage?: { rules?: string } | Array<{ bucket?: string; rules?: string }>;
}

interface ExportMetadata {
  firestore?: { path?: string };
  auth?: { path?: string };
  storage?: { path?: string };
}

export interface ProjectImportFlags extends StorageFlags {
  project?: string;
  config?: string;
  storageUrl?: string;
}

/** Where the server keeps Cloud Storage bytes: the S3 service of --storage-url (or HEARTH_STORAGE_URL), else the data folder's files/. */
async function byteStoreOf(flags: StorageFlags & { storageUrl?: string }): Promise<ByteStore> {
  const url = flags.storageUrl ?? process.env.HEARTH_STORAGE_URL;
  if (!url) return new DiskByteStore(join(resolve(flags.data), 'files'));
  // The S3 client is a large import: every `hearth` command would pay for it.
  const { parseS3Url, S3ByteStore } = await import('../files/bytes/s3-byte-store.js');
  return new S3ByteStore(parseS3Url(url));
}

function readJson<T>(file: string): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (error) {
    throw new TransferRefusal(`cannot read ${file}: ${(error as Error).message}`);
  }
}

/** firebase.json's rule and index files for the default database and every bucket, as paths. */
function projectFiles(configFile: string | undefined): { firestoreRules?: string; indexes?: string; storageRules?: string } {
  if (!configFile) return {};
  const config = readJson<FirebaseJson>(configFile);
  const base = dirname(resolve(configFile));
  const firestore = Array.isArray(config.firestore) ? config.firestore.find((entry) => (entry.database ?? '(default)') === '(default)') : config.firestore;
  const storage = Array.isArray(config.storage) ? config.storage[0] : config.storage;
  const at = (path: string | undefined) => (path ? resolve(base, path) : undefined);
  const files = { firestoreRules: at(firestore?.rules), indexes: at(firestore?.indexes), storageRules: at(storage?.rules) };
  for (const path of Object.values(files)) if (path && !existsSync(path)) throw new TransferRefusal(`${configFile} names ${path}, which does not exist`);
  return files;
}

async function importProject(dir: string, flags: ProjectImportFlags): Promise<string[]> {
  const folder = resolve(dir);
  if (!existsSync(folder)) throw new TransferRefusal(`${folder} does not exist`);
  const metadataFile = join(folder, 'firebase-export-metadata.json');
  const metadata = existsSync(metadataFile) ? readJson<ExportMetadata>(metadataFile) : {};
  const firestoreFolder = join(folder, metadata.firestore?.path ?? 'firestore_export');
  const accountsFile = join(folder, metadata.auth?.path ?? 'auth_export', 'accounts.json');
  const storageFolder = join(folder, metadata.storage?.path ?? 'storage_export');
  const configFile = flags.config ?? (existsSync(join(folder, 'firebase.json')) ? join(folder, 'firebase.json') : undefined);
  const files = projectFiles(configFile);
  const hasFirestore = existsSync(firestoreFolder);
  if (!hasFirestore && !existsSync(accountsFile) && !existsSync(storageFolder) && !configFile) {
    throw new TransferRefusal(`${folder} holds no firestore_export/, auth_export/accounts.json, storage_export/ nor firebase.json`);
  }
  if (!hasFirestore && !flags.project) throw new TransferRefusal('give --project: without a Firestore export the folder does not say which project it is');

  const lines: string[] = [];
  const { storage, close } = await openTransferStorage(flags);
  try {
    let projectId = flags.project;
    if (hasFirestore) {
      const started = Date.now();
      const progress = progressLine('importing documents');
      const report = await importExport(storage.documents, firestoreFolder, {
        ...(projectId !== undefined && { projectId }),
        compositeIndexes: files.indexes ? loadIndexFile(files.indexes) : [],
        progress: (_, written) => progress.tick(written),
      });
      projectId = report.target.projectId;
      lines.push(describeImport(report, (Date.now() - started) / 1000));
    }
    const project = checkDatabase(projectId!, '(default)', 'emulator').projectId;
    if (existsSync(accountsFile)) {
      const { users, withPassword } = await fromEmulatorAccounts(readFileSync(accountsFile, 'utf8'));
      let refused = 0;
      for (let start = 0; start < users.length; start += maxImportBatch) {
        const result = await importAccounts(storage.store, project, { ...emulatorImportHashOptions, users: users.slice(start, start + maxImportBatch) }, 'owner');
        for (const error of result.errors) lines.push(`  account ${start + error.index + 1} (${users[start + error.index]?.localId ?? 'no localId'}): ${error.message}`);
        refused += result.errors.length;
      }
      lines.push(`Imported ${users.length - refused} of ${users.length} account(s) into ${project} (${withPassword} with a password, hashed on the way in).`);
    }
    if (existsSync(storageFolder)) {
      const bytes = await byteStoreOf(flags);
      try {
        const report = await importStorageExport(storageFolder, { bytes, files: storage.files, projectId: project });
        lines.push(`Imported ${report.objects} Cloud Storage object(s), ${report.bytes} bytes, into bucket(s) ${report.buckets.join(', ') || '(none)'} of ${project} (download tokens kept).`);
      } finally {
        await bytes.close();
      }
    }
    const registry = new RulesRegistry(storage.rules, pino({ level: 'silent' }));
    if (files.firestoreRules) {
      await releaseRulesFile(registry, project, files.firestoreRules, firestoreRelease);
      lines.push(`Released ${files.firestoreRules} as the Firestore rules of ${project}.`);
    }
    if (files.storageRules) {
      await releaseRulesFile(registry, project, files.storageRules, storageRelease);
      lines.push(`Released ${files.storageRules} as the Cloud Storage rules of ${project}.`);
    }
    if (files.indexes) lines.push(`Start Hearth with --indexes ${files.indexes} (the import built its composite index entries).`);
  } finally {
    await close();
  }
  return lines;
}

export interface ProjectExportFlags extends StorageFlags {
  project: string;
  storageUrl?: string;
}

async function exportProject(dir: string, flags: ProjectExportFlags): Promise<string[]> {
  const folder = resolve(dir);
  if (existsSync(folder) && readdirSync(folder).length > 0) throw new TransferRefusal(`${folder} is not empty: export into a new folder`);
  const db = checkDatabase(flags.project, '(default)', 'emulator');
  mkdirSync(join(folder, 'auth_export'), { recursive: true, mode: 0o700 });
  const lines: string[] = [];
  const { storage, close } = await openTransferStorage(flags);
  try {
    const progress = progressLine('exporting documents');
    const documents = await exportDatabase(storage.documents, db, join(folder, 'firestore_export'), { progress: (n) => progress.tick(n) });
    lines.push(`Exported ${documents.documents} document(s) of ${db.projectId}/(default) to firestore_export/.`);
    const accounts: ExportedAccount[] = [];
    for await (const { account } of exportAccounts(storage.store, db.projectId)) accounts.push(account);
    writeFileSync(join(folder, 'auth_export', 'accounts.json'), toEmulatorAccounts(accounts), { mode: 0o600 });
    writeFileSync(join(folder, 'auth_export', 'config.json'), `${JSON.stringify({ signIn: { allowDuplicateEmails: false } }, null, 2)}\n`);
    lines.push(`Exported ${accounts.length} account(s) to auth_export/ (passwords as Hearth's scrypt: they sign in on Hearth; on the Auth emulator after a reset).`);
    const { hashAlgo, memCost, blockSize, parallelization, dkLen } = exportHashOptions;
    lines.push(`Into Firebase: firebase auth:import ${join(folder, 'auth_export', 'accounts.json')} --hash-algo ${hashAlgo} --mem-cost ${memCost} --block-size ${blockSize} --parallelization ${parallelization} --dk-len ${dkLen}`);
    const bytes = await byteStoreOf(flags);
    try {
      const objects = await exportStorage(join(folder, 'storage_export'), { bytes, files: storage.files, buckets: defaultBucketsOf(db.projectId) });
      lines.push(`Exported ${objects.objects} Cloud Storage object(s), ${objects.bytes} bytes, of bucket(s) ${objects.buckets.join(', ')} to storage_export/.`);
    } finally {
      await bytes.close();
    }
    const config: FirebaseJson = {};
    for (const [release, file, service] of [[firestoreRelease, 'firestore.rules', 'firestore'], [storageRelease, 'storage.rules', 'storage']] as const) {
      const released = await storage.rules.getRelease(db.projectId, release);
      const ruleset = released && (await storage.rules.getRuleset(db.projectId, released.rulesetId));
      const source = ruleset && (service === 'firestore' ? firestoreFile(ruleset.files) : storageFile(ruleset.files));
      if (!source) continue;
      writeFileSync(join(folder, file), source.content);
      config[service] = { rules: file };
      lines.push(`Wrote the released ${service === 'firestore' ? 'Firestore' : 'Cloud Storage'} rules to ${file}.`);
    }
    writeFileSync(join(folder, 'firebase.json'), `${JSON.stringify(config, null, 2)}\n`);
    writeFileSync(join(folder, 'firebase-export-metadata.json'), `${JSON.stringify({
      version: 'hearth',
      firestore: { version: 'hearth', path: 'firestore_export', metadata_file: 'firestore_export/firestore_export.overall_export_metadata' },
      auth: { version: 'hearth', path: 'auth_export' },
      storage: { version: 'hearth', path: 'storage_export' },
    }, null, 2)}\n`);
    lines.push(`Start Google's emulators from it: firebase emulators:start --import ${folder} --config ${join(folder, 'firebase.json')}`);
  } finally {
    await close();
  }
  return lines;
}

/** `hearth import DIR` (cli/commands.ts registers the command and its flags). */
export function runProjectImport(dir: string | undefined, flags: ProjectImportFlags): Promise<void> {
  return runTransfer('import', async () => {
    if (!dir) throw new TransferRefusal('give the folder to import (hearth import DIR, or hearth import firestore DIR)');
    process.stderr.write(`${(await importProject(dir, flags)).join('\n')}\n`);
  });
}

/** `hearth export DIR`. */
export function runProjectExport(dir: string | undefined, flags: ProjectExportFlags): Promise<void> {
  return runTransfer('export', async () => {
    if (!dir) throw new TransferRefusal('give the folder to write (hearth export DIR, or hearth export firestore DIR)');
    process.stderr.write(`${(await exportProject(dir, flags)).join('\n')}\n`);
  });
}
