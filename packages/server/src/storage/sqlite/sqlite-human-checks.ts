import Database from 'better-sqlite3';
import { StoreConflict, type HumanCheckRecord, type Mutation } from '../store.js';

interface HumanCheckRow {
  key_hash: string;
  project_id: string;
  expires_at: number;
  used_at: number | null;
}

type HumanCheckMutation = Extract<Mutation, { kind: 'insertHumanCheck' | 'useHumanCheck' | 'deleteExpiredHumanChecks' }>;

/** The reCAPTCHA stand-in's rows (table `human_checks`), applied inside SqliteStore's commits. */
export class SqliteHumanChecks {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      get: db.prepare<[string], HumanCheckRow>('SELECT * FROM human_checks WHERE key_hash = ?'),
      insert: db.prepare('INSERT INTO human_checks (key_hash, project_id, expires_at, used_at) VALUES (?, ?, ?, ?) ON CONFLICT (key_hash) DO NOTHING'),
      use: db.prepare('UPDATE human_checks SET used_at = ? WHERE key_hash = ? AND used_at IS NULL'),
      deleteExpired: db.prepare('DELETE FROM human_checks WHERE expires_at < ?'),
    };
  }

  get(keyHash: string): HumanCheckRecord | undefined {
    const row = this.statements.get.get(keyHash);
    if (!row) return undefined;
    return { keyHash: row.key_hash, projectId: row.project_id, expiresAt: row.expires_at, ...(row.used_at !== null ? { usedAt: row.used_at } : {}) };
  }

  apply(m: HumanCheckMutation): void {
    const s = this.statements;
    switch (m.kind) {
      case 'insertHumanCheck':
        if (s.insert.run(m.record.keyHash, m.record.projectId, m.record.expiresAt, m.record.usedAt ?? null).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'useHumanCheck':
        // Checked and marked in one statement: two concurrent uses cannot both see it unused.
        if (s.use.run(m.usedAt, m.keyHash).changes !== 1) throw new StoreConflict('code-used');
        return;
      case 'deleteExpiredHumanChecks':
        s.deleteExpired.run(m.expiredBefore);
        return;
    }
  }
}
