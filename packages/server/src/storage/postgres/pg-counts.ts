import type { OverviewCounts } from '../overview-counts.js';
import type { PgPool } from './pg-connection.js';

export function pgCounts(pool: PgPool): OverviewCounts {
  return {
    async users(projectId, createdSince) {
      // The second reads the users_created index (the expression must be written as the index has it).
      const [total, recent] = await Promise.all([
        pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM users WHERE project_id = $1', [projectId]),
        pool.query<{ n: string }>("SELECT COUNT(*) AS n FROM users WHERE project_id = $1 AND ((record::jsonb ->> 'createdAt')::bigint) >= $2", [projectId, createdSince]),
      ]);
      return { total: Number(total.rows[0]!.n), createdSince: Number(recent.rows[0]!.n) };
    },
    async documents(dbKey) {
      const { rows } = await pool.query<{ total: string }>('SELECT COUNT(*) AS total FROM fs_documents WHERE db = $1', [dbKey]);
      return Number(rows[0]!.total);
    },
  };
}
