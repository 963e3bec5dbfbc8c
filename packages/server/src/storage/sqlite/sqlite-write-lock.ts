import type Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageUnavailable } from '../document-store.js';

/**
 * SQLite's write lock where other processes take it too (--workers). better-sqlite3 is
 * synchronous: waiting for the lock with the connection's busy timeout would stop the whole event
 * loop of this process while another one writes. So the lock is tried without waiting, and tried
 * again on a timer until `lockWaitMs` have passed; what runs under it runs synchronously right
 * after BEGIN, so nothing else of this process can slip into the transaction.
 */

/** How long a write waits for other processes before it fails, retryable (UNAVAILABLE). */
export const lockWaitMs = 5_000;
/** The connections' busy timeout, restored after each try (openDatabaseFile sets it). */
const busyTimeoutMs = 5_000;

/** BEGIN IMMEDIATE without waiting: false when another connection holds the write lock. */
export function tryBeginImmediate(db: Database.Database): boolean {
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN IMMEDIATE');
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
    throw error;
  } finally {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}

/**
 * Runs `run` in a transaction that holds the write lock from its first statement, waiting for it
 * without blocking: another process's commit holds it about a millisecond, so the first tries come
 * back at the next turn of the event loop, later ones after a few milliseconds.
 */
export async function withWriteLock<T>(db: Database.Database, run: () => T): Promise<T> {
  const deadline = Date.now() + lockWaitMs;
  for (let tries = 0; ; tries++) {
    if (tryBeginImmediate(db)) {
      try {
        const value = run();
        db.exec('COMMIT');
        return value;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    }
    if (Date.now() > deadline) throw new StorageUnavailable('Another process held the database file too long; nothing of this request was stored.');
    await (tries < 2 ? new Promise((resolve) => setImmediate(resolve)) : sleep(Math.min(tries - 1, 5)));
  }
}
