import type { OverviewCounts } from '../overview-counts.js';
import type { UserRecord } from '../store.js';
import type { UserListing } from '../user-listing.js';
import type { PgPool } from './pg-connection.js';

/** The overview's counts, and accounts by uid (the same users table, its primary key; local_id is COLLATE "C": byte order). */
export function pgCounts(pool: PgPool): OverviewCounts & UserListing {
  const userTotal = async (projectId: string) => {
    const { rows } = await pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM users WHERE project_id = $1', [projectId]);
    return Number(rows[0]!.n);
  };
  return {
    async users(projectId, createdSince) {
      // The second reads the users_created index (the expression must be written as the index has it).
      const [total, recent] = await Promise.all([
        userTotal(projectId),
        pool.query<{ n: string }>("SELECT COUNT(*) AS n FROM users WHERE project_id = $1 AND ((record::jsonb ->> 'createdAt')::bigint) >= $2", [projectId, createdSince]),
      ]);
      return { total, createdSince: Number(recent.rows[0]!.n) };
    },
    userTotal,
    async usersByUid(projectId, offset, limit, descending) {
      const { rows } = await pool.query<{ record: string }>(
        `SELECT record FROM users WHERE project_id = $1 ORDER BY local_id ${descending ? 'DESC' : 'ASC'} LIMIT $2 OFFSET $3`,
        [projectId, limit, offset],
      );
      return rows.map((row) => JSON.parse(row.record) as UserRecord);
    },
    async documents(dbKey) {
      // One statement, one snapshot: the count holds exactly the commits up to last_commit_time.
      const { rows } = await pool.query<{ total: string; as_of: string | null }>(
        'SELECT COUNT(*) AS total, (SELECT last_commit_time FROM fs_meta WHERE db = $1) AS as_of FROM fs_documents WHERE db = $1',
        [dbKey],
      );
      return { total: Number(rows[0]!.total), asOf: Number(rows[0]!.as_of ?? 0) };
    },
  };
}
