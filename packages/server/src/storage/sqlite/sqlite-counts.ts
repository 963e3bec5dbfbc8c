import type Database from 'better-sqlite3';
import type { OverviewCounts } from '../overview-counts.js';
import type { UserRecord } from '../store.js';
import type { UserListing } from '../user-listing.js';

/** The overview's counts, and accounts by uid (the same users table, its primary key). */
export function sqliteCounts(db: Database.Database): OverviewCounts & UserListing {
  // Both read the users_created index (the expression must be written as the index has it).
  const total = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM users WHERE project_id = ?');
  const recent = db.prepare<[string, number], { n: number }>("SELECT COUNT(*) AS n FROM users WHERE project_id = ? AND json_extract(record, '$.createdAt') >= ?");
  // One statement, one snapshot: the count holds exactly the commits up to last_commit_time.
  const documents = db.prepare<[string, string], { total: number; as_of: number | null }>(
    'SELECT COUNT(*) AS total, (SELECT last_commit_time FROM fs_meta WHERE db = ?) AS as_of FROM fs_documents WHERE db = ?',
  );
  const byUid = {
    asc: db.prepare<[string, number, number], { record: string }>('SELECT record FROM users WHERE project_id = ? ORDER BY local_id LIMIT ? OFFSET ?'),
    desc: db.prepare<[string, number, number], { record: string }>('SELECT record FROM users WHERE project_id = ? ORDER BY local_id DESC LIMIT ? OFFSET ?'),
  };
  const lastCommit = db.prepare<[string], { last_commit_time: number }>('SELECT last_commit_time FROM fs_meta WHERE db = ?');
  return {
    async users(projectId, createdSince) {
      return { total: total.get(projectId)!.n, createdSince: recent.get(projectId, createdSince)!.n };
    },
    async userTotal(projectId) {
      return total.get(projectId)!.n;
    },
    async usersByUid(projectId, offset, limit, descending) {
      return (descending ? byUid.desc : byUid.asc).all(projectId, limit, offset).map((row) => JSON.parse(row.record) as UserRecord);
    },
    async documents(dbKey) {
      const row = documents.get(dbKey, dbKey)!;
      return { total: row.total, asOf: row.as_of ?? 0 };
    },
    async lastCommitTime(dbKey) {
      return lastCommit.get(dbKey)?.last_commit_time ?? 0;
    },
  };
}
