import type { ThrottleRecord } from '../store.js';
import type { ThrottleRowReader } from '../throttle-reader.js';
import { SqliteStore } from './sqlite-store.js';

/**
 * The store of a worker of --workers on SQLite: other processes write the file too, so a throttle
 * reads back what they counted before it decides (as on PostgreSQL: storage/throttle-reader.ts).
 */
export class SharedSqliteStore extends SqliteStore implements ThrottleRowReader {
  private readonly throttleRows = this.db.prepare<[string, string, number], { scope: string; key_hash: string; expires_at: number; state: string }>(
    'SELECT * FROM throttle_state WHERE scope = ? AND key_hash IN (SELECT value FROM json_each(?)) AND expires_at > ?',
  );

  constructor(file: string, announce: (db: string, seq: number) => void) {
    super(file, { shared: { announce } });
  }

  async getThrottleRecords(scope: string, keyHashes: string[], now: number): Promise<ThrottleRecord[]> {
    return this.throttleRows.all(scope, JSON.stringify(keyHashes), now).map((row) => ({ scope: row.scope, keyHash: row.key_hash, expiresAt: row.expires_at, state: row.state }));
  }
}
