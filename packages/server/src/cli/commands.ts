/**
 * Every command but `start`, with its flags: registered here for `--help`, each one's work loaded
 * only when it runs (the implementations reach the stores, the exports and the rules: most of the
 * server, about a CPU second a run, which `hearth users --help` and `hearth start` need none of).
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { FirestoreExportFlags, FirestoreImportFlags } from './firestore-transfer.js';
import type { ProjectExportFlags, ProjectImportFlags } from './project-transfer.js';
import type { ExportFlags, ImportFlags } from './users.js';

/** A flag naming an origin (`--public-url`). */
export function origin(value: string): string {
  if (!/^https?:\/\/[^/?#]+\/?$/.test(value)) throw new InvalidArgumentError('an origin such as https://auth.example.com');
  return value;
}

/** `users`, `migrate`, `import`, `export` and `service-accounts`. */
export function registerCommands(program: Command): void {
  registerUsersCommands(program);
  registerMigrateCommand(program);
  const importCommand = program.command('import').description("bring a Firebase project in from Google's formats: a `firebase emulators:export` folder (documents, accounts) with its firebase.json (rules, indexes)");
  const exportCommand = program.command('export').description("write a project out as a `firebase emulators:export` folder (documents, accounts, rules) that Google's emulators start from");
  // `import firestore DIR --data X`: the flags after a subcommand are the subcommand's (both levels have --data).
  program.enablePositionalOptions();
  importCommand.enablePositionalOptions();
  exportCommand.enablePositionalOptions();
  registerProjectTransfer(importCommand, exportCommand);
  registerFirestoreTransfer(importCommand, exportCommand);
  registerServiceAccounts(program);
}

function registerUsersCommands(program: Command): void {
  const users = program.command('users').description("move accounts in and out, in the Firebase CLI's auth:export / auth:import formats (JSON, CSV)");

  users
    .command('export <file>')
    .description('write every account of a project (with password hashes) to a .json or .csv file, readable only by you')
    .option('--project <id>', 'project id', 'demo-hearth')
    .option('--tenant <id>', "a tenant's accounts instead of the project's own")
    .option('--data <dir>', 'data folder', './.hearth')
    .option('--database-url <url>', 'the PostgreSQL database instead of the data folder (or HEARTH_DATABASE_URL)')
    .option('--format <format>', 'json or csv, when the file name does not say')
    .action(async (file: string, flags: ExportFlags) => (await import('./users.js')).runUsersExport(file, flags));

  users
    .command('import <file>')
    .description('import accounts from a .json or .csv file (Firebase CLI auth:export format); an existing uid is replaced')
    .option('--project <id>', 'project id', 'demo-hearth')
    .option('--tenant <id>', 'into a tenant of the project (it must exist) instead of the project itself')
    .option('--data <dir>', 'data folder', './.hearth')
    .option('--database-url <url>', 'the PostgreSQL database instead of the data folder (or HEARTH_DATABASE_URL)')
    .option('--format <format>', 'json or csv, when the file name does not say')
    .option('--hash-algo <algorithm>', 'how the passwords were hashed: SCRYPT, STANDARD_SCRYPT, BCRYPT, PBKDF2_SHA256, PBKDF_SHA1, HMAC_SHA512/256/SHA1/MD5, SHA512/256/1, MD5; HEARTH_SCRYPT for a Hearth export')
    .option('--hash-key <key>', 'SCRYPT signer key or HMAC key (base64)')
    .option('--salt-separator <separator>', 'SCRYPT salt separator (base64)')
    .option('--rounds <n>', 'SCRYPT rounds, or hash rounds / iterations')
    .option('--mem-cost <n>', 'SCRYPT memory cost, or STANDARD_SCRYPT cpu/memory cost (N)')
    .option('--parallelization <n>', 'STANDARD_SCRYPT parallelization (p)')
    .option('--block-size <n>', 'STANDARD_SCRYPT block size (r)')
    .option('--dk-len <n>', 'STANDARD_SCRYPT derived key length')
    .option('--hash-input-order <order>', 'SALT_FIRST or PASSWORD_FIRST, for the SHA, MD5 and HMAC algorithms')
    .action(async (file: string, flags: ImportFlags) => (await import('./users.js')).runUsersImport(file, flags));
}

function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description("copy an SQLite data folder's accounts, settings, codes, mails, rules, keys, documents and storage metadata into an empty PostgreSQL database")
    .option('--data <dir>', 'the data folder to copy from', './.hearth')
    .option('--database-url <url>', 'the empty PostgreSQL database to copy into (or HEARTH_DATABASE_URL)')
    .action(async (flags: { data: string; databaseUrl?: string }) => (await import('./migrate.js')).runMigrate(flags));
}

function registerFirestoreTransfer(importCommand: Command, exportCommand: Command): void {
  importCommand
    .command('firestore <dir>')
    .description("import a Firestore export (gcloud firestore export, the emulator's --export-on-exit, firebase emulators:export) into an empty database, all or nothing")
    .option('--project <id>', "the project to import into (default: the export's own)")
    .option('--database <id>', "the database to import into (default: the export's own, e.g. (default))")
    .option('--collection-ids <ids>', 'only documents of these collection ids (comma-separated, at any depth)')
    .option('--indexes <file>', "the server's firestore.indexes.json, so its composite index entries are built by the import")
    .option('--data <dir>', 'data folder', './.hearth')
    .option('--database-url <url>', 'the PostgreSQL database instead of the data folder (or HEARTH_DATABASE_URL)')
    .action(async (dir: string, flags: FirestoreImportFlags) => (await import('./firestore-transfer.js')).runFirestoreImport(dir, flags));

  exportCommand
    .command('firestore <dir>')
    .description("write a database as a Firestore export (the layout gcloud's emulator --import-data and gcloud firestore import read) into a new folder")
    .option('--project <id>', 'project id', 'demo-hearth')
    .option('--database <id>', 'database id', '(default)')
    .option('--collection-ids <ids>', 'only documents of these collection ids (comma-separated, at any depth)')
    .option('--data <dir>', 'data folder', './.hearth')
    .option('--database-url <url>', 'the PostgreSQL database instead of the data folder (or HEARTH_DATABASE_URL)')
    .action(async (dir: string, flags: FirestoreExportFlags) => (await import('./firestore-transfer.js')).runFirestoreExport(dir, flags));
}

function registerProjectTransfer(importCommand: Command, exportCommand: Command): void {
  importCommand
    .argument('[dir]', 'a `firebase emulators:export` folder')
    .option('--project <id>', "the project to import into (default: the Firestore export's own)")
    .option('--config <file>', "the project's firebase.json, for its rules and indexes (default: DIR/firebase.json when there)")
    .option('--storage-url <url>', "the server's S3 byte store for Cloud Storage objects (or HEARTH_STORAGE_URL); default: the data folder")
    .option('--data <dir>', 'data folder', './.hearth')
    .option('--database-url <url>', 'the PostgreSQL database instead of the data folder (or HEARTH_DATABASE_URL)')
    .action(async (dir: string | undefined, flags: ProjectImportFlags) => (await import('./project-transfer.js')).runProjectImport(dir, flags));
  exportCommand
    .argument('[dir]', 'a new folder')
    .option('--project <id>', 'project id', 'demo-hearth')
    .option('--storage-url <url>', "the server's S3 byte store for Cloud Storage objects (or HEARTH_STORAGE_URL); default: the data folder")
    .option('--data <dir>', 'data folder', './.hearth')
    .option('--database-url <url>', 'the PostgreSQL database instead of the data folder (or HEARTH_DATABASE_URL)')
    .action(async (dir: string | undefined, flags: ProjectExportFlags) => (await import('./project-transfer.js')).runProjectExport(dir, flags));
}

function registerServiceAccounts(program: Command): void {
  const serviceAccounts = program.command('service-accounts').description("a project's service-account keys (JSON files for firebase-admin's cert())");
  serviceAccounts
    .command('create')
    .description('issue a key and write its file (0600); Hearth keeps only the public half')
    .requiredOption('--project <id>', 'the project the key administers')
    .option('--data <dir>', 'data folder of the Hearth that honours the key', './.hearth')
    .option('--public-url <url>', "Hearth's public origin, for the file's token_uri", origin, 'http://127.0.0.1:9000')
    .option('--out <file>', 'where to write the key file (default: <project>-<key id>.json)')
    .action(async (flags: { project: string; data: string; publicUrl: string; out?: string }) => {
      const { createServiceAccountKey } = await import('../auth/core/service-account-commands.js');
      process.stdout.write(`${await createServiceAccountKey(flags)}\n`);
    });
  serviceAccounts
    .command('list')
    .requiredOption('--project <id>', 'the project')
    .option('--data <dir>', 'data folder', './.hearth')
    .action(async (flags: { project: string; data: string }) => {
      const { listServiceAccountKeys } = await import('../auth/core/service-account-commands.js');
      for (const line of await listServiceAccountKeys(flags)) process.stdout.write(`${line}\n`);
    });
  serviceAccounts
    .command('revoke <keyId>')
    .description('delete a key and end the access tokens exchanged with it')
    .requiredOption('--project <id>', 'the project')
    .option('--data <dir>', 'data folder', './.hearth')
    .action(async (keyId: string, flags: { project: string; data: string }) => {
      const { revokeServiceAccountKey } = await import('../auth/core/service-account-commands.js');
      await revokeServiceAccountKey({ ...flags, keyId });
    });
}
