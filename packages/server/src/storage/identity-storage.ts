import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditLog } from './audit-log.js';
import { loadOrCreateKeyFile } from './private-files.js';
import type { ChangeFeed } from './change-feed.js';
import type { DocumentStore } from './document-store.js';
import type { KeyRingStore } from './key-ring-store.js';
import { KeyRingFile } from './key-ring-file.js';
import { PgAuditLog } from './postgres/pg-audit-log.js';
import { PgFilesStore } from './postgres/pg-files-store.js';
import type { FilesStore } from './files-store.js';
import type { PgPool } from './postgres/pg-connection.js';
import { pgCounts } from './postgres/pg-counts.js';
import type { OverviewCounts } from './overview-counts.js';
import type { UserListing } from './user-listing.js';
import { openPgDocumentStore } from './postgres/pg-document-store.js';
import { PgKeyRing, PgSharedSecrets } from './postgres/pg-shared-keys.js';
import { PgRulesStore } from './postgres/pg-rules-store.js';
import { PgStore } from './postgres/pg-store.js';
import { PgTriggerEvents } from './postgres/pg-trigger-events.js';
import type { TriggerEventStore } from './trigger-events.js';
import type { RulesStore } from './rules-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import { SharedSqliteStore } from './sqlite/sqlite-shared-store.js';
import type { Store } from './store.js';

/**
 * Where everything lives: the SQLite file and the data folder for one process, or PostgreSQL for
 * several instances (then no SQLite file is made). Whatever the instances must agree on (accounts, codes, outbox,
 * throttle rows, key rings, the captcha and MFA sealing keys) goes to the database then; the admin
 * key stays per instance (HEARTH_ADMIN_KEY, or the data folder).
 */
export interface IdentityStorage {
  store: Store;
  rules: RulesStore;
  signingKeys: string | KeyRingStore;
  sessionCookieKeys: string | KeyRingStore;
  captchaKey: Buffer;
  /** Undefined: the MFA sealing key is the data folder's `mfa-key`. */
  mfaSealingKey?: Buffer;
  documents: DocumentStore;
  /** Every instance's commits (PostgreSQL, or the workers' SQLite file); undefined: one process, its own commits are all there are. */
  changeFeed?: ChangeFeed & { close(): Promise<void> };
  /** Where another process announces how far a database's change log reaches (the workers' SQLite file). */
  heard?: (db: string, seq: number) => void;
  auditLog: AuditLog;
  /** Cloud Storage objects' metadata and upload sessions (files/); the bytes are in a byte store. */
  files: FilesStore;
  /** What commits owe functions (functions/): stored by the document commits themselves. */
  triggerEvents: TriggerEventStore;
  /** The store's size in bytes as last seen (the SQLite file and its log, or the PostgreSQL database). */
  sizeBytes: () => number;
  /** Users and documents counted, for the console's overview. */
  counts: OverviewCounts;
  /** Accounts by uid, counted and windowed in the store (accounts:query). */
  userListing: UserListing;
  /** Closes what was opened here (the pool is the caller's). */
  close(): Promise<void>;
}

export interface StorageOptions {
  /** Tests only: see holdForTest in sqlite/sqlite-writer-thread.ts. */
  writerLatch?: Int32Array;
  /**
   * A worker of --workers on SQLite: other processes write the file and the data folder too, and
   * `announce` tells them how far a database's change log reaches after this one's commits.
   */
  sharedFile?: { announce: (db: string, seq: number) => void };
}

export async function openStorage(dataDir: string, pgPool: PgPool | undefined, options: StorageOptions = {}): Promise<IdentityStorage> {
  if (!pgPool) {
    const file = join(dataDir, 'hearth.sqlite');
    const sqlite = options.sharedFile ? new SharedSqliteStore(file, options.sharedFile.announce) : new SqliteStore(file, options.writerLatch ? { writerLatch: options.writerLatch } : {});
    const counts = sqlite.counts();
    const feed = sqlite.changeFeed();
    await feed?.start();
    // With other processes on the data folder, a key ring's file is changed under the SQLite file's lock.
    const keyRing = (name: string) => (feed ? new KeyRingFile(join(dataDir, name), (run) => sqlite.exclusive(run)) : join(dataDir, name));
    return {
      store: sqlite,
      rules: sqlite.rules(),
      signingKeys: keyRing('signing-keys.json'),
      sessionCookieKeys: keyRing('session-cookie-keys.json'),
      ...(feed ? { changeFeed: feed, heard: (db: string, seq: number) => feed.heard(db, seq) } : {}),
      captchaKey: loadOrCreateKeyFile(dataDir, 'captcha-key'),
      documents: sqlite.documents(),
      auditLog: sqlite.auditLog(),
      files: sqlite.files(),
      triggerEvents: sqlite.triggerEvents(),
      sizeBytes: () => sqliteFileBytes(dataDir),
      counts,
      userListing: counts,
      close: () => sqlite.close(),
    };
  }
  const store = await PgStore.open(pgPool);
  const documents = await openPgDocumentStore(pgPool);
  const databaseSize = await followDatabaseSize(pgPool);
  const counts = pgCounts(pgPool);
  const secrets = new PgSharedSecrets(pgPool);
  const newKey = () => randomBytes(32).toString('base64url');
  return {
    store,
    rules: await PgRulesStore.open(pgPool),
    signingKeys: new PgKeyRing(pgPool, 'signing-keys'),
    sessionCookieKeys: new PgKeyRing(pgPool, 'session-cookie-keys'),
    captchaKey: Buffer.from(await secrets.getOrCreate('captcha-key', newKey), 'base64url'),
    mfaSealingKey: Buffer.from(await secrets.getOrCreate('mfa-key', newKey), 'base64url'),
    documents: documents.store,
    changeFeed: documents.feed,
    auditLog: await PgAuditLog.open(pgPool),
    files: await PgFilesStore.open(pgPool),
    triggerEvents: new PgTriggerEvents(pgPool),
    sizeBytes: () => databaseSize.bytes,
    counts,
    userListing: counts,
    close: async () => {
      clearInterval(databaseSize.timer);
      await store.close();
      await documents.feed.close();
    },
  };
}

/** The SQLite file and its write-ahead log. */
function sqliteFileBytes(dataDir: string): number {
  let total = 0;
  for (const name of ['hearth.sqlite', 'hearth.sqlite-wal']) {
    try {
      total += statSync(join(dataDir, name)).size;
    } catch {
      // not there (yet, or any more)
    }
  }
  return total;
}

/** PostgreSQL's size of the database, read now and every 30 s (the gauge is read synchronously). */
async function followDatabaseSize(pool: PgPool): Promise<{ bytes: number; timer: NodeJS.Timeout }> {
  const read = async () => Number((await pool.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size')).rows[0]?.size ?? 0);
  const state = { bytes: await read(), timer: undefined as unknown as NodeJS.Timeout };
  state.timer = setInterval(() => {
    read().then(
      (bytes) => (state.bytes = bytes),
      () => undefined, // the last size stands until the database answers again
    );
  }, 30_000);
  state.timer.unref();
  return state;
}
