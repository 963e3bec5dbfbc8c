import type Database from 'better-sqlite3';
import type { OverviewCounts } from '../overview-counts.js';

export function sqliteCounts(db: Database.Database): OverviewCounts {
  const users = db.prepare<[number, string], { total: number; recent: number }>(
    "SELECT COUNT(*) AS total, COALESCE(SUM(json_extract(record, '$.createdAt') >= ?), 0) AS recent FROM users WHERE project_id = ?",
  );
  const documents = db.prepare<[string], { total: number }>('SELECT COUNT(*) AS total FROM fs_documents WHERE db = ?');
  return {
    async users(projectId, createdSince) {
      const row = users.get(createdSince, projectId)!;
      return { total: row.total, createdSince: row.recent };
    },
    async documents(dbKey) {
      return documents.get(dbKey)!.total;
    },
  };
}
