import type Database from 'better-sqlite3';
import type { OverviewCounts } from '../overview-counts.js';

export function sqliteCounts(db: Database.Database): OverviewCounts {
  // Both read the users_created index (the expression must be written as the index has it).
  const total = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM users WHERE project_id = ?');
  const recent = db.prepare<[string, number], { n: number }>("SELECT COUNT(*) AS n FROM users WHERE project_id = ? AND json_extract(record, '$.createdAt') >= ?");
  const documents = db.prepare<[string], { total: number }>('SELECT COUNT(*) AS total FROM fs_documents WHERE db = ?');
  return {
    async users(projectId, createdSince) {
      return { total: total.get(projectId)!.n, createdSince: recent.get(projectId, createdSince)!.n };
    },
    async documents(dbKey) {
      return documents.get(dbKey)!.total;
    },
  };
}
