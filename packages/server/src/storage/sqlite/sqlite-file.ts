import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from './migrations.js';

/**
 * Opens (creating) the one SQLite file every store shares, private to the owner, in WAL mode with
 * synchronous=FULL (a resolved commit survives a crash of the process or the machine), migrated.
 */
export function openDatabaseFile(file: string): Database.Database {
  mkdirSync(dirname(file), { recursive: true });
  keepPrivate(file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}

/**
 * The database holds password hashes, mails and documents: mode 0600 like the keys. SQLite gives
 * the -wal and -shm files it creates the database file's mode, so creating that file first is
 * enough; files from before are narrowed too.
 */
function keepPrivate(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
}
