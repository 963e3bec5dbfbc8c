import type Database from 'better-sqlite3';
import type { ErasureMutation } from '../erasure-mutation.js';
import type { AccountErasure } from '../store.js';

interface ErasureRow {
  project_id: string;
  local_id: string;
  requested_at: number;
}

/** The queue of deleted accounts whose data is still to be erased (storage/store.ts AccountErasure). */
export class SqliteErasureRows {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      insert: db.prepare('INSERT OR IGNORE INTO account_erasures (project_id, local_id, requested_at) VALUES (?, ?, ?)'),
      remove: db.prepare('DELETE FROM account_erasures WHERE project_id = ? AND local_id = ?'),
      list: db.prepare<[number], ErasureRow>('SELECT * FROM account_erasures ORDER BY requested_at, project_id, local_id LIMIT ?'),
    };
  }

  list(limit: number): AccountErasure[] {
    return this.statements.list.all(limit).map((row) => ({ projectId: row.project_id, localId: row.local_id, requestedAt: row.requested_at }));
  }

  apply(m: ErasureMutation): void {
    if (m.kind === 'insertAccountErasure') this.statements.insert.run(m.erasure.projectId, m.erasure.localId, m.erasure.requestedAt);
    else this.statements.remove.run(m.projectId, m.localId);
  }
}
